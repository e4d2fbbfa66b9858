//! Unit tests of the knowledge base.

use super::*;
use crate::tokens::HashEmbedder;

fn kb(dir: &Path) -> KnowledgeBase {
    KnowledgeBase::open(dir, "demo", Some(Arc::new(HashEmbedder::default()))).unwrap()
}

#[test]
fn a_fresh_kb_has_the_default_project_current() {
    let dir = tempfile::tempdir().unwrap();
    let kb = kb(dir.path());
    assert_eq!(kb.current_project().unwrap(), "demo");
    let projects = kb.projects().unwrap();
    assert_eq!(projects.len(), 1);
    assert!(projects[0].current);
}

#[test]
fn observe_search_link_and_switch_projects() {
    let dir = tempfile::tempdir().unwrap();
    let kb = kb(dir.path());
    let o = kb
        .observe("decision", "We chose SQLite WAL for the index")
        .unwrap();
    kb.observe("note", "The fan is loud under load").unwrap();
    assert!(kb.link(o.id, "storage").unwrap(), "concept created");
    assert!(
        !kb.link(o.id, "Storage").unwrap(),
        "names are case-insensitive"
    );
    let hits = kb.search("sqlite index", None, 5).unwrap();
    assert_eq!(hits[0].id, o.id);
    assert_eq!(hits[0].concepts, ["storage"]);
    assert_eq!(kb.status().unwrap().vectors, 2);

    kb.add_project("other", "a second one").unwrap();
    kb.use_project("other").unwrap();
    assert!(kb.search("sqlite", Some("other"), 5).unwrap().is_empty());
    assert!(matches!(kb.use_project("nope"), Err(KbError::NoProject(_))));
    // The choice persists.
    drop(kb);
    let again = KnowledgeBase::open(dir.path(), "demo", None).unwrap();
    assert_eq!(again.current_project().unwrap(), "other");
}

#[test]
fn bad_observations_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let kb = kb(dir.path());
    let e = kb.observe("rumour", "x").unwrap_err().to_string();
    assert!(e.contains("expected one of note, finding"), "{e}");
    assert!(kb.observe("note", "  ").is_err());
    let e = kb
        .observe("note", "key AKIAIOSFODNN7EXAMPLE here")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not saved"), "{e}");
}
