//! kill -9 at random moments of a memory write, an import of 1,000 memories, a RAG
//! ingest and a session's close; after each kill the next process must find every
//! acknowledged memory, no half-written file, an index that reconciles and a session
//! record that keeps every complete exchange. The kill moments come from a seeded source
//! (the seed is printed; `HARVEY_FAULT_SEED` replays it). `HARVEY_SOAK=N` runs N times
//! (at least 5 times) as many rounds.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harvey::memory::MemoryStore;
use harvey::rag::RagStore;
use harvey::session::fountain;

use crate::support::model_path;
use crate::support::process::{
    assert_recalled, check_memories, harvey, kill_after, kill_after_marker, leftover_temps, rounds,
    run, text, timed, workspace, Rng,
};

/// The index already agrees with the files: nothing to re-read, nothing to drop.
fn assert_reconciled(ws: &Path) {
    let (_, report) = MemoryStore::open(&ws.join("agents"), ws).unwrap();
    assert_eq!(
        (report.indexed, report.removed, report.warnings.len()),
        (0, 0, 0),
        "{report:?}"
    );
}

#[test]
fn kill_during_memory_add_loses_no_acknowledged_memory() {
    let ws = workspace();
    let mut rng = Rng::new("memory add");
    let add = |i: usize| {
        let mut cmd = harvey(ws.path());
        cmd.args(["memory", "add", "--json", "--type", "workflow"])
            .arg("--description")
            .arg(format!("deploy step {i} uses rsync flag z{i}q"))
            .args(["--summary", "copy the build", "--body", "run rsync -az"]);
        cmd
    };
    // The second run's time: the first pays for a cold page cache.
    let (out, _) = timed(add(0));
    let (warm, full) = timed(add(1000));
    assert!(warm.status.success(), "{}", text(&warm.stderr));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut acked: BTreeMap<String, String> = BTreeMap::new();
    let first: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    acked.insert(first["id"].as_str().unwrap().into(), "z0q".into());
    let n = rounds(22);
    let mut kills = 0;
    for i in 1..=n {
        let k = kill_after(add(i), rng.delay(full.mul_f64(0.9)));
        kills += usize::from(k.killed);
        if let Some(line) = k.stdout.first() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            acked.insert(v["id"].as_str().unwrap().into(), format!("z{i}q"));
        } else {
            assert!(k.killed, "no acknowledgement without a kill: {}", k.stderr);
        }
        let ids: BTreeSet<String> = acked.keys().cloned().collect();
        check_memories(ws.path(), &ids);
    }
    let (id, word) = acked.iter().last().unwrap();
    assert_recalled(ws.path(), id, word);
    assert_reconciled(ws.path());
    let rebuilt = run(ws.path(), &["memory", "rebuild"]);
    assert!(rebuilt.status.success(), "{}", text(&rebuilt.stderr));
    eprintln!(
        "memory add: {n} runs, {kills} killed (full run {full:?}), {} acknowledged, {} temp files left",
        acked.len(),
        leftover_temps(ws.path())
    );
}

/// `path:LINE: saved ID` lines of `harvey memory import` (text mode).
fn saved_ids(lines: &[String]) -> Vec<(usize, String)> {
    lines
        .iter()
        .filter_map(|l| {
            let (head, id) = l.rsplit_once(": saved ")?;
            let line = head.rsplit(':').next()?.parse().ok()?;
            Some((line, id.trim().to_string()))
        })
        .collect()
}

