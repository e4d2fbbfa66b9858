//! `harvey` as a process: `run --json`, exit codes and error messages.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::support::model_path;

fn harvey(args: &[&str], stdin: &str) -> Output {
    let work = tempfile::tempdir().unwrap();
    harvey_in(work.path(), args, stdin)
}

fn harvey_in(workdir: &std::path::Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .arg("--workdir")
        .arg(workdir)
        .args(args)
        .env_remove("HARVEY_MODEL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
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
