//! Ingesting files into a RAG store: walk (symlinks not followed), read (text, Markdown,
//! source; PDF through `pdftotext`), chunk, embed, commit one file at a time.
//!
//! Each file is one transaction, so a Ctrl-C (the `cancel` callback) stops between files
//! with everything committed kept. A file whose content hash is unchanged is skipped; a
//! changed file's old chunks are replaced; when a directory is ingested again, files under
//! it that are gone lose their chunks. Files that cannot be ingested (binary, unreadable,
//! too large, PDF without `pdftotext`) are reported and the ingest goes on.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::params;
use serde::Serialize;

use super::chunk::{chunk, Chunk, Kind};
use super::{RagError, RagStore};
use crate::tokens::TokenCounter;
use crate::vector::text_hash;

/// Files larger than this are skipped with a message (a RAG chunk is a passage, and a
/// 50 MB log would be tens of thousands of them).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Directories never descended into.
const SKIP_DIRS: &[&str] = &[
    ".git",
    "target",
    "node_modules",
    "__pycache__",
    ".venv",
    "agents",
];

/// What happened to one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// The result of an ingest.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IngestReport {
    pub files_seen: usize,
    pub files_ingested: usize,
    pub files_unchanged: usize,
    pub files_removed: usize,
    pub chunks_added: usize,
    pub chunks_removed: usize,
    pub vectors_added: usize,
    pub skipped: Vec<Skipped>,
    /// Stopped by the user; what was committed is kept.
    pub cancelled: bool,
    pub seconds: f64,
}

/// Progress after each file, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub files_done: usize,
    pub files_total: usize,
    pub chunks: usize,
    /// Chunks embedded per second so far (0 without an embedder).
    pub embed_rate: f64,
}

/// Ingest options.
pub struct IngestOptions<'a> {
    /// Paths in the store are shown relative to this directory when under it.
    pub workspace: &'a Path,
    /// Tokens per chunk at most (also capped by the embedder's limit).
    pub chunk_tokens: usize,
}

/// Counts words × 4/3: the token estimate used only when a store has no embedder (and
/// so no tokenizer of its own); chunk sizes are then approximate.
struct WordEstimate;

impl TokenCounter for WordEstimate {
    fn count_tokens(&self, text: &str) -> usize {
        (text.split_whitespace().count() * 4).div_ceil(3)
    }
}

