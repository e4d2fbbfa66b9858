//! The tables of a RAG store (`files`, `chunks`, `chunks_fts`, `meta`, the vectors): its
//! schema, a Go tool's store copied into memory, and one function per question the
//! `rag` module asks. Chunking, ranking and embedding stay in `rag`.

use std::path::Path;

use rusqlite::{params, CachedStatement, Connection, OptionalExtension};

use super::shared::{self, VectorJoin};
use super::Result;
use crate::vector::{text_hash, VectorCache};

const SCHEMA_VERSION: &str = "1";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    ingested INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT,
    hash TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, heading, path, tokenize = 'porter unicode61'
);
";

/// bm25 weights: text, heading, path.
const BM25: &str = "bm25(chunks_fts, 1.0, 2.0, 0.5)";

/// The chunks' rows joined to their vectors (the scan reads the chunk id).
const JOIN: VectorJoin<'static> = VectorJoin {
    table: "chunks",
    hash: "hash",
    keys: "t.id",
    filter: "",
};

/// One chunk as stored.
pub struct ChunkRow {
    pub id: i64,
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub heading: Option<String>,
    pub text: String,
    pub hash: String,
}

/// A chunk to store for a file.
pub struct NewChunk<'a> {
    pub start_line: usize,
    pub end_line: usize,
    pub heading: Option<&'a str>,
    pub text: &'a str,
}

/// A file's row in `files`: its key (display path), content hash and size.
pub struct FileRow<'a> {
    pub key: &'a str,
    pub hash: &'a str,
    pub size: usize,
}

/// The numbers `/rag status` shows.
pub struct Counts {
    pub files: usize,
    pub chunks: usize,
    /// Chunks with a vector of the embedder asked about.
    pub vectors: usize,
}

/// A RAG store's open database.
pub struct RagTables {
    conn: Connection,
}

