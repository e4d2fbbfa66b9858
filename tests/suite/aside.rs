//! The aside context (summaries, mining) is sized to each call: created on first use at
//! what the call needs (prompt + longest reply, in steps of 256 tokens), recreated only
//! when a bigger one is needed, never larger than the chat's n_ctx, and never touching the
//! chat's KV cache.

use harvey::engine::{LlamaEngine, Message, Role, StopReason};

use crate::support::{greedy, params};

const N_CTX: u32 = 2048;

fn load() -> LlamaEngine {
    LlamaEngine::load(&params(N_CTX, 256)).expect("the model loads")
}

fn chat(user: &str) -> Vec<Message> {
    vec![
        Message::new(Role::System, "You are a helpful assistant."),
        Message::new(Role::User, user),
    ]
}

fn ended(stop: StopReason) -> bool {
    matches!(stop, StopReason::EndOfGeneration | StopReason::MaxTokens)
}

#[test]
fn the_aside_context_fits_each_call_grows_when_needed_and_leaves_the_chat_alone() {
    let mut engine = load();
    assert_eq!(engine.info().n_ctx, N_CTX);
    assert_eq!((engine.aside_n_ctx(), engine.aside_kv_bytes()), (0, 0));
    engine
        .generate(&chat("Name a primary colour."), &greedy(8), &mut |_| {})
        .unwrap();
    let chat_cached = engine.cached_tokens();

    let short = engine
        .generate_aside(&chat("Say yes."), &greedy(16), &mut |_| {})
        .unwrap();
    assert!(ended(short.stop), "{short:?}");
    let small = engine.aside_n_ctx();
    assert!(small as usize >= short.stats.prompt_tokens + 16, "{small}");
    assert!(small < N_CTX && small % 256 == 0, "{small}");
    let per_token = engine.info().kv_bytes / u64::from(N_CTX);
    assert_eq!(engine.aside_kv_bytes(), per_token * u64::from(small));
    assert_eq!(engine.cached_tokens(), chat_cached);

    let notes = "The keeper logged the wind, the swell and the ships that passed. ".repeat(60);
    let long = engine
        .generate_aside(
            &chat(&format!("{notes}\nSummarize the notes.")),
            &greedy(32),
            &mut |_| {},
        )
        .unwrap();
    assert!(ended(long.stop), "{long:?}");
    assert!(long.stats.prompt_tokens > small as usize, "{long:?}");
    let grown = engine.aside_n_ctx();
    assert!(grown as usize >= long.stats.prompt_tokens + 32, "{grown}");
    assert!(grown <= N_CTX && grown % 256 == 0, "{grown}");

    // A smaller call afterwards keeps the bigger context.
    engine
        .generate_aside(&chat("Say no."), &greedy(8), &mut |_| {})
        .unwrap();
    assert_eq!(engine.aside_n_ctx(), grown);
    assert_eq!(engine.cached_tokens(), chat_cached);

    // The chat still reuses its cached prefix.
    let mut next = chat("Name a primary colour.");
    next.push(Message::new(Role::Assistant, "Red."));
    next.push(Message::new(Role::User, "Another one?"));
    let again = engine.generate(&next, &greedy(8), &mut |_| {}).unwrap();
    assert!(
        again.stats.evaluated_tokens < again.stats.prompt_tokens,
        "{again:?}"
    );
}
