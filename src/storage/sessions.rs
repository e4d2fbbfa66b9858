//! The tables of the sessions index in the memory index file (`sessions`,
//! `session_stamps`, `session_terms`, `mined`, `memory_stats`): the schema and one
//! function per question `session::index` asks. Which files to read again, how a
//! record becomes a row and how sessions are searched stay in `session`.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions(
    file TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    duration_s INTEGER NOT NULL,
    turns INTEGER NOT NULL,
    summary TEXT NOT NULL,
    tags TEXT NOT NULL,
    name TEXT
);
CREATE TABLE IF NOT EXISTS session_stamps(file TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS mined(file TEXT PRIMARY KEY, mined_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS session_terms(file TEXT PRIMARY KEY, terms TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memory_stats(
    session_id TEXT NOT NULL,
    budget_tokens INTEGER NOT NULL,
    injected_tokens INTEGER NOT NULL,
    compressed INTEGER NOT NULL,
    avg_tokens_per_sec REAL NOT NULL,
    recorded_at TEXT NOT NULL
);
";

/// One row of the sessions index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionEntry {
    /// File name under `agents/sessions/` (also the session's id).
    pub file: String,
    pub started: String,
    pub duration_s: i64,
    pub turns: i64,
    pub summary: String,
    pub tags: Vec<String>,
    pub name: Option<String>,
}

/// One `memory_stats` row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStats {
    pub session_id: String,
    pub budget_tokens: i64,
    pub injected_tokens: i64,
    pub compressed: bool,
    pub avg_tokens_per_sec: f64,
    pub recorded_at: String,
}

/// The sessions index's open tables.
pub struct SessionTables {
    conn: Connection,
}

const ENTRY_COLUMNS: &str = "file, started, duration_s, turns, summary, tags, name";

impl SessionTables {
    /// Opens (creating) the tables in the index file at `path`.
    pub fn open(path: &Path) -> super::Result<Self> {
        let conn = super::open(path)?;
        super::immediate(&conn, || conn.execute_batch(SCHEMA))?;
        Ok(Self { conn })
    }

    /// The file names of every row.
    pub fn files(&self) -> super::Result<Vec<String>> {
        let mut stmt = self.conn.prepare("SELECT file FROM sessions")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Drops `file`'s row, stamp and exchange words.
    pub fn remove(&self, file: &str) -> super::Result<()> {
        self.conn
            .execute("DELETE FROM sessions WHERE file = ?1", [file])?;
        self.conn
            .execute("DELETE FROM session_stamps WHERE file = ?1", [file])?;
        self.forget_terms(file)
    }

    /// Drops the exchange words kept for `file`.
    pub fn forget_terms(&self, file: &str) -> super::Result<()> {
        self.conn
            .execute("DELETE FROM session_terms WHERE file = ?1", [file])?;
        Ok(())
    }

    pub fn set_summary(&self, file: &str, summary: &str) -> super::Result<()> {
        self.conn.execute(
            "UPDATE sessions SET summary = ?2 WHERE file = ?1",
            params![file, summary],
        )?;
        Ok(())
    }

    /// `tags` as stored: comma-separated.
    pub fn set_tags(&self, file: &str, tags: &str) -> super::Result<()> {
        self.conn.execute(
            "UPDATE sessions SET tags = ?2 WHERE file = ?1",
            params![file, tags],
        )?;
        Ok(())
    }

    /// (mtime in ns, size) of `file` when it was last indexed.
    pub fn stamp(&self, file: &str) -> super::Result<Option<(i64, i64)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT mtime_ns, size FROM session_stamps WHERE file = ?1",
                [file],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    pub fn set_stamp(&self, file: &str, (mtime_ns, size): (i64, i64)) -> super::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO session_stamps(file, mtime_ns, size) VALUES (?1, ?2, ?3)",
            params![file, mtime_ns, size],
        )?;
        Ok(())
    }

    pub fn put(&self, e: &SessionEntry) -> super::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO sessions(file, started, duration_s, turns, summary, tags, name) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![e.file, e.started, e.duration_s, e.turns, e.summary, e.tags.join(","), e.name],
        )?;
        Ok(())
    }

    /// Whether a row was renamed.
    pub fn rename(&self, file: &str, name: &str) -> super::Result<bool> {
        Ok(self.conn.execute(
            "UPDATE sessions SET name = ?2 WHERE file = ?1",
            params![file, name],
        )? > 0)
    }

    /// Newest first, at most `n`; with `summarized`, only rows with a summary.
    pub fn recent(&self, n: usize, summarized: bool) -> super::Result<Vec<SessionEntry>> {
        let filter = if summarized {
            "WHERE trim(summary) != '' "
        } else {
            ""
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM sessions \
             {filter}ORDER BY started DESC, file DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map([i64::try_from(n).unwrap_or(i64::MAX)], read_entry)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn get(&self, file: &str) -> super::Result<Option<SessionEntry>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM sessions WHERE file = ?1"
        ))?;
        let mut rows = stmt.query_map([file], read_entry)?;
        Ok(rows.next().transpose()?)
    }

    /// The exchange words kept for `file`, joined by spaces.
    pub fn terms(&self, file: &str) -> super::Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT terms FROM session_terms WHERE file = ?1",
                [file],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn set_terms(&self, file: &str, joined: &str) -> super::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO session_terms(file, terms) VALUES (?1, ?2)",
            params![file, joined],
        )?;
        Ok(())
    }

    pub fn mark_mined(&self, file: &str, at: &str) -> super::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO mined(file, mined_at) VALUES (?1, ?2)",
            params![file, at],
        )?;
        Ok(())
    }

    pub fn is_mined(&self, file: &str) -> super::Result<bool> {
        let n: i64 =
            self.conn
                .query_row("SELECT COUNT(*) FROM mined WHERE file = ?1", [file], |r| {
                    r.get(0)
                })?;
        Ok(n > 0)
    }

    pub fn record_stats(&self, s: &SessionStats) -> super::Result<()> {
        self.conn.execute(
            "INSERT INTO memory_stats(session_id, budget_tokens, injected_tokens, compressed, avg_tokens_per_sec, recorded_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![s.session_id, s.budget_tokens, s.injected_tokens, s.compressed, s.avg_tokens_per_sec, s.recorded_at],
        )?;
        Ok(())
    }

    /// Every stats row, oldest first.
    pub fn stats(&self) -> super::Result<Vec<SessionStats>> {
        let mut stmt = self.conn.prepare(
            "SELECT session_id, budget_tokens, injected_tokens, compressed, avg_tokens_per_sec, recorded_at \
             FROM memory_stats ORDER BY recorded_at, rowid",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SessionStats {
                session_id: r.get(0)?,
                budget_tokens: r.get(1)?,
                injected_tokens: r.get(2)?,
                compressed: r.get(3)?,
                avg_tokens_per_sec: r.get(4)?,
                recorded_at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn read_entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionEntry> {
    let tags: String = r.get(5)?;
    Ok(SessionEntry {
        file: r.get(0)?,
        started: r.get(1)?,
        duration_s: r.get(2)?,
        turns: r.get(3)?,
        summary: r.get(4)?,
        tags: tags
            .split(',')
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        name: r.get(6)?,
    })
}
