//! Session records: the end-of-session sequence on every exit path, and `/session`
//! list, show, continue and rename with the model's session tools.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harvey::session::fountain::parse;
use harvey::session::SessionIndex;

use crate::support::model_path;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("agents")).unwrap();
    std::fs::write(
        dir.path().join("agents/harvey.yaml"),
        // The close that summarizes (`later` is tested in sessions_later.rs).
        "sampling:\n  max_tokens: 12\n  temperature: 0\nengine:\n  n_ctx: 1024\nmemory:\n  summary_at: close\n",
    )
    .unwrap();
    dir
}

fn records(ws: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(ws.join("agents/sessions"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

enum Ending {
    Exit,
    Eof,
    Signal(&'static str),
}

fn session_ending(ending: Ending) -> tempfile::TempDir {
    let ws = workspace();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(ws.path())
        .arg("-m")
        .arg(model_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"Name one colour of the sky.\n").unwrap();
    match ending {
        Ending::Exit => stdin.write_all(b"/exit\n").unwrap(),
        Ending::Eof => drop(stdin),
        Ending::Signal(signal) => {
            // Wait for the exchange to be on disk, then terminate while the prompt waits.
            let started = Instant::now();
            loop {
                let done = records(ws.path())
                    .first()
                    .map(|p| parse(&std::fs::read_to_string(p).unwrap()).exchanges.len())
                    == Some(1);
                if done {
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(600),
                    "no exchange recorded"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
            let status = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
            // Keep stdin open: the session must end because of the signal.
            std::mem::forget(stdin);
        }
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("[session saved to") || stderr.contains("[session saved to"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    ws
}

fn assert_closed(ws: &Path) {
    let files = records(ws);
    assert_eq!(files.len(), 1, "{files:?}");
    let record = parse(&std::fs::read_to_string(&files[0]).unwrap());
    assert!(record.ended, "THE END. written");
    assert_eq!(record.exchanges.len(), 1);
    assert_eq!(record.exchanges[0].user, "Name one colour of the sky.");
    assert!(
        record
            .closing_notes
            .iter()
            .any(|n| n.starts_with("Summary: ")),
        "{:?}",
        record.closing_notes
    );
    let index = SessionIndex::open(&ws.join("agents")).unwrap();
    let sessions = index.recent(10).unwrap();
    assert_eq!(sessions.len(), 1);
    assert!(!sessions[0].summary.is_empty());
    assert_eq!(sessions[0].turns, 1);
    let stats = index.stats().unwrap();
    assert_eq!(stats.len(), 1);
    // floor(1024 × 0.25), cut by engine.fixed_prompt_pct (SmolLM2's tool list alone is
    // over 45 % of 1,024) to its floor, a quarter.
    assert_eq!(stats[0].budget_tokens, 64, "floor(1024 × 0.25) / 4");
    assert!(stats[0].avg_tokens_per_sec > 0.0);
}

#[test]
fn exit_command_closes_the_session() {
    assert_closed(session_ending(Ending::Exit).path());
}

#[test]
fn end_of_input_closes_the_session() {
    assert_closed(session_ending(Ending::Eof).path());
}

#[test]
fn sigterm_closes_the_session() {
    assert_closed(session_ending(Ending::Signal("-TERM")).path());
}

#[test]
fn sighup_closes_the_session() {
    assert_closed(session_ending(Ending::Signal("-HUP")).path());
}

#[test]
fn a_session_without_exchanges_leaves_nothing_behind() {
    let ws = workspace();
    let out = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(ws.path())
        .arg("-m")
        .arg(model_path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(records(ws.path()).is_empty());
    let index = SessionIndex::open(&ws.path().join("agents")).unwrap();
    assert!(index.recent(10).unwrap().is_empty());
    assert!(index.stats().unwrap().is_empty());
}

mod scripted {
    use harvey::app::App;
    use harvey::repl::handle_line;

    fn say(app: &mut App, line: &str) -> String {
        let mut out = Vec::new();
        handle_line(app, line, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn app(dir: &std::path::Path, replies: &[&str]) -> App {
        crate::support::scripted_app(dir, replies.iter().copied())
    }

    #[test]
    fn list_show_continue_rename_and_session_tools() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut first = app(
                dir.path(),
                &[
                    "A jib is the small sail at the front.\n\nIt helps steering.",
                    "The user asked about sailing rigs: jibs and mainsails.",
                    r#"["sailing", "jib", "rigging"]"#,
                ],
            );
            say(&mut first, "What is a jib on a sailing boat?");
            assert!(say(&mut first, "/rename sailing questions").contains("sailing questions"));
            let report = first.close_session(&mut |_| {}).unwrap();
            assert_eq!(report.tags, vec!["sailing", "jib", "rigging"]);
        }
        let mut second = app(dir.path(), &["Yes, as I said: the front sail."]);
        let listed = say(&mut second, "/session list");
        assert!(listed.contains("\"sailing questions\""), "{listed}");
        assert!(listed.contains("[sailing, jib, rigging]"), "{listed}");
        let file = listed.split_whitespace().next().unwrap().to_string();
        let shown = say(&mut second, &format!("/session show {file}"));
        assert!(shown.contains("It helps steering."), "{shown}");
        assert!(say(&mut second, "/session show ../../etc/passwd").starts_with("error: no session"));
        let cont = say(&mut second, &format!("/session continue {file}"));
        assert!(cont.contains("1 exchanges restored"), "{cont}");
        let turns = second.conversation().turns();
        assert_eq!(turns.len(), 2);
        assert_eq!(
            turns[1].content,
            "A jib is the small sail at the front.\n\nIt helps steering."
        );
        // The model's session tools find and read it.
        let found = second
            .tools()
            .call(
                "session_search",
                &serde_json::from_str(r#"{"query": "jib sailing"}"#).unwrap(),
            )
            .unwrap();
        assert!(found.starts_with(&file), "{found}");
        let read = second
            .tools()
            .call(
                "session_read",
                &serde_json::from_str(&format!(r#"{{"id": "{file}"}}"#)).unwrap(),
            )
            .unwrap();
        assert!(read.contains("Harvey: A jib is the small sail"), "{read}");
        let refused = second
            .tools()
            .call(
                "session_read",
                &serde_json::from_str(r#"{"id": "../memories/memories.db"}"#).unwrap(),
            )
            .unwrap_err();
        assert!(refused.to_string().contains("no session"), "{refused}");
        // The new session's record notes where it continued from.
        say(&mut second, "So the jib is at the front?");
        let record = std::fs::read_to_string(second.recorder().path().unwrap()).unwrap();
        assert!(
            record.contains(&format!("[[continued from {file} (1 exchanges)]]")),
            "{record}"
        );
    }
}
