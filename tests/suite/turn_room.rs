//! A turn whose tool results outgrow the context: the newest result is cut, older rounds
//! of the turn make room first, and where no result fits at all the model answers
//! without it (and the user is told), instead of the turn ending in "prompt too long".

use harvey::app::App;
use harvey::chat::agent::TurnEvent;
use harvey::config::Config;
use harvey::engine::scripted::ScriptedEngine;
use harvey::engine::{Message, Role};

const REPLY_ROOM: usize = 64;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let words = |n: usize| {
        (0..n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    std::fs::write(dir.path().join("mid.txt"), words(50)).unwrap();
    std::fs::write(dir.path().join("big.txt"), words(3000)).unwrap();
    dir
}

fn call(path: &str) -> String {
    format!(r#"<tool_call>{{"name": "read_file", "arguments": {{"path": "{path}"}}}}</tool_call>"#)
}

fn app(dir: &std::path::Path, n_ctx: u32, replies: &[&str]) -> App {
    let mut config = Config::default();
    config.sampling.max_tokens = REPLY_ROOM as u32;
    // No workspace map: `fixed` measures the prompt before the session-start context, and
    // these tests size the context to the token from it.
    config.tools.workspace_map_pct = 0.0;
    App::with_engine(
        dir.to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(n_ctx, replies.iter().copied())),
    )
}

/// Tokens of the prompt before any round: system prompt, tools, and the user's message.
fn fixed(dir: &std::path::Path, user: &str) -> usize {
    let probe = app(dir, 8192, &[]);
    let mut messages = probe.conversation().messages();
    messages.push(Message::new(Role::User, user));
    probe.engine().count_prompt(&messages).unwrap()
}

fn run(app: &mut App, text: &str) -> (harvey::chat::agent::AgentTurn, Vec<TurnEvent>) {
    let mut events = Vec::new();
    let turn = app.agent_turn(text, &mut |e| events.push(e)).unwrap();
    (turn, events)
}

fn tool_messages(app: &App) -> Vec<String> {
    app.conversation()
        .turns()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .collect()
}

#[test]
fn the_turns_older_round_makes_room_for_the_newest_result() {
    let dir = workspace();
    let user = "Compare mid.txt and big.txt.";
    // Room for the first result, not for a useful cut of the second beside it.
    let n_ctx = fixed(dir.path(), user) + REPLY_ROOM + 100;
    let (mid, big) = (call("mid.txt"), call("big.txt"));
    let mut app = app(
        dir.path(),
        n_ctx as u32,
        &[&mid, &big, "Both are word lists."],
    );
    let (turn, events) = run(&mut app, user);
    assert_eq!(turn.completion.text, "Both are word lists.");
    assert_eq!(turn.calls.len(), 2, "both calls ran and are on record");
    let results = tool_messages(&app);
    assert_eq!(
        results.len(),
        1,
        "the older round was taken out: {results:?}"
    );
    assert!(
        results[0].contains("| w0 w1 ") && !results[0].contains("m0"),
        "the newest (big.txt) result is the one kept: {}",
        results[0]
    );
    assert!(
        results[0].ends_with("[result cut to fit the context]"),
        "{}",
        results[0]
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, TurnEvent::Notice(n) if n.contains("no room"))),
        "a result was shown, so nothing to warn about"
    );
    let used = app
        .engine()
        .count_prompt(&app.conversation().messages())
        .unwrap();
    assert!(used <= n_ctx, "{used} tokens in a {n_ctx}-token context");
}

#[test]
fn a_result_with_no_room_at_all_is_left_out_and_the_model_answers() {
    let dir = workspace();
    let user = "What is in big.txt?";
    // The fixed prompt and the reply's room leave less than a useful result.
    let n_ctx = fixed(dir.path(), user) + REPLY_ROOM + 30;
    let big = call("big.txt");
    let mut app = app(
        dir.path(),
        n_ctx as u32,
        &[&big, "Too big to read here.", ""],
    );
    let (turn, events) = run(&mut app, user);
    assert_eq!(turn.calls.len(), 1);
    assert!(turn.calls[0].result.is_ok(), "the read itself worked");
    let notice = events.iter().find_map(|e| match e {
        TurnEvent::Notice(n) if n.contains("no room left") => Some(n.clone()),
        _ => None,
    });
    let notice = notice.expect("the user is told why the result is not used");
    assert!(notice.contains(&format!("n_ctx {n_ctx}")), "{notice}");
    assert!(
        tool_messages(&app).is_empty(),
        "no result fits, none is kept"
    );
    let turns = app.conversation().turns();
    assert_eq!(
        turns.len(),
        2,
        "the user's message and the answer: {turns:?}"
    );
    assert_eq!(turns[1].role, Role::Assistant);
    assert!(turn.completion.text.starts_with("Too"), "{turn:?}");
}
