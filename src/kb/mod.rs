//! The knowledge base: `agents/harvey-knowledge.db` (a name of its own: the Go tool's is
//! `agents/knowledge.db`, searched in memory by [`foreign`] or copied by [`import`]) with
//! projects, observations (note, finding,
//! decision, question, hypothesis), concepts and the links between them; FTS5 over
//! observations and vectors keyed by content hash.
//!
//! It works with no setting: the current project starts as `memory.knowledge_base.project`
//! or the workspace directory's name, and is created on first open. `/kb project use`
//! switches it for later sessions too (stored in the database).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::memory::guard::find_secret;
use crate::memory::query::fts_query;
use crate::memory::rank::Ranking;
use crate::memory::recall::{Candidate, Section, Silo};
use crate::memory::store::now_unix;
use crate::memory::StoreError;
use crate::storage::kb::KbTables;
use crate::tokens::Embedder;

mod concepts;
mod foreign;
pub mod import;
mod search;

pub use search::{observation_line, KbSilo};

/// Observation kinds.
pub const KINDS: [&str; 5] = ["note", "finding", "decision", "question", "hypothesis"];

/// The startup note for a knowledge base the Go tool wrote.
pub const FOREIGN_NOTE: &str =
    "knowledge base agents/knowledge.db was written by the Go harvey: searched by full text, never \
     written (`/kb import` makes it harvey's own)";

