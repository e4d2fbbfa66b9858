//! RAG stores: `agents/rag/<name>.harvey.db` (see [`files`]), one SQLite file per store
//! with the ingested files, their chunks (path and line range), an FTS5 index and vectors.
//! The Go tool's stores (`agents/rag/<name>.db`) are searched in memory ([`foreign`]) or
//! copied into one of harvey's own ([`import`]).
//!
//! A store remembers which embedder made its vectors and refuses another one, since
//! vectors of two models cannot be compared. Chunks are keyed by a hash of their text, so
//! re-ingesting an unchanged tree changes nothing and a changed file only replaces its
//! own chunks.

pub mod chunk;
pub mod files;
mod foreign;
pub mod import;
pub mod ingest;
pub mod settings;
#[cfg(test)]
mod tests;

pub use files::{is_imported, list, rag_dir, valid_name, written_by_go};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::memory::query::fts_query;
use crate::memory::rank::Ranking;
use crate::memory::recall::{Candidate, Section, Silo};
use crate::memory::StoreError;
use crate::storage::rag::RagTables;
use crate::tokens::Embedder;

#[derive(Debug, thiserror::Error)]
pub enum RagError {
    #[error("RAG store name {0:?}: use letters, digits, '-' and '_' (at most 64)")]
    BadName(String),
    #[error("no RAG store named {name:?} (`/rag list` shows them, `/rag new {name}` makes it)")]
    NoStore { name: String },
    #[error("a RAG store named {0:?} already exists")]
    Exists(String),
    #[error(
        "the Go harvey has a RAG store named {0:?} (agents/rag/{0}.db): `/rag import {0}` \
         copies it into a store of harvey's own, or choose another name"
    )]
    GoExists(String),
    #[error("RAG store {path}: {source} ({hint})", hint = crate::storage::hint(source, "if it is damaged, delete it and ingest the files again"))]
    Db {
        path: PathBuf,
        source: crate::storage::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "RAG store {name:?} was built with the embedder {recorded}, but the current one is {current}; \
         vectors of two models cannot be compared — set memory.embedder to the store's model, \
         or make a new store and ingest again"
    )]
    EmbedderMismatch {
        name: String,
        recorded: String,
        current: String,
    },
    #[error("{0}")]
    Embed(String),
    #[error(
        "RAG store {name:?} ({path}) was written by the Go harvey: harvey searches it and never \
         writes it; `/rag import {name}` copies it into a store of harvey's own that can be changed"
    )]
    Foreign { name: String, path: PathBuf },
    #[error(
        "no Go RAG store named {name:?} (agents/rag/{name}.db) to import; `/rag list` shows \
         the stores, the Go harvey's marked as such"
    )]
    NoGoStore { name: String },
    #[error(
        "the Go RAG store {name:?} was imported already, into {path}, and harvey uses that copy; \
         to import it again, `/rag drop {name}` (deletes harvey's copy only) and then \
         `/rag import {name}`"
    )]
    AlreadyImported { name: String, path: PathBuf },
    #[error(
        "RAG store {name:?} is harvey's own, not the Go harvey's: there is nothing to import \
         (`/rag status {name}` shows it)"
    )]
    NotGo { name: String },
    #[error("{path}: not a RAG store harvey can read (no chunks table with a content column); it is left as it is")]
    Unreadable { path: PathBuf },
}

/// A chunk found by a query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkHit {
    pub id: i64,
    pub store: String,
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub heading: Option<String>,
    pub text: String,
    pub hash: String,
    /// Larger is better, 0–1.
    pub score: f64,
}

impl ChunkHit {
    /// `rag:store/path:10-24`
    pub fn source(&self) -> String {
        format!(
            "rag:{}/{}:{}-{}",
            self.store, self.path, self.start_line, self.end_line
        )
    }
}

/// Numbers for `/rag status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoreStatus {
    pub name: String,
    pub path: PathBuf,
    pub files: usize,
    pub chunks: usize,
    pub vectors: usize,
    pub embedder: Option<String>,
    pub bytes: u64,
}

pub struct RagStore {
    name: String,
    path: PathBuf,
    tables: RagTables,
    embedder: Option<Arc<dyn Embedder>>,
    vectors: crate::vector::VectorCache<i64>,
    /// Written by the Go tool: read into memory, never written (see `foreign`).
    foreign: bool,
}

