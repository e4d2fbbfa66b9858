//! The evidence index's tables (`agents/evidence.db`): every unit a question can be
//! answered from — a file's chunk, a commit, a memory, a session summary — in one FTS5
//! table, so bm25 ranks them in one space (a word every file has, such as the project's
//! name, weighs little in all of them). Each unit belongs to a source (`file:PATH`,
//! `commit:HASH`, `memory:ID`, `session:FILE`) whose stamp tells when it must be read
//! again. Derived: deleting the file loses nothing.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

/// Bumped when the tables or what goes into them change: an older file is rebuilt.
pub const SCHEMA_VERSION: &str = "13";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(source TEXT PRIMARY KEY, stamp TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS units(
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    heading TEXT NOT NULL,
    text TEXT NOT NULL,
    written INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS units_source ON units(source);
CREATE VIRTUAL TABLE IF NOT EXISTS units_fts USING fts5(
    names, heading, path, body, tokenize = \"porter unicode61 tokenchars '_-'\"
);
";

/// bm25 weights of `names`, `heading`, `path`, `body`: a name a unit defines or a
/// heading it stands under says more than a word of its text.
const WEIGHTS: (f64, f64, f64, f64) = (4.0, 3.0, 2.0, 1.0);

/// One unit to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewUnit {
    pub kind: String,
    pub first: i64,
    pub last: i64,
    pub heading: String,
    pub names: String,
    /// What the unit is found by in its path column (a file's path, a commit's files).
    pub path: String,
    /// What the block shows.
    pub text: String,
    /// Text searched beside `text` (split identifiers), never shown.
    pub extra: String,
    /// When it was written (unix seconds; 0 unknown).
    pub written: i64,
}

/// A unit found by a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub id: i64,
    pub source: String,
    pub kind: String,
    pub first: i64,
    pub last: i64,
    pub heading: String,
    pub text: String,
    pub written: i64,
    /// bm25 relevance, larger is better (SQLite's score negated).
    pub score: f64,
    /// The names the unit defines (its `names` column; empty where it was not searched
    /// by its words).
    pub names: String,
}

/// The index's open tables.
pub struct EvidenceTables {
    conn: Connection,
}

impl EvidenceTables {
    /// Opens (creating) the index at `path`; a file of another schema version is
    /// emptied first (it is derived).
    pub fn open(path: &Path) -> super::Result<Self> {
        let conn = super::open(path)?;
        super::immediate(&conn, || conn.execute_batch(SCHEMA))?;
        let tables = Self { conn };
        if tables.meta("schema")?.as_deref() != Some(SCHEMA_VERSION) {
            tables.clear()?;
            tables.set_meta("schema", SCHEMA_VERSION)?;
        }
        Ok(tables)
    }

    /// Removes every unit and source.
    pub fn clear(&self) -> super::Result<()> {
        self.conn.execute_batch(
            "DELETE FROM units; DELETE FROM units_fts; DELETE FROM sources; DELETE FROM meta;",
        )?;
        Ok(())
    }

    pub fn meta(&self, key: &str) -> super::Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    pub fn set_meta(&self, key: &str, value: &str) -> super::Result<()> {
        put_meta(&self.conn, key, value)
    }

    /// The stamps of the sources whose name starts with `prefix` (`file:`).
    pub fn stamps(&self, prefix: &str) -> super::Result<HashMap<String, String>> {
        let mut stmt = self.conn.prepare(
            "SELECT source, stamp FROM sources WHERE substr(source, 1, length(?1)) = ?1",
        )?;
        let rows = stmt.query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Runs `f` in one write transaction (a refresh of many sources commits once).
    pub fn write<T>(
        &mut self,
        f: impl FnOnce(&Writer<'_>) -> super::Result<T>,
    ) -> super::Result<T> {
        let tx = self.conn.transaction()?;
        let out = f(&Writer { conn: &tx })?;
        tx.commit()?;
        Ok(out)
    }

    /// Units matching the FTS5 `query`, best first, at most `limit`; of the kinds given
    /// (all when empty).
    pub fn search(&self, query: &str, kinds: &[&str], limit: usize) -> super::Result<Vec<Hit>> {
        let (a, b, c, d) = WEIGHTS;
        let sql = format!(
            "SELECT u.id, u.source, u.kind, u.first, u.last, u.heading, u.text, u.written,
                    -bm25(units_fts, {a}, {b}, {c}, {d}) AS score, units_fts.names
             FROM units_fts JOIN units u ON u.id = units_fts.rowid
             WHERE units_fts MATCH ?1 {}
             ORDER BY score DESC LIMIT ?2",
            if kinds.is_empty() {
                String::new()
            } else {
                let list: Vec<String> = kinds
                    .iter()
                    .map(|k| format!("'{}'", k.replace('\'', "")))
                    .collect();
                format!("AND u.kind IN ({})", list.join(","))
            }
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![query, limit as i64], hit_of)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The units of `source` (a memory found by its vector rather than its words), in
    /// order, with a score of 0.
    pub fn units_of(&self, source: &str) -> super::Result<Vec<Hit>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, source, kind, first, last, heading, text, written, 0.0, ''
             FROM units WHERE source = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![source], hit_of)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The newest `limit` units of `kind`, with a score of 0 (the sessions a question
    /// names by a date alone are picked from them).
    pub fn newest_of_kind(&self, kind: &str, limit: usize) -> super::Result<Vec<Hit>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, source, kind, first, last, heading, text, written, 0.0, ''
             FROM units WHERE kind = ?1 ORDER BY written DESC, id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![kind, limit as i64], hit_of)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many units and sources of each kind prefix the index holds.
    pub fn counts(&self) -> super::Result<Vec<(String, i64)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT kind, COUNT(*) FROM units GROUP BY kind ORDER BY kind")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every source name (for tests and `harvey evidence --stats`).
    pub fn sources(&self) -> super::Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT source FROM sources ORDER BY source")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// A hit from a row of (id, source, kind, first, last, heading, text, written, score).
fn hit_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Hit> {
    Ok(Hit {
        id: r.get(0)?,
        source: r.get(1)?,
        kind: r.get(2)?,
        first: r.get(3)?,
        last: r.get(4)?,
        heading: r.get(5)?,
        text: r.get(6)?,
        written: r.get(7)?,
        score: r.get(8)?,
        names: r.get(9)?,
    })
}

fn put_meta(conn: &Connection, key: &str, value: &str) -> super::Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
        params![key, value],
    )?;
    Ok(())
}

/// Writes inside one transaction.
pub struct Writer<'a> {
    conn: &'a Connection,
}

