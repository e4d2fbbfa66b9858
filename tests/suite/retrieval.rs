//! RAG stores, the knowledge base and the one recall path, with a deterministic stand-in
//! embedder (the real model's fidelity and the paraphrase test are in `embedder.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use harvey::kb::{KbSilo, KnowledgeBase};
use harvey::memory::recall::{recall, Limits, MemorySilo};
use harvey::memory::{Draft, MemoryStore, Silo};
use harvey::rag::ingest::{IngestOptions, IngestReport};
use harvey::rag::{RagError, RagSilo, RagStore};
use harvey::tokens::{Embedder, HashEmbedder, WordCounter};

fn fixture_tree() -> (tempfile::TempDir, PathBuf) {
    let ws = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rag");
    let dst = ws.path().join("garden");
    copy_dir(&src, &dst);
    (ws, dst)
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

fn embedder() -> Arc<dyn Embedder> {
    Arc::new(HashEmbedder::default())
}

fn ingest(store: &mut RagStore, ws: &Path, paths: &[PathBuf]) -> IngestReport {
    let opts = IngestOptions {
        workspace: ws,
        chunk_tokens: 40,
    };
    store.ingest(paths, &opts, &mut |_| {}, &|| false).unwrap()
}

#[test]
fn ingesting_twice_changes_nothing_and_an_edit_replaces_only_that_file() {
    let (ws, tree) = fixture_tree();
    let agents = ws.path().join("agents");
    let mut store = RagStore::create(&agents, "garden", Some(embedder())).unwrap();
    let first = ingest(&mut store, ws.path(), std::slice::from_ref(&tree));
    assert_eq!(first.files_ingested, 4, "{first:?}");
    assert!(first.skipped.is_empty(), "{:?}", first.skipped);
    let keys = store.chunk_keys().unwrap();
    assert!(keys.len() >= 6, "{keys:?}");
    assert_eq!(first.vectors_added, keys.len(), "every chunk got a vector");

    let second = ingest(&mut store, ws.path(), std::slice::from_ref(&tree));
    assert_eq!(second.files_unchanged, 4);
    assert_eq!((second.files_ingested, second.chunks_added), (0, 0));
    assert_eq!(store.chunk_keys().unwrap(), keys, "same chunks");

    // Edit one file: only its chunks change.
    let notes = tree.join("notes.txt");
    let mut text = std::fs::read_to_string(&notes).unwrap();
    text.push_str("\nThe rain barrel overflowed after the storm; add a second barrel.\n");
    std::fs::write(&notes, text).unwrap();
    let third = ingest(&mut store, ws.path(), std::slice::from_ref(&tree));
    assert_eq!((third.files_ingested, third.files_unchanged), (1, 3));
    let after = store.chunk_keys().unwrap();
    let others = |k: &[(String, usize, usize, String)]| -> Vec<_> {
        k.iter()
            .filter(|c| c.0 != "garden/notes.txt")
            .cloned()
            .collect()
    };
    assert_eq!(others(&after), others(&keys), "other files untouched");
    assert_ne!(after, keys);

    // A removed file's chunks go when its directory is ingested again.
    std::fs::remove_file(tree.join("src/valve.rs")).unwrap();
    let fourth = ingest(&mut store, ws.path(), std::slice::from_ref(&tree));
    assert_eq!(fourth.files_removed, 1);
    assert!(store
        .chunk_keys()
        .unwrap()
        .iter()
        .all(|k| k.0 != "garden/src/valve.rs"));
}

#[test]
fn a_query_returns_the_chunk_with_its_path_and_lines() {
    let (ws, tree) = fixture_tree();
    let mut store =
        RagStore::create(&ws.path().join("agents"), "garden", Some(embedder())).unwrap();
    ingest(&mut store, ws.path(), &[tree]);
    let hits = store.query("relay fuse blown pump", 3).unwrap();
    let top = &hits[0];
    assert_eq!(top.path, "garden/docs/troubleshooting.md");
    assert_eq!(top.heading.as_deref(), Some("The pump does not start"));
    let source = std::fs::read_to_string(ws.path().join(&top.path)).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    assert_eq!(
        lines[top.start_line - 1..top.end_line].join("\n"),
        top.text,
        "the line range is exactly the chunk"
    );
    assert!(top
        .source()
        .starts_with("rag:garden/garden/docs/troubleshooting.md:"));
}

#[test]
fn binary_unreadable_and_huge_files_are_reported_and_the_ingest_goes_on() {
    let (ws, tree) = fixture_tree();
    std::fs::write(tree.join("photo.jpg"), [0xff, 0xd8, 0xff, 0x00, 0x10, 0x4a]).unwrap();
    let huge = std::fs::File::create(tree.join("huge.log")).unwrap();
    huge.set_len(50 * 1024 * 1024).unwrap();
    drop(huge);
    std::os::unix::fs::symlink(tree.join("README.md"), tree.join("link.md")).unwrap();
    let mut store =
        RagStore::create(&ws.path().join("agents"), "garden", Some(embedder())).unwrap();
    // /proc/self/mem exists but cannot be read from offset 0, even by root (a file
    // with mode 000 would not do when the tests run as root).
    let report = ingest(
        &mut store,
        ws.path(),
        &[tree.clone(), PathBuf::from("/proc/self/mem")],
    );
    let reason = |name: &str| {
        report
            .skipped
            .iter()
            .find(|s| s.path.ends_with(name))
            .map(|s| s.reason.clone())
            .unwrap_or_else(|| panic!("{name} not reported: {:?}", report.skipped))
    };
    assert!(reason("photo.jpg").contains("binary"));
    assert!(reason("huge.log").contains("52.4 MB is over the 8 MB limit"));
    assert!(reason("link.md").contains("symbolic link"));
    assert!(reason("/mem").contains("cannot read: Input/output error"));
    assert_eq!(report.files_ingested, 4, "the text files still went in");
}

#[test]
fn a_cancelled_ingest_keeps_what_was_committed() {
    let (ws, tree) = fixture_tree();
    let mut store =
        RagStore::create(&ws.path().join("agents"), "garden", Some(embedder())).unwrap();
    let opts = IngestOptions {
        workspace: ws.path(),
        chunk_tokens: 40,
    };
    let done = std::cell::Cell::new(0);
    let report = store
        .ingest(&[tree], &opts, &mut |p| done.set(p.files_done), &|| {
            done.get() >= 2
        })
        .unwrap();
    assert!(report.cancelled);
    assert_eq!(report.files_ingested, 2);
    assert_eq!(store.status().unwrap().files, 2);
}

#[test]
fn a_store_refuses_another_embedder() {
    let ws = tempfile::tempdir().unwrap();
    let agents = ws.path().join("agents");
    RagStore::create(&agents, "docs", Some(embedder())).unwrap();
    let other: Arc<dyn Embedder> = Arc::new(HashEmbedder {
        dim: 32,
        id: "another-model".into(),
    });
    let err = RagStore::open(&agents, "docs", Some(other)).err().unwrap();
    assert!(matches!(err, RagError::EmbedderMismatch { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("hash-embedder") && msg.contains("another-model"),
        "{msg}"
    );
    assert!(
        RagStore::open(&agents, "docs", None).is_ok(),
        "full-text use stays possible"
    );
}

#[test]
fn memories_rag_chunks_and_kb_observations_share_one_budgeted_recall() {
    let (ws, tree) = fixture_tree();
    let agents = ws.path().join("agents");
    let (mut memory, _) = MemoryStore::open(&agents, ws.path()).unwrap();
    memory.set_embedder(embedder()).unwrap();
    memory
        .write(&Draft {
            mtype: "tool_use".into(),
            description: "Restart the pump controller with systemctl restart greenhouse".into(),
            ..Draft::default()
        })
        .unwrap();
    let mut rag = RagStore::create(&agents, "garden", Some(embedder())).unwrap();
    ingest(&mut rag, ws.path(), std::slice::from_ref(&tree));
    // The same file in a second store: its chunks must not appear twice.
    let mut twin = RagStore::create(&agents, "twin", Some(embedder())).unwrap();
    ingest(&mut twin, ws.path(), &[tree.join("docs")]);
    let kb = KnowledgeBase::open(&agents, "greenhouse", Some(embedder())).unwrap();
    let obs = kb
        .observe("finding", "The pump relay fuse blew twice in October")
        .unwrap();

    let silos_memory = MemorySilo(&memory);
    let silo_rag = RagSilo::new(&rag, 5);
    let silo_twin = RagSilo::new(&twin, 5);
    let silo_kb = KbSilo(&kb);
    let silos: Vec<&dyn Silo> = vec![&silos_memory, &silo_rag, &silo_twin, &silo_kb];
    let limits = Limits {
        budget: 400,
        factual_share: 0.5,
        max_relevant: 8,
    };
    let injection = recall(&silos, "pump relay fuse", limits, &WordCounter).unwrap();
    let text = &injection.text;
    assert!(text.contains("[relevant experience]"), "{text}");
    assert!(text.contains("[knowledge]"), "{text}");
    assert!(text.contains(&format!("(kb:{} finding)", obs.id)), "{text}");
    assert!(
        text.contains("(rag:garden/garden/docs/troubleshooting.md:"),
        "{text}"
    );
    assert!(injection.tokens <= 400);
    let fuse_lines = text
        .lines()
        .filter(|l| l.contains("Check the relay board fuse first"))
        .count();
    assert_eq!(fuse_lines, 1, "the same chunk never appears twice:\n{text}");
}

#[test]
fn every_memory_gets_a_vector_and_a_rebuild_keeps_them() {
    let ws = tempfile::tempdir().unwrap();
    let agents = ws.path().join("agents");
    let (mut store, _) = MemoryStore::open(&agents, ws.path()).unwrap();
    let e = embedder();
    store.set_embedder(e.clone()).unwrap();
    for i in 0..3 {
        store
            .write(&Draft {
                mtype: "workflow".into(),
                description: format!("Workflow number {i} for the greenhouse"),
                ..Draft::default()
            })
            .unwrap();
    }
    // A memory written by another handle (as the memory tools do) gets one too.
    let mut tool_handle = MemoryStore::attach(&agents, ws.path()).unwrap();
    tool_handle.use_embedder(e.clone());
    tool_handle
        .write(&Draft {
            mtype: "tool_use".into(),
            description: "Written by a tool call".into(),
            ..Draft::default()
        })
        .unwrap();
    store.reconcile().unwrap();
    assert_eq!(store.index().vector_coverage(e.model_id()).unwrap(), (4, 0));
    store.rebuild().unwrap();
    assert_eq!(
        store
            .index()
            .missing_vectors(e.model_id(), 10)
            .unwrap()
            .len(),
        0,
        "the rebuilt rows find their vectors by content hash"
    );
    assert_eq!(store.embed_missing().unwrap(), 0, "nothing re-embedded");
}

#[test]
fn the_in_memory_vectors_follow_writes_from_another_handle() {
    let ws = tempfile::tempdir().unwrap();
    let agents = ws.path().join("agents");
    let e = embedder();
    let (mut store, _) = MemoryStore::open(&agents, ws.path()).unwrap();
    store.set_embedder(e.clone()).unwrap();
    store
        .write(&Draft {
            mtype: "workflow".into(),
            description: "Water the tomatoes every evening".into(),
            ..Draft::default()
        })
        .unwrap();
    let q = e
        .embed(&["greenhouse heater thermostat"])
        .unwrap()
        .remove(0);
    let before = store
        .index()
        .vector_search(&q, e.model_id(), &[], 0, 5)
        .unwrap();
    assert_eq!(before.len(), 1, "loads the vectors");
    let mut other = MemoryStore::attach(&agents, ws.path()).unwrap();
    other.use_embedder(e.clone());
    let id = other
        .write(&Draft {
            mtype: "tool_use".into(),
            description: "Greenhouse heater thermostat is set with the knob".into(),
            ..Draft::default()
        })
        .unwrap()
        .id()
        .to_string();
    let after = store
        .index()
        .vector_search(&q, e.model_id(), &[], 0, 5)
        .unwrap();
    assert_eq!(
        after.len(),
        2,
        "another connection's commit reloads the copy"
    );
    assert_eq!(after[0].0, id);
    store.forget(&id).unwrap();
    let gone = store
        .index()
        .vector_search(&q, e.model_id(), &[], 0, 5)
        .unwrap();
    assert!(
        gone.iter().all(|(i, _)| *i != id),
        "own writes reload it too"
    );
}