#[test]
fn kill_during_an_import_of_1000_memories_keeps_every_saved_line() {
    let ws = workspace();
    let mut rng = Rng::new("memory import");
    let file_for = |round: usize| {
        let path = ws.path().join(format!("import-{round}.jsonl"));
        let lines: Vec<String> = (0..1000)
            .map(|i| {
                serde_json::json!({
                    "type": "project_fact",
                    "description": format!("round {round} fact {i} marker r{round}x{i}"),
                    "summary": "imported in bulk",
                    "tags": ["bulk", format!("r{round}")],
                })
                .to_string()
            })
            .collect();
        std::fs::write(&path, lines.join("\n")).unwrap();
        path
    };
    let import = |path: &Path| {
        let mut cmd = harvey(ws.path());
        cmd.args(["memory", "import"]).arg(path);
        cmd
    };
    let (out, full) = timed(import(&file_for(0)));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = saved_ids(
        &text(&out.stdout)
            .lines()
            .map(String::from)
            .collect::<Vec<_>>(),
    );
    assert_eq!(first.len(), 1000, "every line acknowledged");
    let mut acked: BTreeSet<String> = first.into_iter().map(|(_, id)| id).collect();
    let n = rounds(6);
    let (mut kills, mut partial) = (0, 0);
    for round in 1..=n {
        let path = file_for(round);
        let k = kill_after(import(&path), rng.delay(full.mul_f64(1.1)));
        kills += usize::from(k.killed);
        let saved = saved_ids(&k.stdout);
        partial += usize::from(!saved.is_empty() && saved.len() < 1000);
        let (last_line, last_id) = saved.last().cloned().unwrap_or_default();
        acked.extend(saved.into_iter().map(|(_, id)| id));
        check_memories(ws.path(), &acked);
        if !last_id.is_empty() {
            assert_recalled(ws.path(), &last_id, &format!("r{round}x{}", last_line - 1));
        }
    }
    assert_reconciled(ws.path());
    eprintln!(
        "memory import: {n} imports of 1000, {kills} killed ({partial} mid-way), full import {full:?}, {} acknowledged, {} temp files left",
        acked.len(),
        leftover_temps(ws.path())
    );
}

/// Per file: its chunks as (start, end, hash).
type Chunks = BTreeMap<String, Vec<(usize, usize, String)>>;

fn rag_chunks(ws: &Path) -> Chunks {
    let store = RagStore::open(&ws.join("agents"), "docs", None).unwrap();
    let mut out = Chunks::new();
    for (path, start, end, hash) in store.chunk_keys().unwrap() {
        out.entry(path).or_default().push((start, end, hash));
    }
    out
}

