//! Running commands (issue 15): `!prog` / `/run` without a shell, safe mode's allowlist,
//! the timeout killing a whole process group, read-only `/git`, the model's
//! `run_command` and `git` tools, the audit log, and the environment without secrets.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use harvey::app::App;
use harvey::command::{AuditLog, Decision, Entry, Who};
use harvey::engine::scripted::ScriptedEngine;
use harvey::repl::handle_line;

/// A workspace whose config sets a short command timeout (tests never wait minutes).
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  enabled: false\nsampling:\n  max_tokens: 8\nsecurity:\n  run_timeout: 1s\n",
    )
    .unwrap();
    ws
}

fn app(ws: &Path, replies: &[&str]) -> App {
    let config = harvey::config::load(ws).unwrap();
    assert_eq!(config.security.run_timeout, Duration::from_secs(1));
    let engine = ScriptedEngine::new(8192, replies.iter().copied());
    App::with_engine(ws.canonicalize().unwrap(), config, Box::new(engine))
}

/// The REPL's answer to every `[y/N]` question is `answer`.
fn answering(app: &mut App, answer: &'static str) {
    app.install_asker(Rc::new(move |_q: &str| Some(answer.to_string())));
}

fn line(app: &mut App, text: &str) -> String {
    let mut out = Vec::new();
    handle_line(app, text, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn audit(ws: &Path) -> Vec<Entry> {
    AuditLog::new(&ws.join("agents")).last(1000).unwrap().0
}

#[test]
fn metacharacters_reach_the_program_as_plain_arguments() {
    let ws = workspace();
    std::fs::write(ws.path().join("x"), "keep me").unwrap();
    let mut app = app(ws.path(), &["noted"]);
    let out = line(&mut app, "!echo a; rm x");
    assert!(out.starts_with("a; rm x\n"), "{out}");
    assert!(
        out.contains("exit 0") && out.contains("attached to your next message"),
        "{out}"
    );
    assert!(ws.path().join("x").exists(), "rm never ran");
    let out = line(
        &mut app,
        "/run echo $(whoami) `id` *.rs | wc > out.txt && ls",
    );
    assert!(
        out.starts_with("$(whoami) `id` *.rs | wc > out.txt && ls\n"),
        "{out}"
    );
    assert!(!ws.path().join("out.txt").exists());
    // Both outputs ride on the next message only, counted in tokens.
    assert_eq!(app.attachments().list().len(), 2);
    assert!(app.attachments().tokens() > 0);
    line(&mut app, "what did that print?");
    let sent = &app.conversation().turns()[0].content;
    assert!(
        sent.starts_with("[command: echo 'a;' rm x → exit 0]\na; rm x\n\n[command: echo"),
        "{sent}"
    );
    assert!(sent.ends_with("what did that print?"), "{sent}");
    assert!(app.attachments().is_empty());
    let entries = audit(ws.path());
    assert_eq!(entries[0].program, "echo");
    assert_eq!(entries[0].args, ["a;", "rm", "x"]);
    assert_eq!(entries[0].decision, Decision::Allowlisted);
    assert_eq!(entries[0].who, Who::User);
    assert_eq!(entries[0].exit, Some(0));
    assert_eq!(entries[0].bytes, Some(8));
    let unterminated = line(&mut app, "!echo 'oops");
    assert!(
        unterminated.contains("unterminated single quote"),
        "{unterminated}"
    );
}

#[test]
fn paths_and_lookalikes_are_not_allowlisted() {
    let ws = workspace();
    std::fs::write(ws.path().join("victim"), "x").unwrap();
    let rm = ["/usr/bin/rm", "/bin/rm"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(rm, ws.path().join("ls")).unwrap();
    let mut app = app(ws.path(), &[]);
    // Nobody to ask: what is not allowlisted is refused.
    for (cmd, why) in [
        ("!./ls victim", "is a path"),
        (&format!("!{rm} victim"), "is a path"),
        ("!rm victim", "not on the allowlist"),
    ] {
        let out = line(&mut app, cmd);
        assert!(out.contains("refused") && out.contains(why), "{cmd}: {out}");
    }
    assert!(ws.path().join("victim").exists());
    answering(&mut app, "n");
    let out = line(&mut app, "!./ls victim");
    assert!(out.contains("not run: the user said no"), "{out}");
    assert!(ws.path().join("victim").exists());
    let out = line(&mut app, "!ls");
    assert!(
        out.contains("victim") && out.contains("exit 0"),
        "allowlisted, no question: {out}"
    );
    answering(&mut app, "y");
    let out = line(&mut app, "!./ls victim");
    assert!(out.contains("exit 0"), "{out}");
    assert!(!ws.path().join("victim").exists(), "a yes runs it");
    let decisions: Vec<Decision> = audit(ws.path()).iter().map(|e| e.decision).collect();
    assert_eq!(
        decisions,
        [
            Decision::Refused,
            Decision::Refused,
            Decision::Refused,
            Decision::Declined,
            Decision::Allowlisted,
            Decision::Confirmed
        ]
    );
}

#[test]
fn a_command_past_the_timeout_is_killed_with_its_children() {
    let ws = workspace();
    let mut app = app(ws.path(), &["ok"]);
    answering(&mut app, "y");
    let started = Instant::now();
    let out = line(
        &mut app,
        "!sh -c 'sleep 100 & echo $! > bg.pid; echo started; sleep 100'",
    );
    let took = started.elapsed();
    assert!(out.starts_with("started\n"), "{out}");
    assert!(out.contains("killed after the 1s timeout"), "{out}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let pid = std::fs::read_to_string(ws.path().join("bg.pid")).unwrap();
    let pid = pid.trim();
    // The background sleep died with the group (at most a zombie until init reaps it).
    let gone = (0..50).any(|_| {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false);
        if alive {
            std::thread::sleep(Duration::from_millis(100));
        }
        !alive
    });
    assert!(gone, "background child {pid} still runs");
    // harvey goes on: the next command and message work.
    let out = line(&mut app, "!echo still here");
    assert!(out.starts_with("still here\n"), "{out}");
    let entry = &audit(ws.path())[0];
    assert_eq!(entry.exit, None);
    assert_eq!(entry.ended.as_deref(), Some("killed after the 1s timeout"));
    line(&mut app, "and?");
    let sent = &app.conversation().turns()[0].content;
    assert!(
        sent.contains("→ killed after the 1s timeout]\nstarted"),
        "{sent}"
    );
}

#[test]
fn long_output_is_capped_for_the_model_and_whole_on_screen() {
    let ws = workspace();
    let big: String = (0..2000).map(|i| format!("line {i:05}\n")).collect();
    std::fs::write(ws.path().join("big.txt"), &big).unwrap();
    let mut app = app(ws.path(), &[]);
    let out = line(&mut app, "!cat big.txt");
    assert!(out.starts_with(&big), "the whole output is on screen");
    assert!(
        out.contains("bytes cut for the model"),
        "{}",
        &out[big.len()..]
    );
    let block = &app.attachments().list()[0].text;
    assert!(block.len() < 9 * 1024, "{}", block.len());
    assert!(block.contains("line 00000") && block.contains("line 01999"));
    assert!(block.contains("bytes cut here"), "{block}");
}

#[test]
fn git_is_read_only() {
    let ws = workspace();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(ws.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "first commit"]);
    let mut app = app(ws.path(), &[]);
    let out = line(&mut app, "/git log --oneline");
    assert!(
        out.contains("first commit") && out.contains("exit 0"),
        "{out}"
    );
    for (cmd, why) in [
        ("/git -c core.pager=touch log", "before the subcommand"),
        ("/git log -c core.pager=touch", "-c"),
        ("/git config user.name x", "git config is not allowed"),
        ("/git push origin main", "git push is not allowed"),
        ("/git diff --output=x.txt", "--output"),
        ("/git --exec-path=/tmp status", "before the subcommand"),
    ] {
        let out = line(&mut app, cmd);
        assert!(out.contains("refused") && out.contains(why), "{cmd}: {out}");
    }
    assert!(!ws.path().join("x.txt").exists());
    let entries = audit(ws.path());
    assert_eq!(entries[0].decision, Decision::ReadOnly);
    // The audit keeps exactly what ran: harvey's safe prefix, then the user's words.
    assert_eq!(entries[0].args[0], "--no-pager");
    assert!(entries[0].args.ends_with(&[
        "log".into(),
        "--no-ext-diff".into(),
        "--no-textconv".into(),
        "--oneline".into()
    ]));
    assert!(entries[1..].iter().all(|e| e.decision == Decision::Refused));
    assert_eq!(entries[3].args, ["config", "user.name", "x"]);
}

const RUN_CALL: &str = r#"<tool_call>{"name": "run_command", "arguments": {"program": "echo", "args": ["from", "model"]}}</tool_call>"#;

#[test]
fn the_models_run_command_always_asks_and_is_refused_where_nobody_can() {
    let ws = workspace();
    // As in `harvey run`: no one to ask.
    let mut app = app(ws.path(), &[RUN_CALL, "ok"]);
    let turn = app.agent_turn("say hi with echo", &mut |_| {}).unwrap();
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("nobody can answer"), "{err}");
    // In the REPL it asks even though echo is allowlisted.
    let mut app = self::app(ws.path(), &[RUN_CALL, "ok", RUN_CALL, "ok"]);
    let asked = Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let log = Rc::clone(&asked);
    app.install_asker(Rc::new(move |q: &str| {
        log.borrow_mut().push(q.to_string());
        Some(if log.borrow().len() == 1 { "y" } else { "n" }.to_string())
    }));
    let turn = app.agent_turn("say hi with echo", &mut |_| {}).unwrap();
    let result = turn.calls[0].result.as_ref().unwrap();
    assert!(
        result.starts_with("[command: echo from model → exit 0]\nfrom model"),
        "{result}"
    );
    let turn = app.agent_turn("again", &mut |_| {}).unwrap();
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("the user said no"), "{err}");
    assert_eq!(asked.borrow().len(), 2, "{:?}", asked.borrow());
    assert!(
        asked.borrow()[0].contains("run_command"),
        "{:?}",
        asked.borrow()
    );
    let entries = audit(ws.path());
    let decisions: Vec<(Who, Decision)> = entries.iter().map(|e| (e.who, e.decision)).collect();
    assert_eq!(
        decisions,
        [
            (Who::Model, Decision::Refused),
            (Who::Model, Decision::Confirmed),
            (Who::Model, Decision::Declined)
        ]
    );
}

