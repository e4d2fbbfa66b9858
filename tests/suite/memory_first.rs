//! Memory ranked, not a gate: a memory about a question rides with it in the question's
//! `[evidence]` block, ranked with the workspace's files, and the model answers with no
//! router; a question no memory speaks to is sent without the memory; with memory off
//! no memory is in the block. Scripted engine: what is asserted is what the model and the
//! router were shown.

use harvey::app::App;
use harvey::config::{Config, Embedder, RouteMode};
use harvey::engine::scripted::{Call, ScriptedEngine};

const FACT: &str = "Releases: bump the version, tag vX.Y.Z, then cargo publish";

/// Logged calls of a scripted engine, readable after it is boxed into the app.
type Log = std::sync::Arc<std::sync::Mutex<Vec<Call>>>;

/// An app in `ws` with [`FACT`] remembered (added with memory on), the router on, and
/// memory as `memory_on` says for the turns.
fn app_with_fact(ws: &std::path::Path, replies: &[&str], memory_on: bool) -> (App, Log) {
    std::fs::write(ws.join("notes.txt"), "nothing about shipping here\n").unwrap();
    let ws = ws.canonicalize().unwrap();
    let mut config = Config::default();
    config.memory.embedder = Embedder::None;
    let mut adding = App::with_engine(
        ws.clone(),
        config.clone(),
        Box::new(ScriptedEngine::new(8192, Vec::<String>::new())),
    );
    let mut out = Vec::new();
    harvey::repl::handle_line(
        &mut adding,
        &format!("/memory add project_fact {FACT}"),
        &mut out,
    )
    .unwrap();
    drop(adding);
    config.memory.enabled = memory_on;
    let engine = ScriptedEngine::new(8192, replies.iter().copied());
    let log = engine.log();
    let mut app = App::with_engine(ws, config, Box::new(engine));
    app.set_route(RouteMode::On);
    (app, log)
}

/// The user messages of every call made since `from`: (aside, their texts joined).
fn user_messages(log: &std::sync::Mutex<Vec<Call>>, from: usize) -> Vec<(bool, String)> {
    log.lock().unwrap()[from..]
        .iter()
        .map(|c| {
            let user = c
                .messages
                .iter()
                .filter(|m| m.role == harvey::engine::Role::User)
                .map(|m| m.content.as_str())
                .collect::<Vec<_>>()
                .join("\n---\n");
            (c.aside, user)
        })
        .collect()
}

/// The (aside, user message) pairs of the calls since `from`, split into the router's and
/// the chat's.
fn seen_since(log: &std::sync::Mutex<Vec<Call>>, from: usize) -> (Vec<String>, Vec<String>) {
    let (router, chat): (Vec<_>, Vec<_>) = user_messages(log, from).into_iter().partition(|c| c.0);
    let texts = |v: Vec<(bool, String)>| v.into_iter().map(|(_, u)| u).collect::<Vec<_>>();
    (texts(router), texts(chat))
}

/// The user message that carried `request` (of the chat calls' user messages).
fn sent_with<'a>(chat: &'a [String], request: &str) -> &'a str {
    chat.iter()
        .flat_map(|m| m.split("\n---\n"))
        .find(|m| m.contains(request))
        .unwrap_or_else(|| panic!("{request:?} was never sent: {chat:?}"))
}

#[test]
fn a_question_a_memory_answers_goes_to_the_model_with_it_in_the_evidence_and_no_router() {
    let ws = tempfile::tempdir().unwrap();
    let replies = ["Bump the version, tag it, cargo publish."; 6];
    let (mut app, log) = app_with_fact(ws.path(), &replies, true);
    let before = log.lock().unwrap().len();
    let question = "How are releases done?";
    let turn = app.agent_turn(question, &mut |_| {}).unwrap();
    assert_eq!(turn.route, None, "the model chose the first step");
    let (router, chat) = seen_since(&log, before);
    assert!(
        router.is_empty(),
        "no router for a question with evidence: {router:?}"
    );
    let shown = sent_with(&chat, question);
    let block = shown.split(question).next().unwrap();
    assert!(block.starts_with("[evidence:"), "{shown}");
    assert!(
        block.contains("--- memory project_fact_") && block.contains("cargo publish"),
        "{shown}"
    );
    assert!(!shown.contains("(already known"), "{shown}");
}

#[test]
fn a_question_no_memory_speaks_to_is_sent_without_it() {
    let ws = tempfile::tempdir().unwrap();
    let replies = ["51."; 6];
    let (mut app, log) = app_with_fact(ws.path(), &replies, true);
    let before = log.lock().unwrap().len();
    app.agent_turn("What is 17 times 3?", &mut |_| {}).unwrap();
    let (_, chat) = seen_since(&log, before);
    let shown = sent_with(&chat, "What is 17 times 3?");
    let request = shown.split("What is 17 times 3?").next().unwrap();
    assert!(
        !request.contains("[evidence:") || !request.contains("--- memory"),
        "{shown}"
    );
}

#[test]
fn no_memory_in_the_evidence_when_memory_is_off() {
    let ws = tempfile::tempdir().unwrap();
    let none = harvey::chat::route::Wording::PLAIN.none;
    let (mut app, log) = app_with_fact(ws.path(), &[none, "Tag it.", "Tag it.", "Tag it."], false);
    let before = log.lock().unwrap().len();
    app.agent_turn("How do we cut a new release?", &mut |_| {})
        .unwrap();
    let seen = user_messages(&log, before);
    assert!(!seen.is_empty());
    for (_, shown) in seen {
        assert!(
            !shown.contains("--- memory") && !shown.contains("cargo publish"),
            "{shown}"
        );
    }
}
