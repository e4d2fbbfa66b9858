//! Session summaries and what follows from them: the real model's summary and tags,
//! rolling compression, recent sessions in the next memory context, secrets screened out.

use harvey::app::App;
use harvey::config::Config;
use harvey::session::fountain::parse;
use harvey::session::SessionIndex;

use crate::support::engine;

#[test]
fn real_model_summarizes_a_transcript_three_times_the_context() {
    let ws = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.engine.n_ctx = 512;
    let mut app = App::with_engine(ws.path().to_path_buf(), config, Box::new(engine(512, 256)));
    let topics = [
        "sailing",
        "baking bread",
        "rust lifetimes",
        "mountain hiking",
        "chess openings",
    ];
    let mut tokens = 0;
    let mut i = 0;
    while tokens < 3 * 512 {
        let user = format!(
            "Tell me about {} in detail, part {i}.",
            topics[i % topics.len()]
        );
        let reply = format!(
            "Here is part {i} about {}: it takes practice, patience and the right tools; \
             start small, learn the basics well, then build on them step by step.",
            topics[i % topics.len()]
        );
        tokens +=
            harvey::tokens::TokenCounter::count_tokens(app.engine(), &format!("{user}\n{reply}"));
        app.record_exchange(user, reply).unwrap();
        i += 1;
    }
    let report = app.close_session(&mut |_| {}).expect("closed");
    assert!(!report.skipped);
    assert!(
        report.summary.split_whitespace().count() >= 5,
        "{}",
        report.summary
    );
    // The tags are the model's (its grammar always ends and parses), not the fallback.
    assert_eq!(
        report.tag_source,
        harvey::chat::rolling::TagSource::Model,
        "{:?}",
        report.tags
    );
    assert!((3..=5).contains(&report.tags.len()), "{:?}", report.tags);
    assert!(
        report
            .tags
            .iter()
            .all(|t| !t.is_empty() && t.chars().all(|c| !c.is_uppercase())),
        "{:?}",
        report.tags
    );
    let record = parse(&std::fs::read_to_string(&report.record).unwrap());
    assert_eq!(record.exchanges.len(), i);
    assert!(record.ended);
    // Closing twice does nothing.
    assert!(app.close_session(&mut |_| {}).is_none());
}

#[test]
fn compression_follows_the_memory_context_and_the_record_keeps_the_originals() {
    use harvey::engine::scripted::ScriptedEngine;
    use harvey::engine::Role;
    use harvey::repl::handle_line;
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.tools.enabled = false;
    config.memory.rolling_summary.keep_turns = 2;
    config.sampling.max_tokens = 20;
    let reply = "a reply of about twenty words that fills the small context quickly so that older turns must be folded away soon";
    let replies: Vec<String> = (0..40).map(|i| format!("{reply} {i}")).collect();
    let mut app = App::with_engine(
        dir.path().to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(700, replies)),
    );
    let mut out = Vec::new();
    handle_line(
        &mut app,
        "/memory add project_fact The boat is called Kestrel",
        &mut out,
    )
    .unwrap();
    let mut said = Vec::new();
    for i in 0..20 {
        let line =
            format!("question number {i} about the boat and its rigging and sails and ropes");
        handle_line(&mut app, &line, &mut out).unwrap();
        said.push(line);
    }
    assert!(
        !app.compressions().is_empty(),
        "{}",
        String::from_utf8_lossy(&out)
    );
    let messages = app.conversation().messages();
    assert_eq!(messages[0].role, Role::System);
    assert!(
        messages[1].content.contains("[memory context]"),
        "{}",
        messages[1].content
    );
    assert!(messages[1].content.contains("Kestrel"));
    assert!(messages[2]
        .content
        .starts_with("[Session history compressed — summary: "));
    // The record has every original exchange, and notes the compression.
    let record = parse(&std::fs::read_to_string(app.recorder().path().unwrap()).unwrap());
    let users: Vec<&str> = record.exchanges.iter().map(|e| e.user.as_str()).collect();
    assert_eq!(users, said.iter().map(String::as_str).collect::<Vec<_>>());
    let text = std::fs::read_to_string(app.recorder().path().unwrap()).unwrap();
    assert!(text.contains("[[rolling summary:"), "{text}");
    let report = app.close_session(&mut |_| {}).unwrap();
    let index = SessionIndex::open(&dir.path().join("agents")).unwrap();
    assert!(index.stats().unwrap()[0].compressed);
    assert!(report.record.is_file());
}

#[test]
fn recent_sessions_are_injected_pruned_and_a_second_ctrl_c_skips_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let make = |replies: Vec<&str>| crate::support::scripted_app(dir.path(), replies);
    // A Ctrl-C while the summary is written: the record still closes validly.
    let mut first = make(vec![
        "Tides follow the moon.",
        "A long summary that never finishes",
    ]);
    first.turn("Why are there tides?", &mut |_| {}).unwrap();
    let abort = first.abort().clone();
    let report = first
        .close_session(&mut |line| {
            if line.starts_with("summarizing") {
                abort.raise();
            }
        })
        .unwrap();
    assert!(report.skipped);
    assert!(
        report
            .summary
            .starts_with("(no summary) Began with: Why are there tides?"),
        "{}",
        report.summary
    );
    let record = parse(&std::fs::read_to_string(&report.record).unwrap());
    assert!(record.ended);
    drop(first);
    // The next session's memory context lists it (date + one line).
    let mut second = make(vec!["ok"]);
    let context = crate::support::context_after_turn(&mut second, "hello");
    assert!(context.contains("[recent sessions]\n- 20"), "{context}");
    assert!(context.contains("Why are there tides?"), "{context}");
    drop(second);
    // A record deleted by hand leaves the index at the next start.
    std::fs::remove_file(&report.record).unwrap();
    let third = make(vec![]);
    let listed = third.sessions().unwrap().recent(10).unwrap();
    assert!(
        listed.iter().all(|e| !report.record.ends_with(&e.file)),
        "{listed:?}"
    );
}

#[test]
fn session_summaries_are_screened_for_secrets_before_they_are_saved_or_injected() {
    use harvey::chat::rolling::TagSource;
    let dir = tempfile::tempdir().unwrap();
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let make = |replies: Vec<String>| crate::support::scripted_app(dir.path(), replies);
    let mut first = make(vec![
        "Pushed.".into(),
        format!("The user pushed the release with the token {token} and tagged it."),
        r#"["release", "git", "tags"]"#.into(),
    ]);
    first
        .turn(&format!("Push with {token}"), &mut |_| {})
        .unwrap();
    let report = first.close_session(&mut |_| {}).unwrap();
    assert!(!report.summary.contains(token), "{}", report.summary);
    assert!(
        report.summary.contains("[redacted: a GitHub token]"),
        "{}",
        report.summary
    );
    assert_eq!(report.tag_source, TagSource::Model);
    assert_eq!(report.tags, ["release", "git", "tags"]);
    let index = SessionIndex::open(&dir.path().join("agents")).unwrap();
    let saved = index.recent(1).unwrap();
    assert!(!saved[0].summary.contains(token), "{saved:?}");
    drop(first);
    let mut second = make(vec!["ok".into()]);
    let context = crate::support::context_after_turn(&mut second, "hello");
    assert!(context.contains("[recent sessions]"), "{context}");
    assert!(!context.contains(token), "{context}");
}
