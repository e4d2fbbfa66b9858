//! Prompt-lookup decoding (`engine.lookup`) with the real model: the reply is the reply of
//! plain decoding, rejected drafts leave the KV cache exactly as long as the accepted text
//! (in harvey's mirror and in llama.cpp's own cache), and a grammar-constrained tool call
//! decoded with drafts still parses.

use harvey::app::workspace_tools;
use harvey::engine::{EngineParams, LlamaEngine, LookupMode, Message, Role, StopReason};

use crate::support::{forced_call, greedy};

fn params(lookup: LookupMode) -> EngineParams {
    EngineParams {
        lookup,
        ..crate::support::params(2048, 512)
    }
}

fn load(lookup: LookupMode) -> LlamaEngine {
    LlamaEngine::load(&params(lookup)).expect("the model loads")
}

/// harvey's own prose, long enough that a reply copying it drafts many times.
const PASSAGE: &str = "Memories are small Markdown files with a front matter block. Each one has \
a kind, a description, a summary and tags. Recall ranks them by words and by meaning, fuses \
the two lists, and packs the best into a budget of tokens that the context can afford. \
Sessions are recorded as Fountain scripts, summarized when they end, and mined for new \
memories. The knowledge base holds projects, tasks and notes; RAG stores hold chunks of \
files. Everything is local: the model runs inside the process, and nothing leaves the \
machine.";

fn quote_messages() -> Vec<Message> {
    vec![
        Message::new(Role::System, "You are a helpful assistant."),
        Message::new(
            Role::User,
            format!("Here is a passage:\n\n{PASSAGE}\n\nRepeat the passage word for word."),
        ),
    ]
}

#[test]
fn lookup_gives_the_reply_of_plain_decoding_on_a_quoting_prompt() {
    let mut e = load(LookupMode::Off);
    let messages = quote_messages();
    let mut replies = Vec::new();
    for mode in [LookupMode::Off, LookupMode::On, LookupMode::Auto] {
        e.reset();
        e.set_lookup(mode);
        let c = e.generate(&messages, &greedy(160), &mut |_| {}).unwrap();
        eprintln!(
            "{}: {} tokens, drafted {}, accepted {}, {:.1} tok/s\n{}",
            mode.as_str(),
            c.stats.completion_tokens,
            c.stats.draft_tokens,
            c.stats.accepted_tokens,
            c.stats.decode_tps,
            c.text
        );
        replies.push(c);
    }
    assert_eq!(replies[0].stats.draft_tokens, 0, "off never drafts");
    assert!(
        replies[1].stats.draft_tokens > 0,
        "on drafts from the passage"
    );
    for c in &replies[1..] {
        assert!(c.stats.accepted_tokens <= c.stats.draft_tokens);
        agrees(&replies[0].text, &c.text);
    }
}

/// Lookup's reply is plain decoding's, up to rounding: a batch of rows is multiplied by
/// other kernels than one row (llama.cpp issue 4479: CPU logits move in the 4th digit
/// with the batch size), so where two tokens are within rounding of each other greedy
/// decoding may take the other one. That can only happen late and at a near-tie; a wrong
/// position or a stale cache row garbles the reply from its first drafts on. So: equal,
/// or equal for at least the first half (and 20 characters) of the shorter reply.
fn agrees(plain: &str, lookup: &str) {
    if plain == lookup {
        return;
    }
    let common = plain
        .chars()
        .zip(lookup.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let shorter = plain.chars().count().min(lookup.chars().count());
    eprintln!("lookup parted from plain decoding after {common} of {shorter} characters");
    assert!(
        common >= 20 && common * 2 >= shorter,
        "parted after {common} characters:\nplain:  {plain}\nlookup: {lookup}"
    );
}

#[test]
fn rejected_drafts_leave_the_cache_exactly_as_long_as_the_accepted_text() {
    let mut e = load(LookupMode::On);
    let messages = quote_messages();
    let prompt = e.tokenize_prompt(&messages).unwrap().len();
    // Each way a reply can end: the token limit (last token not decoded), a stop string
    // (the token that completed it not decoded), the end of generation (every shown token
    // decoded).
    let mut limited = greedy(40);
    limited.sampling.repeat_penalty = 1.0;
    let mut stopped = limited.clone();
    stopped.stop = vec!["files".into()];
    let mut open = greedy(400);
    open.sampling.repeat_penalty = 1.0;
    // The product's default: sampling at temperature 0.7 (drafts are kept only where the
    // seeded draw picks them).
    let mut sampled = greedy(200);
    sampled.sampling = harvey::engine::SamplingParams {
        temperature: 0.7,
        ..sampled.sampling
    };
    let mut kept = 0;
    for opts in [limited, stopped, open, sampled] {
        for mode in [LookupMode::Off, LookupMode::On, LookupMode::Auto] {
            e.reset();
            e.set_lookup(mode);
            let c = e.generate(&messages, &opts, &mut |_| {}).unwrap();
            let decoded = match c.stop {
                StopReason::EndOfGeneration => c.stats.completion_tokens,
                StopReason::MaxTokens | StopReason::StopString => c.stats.completion_tokens - 1,
                other => panic!("unexpected stop {other:?}"),
            };
            assert_eq!(e.cached_tokens(), prompt + decoded, "{mode:?} {:?}", c.stop);
            assert_eq!(
                e.kv_cache_len(),
                e.cached_tokens(),
                "llama.cpp's cache agrees"
            );
            assert!(c.stats.accepted_tokens <= c.stats.draft_tokens);
            kept += c.stats.accepted_tokens;
        }
    }
    // Replies that copy a passage keep drafts; were none ever kept, the loop above would
    // have checked nothing about rejected and accepted rows together.
    assert!(kept > 0, "no draft token was ever kept");
}

#[test]
fn a_follow_up_turn_after_drafting_sees_the_same_cache() {
    // If rejected drafts stayed in the cache, the next turn (which reuses the cached
    // prefix) would read them and answer differently from plain decoding.
    let mut replies = Vec::new();
    for mode in [LookupMode::Off, LookupMode::On] {
        let mut e = load(mode);
        let mut messages = quote_messages();
        let first = e.generate(&messages, &greedy(60), &mut |_| {}).unwrap();
        messages.push(Message::new(Role::Assistant, first.text.clone()));
        messages.push(Message::new(Role::User, "Now say it in one sentence."));
        let second = e.generate(&messages, &greedy(40), &mut |_| {}).unwrap();
        assert!(second.stats.evaluated_tokens < second.stats.prompt_tokens);
        assert_eq!(e.kv_cache_len(), e.cached_tokens());
        replies.push((first.text, second.text));
    }
    agrees(&replies[0].0, &replies[1].0);
    agrees(&replies[0].1, &replies[1].1);
}

#[test]
fn a_grammar_constrained_tool_call_decoded_with_drafts_still_parses() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "deploy with ./deploy.sh\n").unwrap();
    let registry = workspace_tools(dir.path());
    // The system prompt spells out calls, so drafts from it are plentiful.
    let system = harvey::app::system_prompt(&registry, true, "");
    let mut e = LlamaEngine::load(&EngineParams {
        n_ctx: 4096,
        ..params(LookupMode::On)
    })
    .unwrap();
    let mut drafted = 0;
    for prompt in [
        "Read notes.txt for me.",
        "List the files in this folder.",
        "Search the files for deploy.",
    ] {
        drafted += forced_call(&mut e, &registry, &system, prompt)
            .stats
            .draft_tokens;
    }
    assert!(drafted > 0, "the calls were decoded with drafts");
}
