//! Aside calls (summaries, tags, mining) never disturb the chat's KV cache. They run as
//! sequence 1 in the chat context's free cells when the call fits there (no second KV
//! cache, no second compute buffer), and otherwise in an aside context of their own,
//! sized to the call in steps of 256 tokens, grown only when needed, never larger than
//! the chat's n_ctx. A rolling summary (idle work, which input may stop) leaves the chat
//! cache alone until the summary is in, then prefills the shortened prompt.

use harvey::chat::rolling::{compress_if_needed, warm};
use harvey::chat::Conversation;
use harvey::engine::{AbortFlag, Engine, LlamaEngine, LookupMode, Message, Role, StopReason};

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

fn notes(times: usize) -> String {
    "The keeper logged the wind, the swell and the ships that passed. ".repeat(times)
}

/// The chat's token mirror, llama.cpp's sequence 0 and an empty sequence 1 agree.
fn assert_chat_intact(engine: &LlamaEngine, chat_cached: usize) {
    assert_eq!(engine.cached_tokens(), chat_cached);
    assert_eq!(engine.kv_cache_len(), chat_cached);
    assert_eq!(engine.shared_aside_len(), 0);
}

#[test]
fn aside_calls_share_the_chat_context_when_they_fit_and_leave_the_chat_alone() {
    let mut engine = load();
    engine
        .generate(&chat("Name a primary colour."), &greedy(8), &mut |_| {})
        .unwrap();
    let chat_cached = engine.cached_tokens();
    assert_eq!(engine.aside_room(), N_CTX as usize - chat_cached - 1);

    let short = engine
        .generate_aside(&chat("Say yes."), &greedy(16), &mut |_| {})
        .unwrap();
    assert!(ended(short.stop), "{short:?}");
    // A quoting prompt with drafting on: rejected drafts are removed from sequence 1.
    engine.set_lookup(LookupMode::On);
    let long = engine
        .generate_aside(
            &chat(&format!("{}\nRepeat the notes.", notes(40))),
            &greedy(48),
            &mut |_| {},
        )
        .unwrap();
    assert!(ended(long.stop), "{long:?}");
    assert!(long.stats.prompt_tokens > 500, "{:?}", long.stats);
    assert_eq!(engine.shared_aside_calls(), 2);
    assert_eq!((engine.aside_n_ctx(), engine.aside_kv_bytes()), (0, 0));
    assert_chat_intact(&engine, chat_cached);

    // The chat still reuses its cached prefix.
    let mut next = chat("Name a primary colour.");
    next.push(Message::new(Role::Assistant, "Red."));
    next.push(Message::new(Role::User, "Another one?"));
    let again = engine.generate(&next, &greedy(8), &mut |_| {}).unwrap();
    assert!(
        again.stats.evaluated_tokens < again.stats.prompt_tokens,
        "{again:?}"
    );
    assert_chat_intact(&engine, engine.cached_tokens());
}

