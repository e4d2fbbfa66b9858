//! A turn's rounds with a scripted engine: a repeated call, the round cap, the turn's
//! tokens (`tools.turn_tokens`) and a result cut to fit the context, a reply that runs on into the prompt.

use harvey::app::App;
use harvey::chat::agent::TurnEvent;
use harvey::config::Config;
use harvey::engine::scripted::ScriptedEngine;
use harvey::engine::{Message, Role, StopReason};

use super::tools::{run, scripted_app, shown_text, workspace};

/// The tool results among `turns`, in order.
fn tool_results(turns: &[Message]) -> Vec<&str> {
    turns
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect()
}

#[test]
fn identical_calls_are_answered_from_the_first_result() {
    let dir = workspace();
    let call = r#"<tool_call>{"name": "list_files", "arguments": {}}</tool_call>"#;
    let mut app = scripted_app(dir.path(), &[call, call, "Done."], 5);
    let (turn, _) = run(&mut app, "What is here?");
    assert_eq!(turn.calls.len(), 2);
    assert!(!turn.calls[0].reused && turn.calls[1].reused);
    assert_eq!(turn.calls[0].result, turn.calls[1].result);
}

#[test]
fn round_cap_tells_the_model_to_answer() {
    let dir = workspace();
    let call = |p: &str| {
        format!(r#"<tool_call>{{"name": "read_file", "arguments": {{"path": "{p}"}}}}</tool_call>"#)
    };
    let calls = [call("notes.txt"), call("src/lib.rs"), call("a"), call("b")];
    let replies: Vec<&str> = calls.iter().map(String::as_str).collect();
    let mut app = scripted_app(dir.path(), &replies, 2);
    let (turn, _) = run(&mut app, "Read everything");
    assert_eq!(turn.calls.len(), 2, "the cap stops further calls");
    let last_tool = *tool_results(app.conversation().turns()).last().unwrap();
    assert!(last_tool.contains("answer the user now"), "{last_tool}");
}

/// `tools.turn_tokens` holds what a turn adds to the prompt: a result past it is cut, and
/// the model is told to answer from what it has; with 0 only the context limits it.
#[test]
fn a_turn_past_its_tokens_is_cut_and_answered() {
    let dir = workspace();
    let big: String = (0..2000).map(|i| format!("word{i} ")).collect();
    std::fs::write(dir.path().join("big.txt"), big).unwrap();
    let read_big =
        r#"<tool_call>{"name": "read_file", "arguments": {"path": "big.txt"}}</tool_call>"#;
    let turn_with = |turn_tokens: usize| {
        let mut config = Config::default();
        config.tools.turn_tokens = turn_tokens;
        let mut app = App::with_engine(
            dir.path().to_path_buf(),
            config,
            // Told to answer, the model's first token is chosen apart (the answer's lead).
            Box::new(ScriptedEngine::new(8192, [read_big, "It", " lists words."])),
        );
        let (turn, _) = run(&mut app, "What is in big.txt?");
        let turns = app.conversation().turns().to_vec();
        let user_at = turns.iter().rposition(|m| m.role == Role::User).unwrap();
        let added: usize = turns[user_at..]
            .iter()
            .map(|m| m.content.split_whitespace().count())
            .sum();
        (turn, turns, added)
    };

    let (turn, turns, added) = turn_with(400);
    assert_eq!(turn.calls.len(), 1);
    assert_eq!(turn.completion.text, "It lists words.");
    let results = tool_results(&turns);
    assert!(results[0].contains("[result cut"), "{}", results[0]);
    assert!(added <= 400, "the turn added {added} words");
    let last_tool = results.last().unwrap();
    assert!(last_tool.contains("answer the user now"), "{last_tool}");

    let (turn, turns, added) = turn_with(0);
    assert_eq!(turn.calls.len(), 1);
    let result = tool_results(&turns)[0];
    assert!(!result.contains("[result cut"), "{}", &result[..200]);
    // read_file's own cap is all that holds it.
    assert!(
        added > 700,
        "read_file's whole result was shown: {added} words"
    );
}

/// Past the cap a model that opens yet another call gets its answer begun for it, and
/// continues in prose from there.
#[test]
fn past_the_cap_the_answer_is_begun_for_the_model() {
    let dir = workspace();
    let first =
        r#"<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>"#;
    // The second reply opens a call again; what follows the opener is what the model
    // writes once the answer is begun for it.
    let again = "<tool_call>you deploy with ./deploy.sh.";
    let mut app = scripted_app(dir.path(), &[first, again], 1);
    let (turn, events) = run(&mut app, "How do I deploy?");
    assert_eq!(turn.calls.len(), 1);
    assert_eq!(
        turn.completion.text,
        "From the tool results above: you deploy with ./deploy.sh."
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, TurnEvent::Text(t) if t == &turn.completion.text)));
    let last = app.conversation().turns().last().unwrap();
    assert_eq!(
        (last.role, last.content.as_str()),
        (Role::Assistant, turn.completion.text.as_str())
    );
}

