//! Memory first (issue 44): a memory about the request rides with it, to the router and
//! the model, as `(already known: …)`; a request no memory speaks to goes alone. Scripted
//! engine: what is asserted is what the model and the router were shown.

use harvey::app::App;
use harvey::chat::agent::TurnEvent;
use harvey::chat::route::Route;
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

fn assert_hinted(shown: &str, request: &str) {
    assert!(
        shown.contains(&format!("{request}\n(already known: ")),
        "{shown}"
    );
    assert!(shown.contains("cargo publish"), "{shown}");
}

#[test]
fn a_question_a_memory_answers_goes_to_the_model_with_it_and_no_router() {
    let ws = tempfile::tempdir().unwrap();
    let none = harvey::chat::route::Wording::PLAIN.none;
    let (mut app, log) = app_with_fact(
        ws.path(),
        &[
            "Bump",
            " the version, tag it, cargo publish.",
            none,
            "Done",
            ".",
            none,
            "51",
            ".",
        ],
        true,
    );
    let before = log.lock().unwrap().len();
    let mut notices = Vec::new();
    let question = "How are releases done?";
    let turn = app
        .agent_turn(question, &mut |e| {
            if let TurnEvent::Notice(n) = e {
                notices.push(n);
            }
        })
        .unwrap();
    assert_eq!(turn.route, Some(Route::Answer));
    assert!(turn.calls.is_empty());
    let (router, chat) = seen_since(&log, before);
    assert!(
        router.is_empty(),
        "no router for a question memory answers: {router:?}"
    );
    assert!(!chat.is_empty());
    chat.iter().for_each(|shown| assert_hinted(shown, question));
    assert!(
        notices.iter().any(|n| n.starts_with("remembered: ")),
        "{notices:?}"
    );

    // Not a question: the router chooses, shown the memory too.
    let before = log.lock().unwrap().len();
    let asked = "Releases, please.";
    app.agent_turn(asked, &mut |_| {}).unwrap();
    let (router, chat) = seen_since(&log, before);
    assert_eq!(router.len(), 1, "{router:?}");
    router
        .iter()
        .chain(&chat)
        .for_each(|shown| assert_hinted(shown, asked));

    // A request no memory speaks to goes alone.
    let before = log.lock().unwrap().len();
    app.agent_turn("What is 17 times 3?", &mut |_| {}).unwrap();
    let seen = user_messages(&log, before);
    assert!(!seen.is_empty());
    for (_, shown) in seen {
        assert!(shown.contains("What is 17 times 3?"), "{shown}");
        assert!(!shown.contains("3?\n(already known"), "{shown}");
    }
}

#[test]
fn no_hint_when_memory_is_off() {
    let ws = tempfile::tempdir().unwrap();
    let none = harvey::chat::route::Wording::PLAIN.none;
    let (mut app, log) = app_with_fact(ws.path(), &[none, "Tag", " it."], false);
    let before = log.lock().unwrap().len();
    app.agent_turn("How do we cut a new release?", &mut |_| {})
        .unwrap();
    let seen = user_messages(&log, before);
    assert!(!seen.is_empty());
    for (_, shown) in seen {
        assert!(!shown.contains("already known"), "{shown}");
    }
}

#[test]
fn a_reply_that_repeats_the_note_is_replaced_by_the_memory_it_pointed_at() {
    let ws = tempfile::tempdir().unwrap();
    let (mut app, _log) = app_with_fact(
        ws.path(),
        &[
            "Yes",
            ", the line after the request answers this: answer from it in plain text.",
        ],
        true,
    );
    let mut notices = Vec::new();
    let turn = app
        .agent_turn("How are releases done?", &mut |e| {
            if let TurnEvent::Notice(n) = e {
                notices.push(n);
            }
        })
        .unwrap();
    let reply = &turn.completion.text;
    assert!(reply.starts_with("From what is already known: "), "{reply}");
    assert!(reply.contains("cargo publish"), "{reply}");
    assert!(!reply.contains("line after the request"), "{reply}");
    assert!(
        notices
            .iter()
            .any(|n| n.contains("repeated harvey's instructions")),
        "{notices:?}"
    );
}
