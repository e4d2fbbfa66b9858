//! The REPL's line handling, driven with a scripted engine (no TTY needed).

use harvey::app::App;
use harvey::config::Config;
use harvey::engine::scripted::ScriptedEngine;
use harvey::repl::{handle_line, Flow};

fn app(replies: &[&str]) -> App {
    let engine = ScriptedEngine::new(4096, replies.iter().copied());
    App::with_engine(std::env::temp_dir(), Config::default(), Box::new(engine))
}

fn line(app: &mut App, text: &str) -> (Flow, String) {
    let mut out = Vec::new();
    let flow = handle_line(app, text, &mut out).unwrap();
    (flow, String::from_utf8(out).unwrap())
}

#[test]
fn chat_streams_the_reply_and_a_stats_line() {
    let mut app = app(&["Hello from the script"]);
    let (flow, out) = line(&mut app, "hi there");
    assert_eq!(flow, Flow::Continue);
    assert!(out.starts_with("Hello from the script\n["), "{out}");
    assert!(out.contains("tokens at"), "{out}");
    assert_eq!(app.conversation().turn_count(), 1);
}

#[test]
fn status_clear_unknown_and_exit() {
    let mut app = app(&["one", "two"]);
    line(&mut app, "first");
    let (_, status) = line(&mut app, "/status");
    assert!(
        status.contains("context    ") && status.contains("/4096 tokens used"),
        "{status}"
    );
    assert!(status.contains("turn 1 of this session"), "{status}");
    let (_, cleared) = line(&mut app, "/clear");
    assert_eq!(cleared, "[conversation cleared]\n");
    assert_eq!(app.conversation().turn_count(), 0);
    let (_, unknown) = line(&mut app, "/nope");
    assert!(unknown.contains("unknown command /nope"), "{unknown}");
    for exit in ["/exit", "/quit", "/bye"] {
        assert_eq!(line(&mut app, exit).0, Flow::Exit);
    }
}

#[test]
fn multi_line_text_reaches_the_model_whole() {
    let mut app = app(&["ok"]);
    line(&mut app, "first line\nsecond line");
    let sent = &app.conversation().turns()[0].content;
    assert_eq!(sent, "first line\nsecond line");
}

#[test]
fn harvey_md_is_in_the_system_prompt_and_a_cut_is_announced() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("HARVEY.md"),
        "Always run cargo fmt before committing.",
    )
    .unwrap();
    std::fs::write(dir.path().join("AGENTS.md"), "rule ".repeat(2000)).unwrap();
    let engine = ScriptedEngine::new(4096, ["ok"]);
    let app = App::with_engine(
        dir.path().to_path_buf(),
        Config::default(),
        Box::new(engine),
    );
    let system = &app.conversation().messages()[0].content;
    assert!(
        system.contains("From HARVEY.md:\nAlways run cargo fmt before committing."),
        "{system}"
    );
    assert!(
        system.contains("read_file(path, start_line?, end_line?, start_char?)"),
        "{system}"
    );
    assert_eq!(app.notices().len(), 1, "{:?}", app.notices());
    assert!(
        app.notices()[0].starts_with("AGENTS.md has 2000 tokens"),
        "{:?}",
        app.notices()
    );
}

#[test]
fn rag_and_kb_commands_work_and_kb_inject_rides_on_the_next_message() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("docs")).unwrap();
    std::fs::write(
        ws.path().join("docs/pump.md"),
        "# Pump\n\nPrime the pump housing with water before the first start.\n",
    )
    .unwrap();
    let engine = ScriptedEngine::new(4096, ["noted"]);
    let mut app = App::with_engine(ws.path().to_path_buf(), Config::default(), Box::new(engine));
    let (_, out) = line(&mut app, "/rag new docs");
    assert!(out.contains("created RAG store docs"), "{out}");
    assert_eq!(app.rag().len(), 1, "the first store is put in use");
    let (_, out) = line(&mut app, "/rag ingest docs");
    assert!(out.contains("1 file(s) ingested"), "{out}");
    let (_, out) = line(&mut app, "/rag query prime the pump");
    assert!(out.contains("rag:docs/docs/pump.md:1-3"), "{out}");
    let (_, out) = line(&mut app, "/rag status");
    assert!(out.contains("docs: 1 files, 1 chunks"), "{out}");
    let (_, out) = line(&mut app, "/rag frob");
    assert!(out.contains("unknown /rag command"), "{out}");

    let (_, out) = line(
        &mut app,
        "/kb observe decision Prime the pump before every season",
    );
    assert!(out.contains("(decision) saved"), "{out}");
    let (_, out) = line(&mut app, "/kb inject");
    assert!(out.contains("attached to your next message"), "{out}");
    line(&mut app, "what did we decide?");
    let sent = &app.conversation().turns()[0].content;
    assert!(sent.contains("[knowledge: project"), "{sent}");
    assert!(
        sent.contains("decision) Prime the pump before every season"),
        "{sent}"
    );
    assert!(sent.ends_with("what did we decide?"), "{sent}");
    assert!(app.attachments().is_empty(), "attached once");
}