#[test]
fn the_models_git_tool_refuses_tricks() {
    let ws = workspace();
    let call = r#"<tool_call>{"name": "git", "arguments": {"action": "show_commit", "rev": "-c core.pager=touch pwned"}}</tool_call>"#;
    let mut app = app(ws.path(), &[call, "ok"]);
    let turn = app.agent_turn("show the last commit", &mut |_| {}).unwrap();
    let err = turn.calls[0].result.as_ref().unwrap_err().to_string();
    assert!(err.contains("is an option"), "{err}");
    assert!(!ws.path().join("pwned").exists());
    // Refused before git: nothing ran, so nothing is audited as run.
    assert!(audit(ws.path())
        .iter()
        .all(|e| e.decision == Decision::Refused));
}

#[test]
fn run_command_through_the_cli_is_refused_and_audited() {
    let ws = workspace();
    let out = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(ws.path())
        .args([
            "tool",
            "call",
            "run_command",
            r#"{"program": "touch", "args": ["made"]}"#,
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        format!("{stdout}{stderr}").contains("nobody can answer"),
        "{stdout}{stderr}"
    );
    assert!(!ws.path().join("made").exists());
    let entries = audit(ws.path());
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (entries[0].who, entries[0].decision),
        (Who::Model, Decision::Refused)
    );
}

