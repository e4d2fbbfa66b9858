//! Files out of the context (issue 14): the model's `write_file` and `edit_file` show a
//! diff and ask, do nothing on a no, and are refused where nobody can ask; `/write`
//! saves the last reply; `search_files` takes a regular expression.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use harvey::app::App;
use harvey::chat::agent::TurnEvent;
use harvey::command::{AuditLog, Decision, Entry, Who};
use harvey::engine::scripted::ScriptedEngine;
use harvey::repl::handle_line;

const OLD: &str = "fn main() {\n    println!(\"old\");\n}\n";

pub fn workspace(allow_writes: bool) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        format!("memory:\n  enabled: false\nsampling:\n  max_tokens: 8\ntools:\n  allow_writes: {allow_writes}\n"),
    )
    .unwrap();
    std::fs::write(ws.path().join("src/main.rs"), OLD).unwrap();
    ws
}

fn app(ws: &Path, replies: &[String]) -> App {
    let config = harvey::config::load(ws).unwrap();
    let engine = ScriptedEngine::new(8192, replies.iter().cloned());
    App::with_engine(ws.canonicalize().unwrap(), config, Box::new(engine))
}

/// A scripted `<tool_call>` of `name` with `args`.
pub fn call(name: &str, args: serde_json::Value) -> String {
    let call = serde_json::json!({"name": name, "arguments": args});
    format!("<tool_call>{call}</tool_call>")
}

fn edit_call(old: &str, new: &str) -> String {
    call(
        "edit_file",
        serde_json::json!({"path": "src/main.rs", "old": old, "new": new}),
    )
}

/// The REPL on a terminal: every question is answered from `answers` (then "") and kept.
fn answering(app: &mut App, answers: &[&str]) -> Rc<RefCell<Vec<String>>> {
    let asked = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&asked);
    let answers: Vec<String> = answers.iter().map(|a| a.to_string()).collect();
    app.install_asker(Rc::new(move |q: &str| {
        log.borrow_mut().push(q.to_string());
        Some(
            answers
                .get(log.borrow().len() - 1)
                .cloned()
                .unwrap_or_default(),
        )
    }));
    app.set_ask_file_writes(true);
    asked
}

fn audit(ws: &Path) -> Vec<Entry> {
    AuditLog::new(&ws.join("agents")).last(1000).unwrap().0
}

fn main_rs(ws: &Path) -> String {
    std::fs::read_to_string(ws.join("src/main.rs")).unwrap()
}

