//! Onboarding: scripted answers become a profile memory; manifests become project facts.

use std::path::Path;

use harvey::memory::recall::{recall, Limits, MemorySilo};
use harvey::memory::{MemoryStore, MemoryType};
use harvey::onboarding::{ask_profile, manifest_facts, needs_profile, save_manifest_facts};
use harvey::tokens::WordCounter;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/manifests")
        .join(name)
}

#[test]
fn scripted_answers_produce_one_profile_memory_injected_whole() {
    let ws = tempfile::tempdir().unwrap();
    let (mut store, _) = MemoryStore::open(&ws.path().join("agents"), ws.path()).unwrap();
    assert!(needs_profile(&store));
    let mut answers = vec![
        Some("Ada".to_string()),
        Some(String::new()), // skipped
        Some("Rust, SQLite, tmux".to_string()),
        Some("Prefers British spelling; never push to main".to_string()),
    ]
    .into_iter();
    let mut asked = Vec::new();
    let draft = ask_profile(&mut |q| {
        asked.push(q.to_string());
        answers.next().flatten()
    })
    .unwrap();
    assert_eq!(asked.len(), 4);
    store.write(&draft).unwrap();
    assert!(!needs_profile(&store));
    let silo = MemorySilo(&store);
    let limits = Limits {
        budget: 300,
        factual_share: 0.5,
        max_relevant: 5,
    };
    let block = recall(&[&silo], "anything", limits, &WordCounter)
        .unwrap()
        .text;
    assert!(block.contains("[workspace profile]"), "{block}");
    for answer in ["Ada", "Rust, SQLite, tmux", "never push to main"] {
        assert!(block.contains(answer), "{answer} missing: {block}");
    }
    // Every answer skipped (or input ended at once): nothing is saved.
    assert!(ask_profile(&mut |_| Some(String::new())).is_none());
    assert!(ask_profile(&mut |_| None).is_none());
}

#[test]
fn each_manifest_type_yields_a_project_fact() {
    let cases = [
        ("rust", "sailplan is a Rust project (Cargo.toml): Plans sailing routes from tide tables. Entry points: src/main.rs"),
        ("python", "tidewatch is a Python project (pyproject.toml): Downloads and caches tide tables. Entry points: tidewatch. Minimum (oldest supported) Python version: >=3.10 (requires-python)"),
        ("node", "harbour-ui is a JavaScript/TypeScript project (package.json): Web front end for the harbour booking system. Entry points: dist/index.js, npm run build, npm run test"),
        ("go", "example.org/knots is a Go project (go.mod). Entry points: main.go. Minimum (oldest supported) Go version: 1.22 (the go line of go.mod)"),
        ("codemeta", "buoy-logger is a C, Python project (codemeta.json): Logs buoy telemetry to CSV"),
    ];
    for (dir, summary) in cases {
        // The manifest's own fact; how the tests run is another (see below).
        let facts: Vec<_> = manifest_facts(&fixture(dir))
            .into_iter()
            .filter(|f| !f.tags.iter().any(|t| t == "tests"))
            .collect();
        assert_eq!(facts.len(), 1, "{dir}: {facts:?}");
        assert_eq!(facts[0].mtype, "project_fact");
        assert_eq!(facts[0].summary, summary, "{dir}");
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".git")).unwrap();
    std::fs::write(
        ws.path().join(".git/config"),
        "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@gitea.local:ada/sailplan.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
    )
    .unwrap();
    let facts = manifest_facts(ws.path());
    assert_eq!(
        facts[0].summary,
        "origin is git@gitea.local:ada/sailplan.git"
    );
}

#[test]
fn manifest_facts_are_saved_once_and_updated_when_the_manifest_changes() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("rust/Cargo.toml"), ws.path().join("Cargo.toml")).unwrap();
    let (mut store, _) = MemoryStore::open(&ws.path().join("agents"), ws.path()).unwrap();
    // The manifest's fact and how the tests run (`cargo test`).
    assert_eq!(save_manifest_facts(&mut store, ws.path()).unwrap().len(), 2);
    assert!(save_manifest_facts(&mut store, ws.path())
        .unwrap()
        .is_empty());
    let text = std::fs::read_to_string(ws.path().join("Cargo.toml")).unwrap();
    std::fs::write(
        ws.path().join("Cargo.toml"),
        text.replace("tide tables", "weather"),
    )
    .unwrap();
    assert_eq!(save_manifest_facts(&mut store, ws.path()).unwrap().len(), 1);
    let facts = store.list(Some(MemoryType::ProjectFact), None).unwrap();
    assert_eq!(facts.len(), 2);
    assert!(facts.iter().any(|f| f.summary.contains("weather")));
    assert!(facts
        .iter()
        .any(|f| f.summary == "Tests run with: `cargo test` (Cargo.toml)"));
}
