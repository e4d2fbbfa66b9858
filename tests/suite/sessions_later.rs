//! Summaries written later (`memory.summary_at: later`, the default): `harvey run` and
//! the REPL's `/exit` close the record at once with its summary pending, and the next
//! interactive session writes it while it waits for input. SIGTERM during `harvey run`
//! keeps what was said. Real model (SmolLM2), real processes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harvey::session::fountain::{parse, Record};
use harvey::session::pending::PENDING_NOTE;
use harvey::session::SessionIndex;

use crate::support::process::{harvey, text};

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: none\nsampling:\n  temperature: 0\nengine:\n  n_ctx: 1024\n",
    )
    .unwrap();
    ws
}

fn records(ws: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(ws.join("agents/sessions"))
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "spmd"))
                .collect()
        })
        .unwrap_or_default();
    all.sort();
    all
}

fn read(path: &Path) -> Record {
    parse(&std::fs::read_to_string(path).unwrap())
}

fn has_summary(r: &Record) -> bool {
    r.closing_notes.iter().any(|n| n.starts_with("Summary: "))
}

fn is_pending(r: &Record) -> bool {
    r.closing_notes.iter().any(|n| n == PENDING_NOTE)
}

#[test]
fn a_run_is_recorded_whole_without_a_summary_and_the_next_repl_writes_it() {
    let ws = workspace();
    let prompt = "What is 17 times 3?";
    let out = harvey(ws.path())
        .args(["run", "--json", "--max-tokens", "16", prompt])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary_pending"], true, "{v}");
    let files = records(ws.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let run = read(&files[0]);
    // Complete: the prompt, the whole reply, closed; no summary yet, and it says so.
    assert!(run.ended, "THE END. written");
    assert_eq!(run.exchanges.len(), 1);
    assert_eq!(run.exchanges[0].user, prompt);
    assert_eq!(run.exchanges[0].reply, v["reply"].as_str().unwrap());
    assert!(!run.exchanges[0].reply.is_empty());
    assert!(
        !has_summary(&run) && is_pending(&run),
        "{:?}",
        run.closing_notes
    );
    let index = SessionIndex::open(&ws.path().join("agents")).unwrap();
    assert_eq!(index.recent(5).unwrap().len(), 1, "listed at once");
    assert!(index.recent_summarized(5).unwrap().is_empty());

    // The next interactive session: its prompt waits (stdin stays open) while it
    // summarizes the run's record.
    let mut repl = harvey(ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = repl.stdin.take().unwrap();
    let started = Instant::now();
    while !has_summary(&read(&files[0])) {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the pending summary was never written"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Then one exchange and /exit: that session's own record is left pending in turn.
    stdin
        .write_all(b"Name one colour of the sky.\n/exit\n")
        .unwrap();
    let out = repl.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("the next session summarizes it"),
        "{}",
        text(&out.stdout)
    );

    let summarized = read(&files[0]);
    assert!(summarized.ended && !is_pending(&summarized));
    assert_eq!(
        summarized.exchanges, run.exchanges,
        "nothing of the run lost"
    );
    assert!(summarized
        .closing_notes
        .iter()
        .any(|n| n.starts_with("Session stats: ")));
    let row = index.get(&file_name(&files[0])).unwrap().unwrap();
    assert!(!row.summary.trim().is_empty(), "the index has the summary");

    let files = records(ws.path());
    assert_eq!(files.len(), 2, "{files:?}");
    let second = read(&files[1]);
    assert!(
        second.ended && is_pending(&second),
        "{:?}",
        second.closing_notes
    );
    assert_eq!(second.exchanges.len(), 1);
    assert_eq!(second.exchanges[0].user, "Name one colour of the sky.");
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn sigterm_during_run_records_the_partial_reply_and_closes_the_session() {
    let ws = workspace();
    let prompt = "Write a very long story, at least two thousand words, about a lighthouse \
                  keeper, chapter by chapter, with many details.";
    let mut child = harvey(ws.path())
        .args(["run", "--max-tokens", "4000", prompt])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // The reply has begun streaming: now SIGTERM.
    let mut first = [0u8; 1];
    assert_eq!(stdout.read(&mut first).unwrap(), 1, "no reply streamed");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let sent = Instant::now();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let ended_in = sent.elapsed();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + 15), "{err}");
    assert!(
        ended_in < Duration::from_secs(20),
        "ended {ended_in:?} after SIGTERM"
    );
    let files = records(ws.path());
    assert_eq!(files.len(), 1, "{files:?}\n{err}");
    assert!(err.contains("[session saved to "), "{err}");
    let record = read(&files[0]);
    assert!(record.ended, "THE END. written");
    assert_eq!(record.exchanges.len(), 1);
    let exchange = &record.exchanges[0];
    assert_eq!(exchange.user, prompt);
    assert!(
        !exchange.reply.trim().is_empty(),
        "the partial reply is kept"
    );
    let printed = format!("{}{}", first[0] as char, text(&rest));
    assert!(
        printed.trim_end().ends_with(exchange.reply.trim_end())
            || printed.contains(exchange.reply.trim()),
        "the record holds what was printed:\n{printed}\n---\n{}",
        exchange.reply
    );
    assert!(
        exchange
            .notes
            .iter()
            .any(|n| n.starts_with("reply cut (aborted)")),
        "{:?}",
        exchange.notes
    );
    assert!(
        record.closing_notes.iter().any(|n| n == "Ended by SIGTERM"),
        "{:?}",
        record.closing_notes
    );
}
