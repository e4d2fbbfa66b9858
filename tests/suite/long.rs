//! Long sessions against the real model: the saved prompt prefix and a long chat in a
//! small context that must never overflow (40 turns; `HARVEY_SOAK=5` makes it 200).

use harvey::app::App;
use harvey::chat::prefix_cache::{key, paths, restore_or_save, stable_prefix_ids, PrefixOutcome};
use harvey::chat::SYSTEM_PROMPT;
use harvey::config::Config;
use harvey::engine::{Message, Role};

use crate::support::{engine, greedy};

const STABLE: &str =
    "[memory context]\n[workspace profile]\nThe user is Ada, a Rust developer on a Raspberry Pi.\n";

#[test]
fn saved_prefix_is_restored_on_the_next_start_and_excluded_from_evaluation() {
    let cache = tempfile::tempdir().unwrap();
    let mut first = engine(2048, 512);
    let ids = stable_prefix_ids(&first, SYSTEM_PROMPT, STABLE);
    assert!(ids.len() > 60, "{}", ids.len());
    let saved = restore_or_save(&mut first, cache.path(), &ids, 3);
    assert!(matches!(saved, PrefixOutcome::Saved { .. }), "{saved:?}");
    drop(first);

    let mut second = engine(2048, 512);
    let restored = restore_or_save(&mut second, cache.path(), &ids, 3);
    assert_eq!(restored, PrefixOutcome::Restored { tokens: ids.len() });
    let messages = [
        Message::new(Role::System, SYSTEM_PROMPT),
        Message::new(Role::User, format!("{STABLE}What is my name?")),
    ];
    let c = second.generate(&messages, &greedy(8), &mut |_| {}).unwrap();
    assert!(!c.text.trim().is_empty());
    assert!(
        c.stats.evaluated_tokens <= c.stats.prompt_tokens - ids.len() + 1,
        "evaluated {} of {} with a {}-token prefix restored",
        c.stats.evaluated_tokens,
        c.stats.prompt_tokens,
        ids.len()
    );
}

#[test]
fn corrupt_or_mismatched_state_falls_back_to_prefill() {
    let cache = tempfile::tempdir().unwrap();
    let mut e = engine(1024, 256);
    let ids = stable_prefix_ids(&e, SYSTEM_PROMPT, STABLE);
    assert!(matches!(
        restore_or_save(&mut e, cache.path(), &ids, 3),
        PrefixOutcome::Saved { .. }
    ));

    // Corrupt the state: truncated, then random bytes.
    let (state, sidecar) = paths(cache.path(), &key(e.info(), &ids));
    let bytes = std::fs::read(&state).unwrap();
    for garbage in [bytes[..bytes.len() / 3].to_vec(), vec![0xA5; 4096]] {
        std::fs::write(&state, &garbage).unwrap();
        let mut fresh = engine(1024, 256);
        match restore_or_save(&mut fresh, cache.path(), &ids, 3) {
            PrefixOutcome::Saved { reason, .. } => assert!(reason.contains("unusable"), "{reason}"),
            other => panic!("corrupt state not replaced: {other:?}"),
        }
        assert_eq!(fresh.cached_tokens(), ids.len(), "prefilled instead");
    }

    // A sidecar whose key does not match (another model/context) is never loaded.
    let text = std::fs::read_to_string(&sidecar)
        .unwrap()
        .replace("\"n_ctx\": 1024", "\"n_ctx\": 999");
    assert!(text.contains("999"), "sidecar format changed: {text}");
    std::fs::write(&sidecar, text).unwrap();
    let mut fresh = engine(1024, 256);
    match restore_or_save(&mut fresh, cache.path(), &ids, 3) {
        PrefixOutcome::Saved { reason, .. } => assert!(reason.contains("mismatch"), "{reason}"),
        other => panic!("{other:?}"),
    }

    // Another context size is another key: not restored from this file.
    let mut bigger = engine(2048, 256);
    assert!(matches!(
        restore_or_save(&mut bigger, cache.path(), &ids, 3),
        PrefixOutcome::Saved { .. }
    ));
}

/// Lines a user types, cycled for every turn.
const LINES: &[&str] = &[
    "Tell me something about rivers.",
    "Why do leaves change colour in autumn?",
    "Give me a tip for writing clean Rust code.",
    "What is a good name for a cat?",
    "How do bees make honey?",
    "Suggest a short breakfast idea.",
    "What does a compiler do?",
    "Name a famous mountain.",
];

#[test]
fn a_long_chat_in_a_small_context_never_overflows() {
    // 40 turns compress several times; the 200-turn soak took over 20 minutes of a
    // 2-core CI run, so it waits for `HARVEY_SOAK`.
    let turns = crate::support::process::rounds(40);
    let mut config = Config::default();
    config.sampling.max_tokens = 24;
    config.sampling.temperature = 0.0;
    config.memory.rolling_summary.keep_turns = 2;
    let workspace = tempfile::tempdir().unwrap();
    let mut app = App::with_engine(
        workspace.path().to_path_buf(),
        config,
        Box::new(engine(1024, 256)),
    );
    let n_ctx = 1024;
    let system = app.conversation().system().to_string();
    assert!(system.starts_with(SYSTEM_PROMPT));
    for (i, line) in LINES.iter().cycle().take(turns).enumerate() {
        let c = app
            .turn(line, &mut |_| {})
            .unwrap_or_else(|e| panic!("turn {i}: {e}"));
        assert!(
            c.stats.prompt_tokens + c.stats.completion_tokens <= n_ctx,
            "turn {i}"
        );
        // The REPL's idle work; every third time the user is quicker and stops it.
        if app.compression_due().is_some() {
            if i % 3 == 0 {
                app.abort().raise();
            }
            app.compress()
                .unwrap_or_else(|e| panic!("compress after turn {i}: {e}"));
            app.abort().clear();
        }
        assert!(app.context_used().unwrap() < n_ctx, "turn {i}");
    }
    assert_eq!(app.turns().len(), turns);
    assert!(!app.compressions().is_empty());
    let summary = app.conversation().summary().unwrap();
    assert!(!summary.trim().is_empty());
    // The pinned system prompt was never folded into a summary.
    assert_eq!(app.conversation().messages()[0].content, system);
    eprintln!("{turns} turns, {} compressions", app.compressions().len());
}