impl RagStore {
    /// Makes a new, empty store.
    pub fn create(
        agents_dir: &Path,
        name: &str,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, RagError> {
        if !valid_name(name) {
            return Err(RagError::BadName(name.into()));
        }
        let dir = rag_dir(agents_dir);
        let path = match files::locate(agents_dir, name) {
            files::Located::Own { .. } => return Err(RagError::Exists(name.into())),
            files::Located::Go(_) => return Err(RagError::GoExists(name.into())),
            files::Located::Missing => files::own_path(agents_dir, name),
        };
        std::fs::create_dir_all(&dir).map_err(|source| RagError::Io {
            path: dir.clone(),
            source,
        })?;
        Self::at(&path, name, embedder)
    }

    /// Opens an existing store. An embedder other than the one the store was built with
    /// is refused.
    pub fn open(
        agents_dir: &Path,
        name: &str,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, RagError> {
        if !valid_name(name) {
            return Err(RagError::BadName(name.into()));
        }
        match files::locate(agents_dir, name) {
            files::Located::Own { path, .. } => Self::at(&path, name, embedder),
            files::Located::Go(path) => foreign::open(&path, name),
            files::Located::Missing => Err(RagError::NoStore { name: name.into() }),
        }
    }

    /// Opens a store at any path (benchmarks, tests).
    pub fn at(
        path: &Path,
        name: &str,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, RagError> {
        let db = |source| RagError::Db {
            path: path.to_path_buf(),
            source,
        };
        let tables = RagTables::open(path).map_err(db)?;
        let store = Self {
            name: name.to_string(),
            path: path.to_path_buf(),
            tables,
            embedder: None,
            vectors: crate::vector::VectorCache::with_file(crate::vector::sidecar_path(path)),
            foreign: false,
        };
        if let Some(e) = embedder {
            store.bind_embedder(e.as_ref())?;
            return Ok(Self {
                embedder: Some(e),
                ..store
            });
        }
        Ok(store)
    }

    /// Records the embedder on first use; refuses a different one afterwards.
    fn bind_embedder(&self, e: &dyn Embedder) -> Result<(), RagError> {
        match self.recorded_embedder()? {
            Some(recorded) if recorded != e.model_id() => Err(RagError::EmbedderMismatch {
                name: self.name.clone(),
                recorded,
                current: e.model_id().to_string(),
            }),
            Some(_) => Ok(()),
            None => self
                .tables
                .record_embedder(e.model_id())
                .map_err(|e| self.db_err(e)),
        }
    }

    pub fn recorded_embedder(&self) -> Result<Option<String>, RagError> {
        self.tables.recorded_embedder().map_err(|e| self.db_err(e))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Maps and checks this store's vector copy ahead of its first query (see
    /// `vector::VectorCache::warm`), e.g. while the embedder loads. True when ready; a
    /// failure only means the first query does the work.
    pub fn warm(&self) -> bool {
        let model = self.embedder.as_ref().map(|e| e.model_id());
        self.tables
            .warm_vectors(&self.vectors, model)
            .unwrap_or(false)
    }

    fn db_err(&self, source: crate::storage::Error) -> RagError {
        RagError::Db {
            path: self.path.clone(),
            source,
        }
    }

    /// Whether the Go tool wrote this store (searched, never written).
    pub fn is_foreign(&self) -> bool {
        self.foreign
    }

    /// `Err` for a store harvey must not write.
    pub(crate) fn writable(&self) -> Result<(), RagError> {
        if self.foreign {
            return Err(RagError::Foreign {
                name: self.name.clone(),
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    pub(crate) fn tables(&self) -> &RagTables {
        &self.tables
    }

    pub fn status(&self) -> Result<StoreStatus, RagError> {
        let model = self.embedder.as_ref().map(|e| e.model_id());
        let counts = self.tables.counts(model).map_err(|e| self.db_err(e))?;
        Ok(StoreStatus {
            name: self.name.clone(),
            path: self.path.clone(),
            files: counts.files,
            chunks: counts.chunks,
            vectors: counts.vectors,
            embedder: self.recorded_embedder()?,
            bytes: std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0),
        })
    }

    /// Every chunk's (path, start, end, hash), in order: what tests compare across ingests.
    pub fn chunk_keys(&self) -> Result<Vec<(String, usize, usize, String)>, RagError> {
        self.tables.chunk_keys().map_err(|e| self.db_err(e))
    }

    /// Inserts chunks without reading files (benchmarks: 100k chunks in seconds), with
    /// vectors under `model` when given. One transaction.
    pub fn bulk_insert(
        &mut self,
        chunks: &[(String, usize, usize, String)],
        vectors: Option<(&str, &[Vec<f32>])>,
    ) -> Result<(), RagError> {
        self.writable()?;
        self.tables
            .bulk_insert(chunks, vectors)
            .map_err(|e| self.db_err(e))
    }

    /// Ranked chunks for `query`: full text and (with an embedder) nearest vectors, fused
    /// by the shared ranking; only chunks that show evidence on an absolute scale take
    /// part (`Ranking::with_evidence`), so a store's best chunk is not relevant by
    /// construction.
    pub fn query(&self, query: &str, k: usize) -> Result<Vec<ChunkHit>, RagError> {
        let ranking = Ranking::default();
        let pool = ranking.pool(k);
        let lexical = match fts_query(query) {
            Some(fts) => self.fts(&fts, pool)?,
            None => Vec::new(),
        };
        tracing::debug!("phase: rag {}: full text", self.name);
        let nearest = self.nearest(query, pool)?;
        tracing::debug!("phase: rag {}: vectors", self.name);
        let (lexical, nearest) = ranking.with_evidence(lexical, nearest, pool);
        let nearest = ranking.keep_similar(nearest);
        let scored = ranking.fuse(&lexical, &nearest);
        let mut hits = Vec::new();
        for (id, score) in scored.into_iter().take(k) {
            if let Some(mut hit) = self.chunk(id)? {
                hit.score = score;
                hits.push(hit);
            }
        }
        tracing::debug!("phase: rag {}: chunks read", self.name);
        Ok(hits)
    }

    fn fts(&self, fts: &str, limit: usize) -> Result<Vec<(i64, f64)>, RagError> {
        self.tables.fts(fts, limit).map_err(|e| self.db_err(e))
    }

    fn nearest(&self, query: &str, k: usize) -> Result<Vec<(i64, f32)>, RagError> {
        let Some(embedder) = &self.embedder else {
            return Ok(Vec::new());
        };
        let Some(q) = crate::tokens::embed_query(embedder.as_ref(), query, "RAG query") else {
            return Ok(Vec::new());
        };
        tracing::debug!("phase: rag {}: query embedded", self.name);
        let found = self
            .scan(&q, embedder.model_id(), k)
            .map_err(|e| self.db_err(e))?;
        Ok(found)
    }

    /// The exact scan over every chunk's vector (an int8 copy beside the database, see
    /// `vector::VectorCache`; measured in `benches/retrieval.rs`).
    fn scan(&self, q: &[f32], model: &str, k: usize) -> crate::storage::Result<Vec<(i64, f32)>> {
        self.tables.nearest(&self.vectors, q, model, k)
    }

    fn chunk(&self, id: i64) -> Result<Option<ChunkHit>, RagError> {
        let row = self.tables.chunk(id).map_err(|e| self.db_err(e))?;
        Ok(row.map(|r| ChunkHit {
            id: r.id,
            store: self.name.clone(),
            path: r.path,
            start_line: r.start_line,
            end_line: r.end_line,
            heading: r.heading,
            text: r.text,
            hash: r.hash,
            score: 0.0,
        }))
    }
}

/// One RAG store as a recall silo: its chunks go to `[knowledge]`.
pub struct RagSilo<'a> {
    pub store: &'a RagStore,
    /// Chunks per recall at most (`memory.rag.top_k`).
    pub top_k: usize,
    label: String,
}

impl<'a> RagSilo<'a> {
    pub fn new(store: &'a RagStore, top_k: usize) -> Self {
        let label = format!("rag:{}", store.name());
        Self {
            store,
            top_k,
            label,
        }
    }
}

/// A chunk as one block line: `- (rag:docs/README.md:10-24) text…`.
pub fn chunk_line(hit: &ChunkHit) -> String {
    let flat = hit.text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("- ({}) {flat}", hit.source())
}

impl Silo for RagSilo<'_> {
    fn name(&self) -> &str {
        &self.label
    }

    fn candidates(&self, query: &str, k: usize) -> Result<Vec<Candidate>, StoreError> {
        if query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let hits = self
            .store
            .query(query, k.min(self.top_k).max(1))
            .map_err(|e| StoreError::Silo(e.to_string()))?;
        Ok(hits
            .iter()
            .map(|h| Candidate {
                id: h.source(),
                source: self.label.clone(),
                section: Section::Knowledge,
                text: chunk_line(h),
                score: h.score,
                written: 0,
            })
            .collect())
    }
}

/// Opens the stores recall should use (per [`settings::RagSettings`]). A store built
/// with another embedder is opened for full-text search only; problems become notices.
pub fn open_active(
    agents_dir: &Path,
    config: &crate::config::RagConfig,
    embedder: Option<&Arc<dyn Embedder>>,
) -> (Vec<RagStore>, bool, Vec<String>) {
    let mut notices = Vec::new();
    let settings = match settings::RagSettings::load(agents_dir, config) {
        Ok(s) => s,
        Err(e) => {
            notices.push(format!("rag: {e}"));
            return (Vec::new(), false, notices);
        }
    };
    let mut stores = Vec::new();
    for name in &settings.active {
        match RagStore::open(agents_dir, name, embedder.cloned()) {
            Ok(s) if s.is_foreign() => {
                notices.push(format!(
                    "rag: store {name:?} was written by the Go harvey: searched by full text, never \
                     written (`/rag import {name}` makes it harvey's own)"
                ));
                stores.push(s);
            }
            Ok(s) => stores.push(s),
            Err(e @ RagError::EmbedderMismatch { .. }) => {
                notices.push(format!("rag: {e}; using full-text search for it"));
                if let Ok(s) = RagStore::open(agents_dir, name, None) {
                    stores.push(s);
                }
            }
            Err(e) => notices.push(format!("rag: {e}")),
        }
    }
    (stores, settings.enabled, notices)
}