/// A model that writes a call even after the begun answer is cut off there; with nothing
/// else said, the reply shows what the last good result held (the turn answers from what
/// it has).
#[test]
fn past_the_cap_a_call_after_the_begun_answer_is_no_answer() {
    let dir = workspace();
    let call = |p: &str| {
        format!(r#"<tool_call>{{"name": "read_file", "arguments": {{"path": "{p}"}}}}</tool_call>"#)
    };
    let calls = [call("notes.txt"), call("src/lib.rs")];
    let replies: Vec<&str> = calls.iter().map(String::as_str).collect();
    let mut app = scripted_app(dir.path(), &replies, 1);
    let (turn, _) = run(&mut app, "Read everything");
    assert_eq!(turn.calls.len(), 1);
    let reply = &turn.completion.text;
    assert!(
        reply.starts_with(harvey::chat::agent::FOUND_LEAD) && reply.contains("deploy.sh"),
        "{reply}"
    );
}

/// A tool result larger than the room left in the context is cut to fit (and says so)
/// instead of ending the turn with "prompt too long".
#[test]
fn a_result_too_big_for_the_context_is_cut_to_fit() {
    let dir = workspace();
    let words: Vec<String> = (0..3000).map(|i| format!("w{i}")).collect();
    std::fs::write(dir.path().join("big.txt"), words.join(" ")).unwrap();
    let call = r#"<tool_call>{"name": "read_file", "arguments": {"path": "big.txt"}}</tool_call>"#;
    let mut config = Config::default();
    config.sampling.max_tokens = 64;
    let n_ctx = 1024;
    let mut app = App::with_engine(
        dir.path().to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(n_ctx, [call, "It is a list of words."])),
    );
    let (turn, _) = run(&mut app, "What is in big.txt?");
    assert_eq!(turn.completion.text, "It is a list of words.");
    let result = tool_results(app.conversation().turns())[0];
    assert!(
        result.ends_with("[result cut to fit the context]"),
        "{}",
        &result[result.len() - 80..]
    );
    assert!(result.contains("w0"));
    let used = app
        .engine()
        .count_prompt(&app.conversation().messages())
        .unwrap();
    assert!(
        used <= n_ctx as usize,
        "{used} tokens in a {n_ctx}-token context"
    );
}

#[test]
fn a_reply_that_runs_on_into_the_prompt_ends_before_it_unseen() {
    let dir = workspace();
    let call =
        r#"<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>"#;
    let app = scripted_app(dir.path(), &[call, "x"], 5);
    // The system prompt's own last line, which the 1.5B was seen to copy after its answer.
    let copied = app
        .conversation()
        .system()
        .lines()
        .last()
        .unwrap()
        .to_string();
    assert!(copied.len() > 40, "{copied}");
    let answer = format!("You deploy with ./deploy.sh.\n{copied}\nMore of the prompt.");
    let mut app = scripted_app(dir.path(), &[call, &answer], 5);
    let (turn, events) = run(&mut app, "How do I deploy?");
    assert_eq!(
        turn.completion.text.trim_end(),
        "You deploy with ./deploy.sh."
    );
    assert_eq!(turn.completion.stop, StopReason::PromptEcho);
    let shown = shown_text(&events);
    assert!(!shown.contains(&copied[..20]), "shown: {shown}");
    let kept = &app.conversation().turns().last().unwrap().content;
    assert!(!kept.contains(&copied[..20]), "kept: {kept}");

    // A line that only starts like the prompt and then says something else is the answer's.
    let own = format!(
        "You deploy with ./deploy.sh.\n{} is what I found.",
        &copied[..10]
    );
    let mut app = scripted_app(dir.path(), &[call, &own], 5);
    let (turn, _) = run(&mut app, "How do I deploy?");
    assert_eq!(turn.completion.text, own);
    assert_ne!(turn.completion.stop, StopReason::PromptEcho);
}