/// Names in `dir` (a leftover temporary file would show here).
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn line(app: &mut App, text: &str) -> String {
    let mut out = Vec::new();
    handle_line(app, text, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn write_and_edit_show_a_diff_and_do_nothing_on_no() {
    let ws = workspace(false);
    let new_text = "fn main() {\n    println!(\"new\");\n}\n";
    let write = call(
        "write_file",
        serde_json::json!({"path": "src/main.rs", "content": new_text}),
    );
    let edit = edit_call("\"old\"", "\"edited\"");
    let replies = [write.clone(), "ok".into(), edit.clone(), "ok".into()];
    let mut app = app(ws.path(), &replies);
    let asked = answering(&mut app, &["n", ""]);
    // Through the REPL's own rendering: the diff is on screen before the question.
    let out = line(&mut app, "make it print new");
    assert!(
        out.contains("--- a/src/main.rs")
            && out.contains("-    println!(\"old\");")
            && out.contains("+    println!(\"new\");"),
        "{out}"
    );
    assert!(out.contains("refused: the user declined"), "{out}");
    assert_eq!(main_rs(ws.path()), OLD);
    let mut events = Vec::new();
    let turn = app.agent_turn("edit it", &mut |e| events.push(e)).unwrap();
    let diff = events.iter().find_map(|e| match e {
        TurnEvent::Diff(d) => Some(d.clone()),
        _ => None,
    });
    let diff = diff.expect("a diff before the question");
    assert!(
        diff.contains("-    println!(\"old\");\n+    println!(\"edited\");"),
        "{diff}"
    );
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(
        err.contains("declined") && err.contains("nothing was written"),
        "{err}"
    );
    // Two questions, each naming the tool, the file and the size of the change.
    let asked = asked.borrow().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[0].contains("write_file src/main.rs (+1 −1)") && asked[0].contains("[y/N]"));
    assert!(
        asked[1].contains("edit_file src/main.rs (+1 −1)"),
        "{asked:?}"
    );
    assert_eq!(main_rs(ws.path()), OLD);
    assert_eq!(names(&ws.path().join("src")), ["main.rs"]);
    let decisions: Vec<_> = audit(ws.path())
        .iter()
        .map(|e| (e.who, e.decision))
        .collect();
    assert_eq!(decisions, [(Who::Model, Decision::Declined); 2]);
}

#[test]
fn a_yes_writes_atomically_and_is_audited() {
    let ws = workspace(false);
    use std::os::unix::fs::PermissionsExt;
    let path = ws.path().join("src/main.rs");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let create = call(
        "write_file",
        serde_json::json!({"path": "src/new/mod.rs", "content": "pub fn x() {}\n"}),
    );
    let replies = [
        edit_call("\"old\"", "\"edited\""),
        "ok".into(),
        create,
        "ok".into(),
    ];
    let mut app = app(ws.path(), &replies);
    answering(&mut app, &["y", "yes"]);
    let turn = app.agent_turn("edit it", &mut |_| {}).unwrap();
    let result = turn.calls[0].result.as_ref().unwrap();
    assert!(result.starts_with("wrote src/main.rs ("), "{result}");
    assert_eq!(main_rs(ws.path()), OLD.replace("\"old\"", "\"edited\""));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "the old file's mode is kept");
    let mut events = Vec::new();
    let turn = app
        .agent_turn("add a module", &mut |e| events.push(e))
        .unwrap();
    assert!(turn.calls[0]
        .result
        .as_ref()
        .unwrap()
        .starts_with("created src/new/mod.rs"));
    assert!(events.iter().any(|e| matches!(e, TurnEvent::Diff(d) if d.starts_with("new file src/new/mod.rs: 14 bytes, 1 lines\n+pub fn x() {}"))), "{events:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("src/new/mod.rs")).unwrap(),
        "pub fn x() {}\n"
    );
    assert_eq!(names(&ws.path().join("src")), ["main.rs", "new"]);
    let entries = audit(ws.path());
    let seen: Vec<_> = entries
        .iter()
        .map(|e| (e.program.as_str(), e.args[0].as_str(), e.decision))
        .collect();
    assert_eq!(
        seen,
        [
            ("edit_file", "src/main.rs", Decision::Confirmed),
            ("write_file", "src/new/mod.rs", Decision::Confirmed)
        ]
    );
}

#[test]
fn writes_are_refused_where_nobody_can_ask_unless_allowed() {
    let ws = workspace(false);
    let edit = edit_call("\"old\"", "\"edited\"");
    // `harvey run`: nobody to ask.
    let mut app = app(ws.path(), &[edit.clone(), "ok".into()]);
    let turn = app.agent_turn("edit it", &mut |_| {}).unwrap();
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("this session cannot ask"), "{err}");
    assert!(err.contains("tools.allow_writes: true"), "{err}");
    // The REPL reading a pipe: it can ask other questions, but not about writes.
    let mut app = self::app(ws.path(), &[edit.clone(), "ok".into()]);
    let asked = answering(&mut app, &["y"]);
    app.set_ask_file_writes(false);
    let mut events = Vec::new();
    let turn = app.agent_turn("edit it", &mut |e| events.push(e)).unwrap();
    assert!(turn.calls[0].result.is_err());
    assert!(asked.borrow().is_empty(), "nobody was asked");
    assert!(!events.iter().any(|e| matches!(e, TurnEvent::Diff(_))));
    assert_eq!(main_rs(ws.path()), OLD);
    let decisions: Vec<_> = audit(ws.path()).iter().map(|e| e.decision).collect();
    assert_eq!(decisions, [Decision::Refused; 2]);
    // `tools.allow_writes: true` lets an unattended session write (and says so in the log).
    let ws = workspace(true);
    let mut app = self::app(ws.path(), &[edit, "ok".into()]);
    let turn = app.agent_turn("edit it", &mut |_| {}).unwrap();
    assert!(turn.calls[0].result.is_ok(), "{:?}", turn.calls[0].result);
    assert_eq!(main_rs(ws.path()), OLD.replace("\"old\"", "\"edited\""));
    assert_eq!(audit(ws.path())[0].decision, Decision::AllowWrites);
}

