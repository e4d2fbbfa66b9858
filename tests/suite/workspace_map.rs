//! The `[workspace files]` map (issue 44), with the scripted engine (a token is a word):
//! it heads the session-start context, leaves out secrets and harvey's own files, is part
//! of the cached prefix (turn n's prompt is a prefix of turn n+1's), shows in `/context`,
//! stays within its share of n_ctx, and a new session with other files gets a new map.

use std::path::Path;

use harvey::app::App;
use harvey::engine::scripted::ScriptedEngine;

use super::files::{line, number_after};

/// A small project: tools on (the map lists what they may read), memory off.
fn project() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    for dir in ["agents", "src", "docs", "tests/fixtures"] {
        std::fs::create_dir_all(ws.path().join(dir)).unwrap();
    }
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  enabled: false\nsampling:\n  max_tokens: 16\n",
    )
    .unwrap();
    for file in [
        "Cargo.toml",
        "README.md",
        "src/main.rs",
        "docs/deploy.md",
        "tests/all.rs",
        ".env",
    ] {
        std::fs::write(ws.path().join(file), "x\n").unwrap();
    }
    for i in 0..40 {
        std::fs::write(ws.path().join(format!("tests/fixtures/f{i:02}.txt")), "x\n").unwrap();
    }
    ws
}

fn app(ws: &Path, n_ctx: u32, replies: &[&str]) -> App {
    let config = harvey::config::load(ws).unwrap();
    let engine = ScriptedEngine::new(n_ctx, replies.iter().copied());
    App::with_engine(ws.canonicalize().unwrap(), config, Box::new(engine))
}

/// The prompt the last turn sent: every message but the reply, and the template's
/// opening of the reply.
fn sent_ids(app: &App) -> Vec<i32> {
    let messages = app.conversation().messages();
    app.engine()
        .prompt_ids(&messages[..messages.len() - 1])
        .unwrap()
}

#[test]
fn the_map_heads_the_context_and_every_turn_extends_the_last() {
    let ws = project();
    let mut app = app(ws.path(), 4096, &["one", "two", "three"]);
    let stable = app.stable_memory_context();
    assert!(stable.starts_with("[workspace files]"), "{stable}");
    app.turn("hello", &mut |_| {}).unwrap();
    let context = app.conversation().context().unwrap().to_string();
    assert!(
        context.starts_with(&stable),
        "the cached prefix is the context's head"
    );
    for shown in ["Cargo.toml README.md", "src/: main.rs", "docs/: deploy.md"] {
        assert!(context.contains(shown), "{shown}: {context}");
    }
    for hidden in [".env", "agents", "harvey.yaml"] {
        assert!(!context.contains(hidden), "{hidden}: {context}");
    }
    let mut before = sent_ids(&app);
    for text in ["again", "and once more"] {
        app.turn(text, &mut |_| {}).unwrap();
        let after = sent_ids(&app);
        assert!(after.starts_with(&before), "turn n is a prefix of turn n+1");
        let stats = app.turns().last().unwrap();
        assert_eq!(stats.prompt_tokens, after.len());
        assert!(
            stats.evaluated_tokens <= after.len() - before.len() + 2,
            "only the new turn is evaluated, not the map again: {stats:?}"
        );
        before = after;
    }
    assert!(app.conversation().context().unwrap().starts_with(&context));
    let out = line(&mut app, "/context");
    let map = app.workspace_map().unwrap();
    assert_eq!(
        number_after(&out, "\n  workspace files"),
        map.tokens,
        "{out}"
    );
    assert!(map.tokens > 0);
    super::files::context_parts_add_up_without_pins(&mut app);
}

#[test]
fn the_map_keeps_to_its_share_of_a_small_window() {
    let ws = project();
    // 6 % of 512 tokens: 30 words.
    let mut app = app(ws.path(), 512, &["ok"]);
    app.turn("hi", &mut |_| {}).unwrap();
    let map = app.workspace_map().unwrap();
    assert!(map.tokens <= 30, "{}: {}", map.tokens, map.text);
    assert!(map.named < map.files, "{}", map.text);
    assert!(app.conversation().context().unwrap().starts_with(&map.text));
}

#[test]
fn a_new_session_maps_the_files_as_they_are_now_and_the_prefix_key_follows() {
    let ws = project();
    let mut app = app(ws.path(), 4096, &["one", "two"]);
    let first = app.stable_memory_context();
    let ids = |app: &App, stable: &str| {
        harvey::chat::prefix_cache::stable_prefix_ids_in(app.engine(), app.conversation(), stable)
    };
    let first_ids = ids(&app, &first);
    app.turn("hello", &mut |_| {}).unwrap();
    assert_eq!(app.stable_memory_context(), first, "fixed within a session");
    std::fs::write(ws.path().join("src/lib.rs"), "x\n").unwrap();
    assert_eq!(app.stable_memory_context(), first, "fixed within a session");
    app.start_fresh_session();
    let second = app.stable_memory_context();
    assert!(second.contains("src/: lib.rs main.rs"), "{second}");
    assert_ne!(ids(&app, &second), first_ids, "another prefix key");
    // The same files give the same map.
    app.start_fresh_session();
    assert_eq!(app.stable_memory_context(), second);
}

#[test]
fn no_map_when_it_is_switched_off() {
    let ws = project();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  enabled: false\ntools:\n  workspace_map_pct: 0\n",
    )
    .unwrap();
    let mut app = app(ws.path(), 4096, &["ok"]);
    app.turn("hi", &mut |_| {}).unwrap();
    assert!(app.workspace_map().is_none());
    assert_eq!(app.conversation().context(), None);
}

/// What the map costs in real tokenizers (SmolLM2's and Qwen2.5-Coder's; the 0.5B and
/// 1.5B share one vocabulary), for this repository as a workspace and for the small
/// project: whole, and fitted to 6 % of a 4096-token window. The fitted map never
/// exceeds its budget, and its count is the tokenizer's count of its text.
#[test]
fn the_map_keeps_to_its_budget_in_real_tokenizers() {
    use harvey::tokens::TokenCounter;
    use harvey::workspace_map::{fit::build, list};
    let small = project();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let budget = (4096.0 * harvey::config::DEFAULT_WORKSPACE_MAP_PCT) as usize;
    for model in [crate::support::model_path(), crate::support::qwen_path()] {
        let vocab = harvey::engine::Vocabulary::load(&model).unwrap();
        for (name, ws) in [("repository", repo), ("small project", small.path())] {
            let files = list(ws);
            let whole = build(&files, &vocab, usize::MAX).unwrap();
            let fitted = build(&files, &vocab, budget).unwrap();
            assert!(fitted.tokens <= budget, "{name}: {}", fitted.text);
            assert_eq!(fitted.tokens, vocab.count_tokens(&fitted.text));
            assert!(
                fitted.named > 0 && fitted.text.contains("Cargo.toml"),
                "{}",
                fitted.text
            );
            eprintln!(
                "{} / {name}: {} files; whole map {} tokens ({} named); fitted to {budget}: {} tokens, {} named",
                model.file_name().unwrap().to_string_lossy(),
                whole.files,
                whole.tokens,
                whole.named,
                fitted.tokens,
                fitted.named
            );
        }
    }
}
