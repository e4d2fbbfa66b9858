//! The store's vector copy across queries and writes.

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use super::RagStore;
use crate::tokens::{Embedder, HashEmbedder};

#[test]
fn queries_alone_never_rebuild_the_vector_copy_a_write_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.harvey.db");
    let embedder = HashEmbedder::default();
    let texts = ["the pump needs priming", "the valve sticks when cold"];
    let vectors = embedder.embed(&texts).unwrap();
    let chunks: Vec<(String, usize, usize, String)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("docs/{i}.md"), 1, 2, t.to_string()))
        .collect();
    let mut store = RagStore::at(&db, "notes", Some(Arc::new(embedder.clone()))).unwrap();
    store
        .bulk_insert(&chunks, Some((embedder.model_id(), &vectors)))
        .unwrap();
    let copy = crate::vector::sidecar_path(&db);
    assert_eq!(store.query("pump priming", 1).unwrap()[0].path, "docs/0.md");
    let built = std::fs::metadata(&copy).unwrap().ino();
    for q in ["valve", "cold", "priming pump"] {
        assert!(!store.query(q, 2).unwrap().is_empty(), "{q}");
    }
    assert_eq!(std::fs::metadata(&copy).unwrap().ino(), built);
    store.remove_file("docs/0.md").unwrap();
    // The removed chunk is gone from the copy; the one left is not about pumps, so it
    // shows no evidence for this query (the relevance floor) and nothing is returned.
    assert!(store.query("pump priming", 1).unwrap().is_empty());
    assert_eq!(store.query("valve sticks", 1).unwrap()[0].path, "docs/1.md");
    assert_ne!(std::fs::metadata(&copy).unwrap().ino(), built, "rebuilt");
}

#[test]
fn a_file_named_twice_is_ingested_once() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    for (name, text) in [
        ("a.md", "the pump needs priming"),
        ("b.md", "the valve sticks"),
    ] {
        std::fs::write(docs.join(name), text).unwrap();
    }
    let db = dir.path().join("notes.harvey.db");
    let embedder = Arc::new(HashEmbedder::default());
    let mut store = RagStore::at(&db, "notes", Some(embedder)).unwrap();
    let opts = super::ingest::IngestOptions {
        workspace: dir.path(),
        chunk_tokens: 64,
    };
    // The file itself, then its directory: one file each time, not a second "unchanged".
    let report = store
        .ingest(
            &[docs.join("a.md"), docs.clone()],
            &opts,
            &mut |_| {},
            &|| false,
        )
        .unwrap();
    assert_eq!(
        (
            report.files_seen,
            report.files_ingested,
            report.files_unchanged
        ),
        (2, 2, 0)
    );
    assert_eq!(report.chunks_added, 2);
}
