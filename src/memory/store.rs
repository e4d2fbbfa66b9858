//! The memory store: files under `agents/memories/` (the truth), the SQLite index
//! beside them, and `MEMORY.md` for humans ([`overview`]).
//!
//! Every change writes the new file (atomically) before it removes or moves an old
//! one, so a crash leaves at worst an extra copy, which the next reconcile resolves
//! ([`upkeep`]); nothing is ever half-written or lost.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) use super::clock::stamp_of;
pub use super::clock::{day_of, normalized_time, now_rfc3339, now_unix, parse_time};
use super::file::{self, FormatError};
use super::guard::{find_secret, relativize, MAX_BODY_BYTES};
use super::index::{FileStamp, Index, Placement, Row};
use super::types::{normalize_description, Draft, Memory, MemoryType, DEFAULT_CONFIDENCE};
use super::{overview, upkeep};
use crate::tokens::Embedder;

mod reconcile;
mod write;
pub(super) use write::bad_date;
pub(super) use write::check_fields;
pub use write::{Dates, Patch, WriteOutcome};

/// Confidence at or below which `/memory flag` archives a memory.
pub const FLAG_ARCHIVE_AT: f64 = 0.2;
/// How much one `/memory flag` lowers confidence.
pub const FLAG_STEP: f64 = 0.1;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("memory index {path}: {source} ({hint})", hint = crate::storage::hint(source, "delete it or run `harvey memory rebuild`: the memory files are the truth"))]
    Index {
        path: PathBuf,
        source: crate::storage::Error,
    },
    #[error("unknown memory type {0:?}: expected one of {choices}", choices = MemoryType::choices())]
    BadType(String),
    #[error("a memory needs a description (one line saying what it is about)")]
    NoDescription,
    #[error("the {field} looks like it contains {what}; memories are stored in plain text, so it was not saved — remove the secret and try again")]
    Secret {
        field: &'static str,
        what: &'static str,
    },
    #[error("the body is {bytes} bytes; a memory is a fact, not a transcript (at most {MAX_BODY_BYTES} bytes) — shorten it")]
    TooLong { bytes: usize },
    #[error("confidence must be between 0 and 1, not {0}")]
    BadConfidence(f64),
    #[error("{field}: {problem}")]
    BadField {
        field: &'static str,
        problem: String,
    },
    #[error("no memory with id {0:?} (`/memory list` shows the ids)")]
    NotFound(String),
    #[error("memory {id} is archived")]
    Archived { id: String },
    #[error("{path}: {problem}")]
    Format { path: PathBuf, problem: FormatError },
    #[error("{0} (the memory is saved and found by full-text search)")]
    Embed(String),
    /// Another silo (a RAG store, the knowledge base) failed during recall.
    #[error("{0}")]
    Silo(String),
}

/// A file that could not be indexed (it is skipped; the others load).
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub path: PathBuf,
    pub problem: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "skipped {}: {}", self.path.display(), self.problem)
    }
}

/// What a reconcile found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reconciled {
    pub indexed: usize,
    pub removed: usize,
    pub unchanged: usize,
    pub warnings: Vec<Warning>,
    /// Memories moved to `archive/` at this reconcile, with why (`expired`, `superseded`).
    pub archived: Vec<(String, &'static str)>,
    /// Older copies left by an interrupted type change, deleted (the newer copy stays).
    pub stale_copies: Vec<PathBuf>,
}

/// What `/memory flag` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Flagged {
    pub confidence: f64,
    pub archived: bool,
}

pub struct MemoryStore {
    dir: PathBuf,
    workspace: PathBuf,
    index: Index,
    counter: u64,
    embedder: Option<Arc<dyn Embedder>>,
    ranking: super::rank::Ranking,
}

