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

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use crate::memory::guard::find_secret;
use crate::memory::query::fts_query;
use crate::memory::rank::Ranking;
use crate::memory::recall::{Candidate, Section, Silo};
use crate::memory::store::now_unix;
use crate::memory::StoreError;
use crate::tokens::Embedder;
use crate::vector::text_hash;

mod concepts;
mod foreign;
pub mod import;
mod search;

pub use search::{observation_line, KbSilo};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS projects(
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    description TEXT NOT NULL DEFAULT '',
    created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS observations(
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    hash TEXT NOT NULL,
    created INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS observations_project ON observations(project_id, created DESC);
CREATE TABLE IF NOT EXISTS concepts(
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    description TEXT NOT NULL DEFAULT '',
    created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS links(
    observation_id INTEGER NOT NULL REFERENCES observations(id),
    concept_id INTEGER NOT NULL REFERENCES concepts(id),
    PRIMARY KEY(observation_id, concept_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS observations_fts USING fts5(
    text, kind, tokenize = 'porter unicode61'
);
";

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
    #[error("knowledge base {path}: {source} ({hint})", hint = crate::storage::connection::hint(source, "it is the only copy of the knowledge base: keep a backup before changing it"))]
    Db {
        path: PathBuf,
        source: rusqlite::Error,
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
    conn: Connection,
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
        let conn = crate::storage::open(path).map_err(db)?;
        crate::storage::immediate(&conn, || {
            conn.execute_batch(SCHEMA)?;
            conn.execute_batch(crate::storage::vectors::SCHEMA)?;
            conn.execute_batch(&crate::storage::vectors::watch("observations"))
        })
        .map_err(db)?;
        let kb = Self {
            path: path.to_path_buf(),
            conn,
            embedder,
            vectors: crate::vector::VectorCache::with_file(crate::vector::sidecar_path(path)),
            foreign: false,
        };
        // Under the write lock: two processes opening a new knowledge base must not both
        // create the default project.
        crate::storage::immediate_with(
            &kb.conn,
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

    fn db_err(&self, source: rusqlite::Error) -> KbError {
        KbError::Db {
            path: self.path.clone(),
            source,
        }
    }

    fn current_id(&self) -> Result<Option<i64>, KbError> {
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'current_project'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.db_err(e))?;
        let Some(id) = id.and_then(|s| s.parse::<i64>().ok()) else {
            return Ok(None);
        };
        let exists = self
            .conn
            .query_row("SELECT 1 FROM projects WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map_err(|e| self.db_err(e))?;
        Ok(exists.map(|_| id))
    }

    fn set_current(&self, id: i64) -> Result<(), KbError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('current_project', ?1)",
                [id.to_string()],
            )
            .map(|_| ())
            .map_err(|e| self.db_err(e))
    }

    fn project_id(&self, name: &str) -> Result<Option<i64>, KbError> {
        self.conn
            .query_row("SELECT id FROM projects WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.db_err(e))
    }

    fn insert_project(&self, name: &str, description: &str) -> Result<i64, KbError> {
        let name = name.trim();
        if name.is_empty() || name.len() > 100 || name.contains('\n') {
            return Err(KbError::Invalid(
                "a project name is one line of at most 100 characters".into(),
            ));
        }
        self.conn
            .execute(
                "INSERT INTO projects(name, description, created) VALUES (?1, ?2, ?3)",
                params![name, description.trim(), now_unix()],
            )
            .map_err(|e| self.db_err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The current project's name.
    pub fn current_project(&self) -> Result<String, KbError> {
        let id = self.current_id()?.unwrap_or(0);
        self.conn
            .query_row("SELECT name FROM projects WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .map_err(|e| self.db_err(e))
    }

    pub fn projects(&self) -> Result<Vec<Project>, KbError> {
        let current = self.current_id()?;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT p.id, p.name, p.description, \
                 (SELECT COUNT(*) FROM observations o WHERE o.project_id = p.id) \
                 FROM projects p ORDER BY p.name",
            )
            .map_err(|e| self.db_err(e))?;
        let rows = stmt
            .query_map([], |r| {
                let id: i64 = r.get(0)?;
                Ok(Project {
                    id,
                    name: r.get(1)?,
                    description: r.get(2)?,
                    observations: r.get::<_, i64>(3)? as usize,
                    current: Some(id) == current,
                })
            })
            .map_err(|e| self.db_err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.db_err(e))
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
        let hash = text_hash(text);
        let db = |e| self.db_err(e);
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(db)?;
        let result = (|| -> rusqlite::Result<i64> {
            self.conn.execute(
                "INSERT INTO observations(project_id, kind, text, hash, created) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![project, kind, text, hash, now],
            )?;
            let id = self.conn.last_insert_rowid();
            self.conn.execute(
                "INSERT INTO observations_fts(rowid, text, kind) VALUES (?1, ?2, ?3)",
                params![id, text, kind],
            )?;
            Ok(id)
        })();
        let id = match result {
            Ok(id) => {
                self.conn.execute_batch("COMMIT").map_err(db)?;
                id
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                return Err(db(e));
            }
        };
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
        let mut stmt = self
            .conn
            .prepare(
                "SELECT DISTINCT o.hash, o.text FROM observations o WHERE NOT EXISTS \
                 (SELECT 1 FROM vectors v WHERE v.hash = o.hash AND v.model = ?1)",
            )
            .map_err(|e| self.db_err(e))?;
        let missing: Vec<(String, String)> = stmt
            .query_map([model], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.db_err(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.db_err(e))?;
        let mut done = 0;
        for group in missing.chunks(64) {
            let texts: Vec<&str> = group.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = embedder
                .embed(&texts)
                .map_err(|e| KbError::Invalid(e.to_string()))?;
            let items: Vec<(String, Vec<f32>)> =
                group.iter().map(|(h, _)| h.clone()).zip(vectors).collect();
            crate::storage::vectors::put(&self.conn, model, &items).map_err(|e| self.db_err(e))?;
            done += items.len();
        }
        Ok(done)
    }

    pub fn observation(&self, id: i64) -> Result<Observation, KbError> {
        let found = self
            .conn
            .query_row(
                "SELECT o.id, p.name, o.kind, o.text, o.created FROM observations o \
                 JOIN projects p ON p.id = o.project_id WHERE o.id = ?1",
                [id],
                |r| {
                    Ok(Observation {
                        id: r.get(0)?,
                        project: r.get(1)?,
                        kind: r.get(2)?,
                        text: r.get(3)?,
                        created: r.get(4)?,
                        concepts: Vec::new(),
                        score: 0.0,
                    })
                },
            )
            .optional()
            .map_err(|e| self.db_err(e))?;
        let mut obs = found.ok_or(KbError::NoObservation(id))?;
        obs.concepts = self.concepts_of(id)?;
        Ok(obs)
    }

    pub fn status(&self) -> Result<KbStatus, KbError> {
        let count = |sql: &str| -> Result<usize, KbError> {
            self.conn
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|n| n as usize)
                .map_err(|e| self.db_err(e))
        };
        let vectors = match &self.embedder {
            Some(e) => self
                .conn
                .query_row(
                    "SELECT COUNT(*) FROM observations o WHERE EXISTS \
                     (SELECT 1 FROM vectors v WHERE v.hash = o.hash AND v.model = ?1)",
                    [e.model_id()],
                    |r| r.get::<_, i64>(0),
                )
                .map(|n| n as usize)
                .map_err(|e| self.db_err(e))?,
            None => 0,
        };
        Ok(KbStatus {
            path: self.path.clone(),
            current_project: self.current_project()?,
            projects: count("SELECT COUNT(*) FROM projects")?,
            observations: count("SELECT COUNT(*) FROM observations")?,
            concepts: count("SELECT COUNT(*) FROM concepts")?,
            links: count("SELECT COUNT(*) FROM links")?,
            vectors,
            embedder: self.embedder.as_ref().map(|e| e.model_id().to_string()),
        })
    }
}

#[cfg(test)]
mod tests;
