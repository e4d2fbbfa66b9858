//! `harvey` as a process: `run --json`, exit codes and error messages.

use std::process::{Command, Output, Stdio};

use crate::support::model_path;

pub(super) fn harvey(args: &[&str], stdin: &str) -> Output {
    let work = tempfile::tempdir().unwrap();
    harvey_in(work.path(), args, stdin)
}

pub(super) fn harvey_in(workdir: &std::path::Path, args: &[&str], stdin: &str) -> Output {
    let mut cmd = crate::support::process::harvey(workdir);
    cmd.args(args);
    crate::support::process::with_stdin(cmd, stdin)
}

pub(super) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn run_json_prints_the_reply_and_counters() {
    let model = model_path();
    let out = harvey(
        &[
            "-m",
            model.to_str().unwrap(),
            "run",
            "--json",
            "--max-tokens",
            "16",
            "What is 2+2?",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!v["reply"].as_str().unwrap().trim().is_empty());
    for key in ["prompt_tokens", "evaluated_tokens", "completion_tokens"] {
        assert!(v[key].as_u64().unwrap() > 0, "{key}: {v}");
    }
    for key in ["prefill_tps", "decode_tps", "ttft_ms"] {
        assert!(v[key].as_f64().unwrap() > 0.0, "{key}: {v}");
    }
    // The system prompt was prefilled (and saved) before the turn: the turn itself
    // evaluates only what follows it.
    assert!(
        v["evaluated_tokens"].as_u64() < v["prompt_tokens"].as_u64(),
        "{v}"
    );
    assert!(
        stderr(&out).is_empty(),
        "llama.cpp logs stay silent: {}",
        stderr(&out)
    );
}

#[test]
fn second_run_restores_the_saved_prefix() {
    let model = model_path();
    let work = tempfile::tempdir().unwrap();
    // The first run's session summary would otherwise appear in the second run's memory
    // context (after the cached part) and change its prompt.
    std::fs::create_dir_all(work.path().join("agents")).unwrap();
    std::fs::write(
        work.path().join("agents/harvey.yaml"),
        "memory:\n  recent_sessions: 0\n",
    )
    .unwrap();
    let args = [
        "-m",
        model.to_str().unwrap(),
        "run",
        "--json",
        "--max-tokens",
        "4",
        "Hi",
    ];
    let first = harvey_in(work.path(), &args, "");
    assert!(first.status.success(), "{}", stderr(&first));
    let cache: Vec<_> = std::fs::read_dir(work.path().join("agents/cache"))
        .unwrap()
        .collect();
    assert_eq!(cache.len(), 2, "one state file and its key");
    let second = harvey_in(work.path(), &args, "");
    let a: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(a["prefix_from_cache"], false, "{a}");
    assert_eq!(b["prefix_from_cache"], true, "{b}");
    assert_eq!(a["prompt_tokens"], b["prompt_tokens"]);
    assert_eq!(
        a["evaluated_tokens"], b["evaluated_tokens"],
        "same suffix evaluated after a restore"
    );
}

#[test]
fn an_unwritable_cache_is_said_and_the_run_goes_on() {
    let model = model_path();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("agents")).unwrap();
    // A file where the cache directory should be: nothing can be saved under it.
    std::fs::write(work.path().join("agents/cache"), "not a directory").unwrap();
    let m = model.to_str().unwrap();
    let run = harvey_in(
        work.path(),
        &["-m", m, "run", "--max-tokens", "4", "Hi"],
        "",
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let said = stderr(&run);
    assert!(
        said.contains("warning: the prompt prefix (") && said.contains("was not saved in"),
        "{said}"
    );
    let repl = harvey_in(work.path(), &["-m", m], "/exit\n");
    let shown = String::from_utf8_lossy(&repl.stdout);
    assert!(shown.contains("note: the prompt prefix ("), "{shown}");
    // Said once, not per notice source.
    assert_eq!(shown.matches("was not saved in").count(), 1, "{shown}");
}

#[test]
fn run_reads_the_prompt_from_stdin() {
    let model = model_path();
    let out = harvey(
        &["-m", model.to_str().unwrap(), "run", "--max-tokens", "8"],
        "Say hello.",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).trim().is_empty());
}

