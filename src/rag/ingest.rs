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

use serde::Serialize;

use super::chunk::{chunk, Chunk, Kind};
use super::{RagError, RagStore};
use crate::storage::rag::{FileRow, NewChunk};
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
        // A file named twice (itself and under its directory) is one file.
        let mut seen: HashSet<String> = HashSet::new();
        let files: Vec<(PathBuf, String)> = files
            .into_iter()
            .map(|file| {
                let key = display_path(&file, opts.workspace);
                (file, key)
            })
            .filter(|(_, key)| seen.insert(key.clone()))
            .collect();
        report.files_seen = files.len();
        let embed_started = Instant::now();
        let mut embedded = 0usize;
        for (i, (file, key)) in files.iter().enumerate() {
            if cancel() {
                report.cancelled = true;
                break;
            }
            match self.ingest_file(file, key, opts) {
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
        let known = self.tables().file_hash(key);
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
        let model = self.embedder().map(|e| e.model_id().to_string());
        let file = FileRow {
            key,
            hash: &hash,
            size: text.len(),
        };
        let rows: Vec<NewChunk<'_>> = chunks
            .iter()
            .map(|c| NewChunk {
                start_line: c.start_line,
                end_line: c.end_line,
                heading: c.heading.as_deref(),
                text: &c.text,
            })
            .collect();
        let now = crate::memory::store::now_unix();
        let removed = self
            .tables()
            .replace_file(&file, &rows, model.as_deref(), &vectors, now)
            .map_err(|source| RagError::Db {
                path: self.path().to_path_buf(),
                source,
            })?;
        Ok(FileOutcome::Ingested {
            added: chunks.len(),
            removed,
            vectors: n_vectors,
        })
    }

    /// Vectors for the chunks whose text has none yet (identical text anywhere in the
    /// store is embedded once).
    fn embed_new(&self, chunks: &[Chunk]) -> Result<Vec<(String, Vec<f32>)>, RagError> {
        let Some(embedder) = self.embedder() else {
            return Ok(Vec::new());
        };
        let mut have = self.tables().vector_lookup().map_err(|e| RagError::Db {
            path: self.path().to_path_buf(),
            source: e,
        })?;
        let mut todo: Vec<(String, &str)> = Vec::new();
        for c in chunks {
            let h = text_hash(&c.text);
            if todo.iter().any(|(t, _)| *t == h) {
                continue;
            }
            if have.has(&h, embedder.model_id()) {
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
        let known = self.tables().file_paths().map_err(db)?;
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
        self.tables().remove_file(key).map_err(db)
    }

    /// Removes files that no longer exist on disk (relative paths are taken from
    /// `workspace`). Returns (files, chunks) removed.
    pub fn prune_missing(&self, workspace: &Path) -> Result<(usize, usize), RagError> {
        self.writable()?;
        let db = |e| RagError::Db {
            path: self.path().to_path_buf(),
            source: e,
        };
        let known = self.tables().file_paths().map_err(db)?;
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