impl RagTables {
    /// Opens (creating) the store at `path`, its schema set up under the write lock.
    pub fn open(path: &Path) -> Result<Self> {
        let conn = super::open(path)?;
        super::immediate(&conn, || {
            conn.execute_batch(SCHEMA)?;
            conn.execute_batch(super::vectors::SCHEMA)?;
            conn.execute_batch(&super::vectors::watch("chunks"))
        })?;
        conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?1)",
            [SCHEMA_VERSION],
        )?;
        Ok(Self { conn })
    }

    /// The Go tool's store at `path` copied into memory with this schema (the file is
    /// opened immutable, never written); `None` when it has no `chunks` table with a
    /// `content` column.
    pub fn copy_go_store(path: &Path) -> Result<Option<Self>> {
        let source = super::open_untouched(path)?;
        let columns = super::columns(&source, "chunks")?;
        if !columns.iter().any(|c| c == "content") {
            return Ok(None);
        }
        let column = |name: &str, otherwise: &str| {
            if columns.iter().any(|c| c == name) {
                name.to_string()
            } else {
                otherwise.to_string()
            }
        };
        let select = format!(
            "SELECT content, {}, {}, {} FROM chunks ORDER BY id",
            column("source", "''"),
            column("start_line", "0"),
            column("end_line", "0"),
        );
        let conn = Connection::open_in_memory()?;
        copy_go_rows(&source, &conn, &select)?;
        Ok(Some(Self { conn }))
    }

    pub fn recorded_embedder(&self) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'embedder'", [], |r| {
                r.get(0)
            })
            .optional()?)
    }

    pub fn record_embedder(&self, model: &str) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('embedder', ?1)",
            [model],
        )?;
        Ok(())
    }

    /// Files, chunks, and chunks with a vector of `model` (0 without one).
    pub fn counts(&self, model: Option<&str>) -> Result<Counts> {
        let vectors = match model {
            Some(m) => shared::count_embedded(&self.conn, "chunks", m)?,
            None => 0,
        };
        Ok(Counts {
            files: shared::count(&self.conn, "files")?,
            chunks: shared::count(&self.conn, "chunks")?,
            vectors,
        })
    }

    /// Every chunk's (path, start, end, hash), in order.
    pub fn chunk_keys(&self) -> Result<Vec<(String, usize, usize, String)>> {
        let mut stmt = self.conn.prepare(
            "SELECT path, start_line, end_line, hash FROM chunks ORDER BY path, start_line",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)? as usize,
                r.get::<_, i64>(2)? as usize,
                r.get::<_, String>(3)?,
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Inserts chunks (path, start, end, text) in one transaction, each keyed by its
    /// position and text, with vectors under `model` when given.
    pub fn bulk_insert(
        &self,
        chunks: &[(String, usize, usize, String)],
        vectors: Option<(&str, &[Vec<f32>])>,
    ) -> Result<()> {
        self.conn.execute_batch("BEGIN")?;
        match self.bulk_rows(chunks, vectors) {
            Ok(()) => Ok(self.conn.execute_batch("COMMIT")?),
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e.into())
            }
        }
    }

    fn bulk_rows(
        &self,
        chunks: &[(String, usize, usize, String)],
        vectors: Option<(&str, &[Vec<f32>])>,
    ) -> rusqlite::Result<()> {
        let mut insert = self.conn.prepare_cached(
            "INSERT INTO chunks(path, start_line, end_line, heading, hash, text) VALUES (?1, ?2, ?3, NULL, ?4, ?5)",
        )?;
        let mut fts = self.conn.prepare_cached(
            "INSERT INTO chunks_fts(rowid, text, heading, path) VALUES (?1, ?2, '', ?3)",
        )?;
        let mut items = Vec::new();
        for (i, (path, a, b, text)) in chunks.iter().enumerate() {
            let hash = text_hash(&format!("{i}:{text}"));
            insert.execute(params![path, *a as i64, *b as i64, hash, text])?;
            fts.execute(params![self.conn.last_insert_rowid(), text, path])?;
            if let Some((_, vs)) = vectors {
                if let Some(v) = vs.get(i) {
                    items.push((hash, v.clone()));
                }
            }
        }
        if let Some((model, _)) = vectors {
            super::vectors::put(&self.conn, model, &items)?;
        }
        Ok(())
    }

    /// Chunk ids matching the FTS5 query `fts`, best first, with their bm25 score.
    pub fn fts(&self, fts: &str, limit: usize) -> Result<Vec<(i64, f64)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT rowid, -{BM25} FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY {BM25} LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![fts, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Maps and checks the scan copy of `model`'s vectors ahead of the first scan (see
    /// `VectorCache::warm`); true when it is ready.
    pub fn warm_vectors(&self, cache: &VectorCache<i64>, model: Option<&str>) -> Result<bool> {
        Ok(super::vectors::warm(&self.conn, cache, model)?)
    }

    /// The `k` chunks whose vector of `model` is nearest to `q` (scanned through `cache`).
    pub fn nearest(
        &self,
        cache: &VectorCache<i64>,
        q: &[f32],
        model: &str,
        k: usize,
    ) -> Result<Vec<(i64, f32)>> {
        Ok(JOIN.nearest(
            &self.conn,
            cache,
            model,
            |r| r.get::<_, i64>(0),
            q,
            k,
            |_| true,
        )?)
    }

    pub fn chunk(&self, id: i64) -> Result<Option<ChunkRow>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, path, start_line, end_line, heading, text, hash FROM chunks WHERE id = ?1",
                [id],
                |r| {
                    Ok(ChunkRow {
                        id: r.get(0)?,
                        path: r.get(1)?,
                        start_line: r.get::<_, i64>(2)? as usize,
                        end_line: r.get::<_, i64>(3)? as usize,
                        heading: r.get(4)?,
                        text: r.get(5)?,
                        hash: r.get(6)?,
                    })
                },
            )
            .optional()?)
    }

    /// The content hash recorded for the file `key` (`None` also when it cannot be read).
    pub fn file_hash(&self, key: &str) -> Option<String> {
        self.conn
            .query_row("SELECT hash FROM files WHERE path = ?1", [key], |r| {
                r.get(0)
            })
            .ok()
    }

    /// Asks, hash by hash, whether a vector of a model is stored.
    pub fn vector_lookup(&self) -> Result<VectorLookup<'_>> {
        Ok(VectorLookup(self.conn.prepare_cached(
            "SELECT 1 FROM vectors WHERE hash = ?1 AND model = ?2",
        )?))
    }

    /// In one `BEGIN IMMEDIATE` transaction: replaces the file's chunks (and their
    /// full-text rows) with `chunks`, stores `vectors` under `model`, records the file.
    /// Returns how many old chunks were removed.
    pub fn replace_file(
        &self,
        file: &FileRow<'_>,
        chunks: &[NewChunk<'_>],
        model: Option<&str>,
        vectors: &[(String, Vec<f32>)],
        now: i64,
    ) -> Result<usize> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match self.replace_rows(file, chunks, model, vectors, now) {
            Ok(removed) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(removed)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e.into())
            }
        }
    }

    fn replace_rows(
        &self,
        file: &FileRow<'_>,
        chunks: &[NewChunk<'_>],
        model: Option<&str>,
        vectors: &[(String, Vec<f32>)],
        now: i64,
    ) -> rusqlite::Result<usize> {
        let removed = delete_file(&self.conn, file.key)?;
        let mut insert = self.conn.prepare_cached(
            "INSERT INTO chunks(path, start_line, end_line, heading, hash, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut insert_fts = self.conn.prepare_cached(
            "INSERT INTO chunks_fts(rowid, text, heading, path) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for c in chunks {
            insert.execute(params![
                file.key,
                c.start_line as i64,
                c.end_line as i64,
                c.heading,
                text_hash(c.text),
                c.text
            ])?;
            let id = self.conn.last_insert_rowid();
            insert_fts.execute(params![id, c.text, c.heading.unwrap_or_default(), file.key])?;
        }
        if let Some(model) = model {
            super::vectors::put(&self.conn, model, vectors)?;
        }
        self.conn.execute(
            "INSERT OR REPLACE INTO files(path, hash, size, chunks, ingested) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![file.key, file.hash, file.size as i64, chunks.len() as i64, now],
        )?;
        Ok(removed)
    }

    /// The paths of every ingested file.
    pub fn file_paths(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare("SELECT path FROM files")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Removes one file's chunks in a `BEGIN IMMEDIATE` transaction; returns how many.
    pub fn remove_file(&self, key: &str) -> Result<usize> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match delete_file(&self.conn, key) {
            Ok(n) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(n)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e.into())
            }
        }
    }

    /// Records where an imported store came from, and when.
    pub fn mark_imported(&self, from: &Path, at: i64) -> Result<()> {
        Ok(shared::mark_imported(&self.conn, from, at)?)
    }

    /// See [`super::copy_to_new`].
    pub fn copy_to_new(&self, path: &Path) -> Result<bool> {
        Ok(super::copy_to_new(&self.conn, path)?)
    }

    /// (hash, text) of the chunk texts with no vector of `model`, each text once.
    pub fn missing_vectors(&self, model: &str) -> Result<Vec<(String, String)>> {
        let mut stmt = self.conn.prepare(
            "SELECT hash, MIN(text) FROM chunks c WHERE NOT EXISTS \
             (SELECT 1 FROM vectors v WHERE v.hash = c.hash AND v.model = ?1) GROUP BY hash",
        )?;
        let rows = stmt.query_map([model], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores vectors in one transaction.
    pub fn put_vectors(&self, model: &str, items: &[(String, Vec<f32>)]) -> Result<()> {
        Ok(super::immediate(&self.conn, || {
            super::vectors::put(&self.conn, model, items)
        })?)
    }
}

/// See [`RagTables::vector_lookup`].
pub struct VectorLookup<'a>(CachedStatement<'a>);