impl RagStore {
    /// Ingests files and directories.
    pub fn ingest(
        &mut self,
        paths: &[PathBuf],
        opts: &IngestOptions<'_>,
        progress: &mut dyn FnMut(Progress),
        cancel: &dyn Fn() -> bool,
    ) -> Result<IngestReport, RagError> {
        self.writable()?;
        let started = Instant::now();
        let mut report = IngestReport::default();
        let (files, walked_dirs) = collect_files(paths, &mut report.skipped);
        report.files_seen = files.len();
        let embed_started = Instant::now();
        let mut embedded = 0usize;
        let mut seen: HashSet<String> = HashSet::new();
        for (i, file) in files.iter().enumerate() {
            if cancel() {
                report.cancelled = true;
                break;
            }
            let key = display_path(file, opts.workspace);
            seen.insert(key.clone());
            match self.ingest_file(file, &key, opts) {
                Ok(FileOutcome::Unchanged) => report.files_unchanged += 1,
                Ok(FileOutcome::Ingested {
                    added,
                    removed,
                    vectors,
                }) => {
                    report.files_ingested += 1;
                    report.chunks_added += added;
                    report.chunks_removed += removed;
                    report.vectors_added += vectors;
                    embedded += vectors;
                }
                Ok(FileOutcome::Skipped(reason)) => report.skipped.push(Skipped {
                    path: key.clone(),
                    reason,
                }),
                Err(e @ RagError::Db { .. }) => return Err(e),
                Err(e) => report.skipped.push(Skipped {
                    path: key.clone(),
                    reason: e.to_string(),
                }),
            }
            let secs = embed_started.elapsed().as_secs_f64();
            progress(Progress {
                files_done: i + 1,
                files_total: files.len(),
                chunks: report.chunks_added,
                embed_rate: if secs > 0.0 {
                    embedded as f64 / secs
                } else {
                    0.0
                },
            });
        }
        if !report.cancelled {
            for dir in &walked_dirs {
                let prefix = display_path(dir, opts.workspace);
                let (files, chunks) = self.prune_under(&prefix, &seen)?;
                report.files_removed += files;
                report.chunks_removed += chunks;
            }
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    fn ingest_file(
        &mut self,
        path: &Path,
        key: &str,
        opts: &IngestOptions<'_>,
    ) -> Result<FileOutcome, RagError> {
        let text = match read_text(path) {
            Ok(t) => t,
            Err(reason) => return Ok(FileOutcome::Skipped(reason)),
        };
        let hash = text_hash(&text);
        let known: Option<String> = self
            .conn()
            .query_row("SELECT hash FROM files WHERE path = ?1", [key], |r| {
                r.get(0)
            })
            .ok();
        if known.as_deref() == Some(hash.as_str()) {
            return Ok(FileOutcome::Unchanged);
        }
        let kind = if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("pdf"))
        {
            Kind::Text
        } else {
            Kind::of(path)
        };
        let estimate = WordEstimate;
        let (counter, limit): (&dyn TokenCounter, usize) = match self.embedder() {
            Some(e) => (e.as_ref(), opts.chunk_tokens.min(e.max_tokens())),
            None => (&estimate, opts.chunk_tokens),
        };
        let chunks = chunk(kind, &text, limit, counter);
        let vectors = self.embed_new(&chunks)?;
        let n_vectors = vectors.len();
        let db = |e| RagError::Db {
            path: self.path().to_path_buf(),
            source: e,
        };
        let conn = self.conn();
        conn.execute_batch("BEGIN IMMEDIATE").map_err(db)?;
        let model = self.embedder().map(|e| e.model_id().to_string());
        let file = FileRow {
            key,
            hash: &hash,
            size: text.len(),
        };
        let result = replace_file(conn, &file, &chunks, model.as_deref(), &vectors);
        match result {
            Ok(removed) => {
                conn.execute_batch("COMMIT").map_err(db)?;
                Ok(FileOutcome::Ingested {
                    added: chunks.len(),
                    removed,
                    vectors: n_vectors,
                })
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(db(e))
            }
        }
    }

    /// Vectors for the chunks whose text has none yet (identical text anywhere in the
    /// store is embedded once).
    fn embed_new(&self, chunks: &[Chunk]) -> Result<Vec<(String, Vec<f32>)>, RagError> {
        let Some(embedder) = self.embedder() else {
            return Ok(Vec::new());
        };
        let mut have = self
            .conn()
            .prepare_cached("SELECT 1 FROM vectors WHERE hash = ?1 AND model = ?2")
            .map_err(|e| RagError::Db {
                path: self.path().to_path_buf(),
                source: e,
            })?;
        let mut todo: Vec<(String, &str)> = Vec::new();
        for c in chunks {
            let h = text_hash(&c.text);
            if todo.iter().any(|(t, _)| *t == h) {
                continue;
            }
            if have
                .exists(params![h, embedder.model_id()])
                .unwrap_or(false)
            {
                continue;
            }
            todo.push((h, &c.text));
        }
        if todo.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<&str> = todo.iter().map(|(_, t)| *t).collect();
        let vectors = embedder
            .embed(&texts)
            .map_err(|e| RagError::Embed(e.to_string()))?;
        Ok(todo.into_iter().map(|(h, _)| h).zip(vectors).collect())
    }

    /// Drops the chunks of files under `prefix` that were not seen in this walk.
    fn prune_under(
        &self,
        prefix: &str,
        seen: &HashSet<String>,
    ) -> Result<(usize, usize), RagError> {
        let db = |e| RagError::Db {
            path: self.path().to_path_buf(),
            source: e,
        };
        let mut stmt = self.conn().prepare("SELECT path FROM files").map_err(db)?;
        let known: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .map_err(db)?
            .collect::<Result<_, _>>()
            .map_err(db)?;
        let dir_prefix = if prefix.ends_with('/') || prefix.is_empty() || prefix == "." {
            prefix.trim_start_matches('.').to_string()
        } else {
            format!("{prefix}/")
        };
        let mut files = 0;
        let mut chunks = 0;
        for path in known {
            if path.starts_with(&dir_prefix) && !seen.contains(&path) {
                chunks += self.remove_file(&path)?;
                files += 1;
            }
        }
        Ok((files, chunks))
    }

    /// Removes one file's chunks; returns how many.
    pub fn remove_file(&self, key: &str) -> Result<usize, RagError> {
        self.writable()?;
        let db = |e| RagError::Db {
            path: self.path().to_path_buf(),
            source: e,
        };
        self.conn().execute_batch("BEGIN IMMEDIATE").map_err(db)?;
        match delete_file(self.conn(), key) {
            Ok(n) => {
                self.conn().execute_batch("COMMIT").map_err(db)?;
                Ok(n)
            }
            Err(e) => {
                let _ = self.conn().execute_batch("ROLLBACK");
                Err(db(e))
            }
        }
    }

    /// Removes files that no longer exist on disk (relative paths are taken from
    /// `workspace`). Returns (files, chunks) removed.
    pub fn prune_missing(&self, workspace: &Path) -> Result<(usize, usize), RagError> {
        self.writable()?;
        let db = |e| RagError::Db {
            path: self.path().to_path_buf(),
            source: e,
        };
        let mut stmt = self.conn().prepare("SELECT path FROM files").map_err(db)?;
        let known: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .map_err(db)?
            .collect::<Result<_, _>>()
            .map_err(db)?;
        let mut files = 0;
        let mut chunks = 0;
        for path in known {
            if !workspace.join(&path).exists() {
                chunks += self.remove_file(&path)?;
                files += 1;
            }
        }
        Ok((files, chunks))
    }
}

enum FileOutcome {
    Unchanged,
    Ingested {
        added: usize,
        removed: usize,
        vectors: usize,
    },
    Skipped(String),
}

fn delete_file(conn: &rusqlite::Connection, key: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE path = ?1)",
        [key],
    )?;
    let n = conn.execute("DELETE FROM chunks WHERE path = ?1", [key])?;
    conn.execute("DELETE FROM files WHERE path = ?1", [key])?;
    Ok(n)
}