#[test]
fn usage_errors_exit_2() {
    let out = harvey(&["--no-such-flag"], "");
    assert_eq!(out.status.code(), Some(2));
    let out = harvey(&["run"], "   \n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("empty prompt"), "{}", stderr(&out));
}

#[test]
fn help_and_version() {
    let out = harvey(&["--help"], "");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in ["--workdir", "--model", "run", "agents/harvey.yaml"] {
        assert!(help.contains(needle), "--help lacks {needle}: {help}");
    }
    let out = harvey(&["--version"], "");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("harvey {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bad_model_files_are_clear_runtime_errors() {
    let dir = tempfile::tempdir().unwrap();
    let not_gguf = dir.path().join("notes.gguf");
    std::fs::write(&not_gguf, "just text").unwrap();
    let truncated = dir.path().join("truncated.gguf");
    let bytes = std::fs::read(model_path()).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let missing = dir.path().join("missing.gguf");

    let cases = [
        (not_gguf, "not a GGUF file"),
        (truncated, "truncated or corrupt"),
        (missing, "does not exist"),
    ];
    for (path, needle) in cases {
        let out = harvey(&["-m", path.to_str().unwrap(), "run", "hi"], "");
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(needle) && err.contains(path.to_str().unwrap()),
            "{err}"
        );
    }
}

#[test]
fn bad_config_names_file_line_and_column() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("agents")).unwrap();
    std::fs::write(
        work.path().join("agents/harvey.yaml"),
        "engine:\n  n_ctx: lots\n",
    )
    .unwrap();
    let out = harvey_in(work.path(), &["run", "hi"], "");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("agents/harvey.yaml:2:10:") && err.contains("lots"),
        "{err}"
    );
}

#[test]
fn memory_commands_for_scripts() {
    let work = tempfile::tempdir().unwrap();
    let model = model_path();
    let m = model.to_str().unwrap();
    let run = |args: &[&str], stdin: &str| harvey_in(work.path(), args, stdin);
    let add = run(
        &[
            "memory",
            "add",
            "--type",
            "project_fact",
            "--description",
            "The staging host is kestrel",
            "--tags",
            "staging,hosts",
        ],
        "",
    );
    assert!(add.status.success(), "{}", stderr(&add));
    let again = run(
        &[
            "memory",
            "add",
            "--type",
            "project_fact",
            "--description",
            "the staging HOST is kestrel.",
            "--json",
        ],
        "",
    );
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["updated"], true, "{v}");
    let jsonl = work.path().join("m.jsonl");
    std::fs::write(
        &jsonl,
        "{\"type\":\"tool_use\",\"description\":\"Use rg to search\",\"tags\":[\"search\"]}\n{broken\n{\"type\":\"workflow\",\"description\":\"Deploy with scp then restart the unit\"}\n",
    )
    .unwrap();
    let import = run(&["memory", "import", jsonl.to_str().unwrap()], "");
    assert_eq!(
        import.status.code(),
        Some(1),
        "one bad line fails the import"
    );
    assert!(
        stderr(&import).contains("m.jsonl:2: error"),
        "{}",
        stderr(&import)
    );
    assert!(
        stderr(&import).contains("2 saved, 1 failed"),
        "{}",
        stderr(&import)
    );
    let list = run(&["memory", "list", "--json"], "");
    let items: Vec<serde_json::Value> = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(items.len(), 3);

    let batch = run(
        &["-m", m, "memory", "recall", "--batch"],
        "\"how do I search?\"\nnot json\n{\"query\": \"deploy: restart?\", \"k\": 2, \"budget\": 40}\n",
    );
    assert!(batch.status.success(), "{}", stderr(&batch));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&batch.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    // The session-start ranking: factual items first (query-independent), then the
    // relevant experience, best first.
    let results = lines[0]["results"].as_array().unwrap();
    let first_relevant = results
        .iter()
        .find(|r| r["section"] == "experience")
        .unwrap_or_else(|| panic!("{}", lines[0]));
    assert_eq!(
        first_relevant["id"].as_str().unwrap().split('_').next(),
        Some("tool"),
        "{}",
        lines[0]
    );
    assert_eq!(results[0]["section"], "facts", "{}", lines[0]);
    assert_eq!(lines[1]["line"], 2);
    assert!(lines[1]["error"].as_str().unwrap().contains("not JSON"));
    let packed = &lines[2];
    let vocab = harvey::engine::Vocabulary::load(&model).unwrap();
    use harvey::tokens::TokenCounter;
    let block = packed["block"].as_str().unwrap();
    assert!(block.contains("Deploy with scp"), "{packed}");
    assert_eq!(
        vocab.count_tokens(block) as u64,
        packed["tokens"].as_u64().unwrap()
    );
    assert!(packed["tokens"].as_u64().unwrap() <= 40);

    let out = run(
        &[
            "-m",
            m,
            "run",
            "--json",
            "--max-tokens",
            "4",
            "What is the staging host called?",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["memory"]["text"].as_str().unwrap().contains("kestrel"),
        "{v}"
    );
    assert!(v["memory"]["tokens"].as_u64().unwrap() <= v["memory"]["budget"].as_u64().unwrap());
}

