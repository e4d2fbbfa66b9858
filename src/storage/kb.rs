//! The tables of the knowledge base (`projects`, `observations`, `observations_fts`,
//! `concepts`, `links`, `meta`, the vectors): its schema, a Go tool's knowledge base
//! copied into memory, and one function per question the `kb` module asks. Validation,
//! ranking and embedding stay in `kb`.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use super::shared::{self, VectorJoin};
use super::Result;
use crate::vector::{text_hash, VectorCache};

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

/// The observations' rows joined to their vectors: (id, project id) per row.
const JOIN: VectorJoin<'static> = VectorJoin {
    table: "observations",
    hash: "hash",
    keys: "t.id, t.project_id",
    filter: "",
};

/// A project as stored, with its number of observations.
pub struct ProjectRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub observations: usize,
}

/// An observation as stored, with its project's name.
pub struct ObservationRow {
    pub id: i64,
    pub project: String,
    pub kind: String,
    pub text: String,
    pub created: i64,
}

/// A concept as stored, with its number of linked observations.
pub struct ConceptRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub observations: usize,
}

/// The numbers `/kb status` shows (the vectors are asked for apart).
pub struct Counts {
    pub projects: usize,
    pub observations: usize,
    pub concepts: usize,
    pub links: usize,
}

/// The knowledge base's open database.
pub struct KbTables {
    conn: Connection,
}

impl KbTables {
    /// Opens (creating) the knowledge base at `path`, its schema set up under the write
    /// lock.
    pub fn open(path: &Path) -> Result<Self> {
        let conn = super::open(path)?;
        super::immediate(&conn, || {
            conn.execute_batch(SCHEMA)?;
            conn.execute_batch(super::vectors::SCHEMA)?;
            conn.execute_batch(&super::vectors::watch("observations"))
        })?;
        Ok(Self { conn })
    }

