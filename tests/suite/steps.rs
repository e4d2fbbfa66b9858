//! The steps a turn takes on its own after a search (scripted engine): a question about
//! one name in the code reads the definition the search found, with no router call and
//! nothing decoded before the answer.

use harvey::app::workspace_tools;

use super::route::{routed_turn, router_requests};

#[test]
fn a_question_about_a_test_reads_its_definition_after_the_search() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(
        dir.path().join("tests/front_matter.rs"),
        "use brindle::parse_page;\n#[test]\nfn regression_issue_212() {\n    assert_eq!(parse_page(\"title: Rust: the good parts\").title, \"Rust: the good parts\");\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("CHANGELOG.md"),
        "- regression_issue_212: titles with a colon\n",
    )
    .unwrap();
    let registry = workspace_tools(dir.path());
    // Only the answer's lead and its rest are generated: one code name asked about is
    // searched for without the router, and the search and the read are fixed whole by
    // the request and the search's result.
    let (turn, engine, _) = routed_turn(
        &registry,
        &["It ", "checks a title with a colon."],
        "What does the test regression_issue_212 check?",
    );
    let calls: Vec<_> = turn
        .calls
        .iter()
        .map(|c| c.call.as_ref().unwrap())
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].name, "search_files");
    assert_eq!(calls[1].name, "read_file");
    let args = &calls[1].arguments;
    assert_eq!(args["path"], "tests/front_matter.rs");
    assert_eq!(args["start_line"], 2);
    assert!(args["end_line"].as_i64().unwrap() >= 5, "{args:?}");
    let read = turn.calls[1].result.as_ref().unwrap();
    assert!(read.contains("Rust: the good parts"), "{read}");
    assert!(router_requests(&engine).is_empty());
    assert_eq!(engine.prompts.len(), 2, "the answer's lead and rest alone");
    assert_eq!(turn.completion.text, "It checks a title with a colon.");
}

/// A follow-up that asks to see lines of the file the previous exchange read ends with
/// those lines, as read: nothing is generated after the read.
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
