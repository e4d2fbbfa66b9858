//! The model's read-only git tool reads nothing the read sandbox refuses (issue 28): no
//! secret through `diff /dev/null .env` (git's own switch to `--no-index`), no file
//! outside the workspace, no `blame --contents`, no `REV:PATH` onto a secret; and a
//! repository's filter or diff driver never runs. Every refusal is audited. The
//! credential files added to the read sandbox's secret list are refused by every tool.

use std::path::Path;
use std::process::{Command, Output};

use harvey::command::{run_git, AuditLog, Decision, Place, Settings, Who};

const SECRET: &str = "hunter2-do-not-print";

fn git(ws: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A repository with `a.txt` committed and `.env` (holding [`SECRET`]) committed too,
/// so history holds it as well as the disk.
fn repository() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: none\n",
    )
    .unwrap();
    git(ws.path(), &["init", "-q"]);
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(ws.path().join(".env"), format!("SECRET={SECRET}\n")).unwrap();
    git(ws.path(), &["add", "a.txt"]);
    git(ws.path(), &["add", "-f", ".env"]);
    git(ws.path(), &["commit", "-qm", "first"]);
    ws
}

/// `git SUB ARGS` through the read-only runner that `/git` and the model's `git` tool
/// share (the tool builds its invocations from named actions; free arguments reach the
/// runner through `/git`): whether it ran, and its output block or refusal.
fn call_git(ws: &Path, sub: &str, args: &[&str]) -> (bool, String) {
    let settings = Settings {
        safe_mode: true,
        allowed: Settings::default_allowed(),
        timeout: std::time::Duration::from_secs(30),
    };
    let audit = AuditLog::new(&ws.join("agents"));
    let place = Place {
        workspace: ws,
        settings: &settings,
        audit: &audit,
        env: &[],
    };
    let words = std::iter::once(sub)
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect();
    let report = run_git(&place, Who::Model, words, &mut |_| {}, &|| false);
    match report.attachment() {
        Some(text) => (true, text),
        None => (false, report.result.err().unwrap_or_default()),
    }
}

fn refused_count(ws: &Path) -> usize {
    let (entries, _) = AuditLog::new(&ws.join("agents")).last(1000).unwrap();
    entries
        .iter()
        .filter(|e| e.decision == Decision::Refused)
        .count()
}

#[test]
fn git_reads_nothing_the_sandbox_refuses() {
    let ws = repository();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), format!("outside {SECRET}\n")).unwrap();
    let outside = outside.path().to_str().unwrap().to_string();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("diff", vec!["/dev/null", ".env"]),
        ("diff", vec!["--", "/dev/null", ".env"]),
        ("diff", vec!["/dev/null", &outside]),
        ("diff", vec!["a.txt", &outside]),
        ("blame", vec!["--contents", ".env", "a.txt"]),
        ("blame", vec!["--conten", ".env", "a.txt"]),
        ("show", vec!["HEAD:.env"]),
        ("log", vec!["-p", "--", ".env"]),
        ("log", vec!["-L1,1:.env"]),
        ("diff", vec!["--no-index", "a.txt", ".env"]),
    ];
    for (n, (sub, args)) in cases.iter().enumerate() {
        let (ok, text) = call_git(ws.path(), sub, args);
        assert!(!ok, "git {sub} {args:?} ran: {text}");
        assert!(!text.contains(SECRET), "git {sub} {args:?} leaked: {text}");
        assert!(
            text.contains("not allowed")
                || text.contains("refused")
                || text.contains("outside")
                || text.contains("secret"),
            "git {sub} {args:?}: {text}"
        );
        assert_eq!(refused_count(ws.path()), n + 1, "git {sub} {args:?}: audit");
    }
    // Reads inside the sandbox still work.
    let (ok, text) = call_git(ws.path(), "show", &["HEAD:a.txt"]);
    assert!(ok && text.contains("one"), "{text}");
}

