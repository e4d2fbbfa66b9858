//! RAG stores the Go tool wrote (`agents/rag/NAME.db`: a `chunks` table with `content`
//! and `source`, vectors of another embedder, no `meta` table). harvey never writes
//! them: at open their chunks are copied into an in-memory store with harvey's schema,
//! so full-text search works as for a store of its own; their vectors, made by another
//! embedder, are ignored.

use std::path::Path;

use rusqlite::{params, Connection};

use super::{RagError, RagStore, SCHEMA, SCHEMA_VERSION};

/// The store at `path`, read into memory; `Err` names what harvey cannot read in it.
pub(super) fn open(path: &Path, name: &str) -> Result<RagStore, RagError> {
    let db = |source| RagError::Db {
        path: path.to_path_buf(),
        source,
    };
    let source = crate::storage::open_untouched(path).map_err(db)?;
    let columns = crate::storage::columns(&source, "chunks").map_err(db)?;
    if !columns.iter().any(|c| c == "content") {
        return Err(RagError::Unreadable {
            path: path.to_path_buf(),
        });
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
    let conn = Connection::open_in_memory().map_err(db)?;
    copy(&source, &conn, &select).map_err(db)?;
    Ok(RagStore {
        name: name.to_string(),
        path: path.to_path_buf(),
        conn,
        embedder: None,
        vectors: Default::default(),
        foreign: true,
    })
}

fn copy(source: &Connection, conn: &Connection, select: &str) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)?;
    conn.execute_batch(crate::storage::vectors::SCHEMA)?;
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
        insert.execute(params![
            path,
            start,
            end,
            crate::vector::text_hash(&text),
            text
        ])?;
        fts.execute(params![conn.last_insert_rowid(), text, path])?;
    }
    conn.execute_batch(
        "INSERT INTO files(path, hash, size, chunks, ingested) \
         SELECT path, '', 0, COUNT(*), 0 FROM chunks GROUP BY path",
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The Go tool's layout, written in our words: chunks with content, a float64
    /// vector blob, the source file and (later columns) line numbers.
    pub(crate) fn go_store(path: &Path) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE chunks(id INTEGER PRIMARY KEY, content TEXT NOT NULL,
                 embedding BLOB NOT NULL, source TEXT NOT NULL DEFAULT '',
                 start_line INTEGER NOT NULL DEFAULT 0, end_line INTEGER NOT NULL DEFAULT 0);
             INSERT INTO chunks(content, embedding, source, start_line, end_line) VALUES
                 ('The release script refuses to run with uncommitted changes.', x'00', 'docs/release.md', 3, 9),
                 ('Deploys go to the staging host first.', x'00', 'docs/deploy.md', 1, 4);",
        )
        .unwrap();
    }

    #[test]
    fn a_go_store_is_searched_in_memory_and_its_file_is_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path();
        std::fs::create_dir_all(agents.join("rag")).unwrap();
        let path = agents.join("rag/notes.db");
        go_store(&path);
        let before = std::fs::read(&path).unwrap();
        assert!(crate::storage::written_elsewhere(&path));

        let store = RagStore::open(agents, "notes", None).unwrap();
        assert!(store.is_foreign());
        let hits = store.query("release script uncommitted", 3).unwrap();
        assert_eq!(hits[0].path, "docs/release.md");
        assert_eq!((hits[0].start_line, hits[0].end_line), (3, 9));
        assert_eq!(store.status().unwrap().files, 2);
        let refused = store
            .remove_file("docs/release.md")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("Go harvey"), "{refused}");
        drop(store);
        assert_eq!(std::fs::read(&path).unwrap(), before);

        let ours = RagStore::create(agents, "mine", None).unwrap();
        assert!(!ours.is_foreign());
        drop(ours);
        assert!(crate::storage::written_by_harvey(
            &agents.join("rag/mine.harvey.db")
        ));
        assert!(!agents.join("rag/mine.db").exists());
    }
}
