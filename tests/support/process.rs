//! `harvey` as a child process for the fault tests: workspaces, a seeded random source,
//! killing a run at a chosen moment, and checking the memory store afterwards.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use harvey::memory::{file, MemoryType};

/// The shared head cache of every `harvey` a test runs (never the user's own).
pub const SHARED_CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/harvey-shared-prefix");

/// A `harvey --workdir WS …` command with the test environment cleaned.
pub fn harvey(ws: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harvey"));
    cmd.arg("--workdir")
        .arg(ws)
        .env("HARVEY_CACHE_DIR", SHARED_CACHE)
        // The fast test model, not whichever default is fetched here (the 1.5B Pi model).
        .env("HARVEY_MODEL", crate::support::model_path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    cmd
}

/// Runs `cmd` to completion with `stdin` as its whole input.
pub fn with_stdin(mut cmd: Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(mut pipe) = child.stdin.take() {
        pipe.write_all(stdin.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// Runs to completion.
pub fn run(ws: &Path, args: &[&str]) -> Output {
    harvey(ws).args(args).output().unwrap()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A workspace whose memory store uses full-text search only (no embedder load), so
/// the memory and RAG commands start fast.
pub fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: none\n",
    )
    .unwrap();
    ws
}

/// splitmix64: a seeded source for kill moments, so a failing run can be replayed.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `HARVEY_FAULT_SEED` or the clock; the seed is printed.
    pub fn new(name: &str) -> Self {
        let seed = std::env::var("HARVEY_FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("{name}: HARVEY_FAULT_SEED={seed}");
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A duration in `[0, max)`.
    pub fn delay(&mut self, max: Duration) -> Duration {
        let nanos = max.as_nanos().max(1) as u64;
        Duration::from_nanos(self.next() % nanos)
    }
}

/// Kill rounds: the default, or `HARVEY_SOAK`'s multiple of it.
pub fn rounds(default: usize) -> usize {
    match std::env::var("HARVEY_SOAK").ok().as_deref() {
        None | Some("") | Some("0") => default,
        Some(n) => default * n.parse::<usize>().unwrap_or(1).max(5),
    }
}

/// What a run printed before it ended, and whether it was killed.
pub struct Killed {
    pub stdout: Vec<String>,
    pub stderr: String,
    pub killed: bool,
    pub success: bool,
    /// From the marker to the exit, for a run that ended by itself after printing it.
    pub marked_for: Option<Duration>,
}

/// Starts `cmd`, sends SIGKILL after `after` (unless it ended before) and collects the
/// stdout lines it wrote (each is flushed as written: they are its acknowledgements).
pub fn kill_after(cmd: Command, after: Duration) -> Killed {
    kill_after_marker(cmd, None, after)
}

/// [`kill_after`], with the clock started when a stderr line contains `marker` (a log
/// line at the start of the step under test); a run that never prints it is not killed.
pub fn kill_after_marker(mut cmd: Command, marker: Option<&str>, after: Duration) -> Killed {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let lines = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });
    let (seen, marked) = std::sync::mpsc::channel();
    let wanted = marker.map(str::to_string);
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if wanted.as_deref().is_some_and(|m| line.contains(m)) {
                let _ = seen.send(Instant::now());
            }
            s.push_str(&line);
            s.push('\n');
        }
        s
    });
    let mut deadline = marker.is_none().then(|| Instant::now() + after);
    let mut marked_at = None;
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if deadline.is_none() {
            marked_at = marked.try_recv().ok();
            deadline = marked_at.map(|at| at + after);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            child.kill().unwrap();
            killed = true;
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(1).min(after / 4 + Duration::from_micros(50)));
    };
    let ended = Instant::now();
    let stderr = errors.join().unwrap();
    // A marker printed just before the exit may reach the channel after the loop saw it.
    let marked_at = marked_at.or_else(|| marked.try_recv().ok());
    Killed {
        stdout: lines.join().unwrap(),
        stderr,
        killed: killed && !status.success(),
        success: status.success(),
        marked_for: marked_at
            .filter(|_| !killed)
            .map(|at| ended.saturating_duration_since(at)),
    }
}

/// Wall time of one complete run of `cmd`.
pub fn timed(mut cmd: Command) -> (Output, Duration) {
    let start = Instant::now();
    let out = cmd.output().unwrap();
    (out, start.elapsed())
}

/// Memory files under `agents/memories/<type>/` (active ones; leftovers of an atomic
/// write start with a dot and are not memories).
pub fn memory_files(ws: &Path) -> Vec<PathBuf> {
    let dir = ws.join("agents/memories");
    let mut out = Vec::new();
    for t in MemoryType::ALL {
        let Ok(entries) = std::fs::read_dir(dir.join(t.as_str())) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with('.') && name.ends_with(".spmd") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Temporary files an interrupted atomic write left behind.
pub fn leftover_temps(ws: &Path) -> usize {
    fn walk(dir: &Path, n: &mut usize) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, n);
            } else if e.file_name().to_string_lossy().contains(".tmp-") {
                *n += 1;
            }
        }
    }
    let mut n = 0;
    walk(&ws.join("agents/memories"), &mut n);
    n
}

/// After a crash: the store opens and reconciles, every memory file parses, the index
/// lists exactly the files' memories, and every acknowledged id is among them. Returns
/// the listed ids.
pub fn check_memories(ws: &Path, acked: &BTreeSet<String>) -> BTreeSet<String> {
    let out = run(ws, &["memory", "list", "--json"]);
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "the store opens after a kill: {stderr}"
    );
    assert!(
        !stderr.contains("skipped"),
        "no half-written memory file: {stderr}"
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed: BTreeSet<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let mut on_disk = BTreeSet::new();
    for path in memory_files(ws) {
        let bytes = std::fs::read(&path).unwrap();
        let m = file::parse(&bytes, None)
            .unwrap_or_else(|e| panic!("{} is a whole memory: {e}", path.display()));
        on_disk.insert(m.id);
    }
    assert_eq!(listed, on_disk, "the index lists exactly the memory files");
    let lost: Vec<_> = acked.difference(&listed).collect();
    assert!(lost.is_empty(), "acknowledged memories lost: {lost:?}");
    listed
}

/// `harvey memory recall` finds the memory `id` by its description.
pub fn assert_recalled(ws: &Path, id: &str, description: &str) {
    let out = run(
        ws,
        &["memory", "recall", "--json", "--k", "50", description],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(id),
        "{id} recalled by {description:?}: {}",
        text(&out.stdout)
    );
}