/// Longest observation (an observation is a sentence or a paragraph, not a document;
/// documents go to a RAG store).
pub const MAX_OBSERVATION_BYTES: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum KbError {
    #[error("knowledge base {path}: {source} ({hint})", hint = crate::storage::hint(source, "it is the only copy of the knowledge base: keep a backup before changing it"))]
    Db {
        path: PathBuf,
        source: crate::storage::Error,
    },
    #[error(
        "{path} was written by the Go harvey: harvey searches it and never writes it (what \
         you add would be lost at exit); `/kb import` copies it into harvey's own knowledge \
         base, which can be added to"
    )]
    Foreign { path: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "no project named {0:?} (`/kb project list` shows them, `/kb project add {0}` makes one)"
    )]
    NoProject(String),
    #[error("a project named {0:?} already exists")]
    ProjectExists(String),
    #[error("no observation {0} (`/kb search` shows ids)")]
    NoObservation(i64),
    #[error("{0}")]
    Invalid(String),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Project {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub observations: usize,
    pub current: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    pub id: i64,
    pub project: String,
    pub kind: String,
    pub text: String,
    pub created: i64,
    pub concepts: Vec<String>,
    /// Search rank score (0–1); 0 outside searches.
    pub score: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Concept {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub observations: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KbStatus {
    pub path: PathBuf,
    pub current_project: String,
    pub projects: usize,
    pub observations: usize,
    pub concepts: usize,
    pub links: usize,
    pub vectors: usize,
    pub embedder: Option<String>,
}

pub struct KnowledgeBase {
    path: PathBuf,
    tables: KbTables,
    embedder: Option<Arc<dyn Embedder>>,
    vectors: crate::vector::VectorCache<(i64, i64)>,
    /// Written by the Go tool: read into memory, never written (see `foreign`).
    foreign: bool,
}

/// The project a workspace starts with: the config's, else the directory's name.
pub fn default_project(configured: Option<&str>, workspace: &Path) -> String {
    configured
        .map(str::to_string)
        .filter(|s| !s.trim().is_empty())
        .or_else(|| {
            workspace
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        })
        .unwrap_or_else(|| "workspace".into())
}

impl KnowledgeBase {
    /// Opens (creating) `agents/harvey-knowledge.db`; `default_project` is created and
    /// made current if no project is current yet. Without it, a knowledge base the Go tool
    /// wrote (`agents/knowledge.db`) is read into memory instead.
    pub fn open(
        agents_dir: &Path,
        default_project: &str,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, KbError> {
        std::fs::create_dir_all(agents_dir).map_err(|source| KbError::Io {
            path: agents_dir.to_path_buf(),
            source,
        })?;
        let path = import::own_path(agents_dir);
        let go = agents_dir.join(import::GO_FILE);
        if !path.exists() && crate::storage::written_elsewhere(&go) {
            return foreign::open(&go, default_project);
        }
        Self::at(&path, default_project, embedder)
    }

    pub fn at(
        path: &Path,
        default_project: &str,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, KbError> {
        let db = |source| KbError::Db {
            path: path.to_path_buf(),
            source,
        };
        let tables = KbTables::open(path).map_err(db)?;
        let kb = Self {
            path: path.to_path_buf(),
            tables,
            embedder,
            vectors: crate::vector::VectorCache::with_file(crate::vector::sidecar_path(path)),
            foreign: false,
        };
        // Under the write lock: two processes opening a new knowledge base must not both
        // create the default project.
        kb.tables.immediate(
            |e| kb.db_err(e),
            || {
                if kb.current_id()?.is_none() {
                    let id = match kb.project_id(default_project)? {
                        Some(id) => id,
                        None => kb.insert_project(default_project, "")?,
                    };
                    kb.set_current(id)?;
                }
                Ok(())
            },
        )?;
        kb.embed_missing()?;
        Ok(kb)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the Go tool wrote this knowledge base (searched, never written).
    pub fn is_foreign(&self) -> bool {
        self.foreign
    }

    fn writable(&self) -> Result<(), KbError> {
        if self.foreign {
            return Err(KbError::Foreign {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    fn db_err(&self, source: crate::storage::Error) -> KbError {
        KbError::Db {
            path: self.path.clone(),
            source,
        }
    }

    fn current_id(&self) -> Result<Option<i64>, KbError> {
        self.tables.current_project_id().map_err(|e| self.db_err(e))
    }

    fn set_current(&self, id: i64) -> Result<(), KbError> {
        self.tables
            .set_current_project(id)
            .map_err(|e| self.db_err(e))
    }

    fn project_id(&self, name: &str) -> Result<Option<i64>, KbError> {
        self.tables.project_id(name).map_err(|e| self.db_err(e))
    }

    fn insert_project(&self, name: &str, description: &str) -> Result<i64, KbError> {
        let name = name.trim();
        if name.is_empty() || name.len() > 100 || name.contains('\n') {
            return Err(KbError::Invalid(
                "a project name is one line of at most 100 characters".into(),
            ));
        }
        self.tables
            .insert_project(name, description.trim(), now_unix())
            .map_err(|e| self.db_err(e))
    }

    /// The current project's name.
    pub fn current_project(&self) -> Result<String, KbError> {
        let id = self.current_id()?.unwrap_or(0);
        self.tables.project_name(id).map_err(|e| self.db_err(e))
    }

    pub fn projects(&self) -> Result<Vec<Project>, KbError> {
        let current = self.current_id()?;
        let rows = self.tables.projects().map_err(|e| self.db_err(e))?;
        Ok(rows
            .into_iter()
            .map(|p| Project {
                current: Some(p.id) == current,
                id: p.id,
                name: p.name,
                description: p.description,
                observations: p.observations,
            })
            .collect())
    }

    pub fn add_project(&self, name: &str, description: &str) -> Result<(), KbError> {
        self.writable()?;
        if self.project_id(name)?.is_some() {
            return Err(KbError::ProjectExists(name.into()));
        }
        self.insert_project(name, description).map(|_| ())
    }

    /// Makes `name` the current project (for this and later sessions; for this session
    /// only in a knowledge base the Go tool wrote).
    pub fn use_project(&self, name: &str) -> Result<(), KbError> {
        let id = self
            .project_id(name)?
            .ok_or_else(|| KbError::NoProject(name.into()))?;
        self.set_current(id)
    }

    /// Records an observation in the current project. `kind` must be one of [`KINDS`].
    pub fn observe(&self, kind: &str, text: &str) -> Result<Observation, KbError> {
        self.writable()?;
        let kind = kind.to_ascii_lowercase();
        if !KINDS.contains(&kind.as_str()) {
            return Err(KbError::Invalid(format!(
                "unknown observation kind {kind:?}: expected one of {}",
                KINDS.join(", ")
            )));
        }
        let text = text.trim();
        if text.is_empty() {
            return Err(KbError::Invalid("an observation needs text".into()));
        }
        if text.len() > MAX_OBSERVATION_BYTES {
            return Err(KbError::Invalid(format!(
                "the observation is {} bytes; keep it under {MAX_OBSERVATION_BYTES} (put documents in a RAG store: /rag ingest)",
                text.len()
            )));
        }
        if let Some(what) = find_secret(text) {
            return Err(KbError::Invalid(format!(
                "the text looks like it contains {what}; the knowledge base is plain text, so it was not saved"
            )));
        }
        let project = self.current_id()?.unwrap_or(0);
        let now = now_unix();
        let id = self
            .tables
            .insert_observation(project, &kind, text, now)
            .map_err(|e| self.db_err(e))?;
        if let Err(e) = self.embed_missing() {
            tracing::warn!("knowledge base: {e}");
        }
        self.observation(id)
    }

    /// Vectors for observations that have none from the current embedder.
    pub fn embed_missing(&self) -> Result<usize, KbError> {
        let Some(embedder) = &self.embedder else {
            return Ok(0);
        };
        let model = embedder.model_id();
        let missing = self
            .tables
            .missing_vectors(model)
            .map_err(|e| self.db_err(e))?;
        let mut done = 0;
        for group in missing.chunks(64) {
            let texts: Vec<&str> = group.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = embedder
                .embed(&texts)
                .map_err(|e| KbError::Invalid(e.to_string()))?;
            let items: Vec<(String, Vec<f32>)> =
                group.iter().map(|(h, _)| h.clone()).zip(vectors).collect();
            self.tables
                .put_vectors(model, &items)
                .map_err(|e| self.db_err(e))?;
            done += items.len();
        }
        Ok(done)
    }

    pub fn observation(&self, id: i64) -> Result<Observation, KbError> {
        let found = self
            .tables
            .observation(id)
            .map_err(|e| self.db_err(e))?
            .map(|r| Observation {
                id: r.id,
                project: r.project,
                kind: r.kind,
                text: r.text,
                created: r.created,
                concepts: Vec::new(),
                score: 0.0,
            });
        let mut obs = found.ok_or(KbError::NoObservation(id))?;
        obs.concepts = self.concepts_of(id)?;
        Ok(obs)
    }

    pub fn status(&self) -> Result<KbStatus, KbError> {
        let db = |e| self.db_err(e);
        let vectors = match &self.embedder {
            Some(e) => self.tables.vectors_of(e.model_id()).map_err(db)?,
            None => 0,
        };
        let current_project = self.current_project()?;
        let counts = self.tables.counts().map_err(db)?;
        Ok(KbStatus {
            path: self.path.clone(),
            current_project,
            projects: counts.projects,
            observations: counts.observations,
            concepts: counts.concepts,
            links: counts.links,
            vectors,
            embedder: self.embedder.as_ref().map(|e| e.model_id().to_string()),
        })
    }
}

#[cfg(test)]
mod tests;