impl MemoryStore {
    /// Opens `agents/memories` under `agents_dir` and reconciles the index with the files.
    pub fn open(agents_dir: &Path, workspace: &Path) -> Result<(Self, Reconciled), StoreError> {
        let dir = agents_dir.join("memories");
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Io {
            path: dir.clone(),
            source,
        })?;
        let db = super::location::index_path(&dir);
        let index = Index::open(&db).map_err(|source| StoreError::Index { path: db, source })?;
        let mut store = Self {
            dir,
            workspace: workspace.to_path_buf(),
            index,
            counter: 0,
            embedder: None,
            ranking: Default::default(),
        };
        let report = store.reconcile()?;
        Ok((store, report))
    }

    /// Opens the store without reconciling (a second handle in the same process, e.g.
    /// the memory tools, while the session's handle already reconciled at start).
    pub fn attach(agents_dir: &Path, workspace: &Path) -> Result<Self, StoreError> {
        let dir = agents_dir.join("memories");
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Io {
            path: dir.clone(),
            source,
        })?;
        let db = super::location::index_path(&dir);
        let index = Index::open(&db).map_err(|source| StoreError::Index { path: db, source })?;
        Ok(Self {
            dir,
            workspace: workspace.to_path_buf(),
            index,
            counter: 0,
            embedder: None,
            ranking: Default::default(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Gives the store an embedder: every active memory without a vector from it gets
    /// one now, and every later write embeds what it wrote. Returns how many were
    /// embedded now.
    pub fn set_embedder(&mut self, embedder: Arc<dyn Embedder>) -> Result<usize, StoreError> {
        self.embedder = Some(embedder);
        self.embed_missing()
    }

    /// Gives the store an embedder without embedding what is missing now (a second
    /// handle; the next write embeds everything missing).
    pub fn use_embedder(&mut self, embedder: Arc<dyn Embedder>) {
        self.embedder = Some(embedder);
    }

    /// How relevance search fuses full text and vectors (benchmarks compare settings).
    pub fn ranking(&self) -> &super::rank::Ranking {
        &self.ranking
    }

    pub fn set_ranking(&mut self, ranking: super::rank::Ranking) {
        self.ranking = ranking;
    }

    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Maps and checks the vector copy ahead of the first recall (see
    /// `vector::VectorCache::warm`), e.g. while the embedder loads; true when ready.
    pub fn warm_vectors(&self) -> bool {
        let model = self.embedder.as_ref().map(|e| e.model_id());
        self.index.warm_vectors(model).unwrap_or(false)
    }

    /// Embeds every active memory that has no vector from the current embedder (new,
    /// changed, or indexed while no embedder was available). Vectors are keyed by the
    /// hash of the embedded text, so an index rebuild finds its vectors again.
    pub fn embed_missing(&self) -> Result<usize, StoreError> {
        let Some(embedder) = &self.embedder else {
            return Ok(0);
        };
        let model = embedder.model_id();
        // Nothing changed since every memory had its vector: skip the scan (it reads
        // every row: 12 ms at 10k memories, 190 ms at 100k, at every start).
        if self
            .index
            .vectors_complete(model)
            .map_err(|e| self.db_err(e))?
        {
            return Ok(0);
        }
        let mut done = 0;
        loop {
            let missing = self
                .index
                .missing_vectors(model, 256)
                .map_err(|e| self.db_err(e))?;
            if missing.is_empty() {
                self.index
                    .mark_vectors_complete(model)
                    .map_err(|e| self.db_err(e))?;
                return Ok(done);
            }
            let texts: Vec<&str> = missing.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = embedder
                .embed(&texts)
                .map_err(|e| StoreError::Embed(e.to_string()))?;
            let items: Vec<(String, Vec<f32>)> =
                missing.into_iter().map(|(h, _)| h).zip(vectors).collect();
            self.index
                .put_vectors(model, &items)
                .map_err(|e| self.db_err(e))?;
            done += items.len();
        }
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Indexes memories without writing their files: for benchmarks that need 100k
    /// memories quickly. The files stay the truth, so the next reconcile drops these rows.
    pub fn index_only(&mut self, memories: &[Memory]) -> Result<(), StoreError> {
        let now = now_unix();
        let result = self.index.batch(|index| {
            for (i, m) in memories.iter().enumerate() {
                let rel = format!("{}/{}.spmd", m.mtype.as_str(), m.id);
                let stamp = FileStamp {
                    mtime_ns: i as i64,
                    size: 0,
                };
                let mut at = placement(m, &rel, stamp, false);
                if at.updated == 0 {
                    at.updated = now;
                }
                index.upsert(m, &at)?;
            }
            Ok(())
        });
        result.map_err(|e| self.db_err(e))
    }

    pub(super) fn db_err(&self, source: crate::storage::Error) -> StoreError {
        StoreError::Index {
            path: self.dir.join(crate::memory::location::INDEX_FILE),
            source,
        }
    }

    /// Drops the index and reads every file again.
    pub fn rebuild(&mut self) -> Result<Reconciled, StoreError> {
        self.index.clear().map_err(|e| self.db_err(e))?;
        self.reconcile()
    }

    /// The indexed row of `id`.
    pub fn row(&self, id: &str) -> Result<Row, StoreError> {
        self.index
            .get(id)
            .map_err(|e| self.db_err(e))?
            .ok_or_else(|| StoreError::NotFound(id.to_string()))
    }

    /// The full memory of `id`, read from its file.
    pub fn get(&self, id: &str) -> Result<Memory, StoreError> {
        let row = self.row(id)?;
        self.read(&row)
    }

    /// The file of `id`.
    pub fn path_of(&self, id: &str) -> Result<PathBuf, StoreError> {
        Ok(self.dir.join(self.row(id)?.path))
    }

    pub(super) fn read(&self, row: &Row) -> Result<Memory, StoreError> {
        let path = self.dir.join(&row.path);
        let bytes = std::fs::read(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        file::parse(&bytes, Some(row.mtype)).map_err(|problem| StoreError::Format { path, problem })
    }

    /// Re-reads one memory's file after an edit (`/memory edit`).
    pub fn reindex(&mut self, id: &str) -> Result<Row, StoreError> {
        let row = self.row(id)?;
        let memory = self.read(&row)?;
        let path = self.dir.join(&row.path);
        let stamp = stamp_of(&path).map_err(|source| StoreError::Io { path, source })?;
        if memory.id != row.id {
            self.index.remove_id(&row.id).map_err(|e| self.db_err(e))?;
        }
        self.index
            .upsert(&memory, &placement(&memory, &row.path, stamp, row.archived))
            .map_err(|e| self.db_err(e))?;
        self.write_overview()?;
        self.row(&memory.id)
    }

    /// Active memories, optionally of one type / kind.
    pub fn list(
        &self,
        mtype: Option<MemoryType>,
        kind: Option<&str>,
    ) -> Result<Vec<Row>, StoreError> {
        let rows = self.index.list(false).map_err(|e| self.db_err(e))?;
        Ok(rows
            .into_iter()
            .filter(|r| mtype.is_none_or(|t| r.mtype == t))
            .filter(|r| kind.is_none_or(|k| r.kind.as_deref() == Some(k)))
            .collect())
    }

    /// Moves a memory to `archive/<type>/`: it is never recalled again.
    pub fn forget(&mut self, id: &str) -> Result<(), StoreError> {
        self.archive(id)?;
        self.write_overview()
    }

    /// What [`Self::forget`] would do to `id`, with nothing moved: the memory, and the
    /// path under the memories directory it would be kept at (`archive/<type>/<file>`).
    pub fn to_archive(&self, id: &str) -> Result<(Memory, String), StoreError> {
        self.archive_plan(id).map(|(_, memory, rel)| (memory, rel))
    }

    fn archive_plan(&self, id: &str) -> Result<(Row, Memory, String), StoreError> {
        let row = self.row(id)?;
        if row.archived {
            return Err(StoreError::Archived { id: id.to_string() });
        }
        let memory = self.read(&row)?;
        let name = Path::new(&row.path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("memory.spmd")
            .to_string();
        let rel = format!("archive/{}/{name}", row.mtype.as_str());
        Ok((row, memory, rel))
    }

    fn archive(&self, id: &str) -> Result<(), StoreError> {
        let (row, memory, rel) = self.archive_plan(id)?;
        let from = self.dir.join(&row.path);
        let to = self.dir.join(&rel);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        std::fs::create_dir_all(to.parent().unwrap_or(&self.dir)).map_err(io(&to))?;
        std::fs::rename(&from, &to).map_err(io(&from))?;
        let stamp = stamp_of(&to).map_err(io(&to))?;
        self.index
            .upsert(&memory, &placement(&memory, &rel, stamp, true))
            .map_err(|e| self.db_err(e))
    }

    /// Lowers confidence by [`FLAG_STEP`]; at or below [`FLAG_ARCHIVE_AT`] the memory is
    /// archived.
    pub fn flag(&mut self, id: &str) -> Result<Flagged, StoreError> {
        let row = self.row(id)?;
        if row.archived {
            return Err(StoreError::Archived { id: id.to_string() });
        }
        let mut memory = self.read(&row)?;
        memory.confidence = ((memory.confidence - FLAG_STEP) * 100.0).round() / 100.0;
        memory.confidence = memory.confidence.max(0.0);
        self.save(&memory, &row.path, false)?;
        let archived = memory.confidence <= FLAG_ARCHIVE_AT + 1e-9;
        if archived {
            self.archive(id)?;
        }
        self.write_overview()?;
        Ok(Flagged {
            confidence: memory.confidence,
            archived,
        })
    }

    /// (type, active, archived) counts.
    pub fn counts(&self) -> Result<Vec<(MemoryType, usize, usize)>, StoreError> {
        self.index.counts().map_err(|e| self.db_err(e))
    }

    /// The text of `MEMORY.md` as the index stands now (see [`overview`]).
    pub fn overview(&self) -> Result<String, StoreError> {
        let rows = self.index.list(false).map_err(|e| self.db_err(e))?;
        Ok(overview::render(&rows, now_unix()))
    }

    /// Regenerates `MEMORY.md`.
    pub(super) fn write_overview(&self) -> Result<(), StoreError> {
        // Every path that changes memories ends here, so this is where new text gets
        // its vector. A failed embedding leaves the memory saved and found by full text.
        if let Err(e) = self.embed_missing() {
            tracing::warn!("{e}");
        }
        let path = self.dir.join(overview::FILE_NAME);
        if let Ok(on_disk) = std::fs::read_to_string(&path) {
            if !overview::is_generated(&on_disk) {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    tracing::warn!(
                        "{} was not generated by harvey: it is left as it is (`harvey memory index` prints harvey's)",
                        path.display()
                    )
                });
                return Ok(());
            }
        }
        let text = self.overview()?;
        file::write_atomic(&path, text.as_bytes()).map_err(|source| StoreError::Io { path, source })
    }
}

fn placement<'a>(m: &Memory, rel: &'a str, stamp: FileStamp, archived: bool) -> Placement<'a> {
    let updated = parse_time(&m.updated_at)
        .or_else(|| parse_time(&m.created_at))
        .unwrap_or(stamp.mtime_ns / 1_000_000_000);
    Placement {
        path: rel,
        stamp,
        archived,
        updated,
        expires: m.expires_at.as_deref().and_then(parse_time),
    }
}