#[test]
fn a_call_the_free_cells_cannot_hold_gets_an_aside_context_sized_to_it() {
    let mut engine = load();
    // Fill the chat so that fewer than 512 cells stay free.
    engine
        .generate(
            &chat(&format!("{}\nHow many ships?", notes(110))),
            &greedy(4),
            &mut |_| {},
        )
        .unwrap();
    let chat_cached = engine.cached_tokens();
    let free = N_CTX as usize - chat_cached - 1;
    assert!(free < 512, "the chat holds only {chat_cached} tokens");
    // Too little room to be worth sharing: chunked callers size chunks to a whole n_ctx.
    assert_eq!(engine.aside_room(), N_CTX as usize);

    // What fits the free cells still runs there.
    engine
        .generate_aside(&chat("Say yes."), &greedy(8), &mut |_| {})
        .unwrap();
    assert_eq!((engine.shared_aside_calls(), engine.aside_n_ctx()), (1, 0));

    let long = engine
        .generate_aside(
            &chat(&format!("{}\nSummarize the notes.", notes(40))),
            &greedy(32),
            &mut |_| {},
        )
        .unwrap();
    assert!(ended(long.stop), "{long:?}");
    assert!(long.stats.prompt_tokens + 32 > free, "{:?}", long.stats);
    let own = engine.aside_n_ctx();
    assert!(own as usize >= long.stats.prompt_tokens + 32, "{own}");
    assert!(own < N_CTX && own % 256 == 0, "{own}");
    let per_token = engine.info().kv_bytes / u64::from(N_CTX);
    assert_eq!(engine.aside_kv_bytes(), per_token * u64::from(own));
    assert_eq!(engine.shared_aside_calls(), 1);
    assert_chat_intact(&engine, chat_cached);

    // A bigger one grows it, never past the chat's n_ctx; a smaller one keeps it.
    let longer = engine
        .generate_aside(
            &chat(&format!("{}\nSummarize the notes.", notes(80))),
            &greedy(32),
            &mut |_| {},
        )
        .unwrap();
    assert!(ended(longer.stop), "{longer:?}");
    let grown = engine.aside_n_ctx();
    assert!(grown > own && grown <= N_CTX && grown % 256 == 0, "{grown}");
    engine
        .generate_aside(&chat(&notes(30)), &greedy(8), &mut |_| {})
        .unwrap();
    assert_eq!(engine.aside_n_ctx(), grown);
    assert_chat_intact(&engine, chat_cached);
}

#[test]
fn a_rolling_summary_leaves_the_chat_cache_until_it_is_in_then_prefills_the_new_prompt() {
    let mut engine = load();
    let mut conversation = Conversation::new("You are a helpful assistant.");
    conversation.set_context(Some("[memory context]\nThe boat is called Kestrel.".into()));
    for i in 0..6 {
        conversation.push_user(&format!("Question {i}: {}", notes(6)));
        conversation.push_assistant(&format!("Answer {i}: {}", notes(6)));
    }
    conversation.push_user("What is the boat called?");
    let reply = engine
        .generate(&conversation.messages(), &greedy(8), &mut |_| {})
        .unwrap();
    conversation.push_assistant(&reply.text);
    let pinned = engine.count_prompt(&conversation.pinned()).unwrap();
    let chat_cached = engine.cached_tokens();
    assert!(chat_cached > pinned + 500);

    // Stopped before it begins: nothing changes, the chat cache included.
    let stopped = AbortFlag::new();
    stopped.raise();
    let before = conversation.clone();
    let threshold = chat_cached / 2;
    let none = compress_if_needed(
        &mut engine as &mut dyn Engine,
        &mut conversation,
        threshold,
        2,
        &stopped,
    );
    assert_eq!(none.unwrap(), None);
    assert_eq!(conversation, before);
    assert_chat_intact(&engine, chat_cached);

    let done = compress_if_needed(
        &mut engine as &mut dyn Engine,
        &mut conversation,
        threshold,
        2,
        &AbortFlag::new(),
    )
    .unwrap()
    .expect("over the threshold: a summary");
    assert!(
        done.folded_turns >= 1 && !done.summary.trim().is_empty(),
        "{done:?}"
    );
    assert!(done.tokens_after < done.tokens_before, "{done:?}");
    assert!(done.input_tokens > 0, "{done:?}");
    // The chat kept everything while the summary ran aside.
    assert_chat_intact(&engine, chat_cached);

    // Then the shortened prompt is prefilled, and the next turn evaluates its message.
    warm(
        &mut engine as &mut dyn Engine,
        &conversation,
        &AbortFlag::new(),
    )
    .unwrap();
    let prompt = engine.count_prompt(&conversation.messages()).unwrap();
    assert_chat_intact(&engine, prompt);
    conversation.push_user("And its colour?");
    let next = engine
        .generate(&conversation.messages(), &greedy(8), &mut |_| {})
        .unwrap();
    assert!(next.stats.evaluated_tokens < 20, "{next:?}");
    assert_chat_intact(&engine, engine.cached_tokens());
}