    /// The Go tool's knowledge base at `path` copied into memory with this schema (the
    /// file is opened immutable, never written); `None` when it has no observations table
    /// with a text column.
    pub fn copy_go_store(path: &Path) -> Result<Option<Self>> {
        let source = super::open_untouched(path)?;
        let Some(text) = text_column(&source)? else {
            return Ok(None);
        };
        let conn = Connection::open_in_memory()?;
        copy_go_rows(&source, &conn, &text)?;
        Ok(Some(Self { conn }))
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction (see [`super::immediate_with`]).
    pub fn immediate<T, E>(
        &self,
        lift: impl Fn(super::Error) -> E,
        f: impl FnOnce() -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        super::immediate_with(&self.conn, |e| lift(e.into()), f)
    }

    /// The current project's id as recorded, if that project exists.
    pub fn current_project_id(&self) -> Result<Option<i64>> {
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'current_project'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        let Some(id) = id.and_then(|s| s.parse::<i64>().ok()) else {
            return Ok(None);
        };
        let exists = self
            .conn
            .query_row("SELECT 1 FROM projects WHERE id = ?1", [id], |_| Ok(()))
            .optional()?;
        Ok(exists.map(|_| id))
    }

    pub fn set_current_project(&self, id: i64) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('current_project', ?1)",
            [id.to_string()],
        )?;
        Ok(())
    }

    pub fn project_id(&self, name: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT id FROM projects WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// The lowest project id, if there is a project.
    pub fn first_project(&self) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT id FROM projects ORDER BY id LIMIT 1", [], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// Adds a project; returns its id.
    pub fn insert_project(&self, name: &str, description: &str, now: i64) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO projects(name, description, created) VALUES (?1, ?2, ?3)",
            params![name, description, now],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The name of project `id` (an error when there is none).
    pub fn project_name(&self, id: i64) -> Result<String> {
        Ok(self
            .conn
            .query_row("SELECT name FROM projects WHERE id = ?1", [id], |r| {
                r.get(0)
            })?)
    }

    /// Every project by name.
    pub fn projects(&self) -> Result<Vec<ProjectRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT p.id, p.name, p.description, \
             (SELECT COUNT(*) FROM observations o WHERE o.project_id = p.id) \
             FROM projects p ORDER BY p.name",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ProjectRow {
                id: r.get(0)?,
                name: r.get(1)?,
                description: r.get(2)?,
                observations: r.get::<_, i64>(3)? as usize,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Adds an observation and its full-text row in one `BEGIN IMMEDIATE` transaction;
    /// returns its id.
    pub fn insert_observation(
        &self,
        project: i64,
        kind: &str,
        text: &str,
        now: i64,
    ) -> Result<i64> {
        let hash = text_hash(text);
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
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
        match result {
            Ok(id) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(id)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e.into())
            }
        }
    }

    /// (hash, text) of the observations with no vector of `model`.
    pub fn missing_vectors(&self, model: &str) -> Result<Vec<(String, String)>> {
        let mut stmt = self.conn.prepare(
            "SELECT DISTINCT o.hash, o.text FROM observations o WHERE NOT EXISTS \
             (SELECT 1 FROM vectors v WHERE v.hash = o.hash AND v.model = ?1)",
        )?;
        let rows = stmt.query_map([model], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores vectors (in the caller's transaction, if any).
    pub fn put_vectors(&self, model: &str, items: &[(String, Vec<f32>)]) -> Result<()> {
        Ok(super::vectors::put(&self.conn, model, items)?)
    }

    pub fn observation(&self, id: i64) -> Result<Option<ObservationRow>> {
        Ok(self
            .conn
            .query_row(
                "SELECT o.id, p.name, o.kind, o.text, o.created FROM observations o \
                 JOIN projects p ON p.id = o.project_id WHERE o.id = ?1",
                [id],
                |r| {
                    Ok(ObservationRow {
                        id: r.get(0)?,
                        project: r.get(1)?,
                        kind: r.get(2)?,
                        text: r.get(3)?,
                        created: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// Observations with a vector of `model`.
    pub fn vectors_of(&self, model: &str) -> Result<usize> {
        Ok(shared::count_embedded(&self.conn, "observations", model)?)
    }

    pub fn counts(&self) -> Result<Counts> {
        Ok(Counts {
            projects: shared::count(&self.conn, "projects")?,
            observations: shared::count(&self.conn, "observations")?,
            concepts: shared::count(&self.conn, "concepts")?,
            links: shared::count(&self.conn, "links")?,
        })
    }

    /// Observation ids matching the FTS5 query `fts` (in project `pid`, or all), best
    /// first, with their bm25 score.
    pub fn fts(&self, fts: &str, pid: Option<i64>, limit: usize) -> Result<Vec<(i64, f64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT f.rowid, -bm25(observations_fts) FROM observations_fts f \
             JOIN observations o ON o.id = f.rowid \
             WHERE observations_fts MATCH ?1 AND (?2 IS NULL OR o.project_id = ?2) \
             ORDER BY bm25(observations_fts) LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![fts, pid, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Maps and checks the scan copy of `model`'s vectors ahead of the first scan (see
    /// `VectorCache::warm`); true when it is ready.
    pub fn warm_vectors(
        &self,
        cache: &VectorCache<(i64, i64)>,
        model: Option<&str>,
    ) -> Result<bool> {
        Ok(super::vectors::warm(&self.conn, cache, model)?)
    }

    /// The `k` observations (in project `pid`, or all) whose vector of `model` is nearest
    /// to `q`, scanned through `cache`.
    pub fn nearest(
        &self,
        cache: &VectorCache<(i64, i64)>,
        q: &[f32],
        model: &str,
        pid: Option<i64>,
        k: usize,
    ) -> Result<Vec<(i64, f32)>> {
        let found = JOIN.nearest(
            &self.conn,
            cache,
            model,
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
            q,
            k,
            |(_, project)| pid.is_none_or(|p| p == *project),
        )?;
        Ok(found.into_iter().map(|((id, _), s)| (id, s)).collect())
    }

    /// A project's observation ids, newest first (at most `limit`).
    pub fn recent(&self, pid: i64, limit: usize) -> Result<Vec<i64>> {
        let mut stmt = self.conn.prepare(
            "SELECT id FROM observations WHERE project_id = ?1 ORDER BY created DESC, id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![pid, limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The names of the concepts observation `id` is linked to.
    pub fn concepts_of(&self, id: i64) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.name FROM links l JOIN concepts c ON c.id = l.concept_id \
             WHERE l.observation_id = ?1 ORDER BY c.name",
        )?;
        let rows = stmt.query_map([id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn concepts(&self) -> Result<Vec<ConceptRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT c.id, c.name, c.description, \
             (SELECT COUNT(*) FROM links l WHERE l.concept_id = c.id) FROM concepts c ORDER BY c.name",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ConceptRow {
                id: r.get(0)?,
                name: r.get(1)?,
                description: r.get(2)?,
                observations: r.get::<_, i64>(3)? as usize,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn concept_id(&self, name: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT id FROM concepts WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()?)
    }

    pub fn describe_concept(&self, id: i64, description: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE concepts SET description = ?1 WHERE id = ?2",
            params![description, id],
        )?;
        Ok(())
    }

    /// Adds a concept; returns its id.
    pub fn insert_concept(&self, name: &str, description: &str, now: i64) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO concepts(name, description, created) VALUES (?1, ?2, ?3)",
            params![name, description, now],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Links an observation to a concept (once).
    pub fn link(&self, observation: i64, concept: i64) -> Result<()> {
        self.conn.execute(
            "INSERT OR IGNORE INTO links(observation_id, concept_id) VALUES (?1, ?2)",
            params![observation, concept],
        )?;
        Ok(())
    }

    /// Records where an imported knowledge base came from, and when.
    pub fn mark_imported(&self, from: &Path, at: i64) -> Result<()> {
        Ok(shared::mark_imported(&self.conn, from, at)?)
    }

    /// See [`super::copy_to_new`].
    pub fn copy_to_new(&self, path: &Path) -> Result<bool> {
        Ok(super::copy_to_new(&self.conn, path)?)
    }
}

/// The observations' text column (`body` in the Go tool's layout).
fn text_column(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let columns = super::columns(conn, "observations")?;
    Ok(["body", "text"]
        .into_iter()
        .find(|c| columns.iter().any(|have| have == c))
        .map(String::from))
}

fn copy_go_rows(source: &Connection, conn: &Connection, text: &str) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)?;
    conn.execute_batch(super::vectors::SCHEMA)?;
    let has = |table: &str| super::columns(source, table).map(|c| !c.is_empty());
    if has("projects")? {
        copy_go_projects(source, conn)?;
    }
    let mut read = source.prepare(&format!(
        "SELECT id, COALESCE(project_id, 0), COALESCE(kind, 'note'), {text} FROM observations ORDER BY id"
    ))?;
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let (id, project, kind, body): (i64, i64, String, String) =
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        conn.execute(
            "INSERT INTO observations(id, project_id, kind, text, hash, created) VALUES (?1, ?2, ?3, ?4, ?5, 0)",
            params![id, project, kind, body, text_hash(&body)],
        )?;
        conn.execute(
            "INSERT INTO observations_fts(rowid, text, kind) VALUES (?1, ?2, ?3)",
            params![id, body, kind],
        )?;
    }
    if has("concepts")? {
        let mut read =
            source.prepare("SELECT id, name, COALESCE(description, '') FROM concepts")?;
        let mut rows = read.query([])?;
        while let Some(r) = rows.next()? {
            let (id, name, description): (i64, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
            conn.execute(
                "INSERT OR IGNORE INTO concepts(id, name, description, created) VALUES (?1, ?2, ?3, 0)",
                params![id, name, description],
            )?;
        }
    }
    if has("observation_concepts")? {
        let mut read =
            source.prepare("SELECT observation_id, concept_id FROM observation_concepts")?;
        let mut rows = read.query([])?;
        while let Some(r) = rows.next()? {
            let (o, c): (i64, i64) = (r.get(0)?, r.get(1)?);
            conn.execute(
                "INSERT OR IGNORE INTO links(observation_id, concept_id) VALUES (?1, ?2)",
                params![o, c],
            )?;
        }
    }
    Ok(())
}

fn copy_go_projects(source: &Connection, conn: &Connection) -> rusqlite::Result<()> {
    let description = if super::columns(source, "projects")?
        .iter()
        .any(|c| c == "description")
    {
        "COALESCE(description, '')"
    } else {
        "''"
    };
    let mut read = source.prepare(&format!(
        "SELECT id, name, {description} FROM projects ORDER BY id"
    ))?;
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let (id, name, description): (i64, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        conn.execute(
            "INSERT OR IGNORE INTO projects(id, name, description, created) VALUES (?1, ?2, ?3, 0)",
            params![id, name, description],
        )?;
    }
    Ok(())
}