#[test]
fn safemode_changes_are_saved_in_the_security_section_only() {
    let ws = workspace();
    let go_keys = "# the Go harvey wrote this\nollama:\n  url: http://localhost:11434\nmemory:\n  enabled: false\nsecurity:\n  run_timeout: 1s\n  permissions:\n    read: [src]\nmodel_aliases:\n  granite: granite3.3:8b\n";
    std::fs::write(ws.path().join("agents/harvey.yaml"), go_keys).unwrap();
    let mut app = app(ws.path(), &[]);
    let out = line(&mut app, "/safemode allow rm");
    assert!(
        out.contains("saved in agents/harvey.yaml under security:"),
        "{out}"
    );
    assert!(out.contains("allowlist") && out.contains(" rm"), "{out}");
    let out = line(&mut app, "/safemode off");
    assert!(out.contains("safe mode  off"), "{out}");
    let text = std::fs::read_to_string(ws.path().join("agents/harvey.yaml")).unwrap();
    assert!(text.starts_with("# the Go harvey wrote this\nollama:\n  url: http://localhost:11434\nmemory:\n  enabled: false\nsecurity:\n"), "{text}");
    assert!(
        text.ends_with("model_aliases:\n  granite: granite3.3:8b\n"),
        "{text}"
    );
    assert!(
        text.contains("permissions:") && text.contains("run_timeout: 1s"),
        "{text}"
    );
    let config = harvey::config::load(ws.path()).unwrap();
    assert!(!config.security.safe_mode);
    assert!(config.security.allowed_commands.contains(&"rm".to_string()));
    // A new session starts with the saved settings.
    let mut again = self::app(ws.path(), &[]);
    assert!(!again.security().safe_mode);
    let out = line(&mut again, "/safemode reset");
    assert!(out.contains("safe mode  on"), "{out}");
    assert!(!harvey::config::load(ws.path())
        .unwrap()
        .security
        .allowed_commands
        .contains(&"rm".to_string()));
    for bad in ["/safemode allow ./x", "/safemode frobnicate"] {
        let out = line(&mut again, bad);
        assert!(
            out.contains("error") || out.contains("usage"),
            "{bad}: {out}"
        );
    }
    let out = line(&mut again, "/audit");
    assert!(out.contains("no commands recorded yet"), "{out}");
}

