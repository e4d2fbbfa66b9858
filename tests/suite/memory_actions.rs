//! Memory by conversation, turn by turn with a scripted engine (the model's choice is
//! not the point here): a request about the memory is sent with the memories that rank
//! for it, under their ids, and its first step is one of the memory's own; a change or a
//! forget never happens without a yes, and unattended only where the user's words ask
//! for it; an archived memory is never recalled.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use harvey::app::App;
use harvey::chat::agent::TurnEvent;
use harvey::config::Config;
use harvey::engine::scripted::ScriptedEngine;
use harvey::memory::{Draft, MemoryStore};

const AUTH: &str = "We decided to use PostgreSQL for the auth service";
const TYPESCRIPT: &str = "I prefer TypeScript over JavaScript and always use strict mode";

/// A workspace with two memories (a decision and a preference) and a source file; the
/// ids of the two.
fn workspace() -> (tempfile::TempDir, String, String) {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("README.md"), "# auth\n\nThe auth service.\n").unwrap();
    let agents = ws.path().join("agents");
    let (mut store, _) = MemoryStore::open(&agents, ws.path()).unwrap();
    let mut write = |mtype: &str, description: &str| {
        store
            .write(&Draft {
                mtype: mtype.into(),
                description: description.into(),
                ..Draft::default()
            })
            .unwrap()
            .id()
            .to_string()
    };
    let auth = write("project_fact", AUTH);
    let pref = write("user_preference", TYPESCRIPT);
    (ws, auth, pref)
}

/// An app in `ws` with the router on (a scripted engine's template has no tools section,
/// where `auto` would leave it off).
fn app(ws: &Path, replies: &[String]) -> App {
    let mut config = Config::default();
    config.tools.route = harvey::config::RouteMode::On;
    App::with_engine(
        ws.to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(8192, replies.iter().cloned())),
    )
}

/// The router's choice, the arguments of the call it opened, and the answer.
fn chosen(tool: &str, args: &str, answer: &str) -> Vec<String> {
    vec![
        tool.to_string(),
        format!(" {args}}}</tool_call>"),
        "Done".into(),
        format!(" {answer}"),
    ]
}

fn store(ws: &Path) -> MemoryStore {
    MemoryStore::attach(&ws.join("agents"), ws).unwrap()
}

fn is_active(ws: &Path, id: &str) -> bool {
    store(ws)
        .index()
        .list(false)
        .unwrap()
        .iter()
        .any(|r| r.id == id)
}

