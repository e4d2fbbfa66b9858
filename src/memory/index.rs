//! `harvey-index.db` (see `location`): the derived SQLite index (WAL) over the memory files.
//!
//! One `memories` row per file (active or archived) and an FTS5 table over description,
//! summary, tags, action and body (porter stemming, so "fixing" finds "fix"). The files
//! are the truth: every row records the file's path, mtime and size so a start-up
//! reconcile re-reads only what changed, and the whole index can be dropped and rebuilt.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension, Row as SqlRow};

use super::lexical::LexicalIndex;
use super::types::{Memory, MemoryType};
use crate::vector::text_hash;

mod fulltext;

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
/// after its row). Created after `vector::SCHEMA`.
const VECTOR_TRIGGERS: &str = "
CREATE TRIGGER IF NOT EXISTS vectors_gen_insert AFTER INSERT ON vectors BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS vectors_gen_delete AFTER DELETE ON vectors BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; END;
";

/// How long a connection waits for another process's write before giving up. Writes
/// are short (one memory, one reconcile), so a wait this long means something is stuck.
pub use crate::storage::BUSY_TIMEOUT;

/// One indexed memory (what recall and listings need; the file has the rest).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub mtype: MemoryType,
    pub kind: Option<String>,
    pub archived: bool,
    pub description: String,
    pub summary: String,
    pub tags: String,
    pub action: Option<String>,
    pub confidence: f64,
    /// Last update, unix seconds.
    pub updated: i64,
    pub expires: Option<i64>,
    /// Relative to the memories directory.
    pub path: String,
}

/// Where a file stood when it was indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub mtime_ns: i64,
    pub size: i64,
}

/// What a row needs besides the memory itself.
pub struct Placement<'a> {
    pub path: &'a str,
    pub stamp: FileStamp,
    pub archived: bool,
    pub updated: i64,
    pub expires: Option<i64>,
}

pub struct Index {
    conn: Connection,
    /// (id, type, expires) of active memories with their vectors, for exact scans.
    vectors: crate::vector::VectorCache<(String, String, Option<i64>)>,
    /// Full-text postings of the active memories (they carry the stamp they were built for).
    lexical: std::cell::RefCell<Option<LexicalIndex>>,
    /// Where the postings are saved for the next process (none for an in-memory index).
    lexical_file: Option<std::path::PathBuf>,
}

const COLUMNS: &str = "m.id, m.type, m.kind, m.archived, m.description, m.summary, m.tags, \
                       m.action, m.confidence, m.updated, m.expires, m.path";

impl Index {
    /// Opens (creating) the index; an index of another schema version is emptied.
    pub fn open(path: &Path) -> rusqlite::Result<Self> {
        let conn = crate::storage::open(path)?;
        let index = Self {
            conn,
            vectors: crate::vector::VectorCache::with_file(crate::vector::sidecar_path(path)),
            lexical: Default::default(),
            lexical_file: Some(fulltext::postings_path(path)),
        };
        index.migrate()?;
        Ok(index)
    }

    /// An in-memory index (benchmarks and tests).
    pub fn in_memory() -> rusqlite::Result<Self> {
        let index = Self {
            conn: Connection::open_in_memory()?,
            vectors: Default::default(),
            lexical: Default::default(),
            lexical_file: None,
        };
        index.migrate()?;
        Ok(index)
    }

    /// One transaction under the write lock: two processes opening a new (or old) index
    /// at once must not both see "no schema" and drop what the other just wrote.
    fn migrate(&self) -> rusqlite::Result<()> {
        self.atomic(|| self.migrate_locked())
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
        self.conn.execute_batch(crate::storage::vectors::SCHEMA)?;
        self.conn
            .execute_batch(&crate::storage::vectors::watch("memories"))?;
        self.conn.execute_batch(VECTOR_TRIGGERS)
    }