impl VectorLookup<'_> {
    /// Whether a vector of `model` is stored for `hash` (false when it cannot be read).
    pub fn has(&mut self, hash: &str, model: &str) -> bool {
        self.0.exists(params![hash, model]).unwrap_or(false)
    }
}

fn delete_file(conn: &Connection, key: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE path = ?1)",
        [key],
    )?;
    let n = conn.execute("DELETE FROM chunks WHERE path = ?1", [key])?;
    conn.execute("DELETE FROM files WHERE path = ?1", [key])?;
    Ok(n)
}

fn copy_go_rows(source: &Connection, conn: &Connection, select: &str) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)?;
    conn.execute_batch(super::vectors::SCHEMA)?;
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('schema', ?1)",
        [SCHEMA_VERSION],
    )?;
    let mut read = source.prepare(select)?;
    let mut rows = read.query([])?;
    let mut insert = conn.prepare(
        "INSERT INTO chunks(path, start_line, end_line, heading, hash, text) VALUES (?1, ?2, ?3, NULL, ?4, ?5)",
    )?;
    let mut fts =
        conn.prepare("INSERT INTO chunks_fts(rowid, text, heading, path) VALUES (?1, ?2, '', ?3)")?;
    while let Some(row) = rows.next()? {
        let text: String = row.get(0)?;
        let path: String = row.get(1)?;
        let (start, end): (i64, i64) = (row.get(2)?, row.get(3)?);
        insert.execute(params![path, start, end, text_hash(&text), text])?;
        fts.execute(params![conn.last_insert_rowid(), text, path])?;
    }
    conn.execute_batch(
        "INSERT INTO files(path, hash, size, chunks, ingested) \
         SELECT path, '', 0, COUNT(*), 0 FROM chunks GROUP BY path",
    )
}