#[test]
fn a_kept_prompt_serves_the_next_aside_call_and_goes_back_to_the_chat_when_needed() {
    let mut engine = load();
    engine
        .generate(&chat("Name a primary colour."), &greedy(8), &mut |_| {})
        .unwrap();
    let chat_cached = engine.cached_tokens();
    let mut keep = greedy(4);
    keep.keep_prompt = true;
    let rules = format!("{}\nAnswer in one word.", notes(10));
    let ask = |q: &str| {
        vec![
            Message::new(Role::System, rules.clone()),
            Message::new(Role::User, q),
        ]
    };

    let first = engine
        .generate_aside(&ask("Is the sea salty?"), &keep, &mut |_| {})
        .unwrap();
    assert_eq!(first.stats.evaluated_tokens, first.stats.prompt_tokens);
    assert_eq!(engine.shared_aside_len(), first.stats.prompt_tokens);
    assert_eq!(engine.cached_tokens(), chat_cached);
    assert_eq!(engine.kv_cache_len(), chat_cached);

    // Only the request is decoded the second time.
    let second = engine
        .generate_aside(&ask("Is the moon far?"), &keep, &mut |_| {})
        .unwrap();
    assert!(ended(second.stop), "{second:?}");
    assert!(second.stats.prompt_tokens > 120, "{:?}", second.stats);
    assert!(second.stats.evaluated_tokens < 20, "{:?}", second.stats);
    assert_eq!(engine.shared_aside_len(), second.stats.prompt_tokens);

    // A call that does not keep its prompt leaves sequence 1 empty.
    engine
        .generate_aside(&chat("Say yes."), &greedy(4), &mut |_| {})
        .unwrap();
    assert_chat_intact(&engine, chat_cached);

    // A chat step that cannot need the kept cells leaves them; one that may (its reply
    // may run to the end of the window) gets them back first.
    engine
        .generate_aside(&ask("Is the sea salty?"), &keep, &mut |_| {})
        .unwrap();
    let kept = engine.shared_aside_len();
    assert!(kept > 120, "{kept}");
    engine
        .generate(&chat("Name a primary colour."), &greedy(8), &mut |_| {})
        .unwrap();
    assert_eq!(engine.shared_aside_len(), kept);
    let long = engine
        .generate(
            &chat(&format!("{}\nHow many ships?", notes(110))),
            &greedy(N_CTX as usize),
            &mut |_| {},
        )
        .unwrap();
    // It may run to the end of the window, through the cells the prompt was kept in.
    let held = long.stats.prompt_tokens + long.stats.completion_tokens;
    match long.stop {
        StopReason::ContextFull => assert!(held + kept > N_CTX as usize, "{long:?}"),
        stop => assert!(ended(stop), "{long:?}"),
    }
    assert_chat_intact(&engine, engine.cached_tokens());

    // A cap of `usize::MAX` (a call under an unbounded grammar) may need every cell too:
    // a prompt that fits the window only without the kept cells still runs.
    engine
        .generate(&chat("Name a primary colour."), &greedy(8), &mut |_| {})
        .unwrap();
    engine
        .generate_aside(&ask("Is the sea salty?"), &keep, &mut |_| {})
        .unwrap();
    let kept = engine.shared_aside_len();
    assert!(kept > 120, "{kept}");
    let window = N_CTX as usize;
    let big = (60..200)
        .map(|n| chat(&format!("{}\nHow many ships?", notes(n))))
        .find(|m| engine.tokenize_prompt(m).unwrap().len() + kept > window + 8)
        .expect("a prompt that needs the kept cells");
    let size = engine.tokenize_prompt(&big).unwrap().len();
    assert!(
        size < window - 8,
        "{size} tokens: the step must fit the window"
    );
    let unbounded = engine
        .generate(&big, &greedy(usize::MAX), &mut |_| {})
        .expect("the kept cells go back to the chat");
    assert!(
        ended(unbounded.stop) || unbounded.stop == StopReason::ContextFull,
        "{unbounded:?}"
    );
    assert_chat_intact(&engine, engine.cached_tokens());
}
