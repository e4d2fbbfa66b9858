//! Which file is harvey's knowledge base, and `/kb import`.
//!
//! harvey's knowledge base is `agents/harvey-knowledge.db`, a name of its own: the Go
//! tool's is `agents/knowledge.db`. A knowledge base harvey kept under the Go tool's name
//! before (recognised by its `meta` table) is moved to the new name once.
//!
//! `/kb import` copies the Go tool's knowledge base (projects, observations, concepts
//! and the links between them, as [`super::foreign`] reads them) into harvey's file and
//! embeds the observations with harvey's embedder; the Go file is only read (immutable
//! open) and stays byte-identical. The copy is written under a temporary name and linked
//! into place whole; a failed embedding removes it again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::{foreign, KbError, KnowledgeBase};
use crate::tokens::Embedder;

/// harvey's knowledge base, in `agents/`.
pub const FILE: &str = "harvey-knowledge.db";

/// The Go tool's knowledge base, in `agents/` (and harvey's before it had a name of its own).
pub const GO_FILE: &str = "knowledge.db";

/// harvey's knowledge base file, after moving one harvey kept under the Go tool's name.
pub fn own_path(agents_dir: &Path) -> PathBuf {
    let path = agents_dir.join(FILE);
    let old = agents_dir.join(GO_FILE);
    if !path.exists() && old.is_file() && crate::storage::written_by_harvey(&old) {
        if let Err(e) = crate::storage::relocate(&old, &path) {
            tracing::warn!(
                "cannot move the knowledge base {} to {}: {e}; it stays where it is",
                old.display(),
                path.display()
            );
            return old;
        }
    }
    path
}

/// What an import made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    pub path: PathBuf,
    /// The Go tool's knowledge base, unchanged.
    pub from: PathBuf,
    pub projects: usize,
    pub observations: usize,
    pub concepts: usize,
    pub links: usize,
    pub vectors: usize,
    pub embedder: Option<String>,
}

/// Imports the Go tool's knowledge base (see the module docs).
pub fn import(
    agents_dir: &Path,
    default_project: &str,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<Imported, KbError> {
    let path = own_path(agents_dir);
    let from = agents_dir.join(GO_FILE);
    let is_go = from.is_file() && crate::storage::written_elsewhere(&from);
    if path.exists() {
        return Err(KbError::Invalid(if is_go {
            format!(
                "the Go knowledge base was imported already: harvey uses {} (it was made by an \
                 earlier `/kb import`, or by harvey itself); move that file away to import again",
                path.display()
            )
        } else {
            format!(
                "the knowledge base {} is harvey's own: there is nothing to import (`/kb status` shows it)",
                path.display()
            )
        }));
    }
    if !is_go {
        return Err(KbError::Invalid(format!(
            "no Go knowledge base at {} to import (`/kb status` shows harvey's)",
            from.display()
        )));
    }
    let copy = foreign::open(&from, default_project)?;
    let db = |source| KbError::Db {
        path: path.clone(),
        source,
    };
    copy.tables
        .mark_imported(&from, crate::memory::store::now_unix())
        .map_err(db)?;
    if !copy.tables.copy_to_new(&path).map_err(db)? {
        return Err(KbError::Invalid(format!(
            "{} appeared while importing (another harvey process?); nothing was changed",
            path.display()
        )));
    }
    drop(copy);
    let opened = KnowledgeBase::at(&path, default_project, embedder).and_then(|kb| kb.status());
    match opened {
        Ok(status) => Ok(Imported {
            path,
            from,
            projects: status.projects,
            observations: status.observations,
            concepts: status.concepts,
            links: status.links,
            vectors: status.vectors,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::HashEmbedder;

    #[test]
    fn the_go_knowledge_base_is_imported_whole_and_then_added_to() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path();
        let go = agents.join(GO_FILE);
        foreign::tests::go_kb(&go);
        let before = std::fs::read(&go).unwrap();
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::default());

        let done = import(agents, "site", Some(embedder.clone())).unwrap();
        assert_eq!(
            (done.projects, done.observations, done.concepts, done.links),
            (2, 2, 1, 1)
        );
        assert_eq!(done.vectors, 2);
        assert_eq!(done.path, agents.join(FILE));
        assert_eq!(std::fs::read(&go).unwrap(), before);

        let kb = KnowledgeBase::open(agents, "site", Some(embedder.clone())).unwrap();
        assert!(!kb.is_foreign());
        assert_eq!(kb.current_project().unwrap(), "site");
        let hits = kb.search("staging host rebuilt", None, 3).unwrap();
        assert_eq!(hits[0].concepts, vec!["deploys"]);
        let added = kb
            .observe("decision", "Deploys wait for the nightly rebuild.")
            .unwrap();
        kb.link(added.id, "deploys").unwrap();
        assert_eq!(kb.status().unwrap().observations, 3);
        drop(kb);

        let again = import(agents, "site", None).unwrap_err().to_string();
        assert!(again.contains("imported already"), "{again}");
        assert_eq!(std::fs::read(&go).unwrap(), before);
    }

    #[test]
    fn without_a_go_knowledge_base_there_is_nothing_to_import() {
        let dir = tempfile::tempdir().unwrap();
        let none = import(dir.path(), "x", None).unwrap_err().to_string();
        assert!(none.contains("no Go knowledge base"), "{none}");
        KnowledgeBase::open(dir.path(), "x", None).unwrap();
        assert!(dir.path().join(FILE).exists() && !dir.path().join(GO_FILE).exists());
        let ours = import(dir.path(), "x", None).unwrap_err().to_string();
        assert!(ours.contains("harvey's own"), "{ours}");
    }

    #[test]
    fn a_knowledge_base_of_an_earlier_harvey_moves_to_its_own_name() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(GO_FILE);
        let kb = KnowledgeBase::at(&old, "x", None).unwrap();
        kb.observe("note", "kept across the move").unwrap();
        drop(kb);
        let kb = KnowledgeBase::open(dir.path(), "x", None).unwrap();
        assert_eq!(kb.path(), dir.path().join(FILE));
        assert!(!old.exists());
        assert_eq!(kb.status().unwrap().observations, 1);
    }
}
