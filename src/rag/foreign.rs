//! RAG stores the Go tool wrote (`agents/rag/NAME.db`: a `chunks` table with `content`
//! and `source`, vectors of another embedder, no `meta` table). harvey never writes
//! them: at open their chunks are copied into an in-memory store with harvey's schema,
//! so full-text search works as for a store of its own; their vectors, made by another
//! embedder, are ignored.

use std::path::Path;

use super::{RagError, RagStore};
use crate::storage::rag::RagTables;

/// The store at `path`, read into memory; `Err` names what harvey cannot read in it.
pub(super) fn open(path: &Path, name: &str) -> Result<RagStore, RagError> {
    let copied = RagTables::copy_go_store(path).map_err(|source| RagError::Db {
        path: path.to_path_buf(),
        source,
    })?;
    let Some(tables) = copied else {
        return Err(RagError::Unreadable {
            path: path.to_path_buf(),
        });
    };
    Ok(RagStore {
        name: name.to_string(),
        path: path.to_path_buf(),
        tables,
        embedder: None,
        vectors: Default::default(),
        foreign: true,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::storage::fixtures::write_foreign;

    /// The Go tool's layout, written in our words: chunks with content, a float64
    /// vector blob, the source file and (later columns) line numbers.
    pub(crate) fn go_store(path: &Path) {
        write_foreign(
            path,
            "PRAGMA journal_mode = WAL;
             CREATE TABLE chunks(id INTEGER PRIMARY KEY, content TEXT NOT NULL,
                 embedding BLOB NOT NULL, source TEXT NOT NULL DEFAULT '',
                 start_line INTEGER NOT NULL DEFAULT 0, end_line INTEGER NOT NULL DEFAULT 0);
             INSERT INTO chunks(content, embedding, source, start_line, end_line) VALUES
                 ('The release script refuses to run with uncommitted changes.', x'00', 'docs/release.md', 3, 9),
                 ('Deploys go to the staging host first.', x'00', 'docs/deploy.md', 1, 4);",
        );
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