#[test]
fn harvey_tool_call_refuses_writes() {
    let ws = workspace(false);
    let out = crate::support::process::run(
        ws.path(),
        &[
            "tool",
            "call",
            "write_file",
            r#"{"path": "made.txt", "content": "x"}"#,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("this session cannot ask"), "{stderr}");
    assert!(!ws.path().join("made.txt").exists());
}

#[test]
fn an_ambiguous_or_missing_edit_is_refused_without_asking() {
    let ws = workspace(false);
    let twice = "a\nsame\nb\nsame\n";
    std::fs::write(ws.path().join("src/twice.txt"), twice).unwrap();
    let ambiguous = call(
        "edit_file",
        serde_json::json!({"path": "src/twice.txt", "old": "same", "new": "other"}),
    );
    let missing = edit_call("println!(\"absent\")", "x");
    let same = call(
        "write_file",
        serde_json::json!({"path": "src/main.rs", "content": OLD}),
    );
    let replies = [
        ambiguous,
        "ok".into(),
        missing,
        "ok".into(),
        same,
        "ok".into(),
    ];
    let mut app = app(ws.path(), &replies);
    let asked = answering(&mut app, &["y", "y"]);
    let turn = app.agent_turn("edit", &mut |_| {}).unwrap();
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(
        err.contains("`old` occurs 2 times in src/twice.txt, at lines 2 and 4"),
        "{err}"
    );
    let turn = app.agent_turn("edit", &mut |_| {}).unwrap();
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(
        err.contains("`old` was not found in src/main.rs (3 lines)"),
        "{err}"
    );
    assert!(asked.borrow().is_empty(), "{:?}", asked.borrow());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("src/twice.txt")).unwrap(),
        twice
    );
    // The model sees what was wrong, as its tool result.
    let tool_turns: Vec<_> = app
        .conversation()
        .turns()
        .iter()
        .filter(|m| m.role == harvey::engine::Role::Tool)
        .map(|m| m.content.clone())
        .collect();
    assert!(
        tool_turns[0].contains("include more surrounding text"),
        "{tool_turns:?}"
    );
}

#[test]
fn slash_write_saves_the_reply_or_its_code_and_asks_before_overwriting() {
    let ws = workspace(false);
    let reply = "Here it is:\n```rust\nfn main() {}\n```\nDone.";
    let mut app = app(ws.path(), &[reply.into()]);
    answering(&mut app, &["n", "y"]);
    assert!(line(&mut app, "/write notes.md").contains("there is no reply yet"));
    line(&mut app, "write me a main");
    let out = line(&mut app, "/write notes.md");
    assert!(out.contains("[created notes.md ("), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.md")).unwrap(),
        format!("{reply}\n")
    );
    // An existing file: the diff, then the question; "n" keeps it.
    let out = line(&mut app, "/write src/main.rs --code");
    assert!(
        out.contains("-    println!(\"old\");") && out.contains("+fn main() {}"),
        "{out}"
    );
    assert!(
        out.contains("not written: src/main.rs is unchanged"),
        "{out}"
    );
    assert_eq!(main_rs(ws.path()), OLD);
    let out = line(&mut app, "/write --code src/main.rs");
    assert!(out.contains("[wrote src/main.rs ("), "{out}");
    assert_eq!(main_rs(ws.path()), "fn main() {}\n");
    for (bad, needle) in [
        ("/write ../out.md", "outside the workspace"),
        ("/write agents/x.md", "agents/"),
        ("/write HARVEY.md", "guidance"),
        ("/write .env", "secret"),
        ("/write", "usage: /write"),
    ] {
        let out = line(&mut app, bad);
        assert!(out.contains(needle), "{bad}: {out}");
    }
    assert!(!ws.path().parent().unwrap().join("out.md").exists());
    let entries = audit(ws.path());
    assert_eq!(entries.len(), 2);
    assert!(entries
        .iter()
        .all(|e| e.who == Who::User && e.program == "/write"));
}

#[test]
fn search_files_takes_a_regular_expression() {
    let ws = workspace(false);
    let registry = harvey::app::workspace_tools(ws.path());
    let search = |pattern: &str| {
        let args = serde_json::json!({"pattern": pattern});
        registry.call("search_files", args.as_object().unwrap())
    };
    let found = search(r"println!\(.(old|new)").unwrap();
    assert_eq!(found, "src/main.rs:2: println!(\"old\");");
    assert!(search("PRINTLN").unwrap().starts_with("src/main.rs:2:"));
    assert!(search(r"^\}$").unwrap().starts_with("src/main.rs:3:"));
    assert!(search("nowhere[0-9]")
        .unwrap()
        .starts_with("no lines match"));
    let err = search("println!(").unwrap_err().to_string();
    assert!(
        err.contains("pattern \"println!(\" is not a valid regular expression"),
        "{err}"
    );
}