#[test]
fn audit_shows_the_last_lines() {
    let ws = workspace();
    let mut app = app(ws.path(), &[]);
    for i in 0..3 {
        line(&mut app, &format!("!echo {i}"));
    }
    line(&mut app, "!rm nothing");
    let out = line(&mut app, "/audit 2");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].contains("allowlisted") && lines[0].contains("echo 2"),
        "{out}"
    );
    assert!(
        lines[1].contains("refused") && lines[1].contains("rm nothing"),
        "{out}"
    );
}

/// The real REPL as a process (real model): secret-looking variables never reach a
/// command's environment, the `[y/N]` question is answered from the input, and the
/// session record gets one note per command.
#[test]
fn secrets_are_absent_from_the_childs_environment() {
    let ws = workspace();
    // Room for the whole capped output (8 KB of `env`) in the next message.
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  enabled: false\nsampling:\n  max_tokens: 8\nengine:\n  n_ctx: 8192\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(ws.path())
        .arg("-m")
        .arg(crate::support::model_path())
        .env_remove("HARVEY_MODEL")
        .env("OPENAI_API_KEY", "sk-secret-1")
        .env("GITHUB_TOKEN", "ghp-secret-2")
        .env("DB_PASSWORD", "secret-3")
        .env("AWS_SECRET_ACCESS_KEY", "secret-4")
        .env("HARVEY_TEST_PLAIN", "visible-5")
        .env("DATABASE_URL", "postgres://app:secret-6@db.example/app")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"!env\ny\nSay ok.\n/exit\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("HARVEY_TEST_PLAIN=visible-5"), "{stdout}");
    assert!(stdout.contains("PATH="), "{stdout}");
    for secret in [
        "sk-secret-1",
        "ghp-secret-2",
        "secret-3",
        "secret-4",
        "secret-6",
    ] {
        assert!(!stdout.contains(secret), "{secret} leaked: {stdout}");
    }
    let sessions: Vec<_> = std::fs::read_dir(ws.path().join("agents/sessions"))
        .unwrap_or_else(|e| panic!("no session record ({e}): {stdout}"))
        .map(|e| e.unwrap().path())
        .collect();
    let record = std::fs::read_to_string(&sessions[0]).unwrap();
    assert!(record.contains("command (user): env → exit 0"), "{record}");
    assert!(record.contains("attached command env ("), "{record}");
    assert_eq!(audit(ws.path())[0].decision, Decision::Confirmed);
}
