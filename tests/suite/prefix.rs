//! The saved prompt prefix across sessions and workspaces: a memory change restores what
//! precedes it and prefills only the rest; a new workspace restores the system prompt's
//! head from the shared cache, which never holds a token of any workspace.

use std::path::{Path, PathBuf};

use harvey::app::App;
use harvey::chat::prefix_cache::{
    head_ids, stable_prefix_ids_in, PrefixOutcome, Source, PARTIAL_FLOOR,
};
use harvey::config::Config;
use harvey::engine::prompt::common_prefix;
use harvey::engine::scripted::ScriptedEngine;
use harvey::engine::{Engine, Message, Role};
use harvey::repl::handle_line;

use crate::support;

fn say(app: &mut App, line: &str) -> String {
    let mut out = Vec::new();
    handle_line(app, line, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn config() -> Config {
    let mut c = Config::default();
    c.engine.n_ctx = 2048;
    c.sampling.max_tokens = 8;
    c.sampling.temperature = 0.0;
    c.memory.embedder = harvey::config::Embedder::None;
    c
}

/// An app in `ws` around `engine`, with `shared` as its shared head cache.
fn app(ws: &Path, engine: Box<dyn Engine>, shared: Option<&Path>) -> App {
    let mut app = App::with_engine(ws.to_path_buf(), config(), engine);
    app.set_shared_cache(shared.map(Path::to_path_buf));
    app
}

fn scripted() -> Box<dyn Engine> {
    Box::new(ScriptedEngine::new(2048, ["ok"; 4]))
}

/// The stable prefix's ids, then the outcome of preparing it.
fn prepare(app: &mut App) -> (Vec<i32>, PrefixOutcome) {
    let stable = app.stable_memory_context();
    let ids = stable_prefix_ids_in(app.engine(), app.conversation(), &stable);
    (ids, app.prepare_prefix(&stable).clone())
}

/// The head ids the app would share.
fn head_of(app: &App) -> Vec<i32> {
    head_ids(app.engine(), app.system_head().expect("guidance last"))
}

/// `(state, sidecar)` files in `dir` whose names start with `stem`.
fn files(dir: &Path, stem: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(stem))
    });
    found.sort();
    found
}

#[test]
fn a_memory_change_restores_the_common_prefix_and_prefills_only_the_tail() {
    let ws = tempfile::tempdir().unwrap();
    let (before, first) = {
        let mut a = app(ws.path(), scripted(), None);
        say(
            &mut a,
            "/memory add project_fact The staging server is called kestrel",
        );
        prepare(&mut a)
    };
    assert!(matches!(first, PrefixOutcome::Saved { .. }), "{first:?}");

    let mut b = app(ws.path(), scripted(), None);
    say(
        &mut b,
        "/memory add project_fact Releases are tagged on Fridays",
    );
    let (after, outcome) = prepare(&mut b);
    assert_ne!(before, after, "the memory changed the prefix");
    let common = common_prefix(&before, &after);
    assert!(common >= PARTIAL_FLOOR, "{common}");
    assert_eq!(
        outcome,
        PrefixOutcome::Partial {
            restored: common,
            prefilled: after.len() - common,
            from: Source::Workspace,
        }
    );
    assert!(outcome.describe().contains("restored from agents/cache"));
    assert_eq!(b.engine().cached_tokens(), after.len());

    // The new prefix was saved whole: the next start restores it exactly.
    let mut c = app(ws.path(), scripted(), None);
    assert_eq!(
        prepare(&mut c).1,
        PrefixOutcome::Restored {
            tokens: after.len()
        }
    );
}

#[test]
fn a_second_workspace_restores_the_head_from_the_shared_cache() {
    let shared = tempfile::tempdir().unwrap();
    let one = tempfile::tempdir().unwrap();
    let mut a = app(one.path(), scripted(), Some(shared.path()));
    let head = head_of(&a);
    assert!(head.len() >= PARTIAL_FLOOR, "{}", head.len());
    match prepare(&mut a).1 {
        PrefixOutcome::Saved { reason, .. } => assert!(reason.contains("head saved"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        files(shared.path(), "head-").len(),
        2,
        "one state, one sidecar"
    );

    // Another workspace, with guidance and a memory of its own.
    let two = tempfile::tempdir().unwrap();
    std::fs::write(two.path().join("HARVEY.md"), "Indent with tabs.").unwrap();
    let mut b = app(two.path(), scripted(), Some(shared.path()));
    say(
        &mut b,
        "/memory add project_fact The staging server is called kestrel",
    );
    assert_eq!(head_of(&b), head, "the head is the same");
    let (ids, outcome) = prepare(&mut b);
    assert_eq!(
        outcome,
        PrefixOutcome::Partial {
            restored: head.len(),
            prefilled: ids.len() - head.len(),
            from: Source::Shared,
        }
    );
    assert_eq!(b.engine().cached_tokens(), ids.len());
    // Restored, not saved again: still one head.
    assert_eq!(files(shared.path(), "head-").len(), 2);
}

#[test]
fn the_shared_cache_holds_only_the_head() {
    let shared = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("HARVEY.md"), "Always zebra the quokka.").unwrap();
    let mut a = app(ws.path(), scripted(), Some(shared.path()));
    say(
        &mut a,
        "/memory add project_fact The staging server is called kestrel",
    );
    let (ids, outcome) = prepare(&mut a);
    assert!(
        matches!(outcome, PrefixOutcome::Saved { .. }),
        "{outcome:?}"
    );
    assert!(a.conversation().system().contains("zebra"), "guided");
    let head_text = a.system_head().unwrap().to_string();
    assert!(!head_text.contains("zebra"), "the head has no guidance");
    let head = head_ids(a.engine(), &head_text);
    assert!(ids.starts_with(&head));

    // The scripted engine's state file is the list of cached ids.
    let state = files(shared.path(), "head-")
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "state"))
        .expect("a shared head state");
    let saved: Vec<i32> = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert_eq!(saved, head);
    let own = a
        .engine()
        .prompt_ids(&[Message::new(Role::System, head_text.clone())])
        .unwrap();
    assert!(own.starts_with(&saved), "a prefix of the head's own render");
    for word in ["zebra", "quokka.", "kestrel", "staging"] {
        let word_ids = a
            .engine()
            .prompt_ids(&[Message::new(Role::User, word)])
            .unwrap();
        assert!(!saved.contains(&word_ids[1]), "{word} left the workspace");
    }
    let sidecar = std::fs::read_to_string(state.with_extension("json")).unwrap();
    assert!(!sidecar.contains("kestrel") && !sidecar.contains("zebra"));
}