/// The user message the turn sent (with its block).
fn sent(app: &App) -> String {
    app.conversation()
        .turns()
        .iter()
        .find(|m| m.role == harvey::engine::Role::User)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

#[test]
fn a_forget_asked_in_plain_words_archives_the_ranked_memory_without_a_person_to_ask() {
    let (ws, auth, pref) = workspace();
    let request = "The auth service decision is outdated. Delete that memory.";
    let replies = chosen("memory_forget", &format!(r#"{{"id": "{auth}"}}"#), "gone.");
    let mut app = app(ws.path(), &replies);
    let turn = app.agent_turn(request, &mut |_| {}).unwrap();
    assert_eq!(
        turn.route,
        Some(harvey::chat::route::Route::Tool("memory_forget".into()))
    );
    let message = sent(&app);
    assert!(
        message.contains(&format!("--- memory {auth}")),
        "the ranked memory goes with the request, under its id: {message}"
    );
    let result = turn.calls[0].result.as_ref().unwrap();
    assert!(result.contains("archived"), "{result}");
    assert!(!is_active(ws.path(), &auth), "archived");
    assert!(is_active(ws.path(), &pref), "the other memory stays");
}

#[test]
fn an_update_waits_for_the_yes_and_shows_what_changes() {
    let (ws, _, pref) = workspace();
    let request = "Update my preferences: I also prefer dark theme in all editors.";
    let args = format!(
        r#"{{"id": "{pref}", "description": "I prefer TypeScript, strict mode and a dark theme in all editors"}}"#
    );
    for (answer, changed) in [("n", false), ("y", true)] {
        let mut app = app(ws.path(), &chosen("memory_update", &args, "ok."));
        let asked = Rc::new(RefCell::new(Vec::<String>::new()));
        let log = asked.clone();
        app.install_asker(Rc::new(move |q: &str| {
            log.borrow_mut().push(q.to_string());
            Some(answer.to_string())
        }));
        let mut shown = Vec::new();
        let turn = app
            .agent_turn(request, &mut |e| {
                if let TurnEvent::Diff(d) = e {
                    shown.push(d)
                }
            })
            .unwrap();
        assert_eq!(turn.calls.len(), 1);
        assert_eq!(
            asked.borrow().len(),
            1,
            "one question: {:?}",
            asked.borrow()
        );
        assert!(asked.borrow()[0].contains(&pref), "{:?}", asked.borrow());
        assert!(
            shown.iter().any(|d| d.contains("dark theme")),
            "the new text is shown before the yes: {shown:?}"
        );
        let now = store(ws.path()).get(&pref).unwrap();
        assert_eq!(
            now.description.contains("dark theme"),
            changed,
            "{answer}: {now:?}"
        );
    }
}

#[test]
fn a_change_nobody_asked_for_is_refused_where_nobody_can_answer() {
    let (ws, auth, _) = workspace();
    // The request lists the memory; a model that forgets instead is refused.
    let replies = chosen("memory_forget", &format!(r#"{{"id": "{auth}"}}"#), "ok.");
    let mut app = app(ws.path(), &replies);
    let turn = app
        .agent_turn(
            "What is in your memory about the auth service?",
            &mut |_| {},
        )
        .unwrap();
    if let Some(call) = turn.calls.first() {
        let err = call.result.clone().unwrap_err().to_string();
        assert!(err.contains("yes"), "{err}");
    }
    assert!(is_active(ws.path(), &auth));
}

#[test]
fn the_memory_steps_alone_are_offered_for_a_request_about_the_memory_and_a_listing_is_shown_whole()
{
    let (ws, _, _) = workspace();
    let replies = vec![
        "memory_list".to_string(),
        " {}}</tool_call>".into(),
        "Two".into(),
        " memories.".into(),
    ];
    let mut app = app(ws.path(), &replies);
    let turn = app
        .agent_turn(
            "List all memory files and show me the current index.",
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(
        turn.route,
        Some(harvey::chat::route::Route::Tool("memory_list".into()))
    );
    let result = turn.calls[0].result.as_ref().unwrap();
    assert!(
        result.contains("PostgreSQL") && result.contains("TypeScript"),
        "{result}"
    );
    // The listing is the answer as it came: nothing is generated after it.
    assert_eq!(&turn.completion.text, result);
}

#[test]
fn an_archived_memory_is_never_in_a_block_again() {
    let (ws, auth, _) = workspace();
    store(ws.path()).forget(&auth).unwrap();
    let mut app = app(
        ws.path(),
        &["answer".to_string(), "It".into(), " is not said.".into()],
    );
    app.agent_turn("Which database does the auth service use?", &mut |_| {})
        .unwrap();
    let message = sent(&app);
    assert!(message.contains("[evidence"), "a block is sent: {message}");
    assert!(
        !message.contains(&auth) && !message.contains("PostgreSQL"),
        "{message}"
    );
}

/// With the real Qwen2.5-Coder-0.5B through the binary, unattended: a request to forget a
/// memory takes a memory step first (never a file tool), touches no file of the workspace,
/// writes no new memory, and archives at most the one asked about. Only what holds for
/// any output is asserted.
#[test]
fn qwen_a_forget_request_takes_a_memory_step_and_touches_nothing_else() {
    use crate::support::process::{harvey, text};
    let (ws, auth, pref) = workspace();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: none\n",
    )
    .unwrap();
    let readme = std::fs::read_to_string(ws.path().join("README.md")).unwrap();
    let out = harvey(ws.path())
        .args(["-m"])
        .arg(crate::support::qwen_path())
        .args([
            "run",
            "--json",
            "--max-tokens",
            "48",
            "The auth service decision is outdated. Delete that memory.",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps = v["steps"].as_array().unwrap();
    for step in steps.iter().filter(|s| s["kind"] == "router") {
        let what = step["what"].as_str().unwrap();
        assert!(
            what.is_empty()
                || what == "answer"
                || harvey::chat::route::memory::MEMORY_STEPS.contains(&what),
            "a memory request's first step: {steps:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("README.md")).unwrap(),
        readme
    );
    let top: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        top.iter().all(|n| n == "README.md" || n == "agents"),
        "{top:?}"
    );
    let active: Vec<String> = store(ws.path())
        .index()
        .list(false)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert!(
        active.contains(&pref),
        "the preference was not asked about: {active:?}"
    );
    assert!(
        active.iter().all(|id| *id == auth || *id == pref),
        "no new memory: {active:?}"
    );
    let reply = v["reply"].as_str().unwrap();
    assert!(!reply.contains("<|im_"), "{reply}");
}

#[test]
fn a_request_to_read_a_memory_in_full_opens_it_by_the_id_its_block_gave() {
    let (ws, _, pref) = workspace();
    let replies = chosen(
        "memory_read",
        &format!(r#"{{"id": "{pref}"}}"#),
        "You prefer TypeScript.",
    );
    let mut app = app(ws.path(), &replies);
    let turn = app
        .agent_turn(
            "What do you know about my preferences? Read the details.",
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(
        turn.route,
        Some(harvey::chat::route::Route::Tool("memory_read".into()))
    );
    assert!(sent(&app).contains(&format!("--- memory {pref}")));
    let result = turn.calls[0].result.as_ref().unwrap();
    assert!(result.contains("TypeScript"), "{result}");
}
