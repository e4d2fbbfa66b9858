//! Load and a full disk: two `harvey` processes writing 500 memories each into one
//! workspace at the same time, and writes that hit a file-size limit (`ulimit -f`, with
//! SIGXFSZ ignored so the write fails with EFBIG as on a full disk).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harvey::memory::MemoryStore;

use crate::support::process::{check_memories, harvey, leftover_temps, run, text, workspace};

fn jsonl(path: &Path, who: &str, n: usize) {
    let lines: Vec<String> = (0..n)
        .map(|i| {
            serde_json::json!({
                "type": "tool_use",
                "description": format!("{who} writes fact number {i}"),
                "summary": "written under contention",
            })
            .to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n")).unwrap();
}

#[test]
fn two_processes_write_500_memories_each_into_one_workspace() {
    let ws = workspace();
    let (a, b) = (ws.path().join("a.jsonl"), ws.path().join("b.jsonl"));
    jsonl(&a, "alpha", 500);
    jsonl(&b, "beta", 500);
    // A fresh workspace: both also race to create and migrate the index.
    let start = |file: &Path| {
        harvey(ws.path())
            .args(["memory", "import"])
            .arg(file)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (pa, pb) = (start(&a), start(&b));
    // One more writer adds memories one at a time while the imports run.
    let mut singles = Vec::new();
    for i in 0..10 {
        let out = run(
            ws.path(),
            &[
                "memory",
                "add",
                "--type",
                "workflow",
                "--description",
                &format!("single add {i} during the imports"),
            ],
        );
        singles.push(out);
    }
    for out in [
        pa.wait_with_output().unwrap(),
        pb.wait_with_output().unwrap(),
    ]
    .iter()
    .chain(&singles)
    {
        let err = text(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(!err.to_lowercase().contains("locked"), "{err}");
        assert!(!err.to_lowercase().contains("busy"), "{err}");
    }
    let (_, report) = MemoryStore::open(&ws.path().join("agents"), ws.path()).unwrap();
    assert_eq!(
        (report.indexed, report.removed),
        (0, 0),
        "the index already held every file: {report:?}"
    );
    let ids = check_memories(ws.path(), &Default::default());
    assert_eq!(ids.len(), 1010);
}

/// `harvey ARGS` with the file-size limit at `blocks` × 512 bytes and SIGXFSZ ignored
/// (an ignored signal stays ignored across exec).
fn limited(ws: &Path, blocks: u64, args: &[&str]) -> Output {
    let script = format!("trap '' XFSZ; ulimit -f {blocks} && exec \"$0\" \"$@\"");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(ws)
        .args(args)
        // The fast test model, not whichever default is fetched here (the 1.5B Pi model).
        .env("HARVEY_MODEL", crate::support::model_path())
        .env_remove("RUST_LOG");
    cmd.output().unwrap()
}

/// Every file under `dir` with its bytes, leaving out SQLite's files.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if !name.contains(".db") {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A failed write says what failed and why, exits 1, and does not panic.
fn assert_clear_failure(out: &Output, what: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    let lower = err.to_lowercase();
    assert!(
        lower.contains("file too large")
            || lower.contains("disk is full")
            || lower.contains("no space")
            || lower.contains("disk i/o error"),
        "{what}: the error names the cause: {err}"
    );
    assert!(
        !lower.contains("delete it"),
        "{what}: a full disk is not fixed by deleting the index: {err}"
    );
}

#[test]
fn a_full_disk_fails_a_memory_write_clearly_and_keeps_what_was_there() {
    let ws = workspace();
    let body = "x".repeat(3000);
    for i in 0..5 {
        let out = run(
            ws.path(),
            &[
                "memory",
                "add",
                "--type",
                "project_fact",
                "--description",
                &format!("existing fact {i}"),
                "--body",
                &body,
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let before = check_memories(ws.path(), &Default::default());
    let (mut failures, mut successes) = (0, 0);
    // Limits from one block (every write fails) up to room for a memory file but not
    // for the index's growth.
    for blocks in [1, 2, 4, 8, 16, 64, 256] {
        let files = snapshot(&ws.path().join("agents/memories"));
        // New descriptions each time: an update of an earlier line would change a file.
        let import = ws.path().join(format!("more-{blocks}.jsonl"));
        jsonl(&import, &format!("import under {blocks} blocks"), 50);
        let description = format!("new fact under a limit of {blocks} blocks");
        let add = limited(
            ws.path(),
            blocks,
            &[
                "memory",
                "add",
                "--type",
                "project_fact",
                "--description",
                &description,
                "--body",
                &body,
            ],
        );
        let imported = limited(
            ws.path(),
            blocks,
            &["memory", "import", import.to_str().unwrap()],
        );
        for (out, what) in [(&add, "memory add"), (&imported, "memory import")] {
            if out.status.success() {
                successes += 1;
            } else {
                failures += 1;
                assert_clear_failure(out, &format!("{what} at {blocks} blocks"));
            }
        }
        // Whatever failed, what was there before is unchanged and the store opens.
        let after = snapshot(&ws.path().join("agents/memories"));
        for (path, bytes) in &files {
            if path.file_name().is_some_and(|n| n == "MEMORY.md") {
                continue;
            }
            assert_eq!(after.get(path), Some(bytes), "{} unchanged", path.display());
        }
        let now = check_memories(ws.path(), &before);
        assert!(now.is_superset(&before));
        assert_eq!(leftover_temps(ws.path()), 0, "a failed write cleans up");
    }
    assert!(failures > 0, "the limit made writes fail");
    eprintln!("disk full (memory): {failures} failed clearly, {successes} fit");
}

#[test]
fn a_full_disk_fails_a_rag_ingest_clearly_and_keeps_the_store() {
    let ws = workspace();
    let docs = ws.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for f in 0..5 {
        let words: Vec<String> = (0..400).map(|w| format!("old{f}w{w}")).collect();
        std::fs::write(docs.join(format!("f{f}.txt")), words.join(" ")).unwrap();
    }
    assert!(run(ws.path(), &["rag", "new", "docs"]).status.success());
    let out = run(ws.path(), &["rag", "ingest", "docs"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let query = |ws: &Path| {
        let out = run(ws, &["rag", "query", "--json", "-k", "3", "old3w7"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let found = query(ws.path());
    assert!(found.contains("f3.txt"), "{found}");
    // Twenty new files: far more than the limit lets the write-ahead log grow.
    for f in 5..25 {
        let words: Vec<String> = (0..2000).map(|w| format!("new{f}w{w}")).collect();
        std::fs::write(docs.join(format!("f{f}.txt")), words.join(" ")).unwrap();
    }
    let mut failed = 0;
    for blocks in [1, 16, 64] {
        let out = limited(ws.path(), blocks, &["rag", "ingest", "docs"]);
        if !out.status.success() {
            failed += 1;
            assert_clear_failure(&out, &format!("rag ingest at {blocks} blocks"));
        }
        assert_eq!(query(ws.path()), found, "the store still answers as before");
    }
    assert!(failed > 0, "the limit made the ingest fail");
    let out = run(ws.path(), &["rag", "ingest", "docs"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
