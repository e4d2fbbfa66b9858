//! `/rag import NAME`: the Go tool's store `agents/rag/NAME.db` copied into a store of
//! harvey's own, `agents/rag/NAME.harvey.db`, whose chunks are then embedded with
//! harvey's embedder (the Go vectors come from another model and are not copied). The
//! chunks are kept as the Go tool cut them: re-chunking would need the source files,
//! which may be gone. The Go file is only read (immutable open), so it stays
//! byte-identical; from then on the name opens harvey's copy.
//!
//! The copy is written under a temporary name and linked into place whole, so an
//! interrupted import leaves no half store; a failed embedding removes the copy again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::files::{self, Located};
use super::{foreign, valid_name, RagError, RagStore};
use crate::tokens::Embedder;

/// Chunks embedded per call.
const EMBED_GROUP: usize = 64;

/// What an import made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    pub name: String,
    /// harvey's new store.
    pub path: PathBuf,
    /// The Go tool's store, unchanged.
    pub from: PathBuf,
    pub files: usize,
    pub chunks: usize,
    pub vectors: usize,
    /// The embedder that made the vectors; `None`: full-text search only.
    pub embedder: Option<String>,
}

/// Imports the Go store `name` (see the module docs).
pub fn import(
    agents_dir: &Path,
    name: &str,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<Imported, RagError> {
    if !valid_name(name) {
        return Err(RagError::BadName(name.into()));
    }
    let from = match files::locate(agents_dir, name) {
        Located::Go(path) => path,
        Located::Own {
            path,
            imported: true,
        } => {
            return Err(RagError::AlreadyImported {
                name: name.into(),
                path,
            })
        }
        Located::Own { .. } => return Err(RagError::NotGo { name: name.into() }),
        Located::Missing => return Err(RagError::NoGoStore { name: name.into() }),
    };
    let path = files::own_path(agents_dir, name);
    let copy = foreign::open(&from, name)?;
    let db = |source| RagError::Db {
        path: path.clone(),
        source,
    };
    copy.tables()
        .mark_imported(&from, crate::memory::store::now_unix())
        .map_err(db)?;
    if !copy.tables().copy_to_new(&path).map_err(db)? {
        return Err(RagError::AlreadyImported {
            name: name.into(),
            path,
        });
    }
    drop(copy);
    match embed_copy(&path, name, embedder) {
        Ok((status, vectors)) => Ok(Imported {
            name: name.into(),
            path,
            from,
            files: status.files,
            chunks: status.chunks,
            vectors,
            embedder: status.embedder,
        }),
        Err(e) => {
            for suffix in ["", "-wal", "-shm", ".vectors"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
            Err(e)
        }
    }
}

fn embed_copy(
    path: &Path,
    name: &str,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<(super::StoreStatus, usize), RagError> {
    let store = RagStore::at(path, name, embedder)?;
    let vectors = store.embed_missing()?;
    Ok((store.status()?, vectors))
}

impl RagStore {
    /// Embeds every chunk that has no vector of the store's embedder yet (identical text
    /// once). Returns how many vectors were added; 0 without an embedder.
    pub fn embed_missing(&self) -> Result<usize, RagError> {
        self.writable()?;
        let Some(embedder) = self.embedder() else {
            return Ok(0);
        };
        let model = embedder.model_id();
        let db = |e| self.db_err(e);
        let missing = self.tables().missing_vectors(model).map_err(db)?;
        for group in missing.chunks(EMBED_GROUP) {
            let texts: Vec<&str> = group.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = embedder
                .embed(&texts)
                .map_err(|e| RagError::Embed(e.to_string()))?;
            let items: Vec<(String, Vec<f32>)> =
                group.iter().map(|(h, _)| h.clone()).zip(vectors).collect();
            self.tables().put_vectors(model, &items).map_err(db)?;
        }
        Ok(missing.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::HashEmbedder;

    #[test]
    fn a_go_store_is_imported_embedded_and_used_instead_and_its_file_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path();
        std::fs::create_dir_all(agents.join("rag")).unwrap();
        let go = agents.join("rag/notes.db");
        foreign::tests::go_store(&go);
        let before = std::fs::read(&go).unwrap();
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::default());

        let done = import(agents, "notes", Some(embedder.clone())).unwrap();
        assert_eq!((done.files, done.chunks, done.vectors), (2, 2, 2));
        assert_eq!(done.path, agents.join("rag/notes.harvey.db"));
        assert_eq!(
            std::fs::read(&go).unwrap(),
            before,
            "the Go file is unchanged"
        );

        let store = RagStore::open(agents, "notes", Some(embedder.clone())).unwrap();
        assert!(!store.is_foreign(), "the imported copy is used");
        assert_eq!(store.status().unwrap().vectors, 2);
        let hits = store.query("release script uncommitted", 2).unwrap();
        assert_eq!(hits[0].path, "docs/release.md");
        assert_eq!((hits[0].start_line, hits[0].end_line), (3, 9));
        store.remove_file("docs/deploy.md").unwrap();
        assert!(files::is_imported(agents, "notes"));
        assert_eq!(files::list(agents), vec!["notes"]);
        drop(store);

        let again = import(agents, "notes", None).unwrap_err().to_string();
        assert!(
            again.contains("imported already") && again.contains("/rag drop notes"),
            "{again}"
        );
        let none = import(agents, "other", None).unwrap_err().to_string();
        assert!(none.contains("no Go RAG store named \"other\""), "{none}");
        RagStore::create(agents, "mine", None).unwrap();
        let ours = import(agents, "mine", None).unwrap_err().to_string();
        assert!(ours.contains("harvey's own"), "{ours}");
        assert_eq!(std::fs::read(&go).unwrap(), before);
    }

    #[test]
    fn a_store_of_the_go_tools_name_cannot_be_made_twice() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("rag")).unwrap();
        foreign::tests::go_store(&dir.path().join("rag/notes.db"));
        let refused = RagStore::create(dir.path(), "notes", None)
            .err()
            .unwrap()
            .to_string();
        assert!(refused.contains("/rag import notes"), "{refused}");
    }
}