#[test]
fn a_repositorys_filter_and_diff_drivers_do_not_run() {
    let ws = repository();
    let marks = tempfile::tempdir().unwrap();
    let mark = |name: &str| marks.path().join(name);
    let driver = |name: &str| format!("touch '{}'; cat", mark(name).display());
    git(
        ws.path(),
        &["config", "filter.evil.clean", &driver("clean")],
    );
    git(
        ws.path(),
        &["config", "filter.evil.smudge", &driver("smudge")],
    );
    git(ws.path(), &["config", "filter.evil.required", "true"]);
    git(
        ws.path(),
        &["config", "diff.evil.textconv", &driver("textconv")],
    );
    git(
        ws.path(),
        &["config", "diff.evil.command", &driver("command")],
    );
    std::fs::write(
        ws.path().join(".gitattributes"),
        "* filter=evil diff=evil\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\ntwo\n").unwrap();
    // Git itself runs them (the repository is as hostile as intended).
    Command::new("git")
        .args(["diff"])
        .current_dir(ws.path())
        .output()
        .unwrap();
    assert!(mark("command").exists(), "git's own diff ran no driver");
    for name in ["clean", "smudge", "textconv", "command"] {
        let _ = std::fs::remove_file(mark(name));
    }
    for (sub, args) in [
        ("diff", vec![]),
        ("diff", vec!["--stat"]),
        ("status", vec![]),
        ("log", vec!["-p", "-1"]),
        ("show", vec!["HEAD"]),
        ("blame", vec!["a.txt"]),
    ] {
        let (ok, text) = call_git(ws.path(), sub, &args);
        assert!(ok, "git {sub} {args:?}: {text}");
        for name in ["clean", "smudge", "textconv", "command"] {
            assert!(
                !mark(name).exists(),
                "git {sub} {args:?} ran the {name} driver: {text}"
            );
        }
        if sub == "diff" && args.is_empty() {
            assert!(text.contains("two"), "git {sub} {args:?}: {text}");
        }
    }
}

#[test]
fn diff_outside_a_work_tree_is_refused() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "a\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "b\n").unwrap();
    let (ok, text) = call_git(ws.path(), "diff", &["a.txt", "b.txt"]);
    assert!(!ok && text.contains("not a git work tree"), "{text}");
    assert_eq!(refused_count(ws.path()), 1);
}

fn tool_call(ws: &Path, name: &str, args: &serde_json::Value) -> (bool, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(ws)
        .env_remove("HARVEY_MODEL")
        .args(["tool", "call", name, &args.to_string()])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Credential files of git, npm, PyPI, Docker and Kubernetes: refused by the read
/// tools, left out of listings and searches, and refused to git.
#[test]
fn credential_files_are_refused_by_every_read_tool() {
    let ws = repository();
    let files = [
        ".git-credentials",
        "web/.npmrc",
        ".pypirc",
        ".docker/config.json",
        "home/.kube/config",
    ];
    for (i, file) in files.iter().enumerate() {
        let path = ws.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("token = {SECRET}-{i}\n")).unwrap();
    }
    for file in files {
        let (ok, text) = tool_call(ws.path(), "read_file", &serde_json::json!({"path": file}));
        assert!(
            !ok && text.contains("looks like a secret"),
            "{file}: {text}"
        );
        let (ok, text) = call_git(ws.path(), "diff", &["--", file]);
        assert!(!ok && !text.contains(SECRET), "git diff -- {file}: {text}");
    }
    let (_, text) = tool_call(
        ws.path(),
        "search_files",
        &serde_json::json!({"pattern": "token"}),
    );
    assert!(!text.contains(SECRET), "{text}");
    for dir in [".", "web", ".docker", "home/.kube"] {
        let (_, text) = tool_call(ws.path(), "list_files", &serde_json::json!({"path": dir}));
        assert!(
            !text.contains("config") && !text.contains("rc"),
            "{dir}: {text}"
        );
    }
}

/// The model's `git` tool takes named actions; a secret or an option smuggled into
/// `rev` or `path` is refused as through `/git`, and the plain questions run.
#[test]
fn the_models_git_actions_read_nothing_the_sandbox_refuses() {
    let ws = repository();
    for args in [
        serde_json::json!({"action": "show_commit", "rev": "HEAD:.env"}),
        serde_json::json!({"action": "file_history", "path": ".env"}),
        serde_json::json!({"action": "who_changed", "path": ".env", "line": 1}),
        serde_json::json!({"action": "diff", "rev": "/dev/null .env"}),
        serde_json::json!({"action": "diff", "rev": "--no-index"}),
        serde_json::json!({"action": "show_commit", "rev": "--output=x.txt"}),
        serde_json::json!({"subcommand": "log", "args": ["-p"]}),
    ] {
        let (ok, text) = tool_call(ws.path(), "git", &args);
        assert!(!ok, "{args}: ran: {text}");
        assert!(!text.contains(SECRET), "{args}: leaked: {text}");
    }
    assert!(!ws.path().join("x.txt").exists());
    let (ok, text) = tool_call(
        ws.path(),
        "git",
        &serde_json::json!({"action": "last_commit"}),
    );
    assert!(
        ok && text.contains("first") && text.contains("a.txt"),
        "{text}"
    );
}
