//! A real full disk: the workspace is a 3 MB tmpfs (mounted as root: CI runs the suite
//! as root), filled to the last page. Memory writes, `harvey run`'s session close, the
//! prefix cache and the REPL's writes must fail with a clear error and a non-zero exit,
//! lose nothing that was acknowledged, and leave nothing half-written. A machine that
//! refuses the mount fails the test with the reason: it never passes without a full disk.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::process::{harvey, text, with_stdin};

/// A tmpfs mounted on a temporary directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Self { dir },
            Ok(o) => panic!(
                "could not mount a {size} tmpfs for the disk-full test ({}): it needs root \
                 (CI runs the suite as root); without a real full disk this test fails",
                text(&o.stderr).trim()
            ),
            Err(e) => panic!("could not run mount for the disk-full test: {e}"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Writes `filler` until the file system refuses a single page.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    for chunk in [65536, 4096, 512, 1] {
        let block = vec![b'x'; chunk];
        while f.write_all(&block).and_then(|()| f.sync_data()).is_ok() {}
    }
    path
}

/// Every file under `dir` but the filler and SQLite's own, with its size.
fn files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if name != "filler" && !name.contains(".db") {
                out.push((p.clone(), e.metadata().unwrap().len()));
            }
        }
    }
    out.sort();
    out
}

/// No temporary file, no empty file, every session record complete and closed, every
/// saved prefix's key matching its state.
fn assert_nothing_half_written(ws: &Path, when: &str) {
    for (path, len) in files(ws) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !name.ends_with(".tmp") && !name.contains(".tmp-"),
            "{when}: {path:?} left"
        );
        assert!(len > 0, "{when}: {path:?} is empty");
        if name.ends_with(".spmd") && path.parent().is_some_and(|p| p.ends_with("sessions")) {
            let record = harvey::session::fountain::parse(&std::fs::read_to_string(&path).unwrap());
            assert!(
                record.ended && !record.exchanges.is_empty(),
                "{when}: {path:?} is cut"
            );
        }
        if name.ends_with(".json") && path.parent().is_some_and(|p| p.ends_with("cache")) {
            let key: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let state = path.with_extension("state");
            assert_eq!(
                std::fs::metadata(&state).map(|m| m.len()).ok(),
                key["state_bytes"].as_u64(),
                "{when}: {path:?} names a state that is not there whole"
            );
        }
    }
}

fn records(ws: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(ws.join("agents/sessions"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "spmd"))
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

fn says_no_space(out: &Output, what: &str) {
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr)).to_lowercase();
    assert!(!all.contains("panicked"), "{what}: {all}");
    assert!(
        // SQLite reports a full disk as an I/O error; harvey names the likely cause.
        all.contains("no space left")
            || all.contains("disk is full")
            || all.contains("a full disk"),
        "{what}: the error names the cause: {all}"
    );
}

fn memory_add(ws: &Path, description: &str) -> Output {
    harvey(ws)
        .args(["memory", "add", "--type", "project_fact", "--description"])
        .arg(description)
        .args(["--body", "The staging host is called kestrel."])
        .output()
        .unwrap()
}

#[test]
fn a_full_disk_fails_memory_writes_session_closes_the_prefix_cache_and_the_repl_clearly() {
    let fs = Tmpfs::mount("3m");
    let ws = fs.path();
    std::fs::create_dir_all(ws.join("agents")).unwrap();
    std::fs::write(
        ws.join("agents/harvey.yaml"),
        "memory:\n  embedder: none\nsampling:\n  max_tokens: 8\n  temperature: 0\nengine:\n  n_ctx: 1024\n",
    )
    .unwrap();
    // With room: a memory and a run, both kept.
    let out = memory_add(ws, "the staging host");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = harvey(ws).args(["run", "Say hi."]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let before = records(ws);
    assert_eq!(before.len(), 1);
    let memories = files(&ws.join("agents/memories"));
    // The next run must save its prefix again, into a full disk.
    let _ = std::fs::remove_dir_all(ws.join("agents/cache"));
    let filler = fill(ws);

    let out = memory_add(ws, "the production host");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    says_no_space(&out, "memory add");
    assert_eq!(
        files(&ws.join("agents/memories")),
        memories,
        "memories as they were"
    );
    assert_nothing_half_written(ws, "memory add");

    let out = harvey(ws).args(["run", "Say hi."]).output().unwrap();
    assert_ne!(out.status.code(), Some(0), "run: {}", text(&out.stderr));
    says_no_space(&out, "run");
    assert!(
        text(&out.stderr).contains("not saved"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(records(ws), before, "no new record, the old one untouched");
    assert_nothing_half_written(ws, "run");

    let out = with_stdin(harvey(ws), "Say hi.\n/exit\n");
    let shown = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "REPL: {shown}{}",
        text(&out.stderr)
    );
    says_no_space(&out, "REPL");
    assert!(!shown.contains("[session saved to"), "{shown}");
    assert_eq!(records(ws), before);
    assert_nothing_half_written(ws, "REPL");

    // Room again: the same run is recorded whole.
    std::fs::remove_file(filler).unwrap();
    let out = harvey(ws).args(["run", "Say hi."]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(records(ws).len(), 2);
    assert_nothing_half_written(ws, "after freeing space");
}