    /// A number that moves whenever a memory row or a vector changes, in any process
    /// (triggers keep it), and not when only token counts are cached: the in-memory
    /// copies (full-text postings, vectors) are rebuilt when it moves.
    pub fn generation(&self) -> rusqlite::Result<i64> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'")?;
        Ok(stmt.query_row([], |r| r.get(0)).optional()?.unwrap_or(0))
    }

    /// Drops every row (the files stay).
    pub fn clear(&self) -> rusqlite::Result<()> {
        self.conn
            .execute_batch("DELETE FROM memories; DELETE FROM memories_fts;")
    }

    /// Runs `f` in one transaction (a reconcile or an import is one write).
    pub fn batch<T>(
        &mut self,
        f: impl FnOnce(&Index) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.atomic(|| f(self))
    }

    /// Every indexed file with its stamp.
    pub fn stamps(&self) -> rusqlite::Result<Vec<(String, String, FileStamp)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT path, id, mtime_ns, size FROM memories")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                FileStamp {
                    mtime_ns: r.get(2)?,
                    size: r.get(3)?,
                },
            ))
        })?;
        rows.collect()
    }

    /// Runs `f` under the write lock unless a transaction is already open. Removing a
    /// row and inserting its replacement are one step: another process reconciling the
    /// same new file between them would otherwise insert it twice ("constraint failed").
    fn atomic<T>(&self, f: impl FnOnce() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        crate::storage::immediate(&self.conn, f)
    }

    /// Adds or replaces the row of `m.id` (and its full-text entry), in one transaction.
    pub fn upsert(&self, m: &Memory, at: &Placement<'_>) -> rusqlite::Result<()> {
        self.atomic(|| self.upsert_locked(m, at))
    }

    fn upsert_locked(&self, m: &Memory, at: &Placement<'_>) -> rusqlite::Result<()> {
        self.remove_id(&m.id)?;
        self.remove_path(at.path)?;
        self.conn.execute(
            "INSERT INTO memories(id, type, kind, archived, description, summary, tags, action, \
             confidence, updated, expires, norm, path, mtime_ns, size, vhash) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                m.id,
                m.mtype.as_str(),
                m.kind,
                at.archived,
                m.description,
                m.summary,
                m.tags.join(" "),
                m.action,
                m.confidence,
                at.updated,
                at.expires,
                super::types::normalize_description(&m.description),
                at.path,
                at.stamp.mtime_ns,
                at.stamp.size,
                text_hash(&embed_text(
                    &m.description,
                    &m.summary,
                    m.action.as_deref().unwrap_or(""),
                    &m.body
                )),
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
                m.tags.join(" "),
                m.action.clone().unwrap_or_default(),
                m.body
            ],
        )?;
        Ok(())
    }

    pub fn remove_id(&self, id: &str) -> rusqlite::Result<()> {
        self.remove_where("id", id)
    }

    pub fn remove_path(&self, path: &str) -> rusqlite::Result<()> {
        self.remove_where("path", path)
    }

    fn remove_where(&self, column: &str, value: &str) -> rusqlite::Result<()> {
        self.atomic(|| self.remove_where_locked(column, value))
    }

    fn remove_where_locked(&self, column: &str, value: &str) -> rusqlite::Result<()> {
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
    }

    pub fn get(&self, id: &str) -> rusqlite::Result<Option<Row>> {
        self.conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM memories m WHERE m.id = ?1"))?
            .query_row([id], read_row)
            .optional()
    }

    /// The active memory whose normalized description is `norm`.
    pub fn active_with_norm(&self, norm: &str) -> rusqlite::Result<Option<Row>> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM memories m WHERE m.norm = ?1 AND m.archived = 0 LIMIT 1"
                ),
                [norm],
                read_row,
            )
            .optional()
    }

    /// Memories for listings, newest first.
    pub fn list(&self, archived: bool) -> rusqlite::Result<Vec<Row>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM memories m WHERE m.archived = ?1 ORDER BY m.type, m.updated DESC, m.id"
        ))?;
        let rows = stmt.query_map([archived], read_row)?;
        rows.collect()
    }

    /// Ids of active memories whose `expires_at` is at or before `now`.
    pub fn expired(&self, now: i64) -> rusqlite::Result<Vec<String>> {
        let mut stmt = self.conn.prepare(
            "SELECT id FROM memories WHERE archived = 0 AND expires IS NOT NULL AND expires <= ?1 ORDER BY id",
        )?;
        let ids = stmt.query_map([now], |r| r.get(0))?;
        ids.collect()
    }

    /// Recallable memories of the given types by confidence, then recency (one indexed
    /// scan per type that stops after `limit` rows).
    pub fn top(&self, types: &[MemoryType], now: i64, limit: usize) -> rusqlite::Result<Vec<Row>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM memories m WHERE m.type = ?1 AND m.archived = 0 \
             AND (m.expires IS NULL OR m.expires > ?2) \
             ORDER BY m.confidence DESC, m.updated DESC LIMIT ?3"
        ))?;
        let n = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows = Vec::new();
        for t in types {
            let found = stmt.query_map(params![t.as_str(), now, n], read_row)?;
            for row in found {
                rows.push(row?);
            }
        }
        rows.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then(b.updated.cmp(&a.updated))
                .then(a.id.cmp(&b.id))
        });
        rows.truncate(limit);
        Ok(rows)
    }

    /// A cached token count (`key` names the tokenizer and the exact text).
    pub fn cached_cost(&self, key: &str) -> rusqlite::Result<Option<usize>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT tokens FROM token_costs WHERE key = ?1")?;
        stmt.query_row([key], |r| r.get::<_, i64>(0))
            .optional()
            .map(|n| n.map(|n| usize::try_from(n).unwrap_or(0)))
    }

    /// Remembers token counts (one transaction).
    pub fn save_costs(&self, costs: &[(String, usize)]) -> rusqlite::Result<()> {
        if costs.is_empty() {
            return Ok(());
        }
        self.atomic(|| {
            let mut stmt = self.conn.prepare_cached(
                "INSERT OR REPLACE INTO token_costs(key, tokens) VALUES (?1, ?2)",
            )?;
            for (key, tokens) in costs {
                stmt.execute(params![key, i64::try_from(*tokens).unwrap_or(i64::MAX)])?;
            }
            Ok(())
        })
    }

    /// Active memories without a vector from `model`: (hash, text to embed), one per hash.
    pub fn missing_vectors(
        &self,
        model: &str,
        limit: usize,
    ) -> rusqlite::Result<Vec<(String, String)>> {
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
            Ok((
                r.get::<_, String>(0)?,
                embed_text(&get(1)?, &get(2)?, &get(3)?, &get(4)?),
            ))
        })?;
        rows.collect()
    }

    /// Whether every active memory had a vector from `model` at the memories' current
    /// generation (as [`Self::mark_vectors_complete`] recorded): then nothing is missing
    /// and the scan for it, which reads every row, can be skipped.
    pub fn vectors_complete(&self, model: &str) -> rusqlite::Result<bool> {
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
    pub fn mark_vectors_complete(&self, model: &str) -> rusqlite::Result<()> {
        self.atomic(|| {
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
    pub fn put_vectors(&self, model: &str, items: &[(String, Vec<f32>)]) -> rusqlite::Result<()> {
        self.atomic(|| crate::storage::vectors::put(&self.conn, model, items))
    }

    /// Active memories with a vector from `model`, and those without.
    pub fn vector_coverage(&self, model: &str) -> rusqlite::Result<(usize, usize)> {
        self.conn.query_row(
            "SELECT COALESCE(SUM(EXISTS(SELECT 1 FROM vectors v WHERE v.hash = m.vhash AND v.model = ?1)), 0), \
             COUNT(*) FROM memories m WHERE m.archived = 0",
            [model],
            |r| {
                let with: i64 = r.get(0)?;
                let all: i64 = r.get(1)?;
                Ok((with as usize, (all - with).max(0) as usize))
            },
        )
    }

    /// The `k` recallable memories of `types` nearest to the unit vector `q` (exact
    /// scan over the int8 copy of the vectors, `vector::VectorCache`), with their cosine
    /// similarity, best first.
    pub fn vector_search(
        &self,
        q: &[f32],
        model: &str,
        types: &[MemoryType],
        now: i64,
        k: usize,
    ) -> rusqlite::Result<Vec<(String, f32)>> {
        let wanted = type_set(types);
        let found = self.vectors.top_k(
            &self.conn,
            crate::storage::vectors::stamp(&self.conn)?,
            "SELECT m.id, m.type, m.expires, v.v FROM memories m \
             JOIN vectors v ON v.hash = m.vhash AND v.model = ?1 WHERE m.archived = 0",
            model,
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                ))
            },
            q,
            k,
            |(_, t, expires)| {
                expires.is_none_or(|e| e > now)
                    && (wanted.is_empty() || wanted.contains(&format!(",{t},")))
            },
        )?;
        Ok(found.into_iter().map(|((id, _, _), s)| (id, s)).collect())
    }

    /// (type, active, archived) counts.
    pub fn counts(&self) -> rusqlite::Result<Vec<(MemoryType, usize, usize)>> {
        let mut out = Vec::new();
        for t in MemoryType::ALL {
            let (active, archived): (i64, i64) = self.conn.query_row(
                "SELECT COALESCE(SUM(archived = 0), 0), COALESCE(SUM(archived = 1), 0) FROM memories WHERE type = ?1",
                [t.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            out.push((t, active as usize, archived as usize));
        }
        Ok(out)
    }
}

/// The `meta` key under which [`Index::mark_vectors_complete`] records a generation.
fn complete_key(model: &str) -> String {
    format!("vectors_complete:{model}")
}

/// The text a memory's vector is made from.
pub fn embed_text(description: &str, summary: &str, action: &str, body: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in [description, summary, action, body] {
        let p = p.trim();
        if !p.is_empty() && !parts.contains(&p) {
            parts.push(p);
        }
    }
    parts.join("\n")
}

/// `,a,b,` for the `instr` type filter; empty = every type.
fn type_set(types: &[MemoryType]) -> String {
    if types.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
    format!(",{},", names.join(","))
}

fn read_row(r: &SqlRow<'_>) -> rusqlite::Result<Row> {
    let mtype: String = r.get(1)?;
    Ok(Row {
        id: r.get(0)?,
        mtype: MemoryType::parse(&mtype).unwrap_or(MemoryType::ToolUse),
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
