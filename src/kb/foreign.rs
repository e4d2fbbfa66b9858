//! A knowledge base the Go tool wrote (`agents/knowledge.db`: projects, observations with
//! a `body`, concepts, `observation_concepts`; no `meta` table). harvey never writes it:
//! at open its rows are copied into an in-memory knowledge base with harvey's schema, so
//! `/kb` reads and recall work as for its own; writes are refused.

use std::path::Path;

use super::{KbError, KnowledgeBase};
use crate::storage::kb::KbTables;

/// The knowledge base at `path`, read into memory. The current project is
/// `default_project` when the file has it, else its first project.
pub(super) fn open(path: &Path, default_project: &str) -> Result<KnowledgeBase, KbError> {
    let db = |source| KbError::Db {
        path: path.to_path_buf(),
        source,
    };
    let tables = KbTables::copy_go_store(path).map_err(db)?.ok_or_else(|| {
        KbError::Invalid(format!(
            "{}: not a knowledge base harvey can read (no observations table with a body); it is left as it is",
            path.display()
        ))
    })?;
    let kb = KnowledgeBase {
        path: path.to_path_buf(),
        tables,
        embedder: None,
        vectors: Default::default(),
        foreign: true,
    };
    let current = match kb.project_id(default_project)? {
        Some(id) => id,
        None => match kb.tables.first_project().map_err(db)? {
            Some(id) => id,
            None => kb.insert_project(default_project, "")?,
        },
    };
    kb.set_current(current)?;
    Ok(kb)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::storage::fixtures::write_foreign;

    /// The Go tool's layout, in our words.
    pub(crate) fn go_kb(path: &Path) {
        write_foreign(
            path,
            "CREATE TABLE projects(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,
                 description TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT 'active');
             CREATE TABLE observations(id INTEGER PRIMARY KEY AUTOINCREMENT, project_id INTEGER,
                 kind TEXT NOT NULL DEFAULT 'note', body TEXT NOT NULL);
             CREATE TABLE concepts(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,
                 description TEXT NOT NULL DEFAULT '');
             CREATE TABLE observation_concepts(observation_id INTEGER, concept_id INTEGER,
                 PRIMARY KEY (observation_id, concept_id));
             INSERT INTO projects(name) VALUES ('site'), ('tools');
             INSERT INTO observations(project_id, kind, body) VALUES
                 (1, 'finding', 'The staging host is rebuilt nightly.'),
                 (2, 'note', 'The linter runs before every commit.');
             INSERT INTO concepts(name) VALUES ('deploys');
             INSERT INTO observation_concepts VALUES (1, 1);",
        );
    }

    #[test]
    fn a_go_knowledge_base_is_searched_and_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("knowledge.db");
        go_kb(&path);
        let before = std::fs::read(&path).unwrap();
        let kb = KnowledgeBase::open(dir.path(), "site", None).unwrap();
        assert!(kb.is_foreign());
        assert_eq!(kb.current_project().unwrap(), "site");
        let hits = kb.search("staging host rebuilt", None, 3).unwrap();
        assert_eq!(hits[0].text, "The staging host is rebuilt nightly.");
        assert_eq!(hits[0].concepts, vec!["deploys"]);
        assert_eq!(kb.projects().unwrap().len(), 2);
        let refused = kb.observe("note", "new").unwrap_err().to_string();
        assert!(refused.contains("Go harvey"), "{refused}");
        assert!(kb.add_project("x", "").is_err() && kb.link(1, "y").is_err());
        drop(kb);
        assert_eq!(std::fs::read(&path).unwrap(), before);

        let other = KnowledgeBase::open(dir.path(), "elsewhere", None).unwrap();
        assert_eq!(
            other.current_project().unwrap(),
            "site",
            "the first project"
        );
    }
}