impl Writer<'_> {
    /// Replaces `source`'s units with `units` and records its stamp.
    pub fn replace(&self, source: &str, stamp: &str, units: &[NewUnit]) -> super::Result<()> {
        self.remove(source)?;
        let mut unit = self.conn.prepare_cached(
            "INSERT INTO units(source, kind, first, last, heading, text, written) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut fts = self.conn.prepare_cached(
            "INSERT INTO units_fts(rowid, names, heading, path, body) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for u in units {
            unit.execute(params![
                source, u.kind, u.first, u.last, u.heading, u.text, u.written
            ])?;
            let id = self.conn.last_insert_rowid();
            let body = if u.extra.is_empty() {
                u.text.clone()
            } else {
                format!("{}\n{}", u.text, u.extra)
            };
            fts.execute(params![id, u.names, u.heading, u.path, body])?;
        }
        self.conn.execute(
            "INSERT INTO sources(source, stamp) VALUES (?1, ?2) ON CONFLICT(source) DO UPDATE SET stamp = ?2",
            params![source, stamp],
        )?;
        Ok(())
    }

    /// Drops `source` and its units.
    pub fn remove(&self, source: &str) -> super::Result<()> {
        self.conn.execute(
            "DELETE FROM units_fts WHERE rowid IN (SELECT id FROM units WHERE source = ?1)",
            [source],
        )?;
        self.conn
            .execute("DELETE FROM units WHERE source = ?1", [source])?;
        self.conn
            .execute("DELETE FROM sources WHERE source = ?1", [source])?;
        Ok(())
    }

    pub fn set_meta(&self, key: &str, value: &str) -> super::Result<()> {
        put_meta(self.conn, key, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(text: &str, names: &str) -> NewUnit {
        NewUnit {
            kind: "code".into(),
            first: 1,
            last: 3,
            heading: String::new(),
            names: names.into(),
            path: "src/a.rs".into(),
            text: text.into(),
            extra: crate::evidence::terms::split_forms(text),
            written: 0,
        }
    }

    #[test]
    fn identifiers_are_found_whole_and_split() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = EvidenceTables::open(&dir.path().join("e.db")).unwrap();
        t.write(|w| {
            w.replace(
                "file:src/a.rs",
                "1:1",
                &[unit("const MAX_RETRIES: u32 = 5;", "MAX_RETRIES")],
            )?;
            w.replace("file:src/b.rs", "1:1", &[unit("fn other() {}", "other")])
        })
        .unwrap();
        for q in ["\"max_retries\"", "\"retries\"", "\"max\" OR \"nothing\""] {
            let hits = t.search(q, &[], 5).unwrap();
            assert_eq!(hits.len(), 1, "{q}");
            assert_eq!(hits[0].source, "file:src/a.rs");
        }
        t.write(|w| w.remove("file:src/a.rs")).unwrap();
        assert!(t.search("\"retries\"", &[], 5).unwrap().is_empty());
        assert_eq!(t.sources().unwrap(), ["file:src/b.rs"]);
    }

    #[test]
    fn a_replaced_source_keeps_only_its_new_units() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = EvidenceTables::open(&dir.path().join("e.db")).unwrap();
        t.write(|w| w.replace("file:x", "1", &[unit("alpha beta", ""), unit("gamma", "")]))
            .unwrap();
        t.write(|w| w.replace("file:x", "2", &[unit("delta", "")]))
            .unwrap();
        assert!(t
            .search("\"alpha\" OR \"gamma\"", &[], 5)
            .unwrap()
            .is_empty());
        assert_eq!(t.search("\"delta\"", &[], 5).unwrap().len(), 1);
        assert_eq!(t.stamps("file:").unwrap()["file:x"], "2");
    }
}
