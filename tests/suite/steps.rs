//! The steps a turn takes on its own (scripted engine): a follow-up asking for lines is
//! answered with the lines read, nothing decoded after the read; a later question is a
//! follow-up only where its words point back. (A question about one name in the code is
//! answered from the evidence block: `tests/suite/evidence.rs`.)

use harvey::app::workspace_tools;

#[test]
fn a_follow_up_asking_for_lines_shows_them_as_read() {
    use harvey::engine::scripted::ScriptedEngine;

    use super::route::conversation_of;

    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=30)
        .map(|i| format!("step {i}: ./deploy.sh\n"))
        .collect();
    std::fs::write(dir.path().join("notes.txt"), &text).unwrap();
    let registry = workspace_tools(dir.path());
    let mut engine = ScriptedEngine::new(
        8192,
        [
            "read_file",
            r#" {"path": "notes.txt"}}</tool_call>"#,
            "You ",
            "run ./deploy.sh.",
            "read_file",
            r#" {"path": "notes.txt", "start_line": 1, "end_line": 3}}</tool_call>"#,
        ],
    );
    let (turns, conversation) = conversation_of(
        &mut engine,
        &registry,
        &["How do I deploy?", "Show me its first 3 lines."],
    );
    let follow = &turns[1];
    let call = follow.calls[0].call.as_ref().unwrap();
    assert_eq!(call.arguments["path"], "notes.txt", "{call:?}");
    // The follow-up's read had its path fixed to the earlier file by its grammar.
    let (_, grammar) = engine.prefixes.last().unwrap();
    assert!(
        grammar.as_deref().is_some_and(|g| g.contains("notes.txt")),
        "{grammar:?}"
    );
    let shown = &follow.completion.text;
    assert!(shown.starts_with("`notes.txt`, lines 1–3:"), "{shown}");
    for i in 1..=3 {
        assert!(
            shown.contains(&format!("\nstep {i}: ./deploy.sh\n")),
            "{shown}"
        );
    }
    assert!(!shown.contains("step 4:"), "{shown}");
    // Router, call, the answer's lead and rest; then the follow-up's router and call.
    assert_eq!(engine.prompts.len(), 6, "nothing generated after the read");
    assert_eq!(
        conversation.turns().last().map(|m| m.content.as_str()),
        Some(shown.as_str()),
        "the answer is kept in the conversation"
    );
}

#[test]
fn a_later_question_with_a_relative_that_gets_evidence_and_a_follow_up_does_not() {
    use harvey::app::App;
    use harvey::chat::agent::StepKind;
    use harvey::config::Config;
    use harvey::engine::scripted::ScriptedEngine;

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("README.md"),
        "# tidepool\n\nServes tide tables. Set TIDEPOOL_PORT to change the port.\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/server.rs"),
        "/// Reads TIDEPOOL_PORT, the port the server listens on.\npub fn listen_port() -> u16 { 8080 }\n",
    )
    .unwrap();
    let replies = std::iter::repeat_n("It is in src/server.rs.", 12);
    let mut app = App::with_engine(
        dir.path().to_path_buf(),
        Config::default(),
        Box::new(ScriptedEngine::new(8192, replies)),
    );
    let mut asked = |text: &str| {
        let turn = app.agent_turn(text, &mut |_| {}).unwrap();
        turn.steps.iter().any(|s| s.kind == StepKind::Evidence)
    };
    assert!(asked("Which environment variable changes the port?"));
    // "that" opens a relative clause and "this project" names the workspace: no follow-up.
    assert!(asked(
        "Which function reads the port that the server listens on in this project?"
    ));
    // A follow-up's words point back at the exchange before: no block of its own.
    assert!(!asked("Where is it defined?"));
}