/// The rows of `chunks` and of its full-text table agree, and SQLite finds no damage.
fn assert_rag_consistent(ws: &Path) {
    let db = rusqlite::Connection::open(ws.join("agents/rag/docs.harvey.db")).unwrap();
    let ok: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    db.execute_batch("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
        .unwrap();
    let count = |sql: &str| db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(
        count("SELECT count(*) FROM chunks"),
        count("SELECT count(*) FROM chunks_fts")
    );
}

/// Version `v` of the documents: 30 files of Markdown, code and text.
fn write_docs(root: &Path, v: usize) {
    std::fs::create_dir_all(root).unwrap();
    for f in 0..30 {
        let para = |p: usize| {
            (0..40)
                .map(|w| format!("w{f}v{v}p{p}n{w}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (name, body) = match f % 3 {
            0 => (
                format!("doc{f}.md"),
                (0..8)
                    .map(|p| format!("## Part {p}\n\n{}\n", para(p)))
                    .collect::<String>(),
            ),
            1 => (
                format!("code{f}.rs"),
                (0..8)
                    .map(|p| format!("fn f{p}() {{\n    // {}\n}}\n\n", para(p)))
                    .collect(),
            ),
            _ => (
                format!("notes{f}.txt"),
                (0..8).map(|p| format!("{}\n\n", para(p))).collect(),
            ),
        };
        std::fs::write(root.join(name), body).unwrap();
    }
}

/// The chunks a clean ingest of version `v` gives.
fn reference_chunks(v: usize) -> Chunks {
    let ws = workspace();
    write_docs(&ws.path().join("docs"), v);
    assert!(run(ws.path(), &["rag", "new", "docs"]).status.success());
    let out = run(ws.path(), &["rag", "ingest", "docs"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    rag_chunks(ws.path())
}

#[test]
fn kill_during_a_rag_ingest_leaves_each_file_whole() {
    let ws = workspace();
    let mut rng = Rng::new("rag ingest");
    let docs = ws.path().join("docs");
    let ingest = || {
        let mut cmd = harvey(ws.path());
        cmd.args(["rag", "ingest", "docs"]);
        cmd
    };
    write_docs(&docs, 0);
    assert!(run(ws.path(), &["rag", "new", "docs"]).status.success());
    let (out, full) = timed(ingest());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut before = reference_chunks(0);
    assert_eq!(rag_chunks(ws.path()), before);
    let n = rounds(20);
    let (mut kills, mut mixed) = (0, 0);
    for v in 1..=n {
        write_docs(&docs, v);
        let after = reference_chunks(v);
        let k = kill_after(ingest(), rng.delay(full.mul_f64(1.2)));
        kills += usize::from(k.killed);
        assert_rag_consistent(ws.path());
        let got = rag_chunks(ws.path());
        let (mut old, mut new) = (0, 0);
        for (path, chunks) in &got {
            if Some(chunks) == after.get(path) {
                new += 1;
            } else {
                assert_eq!(Some(chunks), before.get(path), "{path}: old or new, whole");
                old += 1;
            }
        }
        assert_eq!(got.len(), after.len(), "no file lost its chunks");
        mixed += usize::from(old > 0 && new > 0);
        // The next ingest finishes the job.
        let out = run(ws.path(), &["rag", "ingest", "docs"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(rag_chunks(ws.path()), after);
        before = after;
    }
    eprintln!("rag ingest: {n} ingests of 30 files, {kills} killed ({mixed} between files), full ingest {full:?}");
}

/// Every session record parses; one with closing notes kept its exchange.
fn check_records(ws: &Path, prompt: &str) -> usize {
    let dir = ws.join("agents/sessions");
    let mut records = 0;
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "spmd") {
            continue;
        }
        records += 1;
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let r = fountain::parse(&text);
        assert!(r.exchanges.len() <= 1, "{text}");
        for ex in &r.exchanges {
            assert_eq!(ex.user, prompt, "{text}");
        }
        if r.ended || !r.closing_notes.is_empty() {
            assert_eq!(
                r.exchanges.len(),
                1,
                "the close follows the exchange: {text}"
            );
        }
    }
    records
}

#[test]
fn kill_during_a_session_close_keeps_the_exchange() {
    let model = model_path();
    let ws = workspace();
    // The close under test is the one that summarizes (with `later` it only appends the
    // closing notes, too short to land a kill in).
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: none\n  summary_at: close\n",
    )
    .unwrap();
    let mut rng = Rng::new("session close");
    let prompt = "Name one colour.";
    // The close logs "closing the session" as it starts (summary, mining, record, index):
    // the kill clock starts there, so every kill lands inside the close, not in the load.
    const MARK: &str = "closing the session";
    let session = || {
        let mut cmd = harvey(ws.path());
        cmd.env("RUST_LOG", "harvey=info")
            .arg("-m")
            .arg(&model)
            .args(["run", "--max-tokens", "8", prompt]);
        cmd
    };
    // One whole run first: how long its close takes from the mark to the exit.
    let mut close = close_time(session(), MARK);
    assert_eq!(check_records(ws.path(), prompt), 1);
    // Later closes run faster than the first (page cache, a quieter machine, a shorter
    // summary): aim at the first 40 % of the shortest close seen so far, and let a run that
    // ended by itself shorten the aim. Extra rounds (up to 3×) only while nothing was killed.
    let n = rounds(3);
    let (mut kills, mut runs) = (0, 0);
    while runs < n || (kills == 0 && runs < 3 * n) {
        runs += 1;
        let at = rng.delay(close.mul_f64(0.4));
        let k = kill_after_marker(session(), Some(MARK), at);
        kills += usize::from(k.killed);
        assert!(k.killed || k.success, "{}", k.stderr);
        if let Some(took) = k.marked_for {
            close = close.min(took);
        }
        check_records(ws.path(), prompt);
        check_memories(ws.path(), &BTreeSet::new());
    }
    assert!(
        kills > 0,
        "no run of {runs} was killed inside its close ({close:?} the shortest)"
    );
    let out = run(
        ws.path(),
        &[
            "-m",
            model.to_str().unwrap(),
            "run",
            "--max-tokens",
            "8",
            prompt,
        ],
    );
    assert!(
        out.status.success(),
        "a run after the kills: {}",
        text(&out.stderr)
    );
    assert!(!text(&out.stderr).contains("panicked"));
    let records = check_records(ws.path(), prompt);
    assert_reconciled(ws.path());
    eprintln!(
        "session close: {runs} runs, {kills} killed inside a close of {close:?}, {records} records"
    );
}

/// From the log line `mark` to the end of a complete run of `cmd`.
fn close_time(mut cmd: Command, mark: &str) -> Duration {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut at = None;
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        if at.is_none() && line.contains(mark) {
            at = Some(Instant::now());
        }
    }
    assert!(child.wait().unwrap().success());
    at.expect("the close is logged").elapsed()
}