#[test]
fn a_corrupt_shared_head_means_a_normal_prefill() {
    let shared = tempfile::tempdir().unwrap();
    let one = tempfile::tempdir().unwrap();
    prepare(&mut app(one.path(), scripted(), Some(shared.path())));
    let saved = files(shared.path(), "head-");
    let state = saved
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "state"))
        .unwrap()
        .clone();
    let sidecar = state.with_extension("json");
    let cases: [(&Path, &[u8]); 3] = [
        (&state, b"garbage"),
        (&state, b""),
        (&sidecar, b"{ not json"),
    ];
    for (file, garbage) in cases {
        std::fs::write(file, garbage).unwrap();
        let ws = tempfile::tempdir().unwrap();
        let mut b = app(ws.path(), scripted(), Some(shared.path()));
        let (ids, outcome) = prepare(&mut b);
        match &outcome {
            PrefixOutcome::Saved { tokens, reason } => {
                assert_eq!(*tokens, ids.len());
                assert!(reason.contains("head saved"), "{reason}");
            }
            other => panic!("{}: {other:?}", file.display()),
        }
        assert_eq!(b.engine().cached_tokens(), ids.len());
        assert_ne!(std::fs::read(file).unwrap(), garbage, "replaced");
    }
}

/// SmolLM2 through llama.cpp: the same three starts, with real state files.
#[test]
fn real_model_partial_restores_from_the_shared_head_and_after_a_memory_change() {
    let shared = tempfile::tempdir().unwrap();
    let real = || -> Box<dyn Engine> { Box::new(support::engine(2048, 512)) };

    let one = tempfile::tempdir().unwrap();
    let mut a = app(one.path(), real(), Some(shared.path()));
    let head = head_of(&a);
    assert!(head.len() >= 100, "{}", head.len());
    let (_, first) = prepare(&mut a);
    match &first {
        PrefixOutcome::Saved { reason, .. } => assert!(reason.contains("head saved"), "{reason}"),
        other => panic!("{other:?}"),
    }
    drop(a);

    // A new workspace with guidance and a memory restores the head.
    let two = tempfile::tempdir().unwrap();
    std::fs::write(two.path().join("HARVEY.md"), "Indent with tabs.").unwrap();
    let (before, second) = {
        let mut b = app(two.path(), real(), Some(shared.path()));
        say(
            &mut b,
            "/memory add project_fact The staging server is called kestrel",
        );
        let (ids, outcome) = prepare(&mut b);
        assert_eq!(b.engine().cached_tokens(), ids.len());
        (ids, outcome)
    };
    assert_eq!(
        second,
        PrefixOutcome::Partial {
            restored: head.len(),
            prefilled: before.len() - head.len(),
            from: Source::Shared,
        }
    );

    // Another memory: what precedes it comes from the workspace's own state.
    let mut c = app(two.path(), real(), Some(shared.path()));
    say(
        &mut c,
        "/memory add project_fact Releases are tagged on Fridays",
    );
    let (after, third) = prepare(&mut c);
    let common = common_prefix(&before, &after);
    assert!(common > head.len(), "{common} vs head {}", head.len());
    assert_eq!(
        third,
        PrefixOutcome::Partial {
            restored: common,
            prefilled: after.len() - common,
            from: Source::Workspace,
        }
    );
    // The cache is right: a turn evaluates only what follows the prefix.
    let reply = c
        .turn("What is the staging server called?", &mut |_| {})
        .unwrap();
    assert!(
        reply.stats.evaluated_tokens <= reply.stats.prompt_tokens - after.len() + 1,
        "evaluated {} of {}",
        reply.stats.evaluated_tokens,
        reply.stats.prompt_tokens
    );
}
