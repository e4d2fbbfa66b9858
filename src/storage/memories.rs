//! The tables of the memory index (`harvey-index.db`): `memories` (one row per memory
//! file), `memories_fts`, `token_costs`, `meta` (schema version, generation counter,
//! vector completeness) and the vectors. One function per question `memory::index` asks;
//! rows cross as plain structs with the memory type as text, and `memory` turns them
//! into its own types. What a memory is, how it is ranked and embedded stays in `memory`.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::Result;
use crate::vector::{Stamp, VectorCache};

/// Bumped when the schema changes; an index of another version is rebuilt.
const SCHEMA_VERSION: &str = "4";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories(
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    kind TEXT,
    archived INTEGER NOT NULL,
    description TEXT NOT NULL,
    summary TEXT NOT NULL,
    tags TEXT NOT NULL,
    action TEXT,
    confidence REAL NOT NULL,
    updated INTEGER NOT NULL,
    expires INTEGER,
    norm TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    vhash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_norm ON memories(norm) WHERE archived = 0;
CREATE INDEX IF NOT EXISTS memories_rank ON memories(type, archived, confidence DESC, updated DESC);
CREATE INDEX IF NOT EXISTS memories_expires ON memories(expires) WHERE archived = 0 AND expires IS NOT NULL;
CREATE TABLE IF NOT EXISTS token_costs(key TEXT PRIMARY KEY, tokens INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    description, summary, tags, action, body, tokenize = 'porter unicode61'
);
INSERT OR IGNORE INTO meta(key, value) VALUES ('generation', '0');
CREATE TRIGGER IF NOT EXISTS memories_gen_insert AFTER INSERT ON memories BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS memories_gen_update AFTER UPDATE ON memories BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS memories_gen_delete AFTER DELETE ON memories BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; END;
";

/// Vectors count as a change of the memories too (a memory's vector is often stored
/// after its row). Created after the vectors schema.
const VECTOR_TRIGGERS: &str = "
CREATE TRIGGER IF NOT EXISTS vectors_gen_insert AFTER INSERT ON vectors BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS vectors_gen_delete AFTER DELETE ON vectors BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; END;
";

const COLUMNS: &str = "m.id, m.type, m.kind, m.archived, m.description, m.summary, m.tags, \
                       m.action, m.confidence, m.updated, m.expires, m.path";

/// The rows a vector scan reads: an active memory's id, type and expiry, then its vector.
const VECTOR_ROWS: &str = "SELECT m.id, m.type, m.expires, v.v FROM memories m \
                           JOIN vectors v ON v.hash = m.vhash AND v.model = ?1 WHERE m.archived = 0";

/// The key a vector scan yields per memory: (id, type, expires).
pub type VectorKey = (String, String, Option<i64>);

/// One `memories` row as recall and listings read it (the type as stored, as text).
pub struct MemoryRow {
    pub id: String,
    pub mtype: String,
    pub kind: Option<String>,
    pub archived: bool,
    pub description: String,
    pub summary: String,
    pub tags: String,
    pub action: Option<String>,
    pub confidence: f64,
    pub updated: i64,
    pub expires: Option<i64>,
    pub path: String,
}

/// A memory to store: its row and the text its full-text entry holds.
pub struct NewMemory<'a> {
    pub id: &'a str,
    pub mtype: &'a str,
    pub kind: Option<&'a str>,
    pub archived: bool,
    pub description: &'a str,
    pub summary: &'a str,
    /// The tags joined by spaces.
    pub tags: &'a str,
    pub action: Option<&'a str>,
    pub confidence: f64,
    pub updated: i64,
    pub expires: Option<i64>,
    /// The normalized description (duplicates are found by it).
    pub norm: &'a str,
    pub path: &'a str,
    pub mtime_ns: i64,
    pub size: i64,
    /// The hash of the text its vector is made from.
    pub vhash: &'a str,
    pub body: &'a str,
}

/// An indexed file: its path, the memory's id, and its mtime and size when indexed.
pub struct IndexedFile {
    pub path: String,
    pub id: String,
    pub mtime_ns: i64,
    pub size: i64,
}

/// An active memory's full text, as its postings are built.
pub struct MemoryText {
    pub id: String,
    pub mtype: String,
    pub expires: Option<i64>,
    pub confidence: f64,
    pub updated: i64,
    /// description, summary, tags, action, body.
    pub fields: [String; 5],
}

/// The memory index's open database.
pub struct MemoryTables {
    conn: Connection,
}

