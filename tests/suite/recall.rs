//! One recall path (issue 13): the same ranking from the REPL and the CLI, a budget that
//! packs what fits rather than top_k, a paraphrase no word of which matches found first,
//! resumed sessions and hand-edited session summaries reaching the memory context.

use std::path::Path;
use std::process::Output;

use harvey::app::App;
use harvey::engine::scripted::ScriptedEngine;
use harvey::repl::handle_line;

/// A workspace whose config points at the repository's embedder and the default model.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let embedder = models.join("all-MiniLM-L6-v2.gguf");
    assert!(embedder.is_file(), "run scripts/fetch-embedder.sh");
    std::fs::create_dir_all(dir.path().join("agents")).unwrap();
    std::fs::write(
        dir.path().join("agents/harvey.yaml"),
        format!(
            "model:\n  path: {}\nmemory:\n  embedder: {}\n  recent_sessions: 0\n",
            models.join("SmolLM2-135M-Instruct.Q4_1.gguf").display(),
            embedder.display()
        ),
    )
    .unwrap();
    dir
}

fn harvey(ws: &Path, args: &[&str], stdin: &str) -> Output {
    let mut cmd = crate::support::process::harvey(ws);
    cmd.args(args);
    let out = crate::support::process::with_stdin(cmd, stdin);
    assert!(
        out.status.success(),
        "harvey {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Imports memories (JSONL drafts) through the CLI.
fn import(ws: &Path, drafts: &[serde_json::Value]) {
    let lines: Vec<String> = drafts.iter().map(|d| d.to_string()).collect();
    harvey(ws, &["memory", "import", "-"], &lines.join("\n"));
}

fn workflow(description: &str) -> serde_json::Value {
    serde_json::json!({"type": "workflow", "description": description})
}

fn cli_ids(ws: &Path, args: &[&str]) -> (Vec<String>, serde_json::Value) {
    let mut all = vec!["memory", "recall", "--json"];
    all.extend_from_slice(args);
    let out = harvey(ws, &all, "");
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids = value["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    (ids, value)
}

const SIX: [&str; 6] = [
    "The release script refuses to run when the repository has uncommitted changes",
    "Use cargo clippy with warnings denied before committing",
    "The greenhouse sensors report every five minutes over MQTT",
    "Backups of the database run nightly at two in the morning",
    "Prefer short answers with a code example",
    "The web server listens on port 8080 behind nginx",
];

#[test]
fn a_paraphrase_without_a_shared_word_is_found_first() {
    let ws = workspace();
    import(ws.path(), &SIX.map(workflow));
    let (ids, value) = cli_ids(
        ws.path(),
        &["how do I publish a new version of the project"],
    );
    assert!(!ids.is_empty(), "nothing recalled: {value}");
    let first = value["results"][0]["text"].as_str().unwrap();
    assert!(first.contains("release script"), "{value:#}");
}

#[test]
fn a_budget_packs_every_relevant_item_that_fits_not_top_k() {
    let ws = workspace();
    let drafts: Vec<serde_json::Value> = (0..30)
        .map(|i| {
            workflow(&format!(
                "Pump maintenance note {i}: check valve {i} before watering"
            ))
        })
        .collect();
    import(ws.path(), &drafts);
    let (small, _) = cli_ids(ws.path(), &["pump valve maintenance", "--budget", "128"]);
    let (large, value) = cli_ids(ws.path(), &["pump valve maintenance", "--budget", "1024"]);
    let (list, _) = cli_ids(ws.path(), &["pump valve maintenance"]);
    assert_eq!(list.len(), 5, "an unbudgeted list has memory.top_k items");
    assert!(
        large.len() > 5,
        "a budget is not capped at top_k: {value:#}"
    );
    assert!(
        large.len() > small.len(),
        "{} vs {}",
        large.len(),
        small.len()
    );
    assert!(value["tokens"].as_u64().unwrap() <= 1024);
    assert_eq!(large.len(), 30, "all 30 fit in 1024 tokens: {value:#}");
}

#[test]
fn the_repl_and_the_cli_return_the_same_ranking() {
    let ws = workspace();
    let mut all: Vec<serde_json::Value> = SIX.map(workflow).to_vec();
    all.extend(
        [
            "Commit messages use the imperative mood",
            "Run the release from a clean checkout of main",
            "Publishing to crates.io needs a token in the environment",
        ]
        .map(workflow),
    );
    import(ws.path(), &all);
    let query = "how do I publish a release of the project";
    let (cli, _) = cli_ids(ws.path(), &[query]);
    let config = harvey::config::load(ws.path()).unwrap();
    let mut app = App::with_engine(
        ws.path().to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(4096, Vec::<String>::new())),
    );
    let mut out = Vec::new();
    handle_line(&mut app, &format!("/memory recall {query}"), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let repl: Vec<String> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|l| l.split_whitespace().nth(4).map(str::to_string))
        .collect();
    assert!(cli.len() >= 3, "{out}");
    assert_eq!(repl, cli, "REPL:\n{out}");
    // The session start ranks the same way: its experience lines come in that order.
    let store = app.memory().unwrap();
    let start = app.recall(store, query, Some(4096)).unwrap();
    let order: Vec<&str> = start
        .items
        .iter()
        .map(|p| p.candidate.id.as_str())
        .collect();
    assert!(order.len() >= cli.len(), "{order:?} vs {cli:?}");
    assert_eq!(
        &order[..cli.len()],
        &cli.iter().map(String::as_str).collect::<Vec<_>>()[..]
    );
}

fn scripted_app(ws: &Path, replies: &[&str]) -> App {
    let mut config = harvey::config::load(ws).unwrap();
    config.tools.enabled = false;
    config.memory.recent_sessions = 3;
    App::with_engine(
        ws.to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(4096, replies.iter().copied())),
    )
}

#[test]
fn a_resumed_session_gets_the_memory_context() {
    let ws = workspace();
    import(
        ws.path(),
        &[workflow(
            "The greenhouse pump needs priming after a power cut",
        )],
    );
    let mut first = scripted_app(
        ws.path(),
        &["Prime it.", "We talked about the pump.", "[\"pump\"]"],
    );
    first
        .turn("the pump after a power cut?", &mut |_| {})
        .unwrap();
    let report = first.close_session(&mut |_| {}).unwrap();
    drop(first);
    let mut second = scripted_app(ws.path(), &["Again: prime it."]);
    let restored = second.continue_session(&report.record).unwrap();
    assert_eq!(restored, 1);
    second
        .turn("and the pump after a power cut now?", &mut |_| {})
        .unwrap();
    let context = second
        .conversation()
        .context()
        .unwrap_or_default()
        .to_string();
    assert!(context.starts_with("[memory context]"), "{context}");
    assert!(context.contains("needs priming"), "{context}");
    // It is in the prompt the model got, right after the system prompt.
    let messages = second.conversation().messages();
    assert_eq!(messages[1].content, context);
}

#[test]
fn a_hand_edited_session_summary_is_recalled_in_the_next_session() {
    let ws = workspace();
    let mut first = scripted_app(
        ws.path(),
        &["Sure.", "We discussed watering.", "[\"water\"]"],
    );
    first.turn("when should I water?", &mut |_| {}).unwrap();
    let report = first.close_session(&mut |_| {}).unwrap();
    drop(first);
    let text = std::fs::read_to_string(&report.record).unwrap();
    assert!(text.contains("[[Summary: "), "{text}");
    let edited: String = text
        .lines()
        .map(|l| {
            if l.starts_with("[[Summary: ") {
                "[[Summary: The irrigation valve was replaced with a brass one.]]".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(&report.record, edited).unwrap();
    let mut second = scripted_app(ws.path(), &["Noted."]);
    let context = crate::support::context_after_turn(&mut second, "hello again");
    assert!(context.contains("[recent sessions]"), "{context}");
    assert!(context.contains("brass one"), "{context}");
    assert!(!context.contains("We discussed watering"), "{context}");
}

/// Makes a RAG store `name` from the files under `dir` and puts it in use.
fn rag_store(ws: &Path, name: &str, dir: &str) {
    harvey(ws, &["rag", "new", name], "");
    harvey(ws, &["rag", "ingest", dir, "--store", name], "");
    harvey(ws, &["rag", "use", name], "");
}

/// Ids of `memory_search`'s lines (`id (source) score …: text`).
fn tool_ids(result: &str) -> Vec<String> {
    result
        .lines()
        .filter(|l| l.contains(") score "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn memory_search_the_repl_and_the_session_start_rank_one_query_identically() {
    let ws = workspace();
    let mut all: Vec<serde_json::Value> = SIX.map(workflow).to_vec();
    all.push(workflow("Run the release from a clean checkout of main"));
    import(ws.path(), &all);
    std::fs::create_dir(ws.path().join("docs")).unwrap();
    std::fs::write(
        ws.path().join("docs/publishing.md"),
        "# Publishing\n\nTo publish a release of the project, tag the commit, then upload the \
         archive to the download page.\n",
    )
    .unwrap();
    rag_store(ws.path(), "handbook", "docs");
    let query = "how do I publish a release of the project";
    let call = format!(
        r#"<tool_call>{{"name": "memory_search", "arguments": {{"query": "{query}"}}}}</tool_call>"#
    );
    let config = harvey::config::load(ws.path()).unwrap();
    let mut app = App::with_engine(
        ws.path().to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(
            4096,
            [call.as_str(), "Tag, then upload."],
        )),
    );
    // The model's search: the session start injects for this first message, then the
    // model calls memory_search with the same words.
    let turn = app.agent_turn(query, &mut |_| {}).unwrap();
    let result = turn.calls[0].result.as_ref().unwrap().clone();
    let tool = tool_ids(&result);
    let start: Vec<String> = app
        .injection()
        .unwrap()
        .items
        .iter()
        .map(|p| p.candidate.id.clone())
        .collect();
    let mut out = Vec::new();
    handle_line(&mut app, &format!("/memory recall {query}"), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let repl: Vec<String> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|l| l.split_whitespace().nth(4).map(str::to_string))
        .collect();
    assert!(repl.len() >= 3, "{out}");
    // The tool sees every source the session start sees (the old tool saw memories only).
    assert!(
        tool.iter()
            .any(|id| id.starts_with("handbook:") || id.contains("publishing.md")),
        "{result}"
    );
    assert_eq!(
        &tool[..repl.len()],
        &repl[..],
        "tool:\n{result}\nREPL:\n{out}"
    );
    assert_eq!(
        &start[..repl.len()],
        &repl[..],
        "start: {start:?}\nREPL:\n{out}"
    );
    assert!(result.contains(" tokens;"), "{result}");
}

#[test]
fn an_unrelated_rag_store_neither_outranks_nor_fills_the_budget() {
    let ws = workspace();
    import(
        ws.path(),
        &[workflow(
            "Release the binary with scripts/release.sh after tagging",
        )],
    );
    std::fs::create_dir(ws.path().join("kitchen")).unwrap();
    std::fs::write(
        ws.path().join("kitchen/sourdough.md"),
        "# Sourdough loaf\n\nFeed the starter the night before. Mix 500 g flour, 350 g water \
         and 100 g active starter; rest for an hour, then add 10 g salt. Stretch and fold \
         every thirty minutes for two hours, shape, and proof overnight in the fridge. Bake \
         at 250 °C in a covered pot for 20 minutes, then uncovered for 25 more, until the \
         crust is deep brown.\n",
    )
    .unwrap();
    rag_store(ws.path(), "recipes", "kitchen");
    let (ids, value) = cli_ids(
        ws.path(),
        &["how do I release the binary?", "--budget", "1024"],
    );
    assert!(!ids.is_empty(), "{value:#}");
    assert!(
        value["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("scripts/release.sh"),
        "{value:#}"
    );
    let block = value["block"].as_str().unwrap();
    assert!(
        !block.contains("starter"),
        "a recipe chunk was packed: {value:#}"
    );
    assert!(
        value["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["source"] == "memory"),
        "{value:#}"
    );
    // The recipe is still found when it is what is asked for.
    let (_, value) = cli_ids(ws.path(), &["how long do I bake the sourdough loaf?"]);
    assert!(
        value["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["source"] == "rag:recipes"),
        "{value:#}"
    );
}