/// `path` relative to `workspace` when under it, else as given.
pub fn display_path(path: &Path, workspace: &Path) -> String {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let abs = abs.canonicalize().unwrap_or(abs);
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    match abs.strip_prefix(&ws) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => abs.to_string_lossy().into_owned(),
    }
}

/// Files under `dir` in name order; symlinks and skipped directories are reported.
fn walk(dir: &Path, files: &mut Vec<PathBuf>, skipped: &mut Vec<Skipped>) {
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => {
            skipped.push(Skipped {
                path: dir.display().to_string(),
                reason: format!("cannot list the directory: {e}"),
            });
            return;
        }
    };
    entries.sort();
    for p in entries {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if meta.file_type().is_symlink() {
            skipped.push(Skipped {
                path: p.display().to_string(),
                reason: "a symbolic link (not followed)".into(),
            });
        } else if meta.is_dir() {
            if !name.starts_with('.') && !SKIP_DIRS.contains(&name.as_str()) {
                walk(&p, files, skipped);
            }
        } else if meta.is_file() && !name.starts_with('.') {
            files.push(p);
        }
    }
}

/// The file's text, or why it cannot be ingested.
fn read_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{:.1} MB is over the {} MB limit for one file; split it into smaller files",
            meta.len() as f64 / 1e6,
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pdf"))
    {
        return pdf_text(path);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err("a binary file (not text); skipped".into());
    }
    String::from_utf8(bytes)
        .map_err(|_| "not UTF-8 text (binary or another encoding); skipped".into())
}

fn pdf_text(path: &Path) -> Result<String, String> {
    let out = std::process::Command::new("pdftotext")
        .arg("-layout")
        .arg(path)
        .arg("-")
        .output();
    match out {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(
            "a PDF, and pdftotext is not installed (Debian/Raspberry Pi OS: sudo apt install poppler-utils); skipped"
                .into(),
        ),
        Err(e) => Err(format!("pdftotext failed: {e}")),
        Ok(o) if !o.status.success() => Err(format!(
            "pdftotext failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(o) => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
    }
}

/// The files under `paths` (directories walked, symbolic links not followed) and the
/// directories walked; what cannot be read goes to `skipped`.
fn collect_files(paths: &[PathBuf], skipped: &mut Vec<Skipped>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut files = Vec::new();
    let mut walked_dirs = Vec::new();
    for p in paths {
        match std::fs::symlink_metadata(p) {
            Err(e) => skipped.push(Skipped {
                path: p.display().to_string(),
                reason: format!("cannot read: {e}"),
            }),
            Ok(m) if m.file_type().is_symlink() => skipped.push(Skipped {
                path: p.display().to_string(),
                reason: "a symbolic link (not followed)".into(),
            }),
            Ok(m) if m.is_dir() => {
                walked_dirs.push(p.clone());
                walk(p, &mut files, skipped);
            }
            Ok(_) => files.push(p.clone()),
        }
    }
    (files, walked_dirs)
}

/// A file's row in `files`: its key (display path), content hash and size.
struct FileRow<'a> {
    key: &'a str,
    hash: &'a str,
    size: usize,
}

/// Inside the caller's transaction: replaces the file's chunks (and their full-text rows)
/// with `chunks`, stores the new `vectors` under `model`, records the file. Returns how
/// many old chunks were removed.
fn replace_file(
    conn: &rusqlite::Connection,
    file: &FileRow<'_>,
    chunks: &[Chunk],
    model: Option<&str>,
    vectors: &[(String, Vec<f32>)],
) -> rusqlite::Result<usize> {
    let removed = delete_file(conn, file.key)?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO chunks(path, start_line, end_line, heading, hash, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut insert_fts = conn.prepare_cached(
        "INSERT INTO chunks_fts(rowid, text, heading, path) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for c in chunks {
        insert.execute(params![
            file.key,
            c.start_line as i64,
            c.end_line as i64,
            c.heading,
            text_hash(&c.text),
            c.text
        ])?;
        let id = conn.last_insert_rowid();
        insert_fts.execute(params![
            id,
            c.text,
            c.heading.clone().unwrap_or_default(),
            file.key
        ])?;
    }
    if let Some(model) = model {
        crate::storage::vectors::put(conn, model, vectors)?;
    }
    conn.execute(
        "INSERT OR REPLACE INTO files(path, hash, size, chunks, ingested) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![file.key, file.hash, file.size as i64, chunks.len() as i64, crate::memory::store::now_unix()],
    )?;
    Ok(removed)
}