impl MemoryTables {
    /// Opens (creating) the index at `path`; an index of another schema version is emptied.
    pub fn open(path: &Path) -> Result<Self> {
        let tables = Self {
            conn: super::open(path)?,
        };
        tables.migrate()?;
        Ok(tables)
    }

    /// An in-memory index (benchmarks and tests).
    pub fn in_memory() -> Result<Self> {
        let tables = Self {
            conn: Connection::open_in_memory()?,
        };
        tables.migrate()?;
        Ok(tables)
    }

    /// One transaction under the write lock: two processes opening a new (or old) index
    /// at once must not both see "no schema" and drop what the other just wrote.
    fn migrate(&self) -> Result<()> {
        self.immediate(|| Ok(self.migrate_locked()?))
    }

    fn migrate_locked(&self) -> rusqlite::Result<()> {
        self.conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);",
        )?;
        let version: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
                r.get(0)
            })
            .optional()?;
        if version.as_deref() != Some(SCHEMA_VERSION) {
            // Derived data only: drop it and let the reconcile read the files again.
            self.conn.execute_batch(
                "DROP TABLE IF EXISTS memories; DROP TABLE IF EXISTS memories_fts; DROP TABLE IF EXISTS token_costs;",
            )?;
            self.conn.execute_batch(SCHEMA)?;
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?1)",
                [SCHEMA_VERSION],
            )?;
        }
        self.conn.execute_batch(SCHEMA)?;
        // Vectors are keyed by content hash and survive every rebuild above.
        self.conn.execute_batch(super::vectors::SCHEMA)?;
        self.conn
            .execute_batch(&super::vectors::watch("memories"))?;
        self.conn.execute_batch(VECTOR_TRIGGERS)
    }

    /// Runs `f` under the write lock unless a transaction is already open (see
    /// [`super::immediate_with`]).
    pub fn immediate<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        super::immediate_with(&self.conn, super::Error::from, f)
    }

    /// The counter the triggers move on every change of a memory row or a vector.
    pub fn generation(&self) -> Result<i64> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'")?;
        Ok(stmt.query_row([], |r| r.get(0)).optional()?.unwrap_or(0))
    }

    /// The store's vector stamp (its random id and the vectors' generation).
    pub fn vector_stamp(&self) -> Result<Stamp> {
        Ok(super::vectors::stamp(&self.conn)?)
    }

    /// Drops every row.
    pub fn clear(&self) -> Result<()> {
        Ok(self
            .conn
            .execute_batch("DELETE FROM memories; DELETE FROM memories_fts;")?)
    }

    /// Every indexed file with its stamp.
    pub fn files(&self) -> Result<Vec<IndexedFile>> {
        let mut stmt = self
            .conn
            .prepare("SELECT path, id, mtime_ns, size FROM memories")?;
        let rows = stmt.query_map([], |r| {
            Ok(IndexedFile {
                path: r.get(0)?,
                id: r.get(1)?,
                mtime_ns: r.get(2)?,
                size: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Adds or replaces the row of `m.id` (and its full-text entry), in one transaction.
    /// Removing a row and inserting its replacement are one step: another process
    /// reconciling the same new file between them would otherwise insert it twice.
    pub fn upsert(&self, m: &NewMemory<'_>) -> Result<()> {
        self.immediate(|| {
            self.remove_id(m.id)?;
            self.remove_path(m.path)?;
            Ok(self.insert(m)?)
        })
    }

    fn insert(&self, m: &NewMemory<'_>) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO memories(id, type, kind, archived, description, summary, tags, action, \
             confidence, updated, expires, norm, path, mtime_ns, size, vhash) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                m.id,
                m.mtype,
                m.kind,
                m.archived,
                m.description,
                m.summary,
                m.tags,
                m.action,
                m.confidence,
                m.updated,
                m.expires,
                m.norm,
                m.path,
                m.mtime_ns,
                m.size,
                m.vhash,
            ],
        )?;
        let rowid = self.conn.last_insert_rowid();
        self.conn.execute(
            "INSERT INTO memories_fts(rowid, description, summary, tags, action, body) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                rowid,
                m.description,
                m.summary,
                m.tags,
                m.action.unwrap_or_default(),
                m.body
            ],
        )?;
        Ok(())
    }

    /// Removes the row of the memory `id` (and its full-text entry).
    pub fn remove_id(&self, id: &str) -> Result<()> {
        self.remove_where("id", id)
    }

    /// Removes the row of the file `path` (and its full-text entry).
    pub fn remove_path(&self, path: &str) -> Result<()> {
        self.remove_where("path", path)
    }

    /// `column` is a constant of this file, never user input.
    fn remove_where(&self, column: &str, value: &str) -> Result<()> {
        self.immediate(|| {
            self.conn.execute(
                &format!(
                    "DELETE FROM memories_fts WHERE rowid IN (SELECT rowid FROM memories WHERE {column} = ?1)"
                ),
                [value],
            )?;
            self.conn.execute(
                &format!("DELETE FROM memories WHERE {column} = ?1"),
                [value],
            )?;
            Ok(())
        })
    }

    /// The row of the memory `id`.
    pub fn row(&self, id: &str) -> Result<Option<MemoryRow>> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM memories m WHERE m.id = ?1"))?
            .query_row([id], read_row)
            .optional()?)
    }

    /// The active memory whose normalized description is `norm`.
    pub fn active_with_norm(&self, norm: &str) -> Result<Option<MemoryRow>> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM memories m WHERE m.norm = ?1 AND m.archived = 0 LIMIT 1"
                ),
                [norm],
                read_row,
            )
            .optional()?)
    }

    /// Memories for listings, by type, then newest first.
    pub fn list(&self, archived: bool) -> Result<Vec<MemoryRow>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM memories m WHERE m.archived = ?1 ORDER BY m.type, m.updated DESC, m.id"
        ))?;
        let rows = stmt.query_map([archived], read_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Ids of active memories whose expiry is at or before `now` (every session start asks:
    /// through `memories_expires`, which holds only the memories that can expire, it no
    /// longer scans the table — 25–48 ms at 100k memories).
    pub fn expired(&self, now: i64) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(
            "SELECT id FROM memories WHERE archived = 0 AND expires IS NOT NULL AND expires <= ?1 ORDER BY id",
        )?;
        let ids = stmt.query_map([now], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }

    /// The first `limit` unexpired active memories of each type in `types`, by confidence,
    /// then recency (one indexed scan per type).
    pub fn top_of_types(&self, types: &[&str], now: i64, limit: usize) -> Result<Vec<MemoryRow>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM memories m WHERE m.type = ?1 AND m.archived = 0 \
             AND (m.expires IS NULL OR m.expires > ?2) \
             ORDER BY m.confidence DESC, m.updated DESC LIMIT ?3"
        ))?;
        let n = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows = Vec::new();
        for t in types {
            let found = stmt.query_map(params![t, now, n], read_row)?;
            for row in found {
                rows.push(row?);
            }
        }
        Ok(rows)
    }

    /// A cached token count (`key` names the tokenizer and the exact text).
    pub fn cached_cost(&self, key: &str) -> Result<Option<usize>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT tokens FROM token_costs WHERE key = ?1")?;
        Ok(stmt
            .query_row([key], |r| r.get::<_, i64>(0))
            .optional()
            .map(|n| n.map(|n| usize::try_from(n).unwrap_or(0)))?)
    }

    /// Remembers token counts (one transaction).
    pub fn save_costs(&self, costs: &[(String, usize)]) -> Result<()> {
        if costs.is_empty() {
            return Ok(());
        }
        self.immediate(|| {
            let mut stmt = self.conn.prepare_cached(
                "INSERT OR REPLACE INTO token_costs(key, tokens) VALUES (?1, ?2)",
            )?;
            for (key, tokens) in costs {
                stmt.execute(params![key, i64::try_from(*tokens).unwrap_or(i64::MAX)])?;
            }
            Ok(())
        })
    }

    /// Active memories without a vector from `model`, one per vector hash: the hash and
    /// the memory's description, summary, action and body.
    pub fn missing_vectors(&self, model: &str, limit: usize) -> Result<Vec<(String, [String; 4])>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.vhash, f.description, f.summary, f.action, f.body \
             FROM memories m JOIN memories_fts f ON f.rowid = m.rowid \
             WHERE m.archived = 0 AND NOT EXISTS \
               (SELECT 1 FROM vectors v WHERE v.hash = m.vhash AND v.model = ?1) \
             GROUP BY m.vhash LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![model, limit], |r| {
            let get = |i: usize| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
            Ok((r.get::<_, String>(0)?, [get(1)?, get(2)?, get(3)?, get(4)?]))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether every active memory had a vector from `model` at the current generation
    /// (as [`Self::mark_vectors_complete`] recorded).
    pub fn vectors_complete(&self, model: &str) -> Result<bool> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1")?;
        let at: Option<i64> = stmt
            .query_row([complete_key(model)], |r| r.get(0))
            .optional()?;
        Ok(at.is_some() && at == Some(self.generation()?))
    }

    /// Records that no active memory lacks a vector from `model` at the current
    /// generation, checked under the write lock (so no write slips in between).
    pub fn mark_vectors_complete(&self, model: &str) -> Result<()> {
        self.immediate(|| {
            if !self.missing_vectors(model, 1)?.is_empty() {
                return Ok(());
            }
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES (?1, ?2) \
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![complete_key(model), self.generation()?.to_string()],
            )?;
            Ok(())
        })
    }

    /// Stores vectors in one transaction.
    pub fn put_vectors(&self, model: &str, items: &[(String, Vec<f32>)]) -> Result<()> {
        self.immediate(|| Ok(super::vectors::put(&self.conn, model, items)?))
    }

    /// Active memories with a vector from `model`, and those without.
    pub fn vector_coverage(&self, model: &str) -> Result<(usize, usize)> {
        Ok(self.conn.query_row(
            "SELECT COALESCE(SUM(EXISTS(SELECT 1 FROM vectors v WHERE v.hash = m.vhash AND v.model = ?1)), 0), \
             COUNT(*) FROM memories m WHERE m.archived = 0",
            [model],
            |r| {
                let with: i64 = r.get(0)?;
                let all: i64 = r.get(1)?;
                Ok((with as usize, (all - with).max(0) as usize))
            },
        )?)
    }

    /// Maps and checks the scan copy of `model`'s vectors ahead of the first scan (see
    /// `VectorCache::warm`); true when it is ready.
    pub fn warm_vectors(
        &self,
        cache: &VectorCache<VectorKey>,
        model: Option<&str>,
    ) -> Result<bool> {
        Ok(super::vectors::warm(&self.conn, cache, model)?)
    }

    /// The `k` active memories nearest to the unit vector `q` among those `keep` accepts,
    /// scanned through `cache` (see [`VectorCache::top_k`]).
    pub fn nearest(
        &self,
        cache: &VectorCache<VectorKey>,
        q: &[f32],
        model: &str,
        k: usize,
        keep: impl Fn(&VectorKey) -> bool + Sync,
    ) -> Result<Vec<(VectorKey, f32)>> {
        let read_key = |r: &Row<'_>| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        };
        let stamp = super::vectors::stamp(&self.conn)?;
        Ok(cache.top_k(&self.conn, stamp, VECTOR_ROWS, model, read_key, q, k, keep)?)
    }

    /// (active, archived) rows of the type `mtype`.
    pub fn count_of_type(&self, mtype: &str) -> Result<(usize, usize)> {
        let (active, archived): (i64, i64) = self.conn.query_row(
            "SELECT COALESCE(SUM(archived = 0), 0), COALESCE(SUM(archived = 1), 0) FROM memories WHERE type = ?1",
            [mtype],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok((active as usize, archived as usize))
    }

    /// The full text of every active memory (one query), as its postings are built.
    pub fn active_texts(&self) -> Result<Vec<MemoryText>> {
        let mut stmt = self.conn.prepare(
            "SELECT m.id, m.type, m.expires, m.confidence, m.updated, \
             f.description, f.summary, f.tags, f.action, f.body \
             FROM memories m JOIN memories_fts f ON f.rowid = m.rowid WHERE m.archived = 0",
        )?;
        let mut rows = stmt.query([])?;
        let mut texts = Vec::new();
        while let Some(r) = rows.next()? {
            let text = |i: usize| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
            texts.push(MemoryText {
                id: r.get(0)?,
                mtype: r.get(1)?,
                expires: r.get(2)?,
                confidence: r.get(3)?,
                updated: r.get(4)?,
                fields: [text(5)?, text(6)?, text(7)?, text(8)?, text(9)?],
            });
        }
        Ok(texts)
    }
}

/// The `meta` key under which [`MemoryTables::mark_vectors_complete`] records a generation.
fn complete_key(model: &str) -> String {
    format!("vectors_complete:{model}")
}

fn read_row(r: &Row<'_>) -> rusqlite::Result<MemoryRow> {
    Ok(MemoryRow {
        id: r.get(0)?,
        mtype: r.get(1)?,
        kind: r.get(2)?,
        archived: r.get(3)?,
        description: r.get(4)?,
        summary: r.get(5)?,
        tags: r.get(6)?,
        action: r.get(7)?,
        confidence: r.get(8)?,
        updated: r.get(9)?,
        expires: r.get(10)?,
        path: r.get(11)?,
    })
}