#[test]
fn ctrl_c_during_run_stops_the_reply_closes_the_session_and_exits_130() {
    use std::io::Read;
    let model = model_path();
    let ws = tempfile::tempdir().unwrap();
    let prompt =
        "Write a very long story, at least two thousand words, about a lighthouse keeper, \
                  chapter by chapter, with many details.";
    let mut child = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(ws.path())
        .args(["-m", model.to_str().unwrap(), "run", "--max-tokens", "4000"])
        .arg(prompt)
        .env_remove("HARVEY_MODEL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // The reply has begun streaming: now Ctrl-C.
    let mut first = [0u8; 1];
    assert_eq!(stdout.read(&mut first).unwrap(), 1, "no reply streamed");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    assert!(rest.ends_with(b"\n"), "the reply line is ended");
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let records: Vec<_> = std::fs::read_dir(ws.path().join("agents/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "spmd"))
        .collect();
    assert_eq!(records.len(), 1, "{records:?}\n{err}");
    let name = records[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        err.contains("[session saved to ") && err.contains(&name),
        "{err}"
    );
    let record = harvey::session::fountain::parse(&std::fs::read_to_string(&records[0]).unwrap());
    assert!(record.ended, "THE END. written");
    assert_eq!(record.exchanges.len(), 1);
    assert_eq!(record.exchanges[0].user, prompt);
    // The summary is left to the next session (memory.summary_at: later).
    let pending = harvey::session::pending::PENDING_NOTE;
    assert!(
        record.closing_notes.iter().any(|n| n == pending)
            && record.closing_notes.iter().any(|n| n == "Ended by Ctrl-C"),
        "{:?}",
        record.closing_notes
    );
    assert!(
        record.exchanges[0]
            .notes
            .iter()
            .any(|n| n.starts_with("reply cut (aborted)")),
        "{:?}",
        record.exchanges[0].notes
    );
}

/// `harvey tool call … | head`, `harvey evidence show … | head`: a reader that stops early
/// ends the output quietly (exit 0, no panic on the broken pipe).
#[test]
fn a_reader_that_stops_early_is_no_panic() {
    let ws = tempfile::tempdir().unwrap();
    let text: String = (0..6000).map(|i| format!("needle line {i}\n")).collect();
    std::fs::write(ws.path().join("many.txt"), text).unwrap();
    let commands: [&[&str]; 2] = [
        &["tool", "call", "read_file", r#"{"path":"many.txt"}"#],
        &["evidence", "show", "which needle line?"],
    ];
    for args in commands {
        let mut child = crate::support::process::harvey(ws.path())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // No reader at all: the child's first write meets a closed pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
