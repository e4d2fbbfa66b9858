//! A named pipe in the workspace never blocks harvey (issue 28): the read tools, the
//! search over a folder holding one, `/read`, `/attach`, `/context pin`, a PDF name,
//! `/write`'s diff, the guidance files and onboarding's manifests all refuse or skip it
//! at once. A pipe sits at the top of the workspace and deep in a folder. Every check
//! runs under a deadline, so a regression fails instead of hanging the suite. A file
//! that is one long line reads cut within the line, with the call that reads on.

use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use harvey::app::App;
use harvey::engine::scripted::ScriptedEngine;
use harvey::repl::handle_line;

use crate::support::process::kill_after;

const DEADLINE: Duration = Duration::from_secs(20);

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

/// A workspace with `notes.txt` and `deep/a/b/pipe.md` as named pipes beside
/// `deep/a/b/real.txt`, a readable file holding `findme`.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  enabled: false\ntools:\n  enabled: false\nsampling:\n  max_tokens: 16\n",
    )
    .unwrap();
    mkfifo(&ws.path().join("notes.txt"));
    mkfifo(&ws.path().join("deep/a/b/pipe.md"));
    std::fs::write(ws.path().join("deep/a/b/real.txt"), "findme here\n").unwrap();
    ws
}

/// Runs `body` on its own thread; panics when it takes longer than [`DEADLINE`].
fn within<T: Send + 'static>(what: &str, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(body());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(v) => v,
        Err(_) => panic!("{what} blocked for over {DEADLINE:?} (a named pipe?)"),
    }
}

fn tool_call(ws: &Path, name: &str, args: serde_json::Value) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harvey"));
    cmd.env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE);
    cmd.arg("--workdir")
        .arg(ws)
        .env_remove("HARVEY_MODEL")
        .args(["tool", "call", name, &args.to_string()]);
    let run = kill_after(cmd, DEADLINE);
    assert!(
        !run.killed,
        "harvey tool call {name} {args} blocked (killed after {DEADLINE:?})"
    );
    format!("{}\n{}", run.stdout.join("\n"), run.stderr)
}

#[test]
fn the_models_read_tools_never_block_on_a_pipe() {
    let ws = workspace();
    for path in ["notes.txt", "deep/a/b/pipe.md"] {
        let out = tool_call(ws.path(), "read_file", serde_json::json!({"path": path}));
        assert!(out.contains("named pipe (FIFO)"), "read_file {path}: {out}");
    }
    for args in [
        serde_json::json!({"pattern": "findme"}),
        serde_json::json!({"pattern": "findme", "path": "deep/a/b"}),
        serde_json::json!({"pattern": "findme", "path": "deep"}),
    ] {
        let out = tool_call(ws.path(), "search_files", args.clone());
        assert!(out.contains("real.txt"), "search_files {args}: {out}");
    }
    let out = tool_call(
        ws.path(),
        "edit_file",
        serde_json::json!({"path": "notes.txt", "old": "a", "new": "b"}),
    );
    assert!(
        out.contains("named pipe (FIFO)") || out.contains("allow_writes"),
        "{out}"
    );
}

fn app(ws: &Path, replies: &[&str]) -> App {
    let config = harvey::config::load(ws).unwrap();
    let engine = ScriptedEngine::new(4096, replies.iter().copied());
    App::with_engine(ws.canonicalize().unwrap(), config, Box::new(engine))
}

fn line(app: &mut App, text: &str) -> String {
    let mut out = Vec::new();
    handle_line(app, text, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn repl_commands_never_block_on_a_pipe() {
    let ws = workspace();
    mkfifo(&ws.path().join("HARVEY.md"));
    mkfifo(&ws.path().join("deep/manual.pdf"));
    let root = ws.path().to_path_buf();
    let outs = within("the REPL commands", move || {
        let mut app = app(&root, &["hello there"]);
        let mut outs = Vec::new();
        for command in [
            "/read notes.txt",
            "/read deep/a/b/pipe.md 1-3",
            "/attach notes.txt",
            "/attach deep/a/b/pipe.md",
            "/context pin notes.txt",
            "/context pin deep/a/b/pipe.md",
            "/read deep/manual.pdf 1",
        ] {
            outs.push((command.to_string(), line(&mut app, command)));
        }
        line(&mut app, "say hello");
        for command in ["/write notes.txt", "/write deep/a/b/pipe.md"] {
            outs.push((command.to_string(), line(&mut app, command)));
        }
        assert!(app.attachments().list().is_empty());
        outs
    });
    for (command, out) in outs {
        assert!(out.contains("named pipe (FIFO)"), "{command}: {out}");
    }
    for pipe in ["notes.txt", "deep/a/b/pipe.md"] {
        let meta = std::fs::symlink_metadata(ws.path().join(pipe)).unwrap();
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()),
            "{pipe} was replaced"
        );
    }
}

#[test]
fn onboarding_skips_manifests_that_are_pipes() {
    let ws = tempfile::tempdir().unwrap();
    for name in ["package.json", "go.mod", "Cargo.toml", "codemeta.json"] {
        mkfifo(&ws.path().join(name));
    }
    std::fs::write(
        ws.path().join("pyproject.toml"),
        "[project]\nname = \"demo\"\ndescription = \"a demo\"\n",
    )
    .unwrap();
    let root = ws.path().to_path_buf();
    let facts = within("onboarding's manifest reads", move || {
        harvey::onboarding::manifest_facts(&root)
    });
    assert_eq!(facts.len(), 1, "{facts:?}");
}

/// A file that is one long line (minified code): shown cut within the line, with the
/// call that reads on, never as "lines 1–0".
#[test]
fn one_long_line_is_shown_cut_within_the_line() {
    let ws = tempfile::tempdir().unwrap();
    let line: String = (0..400_000).map(|i| format!("v{i}=1;")).collect();
    std::fs::write(ws.path().join("app.min.js"), &line).unwrap();
    let out = tool_call(
        ws.path(),
        "read_file",
        serde_json::json!({"path": "app.min.js"}),
    );
    assert!(
        out.contains("    1| v0=1;v1=1;"),
        "{}",
        &out[..200.min(out.len())]
    );
    assert!(!out.contains("lines 1–0"), "{out}");
    let note = out
        .lines()
        .find(|l| l.starts_with("[cut within line 1"))
        .unwrap();
    let next: usize = note
        .split("start_char ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!(next > 1000, "{note}");
    let out = tool_call(
        ws.path(),
        "read_file",
        serde_json::json!({"path": "app.min.js", "start_char": next}),
    );
    let expected = &line[next - 1..next + 20];
    assert!(
        out.contains(&format!("    1| {expected}")),
        "{}",
        &out[..200.min(out.len())]
    );
}
