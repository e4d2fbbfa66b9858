//! Tool calling: the loop with a scripted engine, the grammar with the real model, and the
//! workspace sandbox through `harvey tool call`.

use std::process::Command;

use harvey::app::{workspace_tools, App};
use harvey::chat::agent::TurnEvent;
use harvey::config::Config;
use harvey::engine::scripted::ScriptedEngine;
use harvey::engine::{Message, Role, StopReason};
use harvey::tools::grammar::{call_grammar, call_max_tokens};
use harvey::tools::{parse_call, CALL_OPENER};

use crate::support::{engine, greedy};

pub(super) fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.txt"),
        "deploy with ./deploy.sh\nrefuses a dirty tree\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/lib.rs"),
        "pub fn answer() -> u32 { 42 }\n",
    )
    .unwrap();
    dir
}

pub(super) fn scripted_app(dir: &std::path::Path, replies: &[&str], max_rounds: usize) -> App {
    let mut config = Config::default();
    config.tools.max_rounds_per_turn = max_rounds;
    App::with_engine(
        dir.to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(8192, replies.iter().copied())),
    )
}

/// The reply text a user was shown: the turn's text events, joined.
pub(super) fn shown_text(events: &[TurnEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

pub(super) fn run(app: &mut App, text: &str) -> (harvey::chat::agent::AgentTurn, Vec<TurnEvent>) {
    let mut events = Vec::new();
    let turn = app.agent_turn(text, &mut |e| events.push(e)).unwrap();
    (turn, events)
}

#[test]
fn a_call_runs_and_the_model_answers_from_the_result() {
    let dir = workspace();
    let mut app = scripted_app(
        dir.path(),
        &[
            r#"Let me look. <tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>"#,
            "You deploy with ./deploy.sh.",
        ],
        5,
    );
    let (turn, events) = run(&mut app, "How do I deploy?");
    assert_eq!(turn.completion.text, "You deploy with ./deploy.sh.");
    assert_eq!(turn.calls.len(), 1);
    assert!(turn.calls[0].result.as_ref().unwrap().contains("deploy.sh"));
    assert!(events
        .iter()
        .any(|e| matches!(e, TurnEvent::ToolCall(s) if s.starts_with("read_file("))));
    let shown = shown_text(&events);
    assert!(
        !shown.contains("<tool_call>"),
        "the opener is never shown: {shown}"
    );
    // user, assistant (call), tool (result), assistant (answer)
    let roles: Vec<Role> = app.conversation().turns().iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
}

#[test]
fn unknown_tools_and_tool_errors_go_back_to_the_model() {
    let dir = workspace();
    let mut app = scripted_app(
        dir.path(),
        &[
            r#"<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>"#,
            r#"<tool_call>{"name": "read_file", "arguments": {"path": "../../etc/passwd"}}</tool_call>"#,
            r#"<tool_call>{"name": "read_file", "arguments": {"path": "missing.txt"}}</tool_call>"#,
            r#"<tool_call>{broken json</tool_call>"#,
            "Sorry, I could not do that.",
        ],
        5,
    );
    let (turn, _) = run(&mut app, "Do things");
    let errors: Vec<String> = turn
        .calls
        .iter()
        .map(|c| c.result.clone().unwrap_err().to_string())
        .collect();
    assert!(
        errors[0].contains("unknown tool delete_everything"),
        "{errors:?}"
    );
    assert!(errors[1].contains("outside the workspace"), "{errors:?}");
    assert!(errors[2].contains("not found"), "{errors:?}");
    assert!(errors[3].contains("not valid JSON"), "{errors:?}");
    assert_eq!(turn.completion.text, "Sorry, I could not do that.");
    let results: Vec<&Message> = app
        .conversation()
        .turns()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert!(results.iter().all(|m| m.content.starts_with("error: ")));
}

/// Prompts that invite tool use, for the real model.
const INVITING: &[&str] = &[
    "What files are in this workspace?",
    "Read notes.txt and tell me how to deploy.",
    "Search the files for the word deploy.",
    "Show me src/lib.rs.",
    "List the src directory.",
    "What does the answer function return? Look at the code.",
    "Find every mention of 'dirty' in the workspace.",
    "Open notes.txt.",
    "Which files mention deploy.sh?",
    "Look at the first line of notes.txt.",
    "Is there a README in the workspace?",
    "Check src/lib.rs for a function named answer.",
    "Please list all files.",
    "Read the file src/lib.rs and summarize it.",
    "Search for 'pub fn'.",
    "What is in the notes file?",
    "Tell me what is inside the src folder.",
    "Grep for 42 in the code.",
    "Can you read notes.txt lines 1 to 1?",
    "Look up how deployment works in this project's files.",
];

#[test]
fn real_model_tool_calls_always_parse_and_name_registered_tools() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let names: Vec<&str> = registry.list().iter().map(|t| t.name).collect();
    let grammar = call_grammar(&registry.list());
    // The grammar's worst case in tokens: any call it admits ends within it.
    let max_tokens = call_max_tokens(&grammar);
    let system = harvey::app::system_prompt(&registry, true, "");
    let n_ctx = 4096;
    let mut e = engine(n_ctx, 512);
    let mut chose = 0;
    let mut valid = 0;
    let mut failures = Vec::new();
    for prompt in INVITING {
        let messages = [
            Message::new(Role::System, system.clone()),
            Message::new(Role::User, *prompt),
        ];
        // Does the model choose to call a tool on its own?
        let mut free = greedy(48);
        free.stop = vec![CALL_OPENER.into()];
        let first = e.generate(&messages, &free, &mut |_| {}).unwrap();
        let entered = first.stop == StopReason::StopString;
        chose += usize::from(entered);
        // Whenever decoding enters a call (here forced for every prompt), it must end by
        // the grammar completing, parse, name a registered tool and pass validation.
        let mut forced = greedy(max_tokens);
        forced.grammar = Some(grammar.clone());
        forced.assistant_prefix = Some(format!(
            "{}{CALL_OPENER}",
            if entered { first.text.as_str() } else { "" }
        ));
        let done = e.generate(&messages, &forced, &mut |_| {}).unwrap();
        // Room for the worst case, so nothing but the grammar can end the call.
        assert!(
            done.stats.prompt_tokens + max_tokens <= n_ctx as usize,
            "{prompt}: {} prompt tokens + {max_tokens}",
            done.stats.prompt_tokens
        );
        let checked = done
            .grammar_output()
            .map_err(|stop| format!("cut off ({stop:?})"))
            .and_then(|text| parse_call(text).map_err(|err| err.to_string()))
            .and_then(|call| {
                let tool = registry
                    .get(&call.name)
                    .ok_or_else(|| format!("unregistered tool {}", call.name))?;
                assert!(names.contains(&call.name.as_str()));
                harvey::tools::call::validate(tool.params(), &call.arguments)
                    .map_err(|err| err.to_string())
            });
        match checked {
            Ok(()) => valid += 1,
            Err(err) => failures.push(format!("{prompt}: {err}: {}", done.text)),
        }
    }
    eprintln!(
        "tool calls (max_tokens {max_tokens}): the model chose a call for {chose}/{} prompts; {valid}/{} entered calls were valid",
        INVITING.len(),
        INVITING.len(),
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(valid, INVITING.len());
}

fn tool_call(dir: &std::path::Path, name: &str, args: &str) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(dir)
        .args(["tool", "call", name, args])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sandbox_refuses_escapes_through_the_cli() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    std::fs::create_dir_all(root.join("agents/memories")).unwrap();
    std::fs::create_dir_all(root.join("keys")).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "outside").unwrap();
    std::fs::write(root.join("agents/memories/memories.db"), "db").unwrap();
    std::fs::write(root.join(".env"), "TOKEN=1").unwrap();
    std::fs::write(root.join(".env.production"), "TOKEN=2").unwrap();
    std::fs::write(root.join("keys/server.pem"), "pem").unwrap();
    std::fs::write(root.join("keys/id_rsa"), "key").unwrap();
    std::fs::write(root.join("ok.txt"), "fine\n").unwrap();
    std::os::unix::fs::symlink(outer.path().join("secret.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outer.path(), root.join("linkdir")).unwrap();
    let outside = outer.path().join("secret.txt");
    let long = "a/".repeat(700);
    let attempts: Vec<(&str, String)> = vec![
        ("read_file", r#"{"path": "../secret.txt"}"#.into()),
        ("read_file", r#"{"path": "../../../../etc/passwd"}"#.into()),
        (
            "read_file",
            format!(r#"{{"path": "{}"}}"#, outside.display()),
        ),
        ("read_file", r#"{"path": "/etc/passwd"}"#.into()),
        ("read_file", r#"{"path": "link.txt"}"#.into()),
        ("read_file", r#"{"path": "linkdir/secret.txt"}"#.into()),
        (
            "read_file",
            r#"{"path": "agents/memories/memories.db"}"#.into(),
        ),
        ("list_files", r#"{"path": "agents"}"#.into()),
        ("read_file", r#"{"path": ".env"}"#.into()),
        ("read_file", r#"{"path": ".env.production"}"#.into()),
        ("read_file", r#"{"path": "keys/server.pem"}"#.into()),
        ("read_file", r#"{"path": "keys/id_rsa"}"#.into()),
        ("read_file", format!(r#"{{"path": "{long}"}}"#)),
        (
            "read_file",
            r#"{"path": "ok.txt\u0000../../etc/passwd"}"#.into(),
        ),
        ("list_files", r#"{"path": ".."}"#.into()),
        (
            "search_files",
            r#"{"pattern": "outside", "path": ".."}"#.into(),
        ),
        ("read_file", r#"{"path": "src/../../secret.txt"}"#.into()),
    ];
    assert!(attempts.len() >= 15);
    for (name, args) in &attempts {
        let (code, stdout, stderr) = tool_call(&root, name, args);
        assert_eq!(code, 1, "{name} {args}: {stdout}");
        assert!(stderr.starts_with("error: "), "{name} {args}: {stderr}");
        assert!(
            !stdout.contains("outside") && !stdout.contains("TOKEN") && !stdout.contains("key"),
            "{stdout}"
        );
    }
    // Legitimate reads work, and listings hide what tools may not read.
    let (code, stdout, _) = tool_call(&root, "read_file", r#"{"path": "ok.txt"}"#);
    assert_eq!((code, stdout.as_str()), (0, "    1| fine\n\n"));
    let (code, stdout, _) = tool_call(&root, "list_files", "{}");
    assert_eq!(code, 0);
    assert!(
        stdout.contains("ok.txt")
            && !stdout.contains(".env")
            && !stdout.contains("agents")
            && !stdout.contains("link"),
        "{stdout}"
    );
    let (code, stdout, _) = tool_call(&root, "search_files", r#"{"pattern": "TOKEN"}"#);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("no lines match"), "{stdout}");
    let (code, _, stderr) = tool_call(&root, "read_file", "not json");
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn seed_scenario_a_note_written_in_one_session_is_found_in_the_next() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut first = scripted_app(
            dir.path(),
            &[
                r#"<tool_call>{"name": "memory_write", "arguments": {"type": "workflow", "description": "we deploy with ./deploy.sh, which refuses a dirty tree", "tags": ["deploy", "release"]}}</tool_call>"#,
                "Noted.",
            ],
            5,
        );
        let (turn, events) = run(
            &mut first,
            "Remember: we deploy with ./deploy.sh, which refuses a dirty tree.",
        );
        let result = turn.calls[0].result.as_ref().unwrap();
        assert!(result.starts_with("memory saved: workflow_"), "{result}");
        assert!(events.iter().any(
            |e| matches!(e, TurnEvent::ToolResult { text, .. } if text.contains("memory saved"))
        ));
    }
    // A new session: its own app, engine and store handle; only the disk is shared.
    let mut second = scripted_app(
        dir.path(),
        &[
            r#"<tool_call>{"name": "memory_search", "arguments": {"query": "how do I cut a release?"}}</tool_call>"#,
            "Run ./deploy.sh on a clean tree.",
        ],
        5,
    );
    let (turn, _) = run(&mut second, "how do I cut a release?");
    let found = turn.calls[0].result.as_ref().unwrap();
    assert!(
        found.contains("./deploy.sh, which refuses a dirty tree"),
        "{found}"
    );
    // The session start injected it as relevant experience too.
    let context = second.conversation().context().unwrap_or_default();
    assert!(context.contains("deploy.sh"), "{context}");
}

/// `harvey tool call NAME ARGS --json` in `dir`, its JSON answer.
fn tool_cli(dir: &std::path::Path, name: &str, args: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(dir)
        .args(["tool", "call", name, args, "--json"])
        .output()
        .unwrap();
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
}

#[test]
fn memory_tools_across_processes_and_their_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let call = |name: &str, args: &str| tool_cli(dir.path(), name, args);
    let saved = call(
        "memory_write",
        r#"{"type": "workflow", "description": "we deploy with ./deploy.sh, which refuses a dirty tree"}"#,
    );
    assert_eq!(saved["ok"], true, "{saved}");
    let id = saved["result"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string();
    let found = call(
        "memory_search",
        r#"{"query": "how do I cut a release? deploy"}"#,
    );
    assert!(
        found["result"].as_str().unwrap().starts_with(&id),
        "{found}"
    );
    let read = call("memory_read", &format!(r#"{{"id": "{id}"}}"#));
    assert!(
        read["result"]
            .as_str()
            .unwrap()
            .contains("confidence: 0.40"),
        "{read}"
    );
    // The index lists it, as MEMORY.md does.
    let listed = call("memory_list", "{}");
    let listed = listed["result"].as_str().unwrap();
    assert!(listed.contains("active memor"), "{listed}");
    assert!(
        listed.contains(&format!("- `{id}` (workflow, 0.40) we deploy")),
        "{listed}"
    );
    // Rewriting and archiving need a person's yes: `harvey tool call` cannot ask.
    for (name, args) in [
        (
            "memory_update",
            format!(r#"{{"id": "{id}", "description": "tag first, then deploy"}}"#),
        ),
        ("memory_forget", format!(r#"{{"id": "{id}"}}"#)),
    ] {
        let refused = call(name, &args);
        assert_eq!(refused["ok"], false, "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("needs the user's yes"),
            "{refused}"
        );
    }
    for (name, args, want) in [
        (
            "memory_read",
            r#"{"id": "../../etc/passwd"}"#,
            "not a memory id",
        ),
        (
            "memory_read",
            r#"{"id": "workflow_000000"}"#,
            "no memory with id",
        ),
        (
            "memory_write",
            r#"{"type": "workflow", "description": "token", "body": "password = hunter2hunter2"}"#,
            "secret",
        ),
        (
            "memory_write",
            r#"{"type": "diary", "description": "x"}"#,
            "bad arguments",
        ),
    ] {
        let v = call(name, args);
        assert_eq!(v["ok"], false, "{name} {args}: {v}");
        assert!(
            v["error"].as_str().unwrap().contains(want),
            "{name} {args}: {v}"
        );
    }
    let forgot = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(dir.path())
        .args(["memory", "forget", &id])
        .output()
        .unwrap();
    assert!(forgot.status.success(), "{forgot:?}");
    let gone = call("memory_search", r#"{"query": "deploy"}"#);
    assert!(
        gone["result"]
            .as_str()
            .unwrap()
            .starts_with("no memory matches"),
        "{gone}"
    );
    // The tools wrote only under agents/memories.
    let mut top: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, vec!["agents"]);
    let agents: Vec<String> = std::fs::read_dir(dir.path().join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(agents, vec!["memories"]);
}

#[test]
fn confirm_memory_writes_asks_first() {
    let write = r#"<tool_call>{"name": "memory_write", "arguments": {"type": "workflow", "description": "Deploy on Fridays"}}</tool_call>"#;
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.tools.confirm_memory_writes = true;
    let make = |answer: Option<bool>| {
        let mut app = App::with_engine(
            dir.path().to_path_buf(),
            config.clone(),
            Box::new(ScriptedEngine::new(8192, [write, "ok"])),
        );
        if let Some(a) = answer {
            app.install_write_confirmation(Box::new(move |what: &str| {
                assert!(what.starts_with("memory_write("), "{what}");
                a
            }));
        }
        app
    };
    let (turn, _) = run(&mut make(None), "remember that we deploy on Fridays");
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("cannot ask"), "{err}");
    let (turn, _) = run(&mut make(Some(false)), "remember that we deploy on Fridays");
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("declined"), "{err}");
    let mut app = make(Some(true));
    assert!(app.memory().unwrap().list(None, None).unwrap().is_empty());
    let (turn, _) = run(&mut app, "remember that we deploy on Fridays");
    assert!(turn.calls[0]
        .result
        .as_ref()
        .unwrap()
        .starts_with("memory saved"));
    assert_eq!(app.memory().unwrap().list(None, None).unwrap().len(), 1);
    // Reads never ask.
    let search =
        r#"<tool_call>{"name": "memory_search", "arguments": {"query": "deploy"}}</tool_call>"#;
    let mut app = App::with_engine(
        dir.path().to_path_buf(),
        config.clone(),
        Box::new(ScriptedEngine::new(8192, [search, "ok"])),
    );
    let (turn, _) = run(&mut app, "when do we deploy?");
    assert!(turn.calls[0]
        .result
        .as_ref()
        .unwrap()
        .contains("Deploy on Fridays"));
}

/// A model may not archive or rewrite a note on its own: `memory_forget` and
/// `memory_update` need the user's yes, so a session that cannot ask refuses them and
/// the note stays (small models were seen archiving a project fact while answering a
/// question about the package version).
#[test]
fn a_model_cannot_forget_or_rewrite_a_note_unasked() {
    let dir = workspace();
    let tool = |name: &str, args: &str| tool_cli(dir.path(), name, args);
    let saved = tool(
        "memory_write",
        r#"{"type": "project_fact", "description": "the package version lives in Cargo.toml"}"#,
    );
    let id = saved["result"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string();
    let forget = format!(
        r#"<tool_call>{{"name": "memory_forget", "arguments": {{"id": "{id}"}}}}</tool_call>"#
    );
    let update = format!(
        r#"<tool_call>{{"name": "memory_update", "arguments": {{"id": "{id}", "description": "gone"}}}}</tool_call>"#
    );
    let mut app = scripted_app(dir.path(), &[&forget, &update, "Done."], 5);
    let (turn, _) = run(&mut app, "What version is this package?");
    assert_eq!(turn.calls.len(), 2);
    for call in &turn.calls {
        let err = call.result.clone().unwrap_err().to_string();
        assert!(err.contains("needs the user's yes"), "{err}");
    }
    let read = tool("memory_read", &format!(r#"{{"id": "{id}"}}"#));
    assert_eq!(read["ok"], true, "{read}");
    let text = read["result"].as_str().unwrap();
    assert!(
        text.contains("Cargo.toml") && !text.contains("gone"),
        "{text}"
    );
}
