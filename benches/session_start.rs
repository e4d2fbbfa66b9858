//! `cargo bench --bench session_start`: the cold session-start recall as a user meets
//! it, a new `harvey memory recall "…" --budget 1024` process over a workspace of 1k,
//! 10k and 100k memories (files on disk, their index and vectors current, as a returning
//! session finds them), median wall time of 5 runs after one warm-up (warm page cache).
//!
//! The workspaces are built once into `HARVEY_FIXTURE_DIR` (kept, reused by later runs
//! and usable by hand: `harvey -w DIR/ws-10000 memory recall "…" --budget 1024`), or a
//! temporary directory. Memory texts are the Zipf-distributed synthetic words of
//! `memory_recall`; vectors are random unit vectors stored under the real embedder's
//! model id (an exact scan costs the same whatever they hold), so no memory is embedded.
//! `HARVEY_BENCH_SIZES=1000,10000` chooses the sizes; `HARVEY_BENCH_BIN` the binary
//! (default: target/release/harvey, so run `cargo build --release` first).
//!
//! Beside each recall, the time to the REPL's prompt: a new `harvey -w WS` with the
//! default model (SmolLM2-135M-Instruct) reading `/exit`, so the model loads and the
//! stores open (side by side, as `App::open` does) and the session ends at once with
//! nothing to record. Its warm-up run saves the workspace's prompt prefix.
//!
//! Then the 10k workspace again with a RAG store of `HARVEY_BENCH_RAG_CHUNKS` synthetic
//! chunks (default 100,000; 0 skips it) in use (`agents/rag/settings.json`), so the
//! recall also searches it (full text and vectors), as a session that has `/rag use`d a
//! big store starts. Its chunks and vectors come from `harvey bench --footprint`'s
//! builder (`bench::footprint::build_store`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[path = "support/fixtures.rs"]
mod fixtures;

use harvey::engine::LlamaEmbedder;
use harvey::memory::MemoryStore;
use harvey::tokens::Embedder;

const QUERIES: &[&str] = &[
    "How do I fix git?",
    "cargo build fails with no space left on device",
    "which port does the server listen on?",
];

const RUNS: usize = 5;

/// The default model, as `scripts/fetch-models.sh` leaves it.
const MODEL: &str = "models/SmolLM2-135M-Instruct.Q4_1.gguf";

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let embedder = LlamaEmbedder::load(&root.join("models/all-MiniLM-L6-v2.gguf"), 2)
        .unwrap_or_else(|e| {
            eprintln!("{e}: run scripts/fetch-embedder.sh");
            std::process::exit(1);
        });
    let model = root.join(MODEL);
    if !model.is_file() {
        eprintln!(
            "{} is missing: run scripts/fetch-models.sh",
            model.display()
        );
        std::process::exit(1);
    }
    let bin = std::env::var_os("HARVEY_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/release/harvey"));
    let sizes: Vec<usize> = std::env::var("HARVEY_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    let temp = tempfile::tempdir().expect("a temporary directory");
    let base = std::env::var_os("HARVEY_FIXTURE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    println!(
        "{:>8}  {:>14}  {:>12}  {:>15}  {:>12}",
        "memories", "cold recall ms", "(min–max)", "prompt ready ms", "(min–max)"
    );
    for n in sizes {
        let ws = base.join(format!("ws-{n}"));
        if !ws.join("agents/memories").exists() {
            let t = Instant::now();
            fixture(&ws, n, &embedder);
            eprintln!(
                "built {} in {:.1} s",
                ws.display(),
                t.elapsed().as_secs_f64()
            );
        }
        print_row(&n.to_string(), &measure(&bin, &ws, &model));
    }
    let chunks: usize = std::env::var("HARVEY_BENCH_RAG_CHUNKS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100_000);
    if chunks > 0 {
        let ws = base.join(format!("ws-10000-rag-{chunks}"));
        if !ws.join("agents/rag/settings.json").exists() {
            let t = Instant::now();
            fixture(&ws, 10_000, &embedder);
            rag_fixture(&ws, chunks, &embedder);
            eprintln!(
                "built {} in {:.1} s",
                ws.display(),
                t.elapsed().as_secs_f64()
            );
        }
        let what = format!("10000 + {chunks} RAG chunks");
        print_row(&what, &measure(&bin, &ws, &model));
    }
}

/// Median, min and max of `RUNS` cold recalls, then of `RUNS` starts to the prompt,
/// each after one warm-up, in ms.
fn measure(bin: &Path, ws: &Path, model: &Path) -> [[f64; 3]; 2] {
    [
        median_of(|i| cold_recall(bin, ws, QUERIES[i % QUERIES.len()])),
        median_of(|_| prompt_ready(bin, ws, model)),
    ]
}

/// Median, min and max of `RUNS` runs after one warm-up.
fn median_of(mut run: impl FnMut(usize) -> f64) -> [f64; 3] {
    let mut ms: Vec<f64> = (0..=RUNS).map(&mut run).collect();
    ms.remove(0);
    ms.sort_by(f64::total_cmp);
    [ms[RUNS / 2], ms[0], ms[RUNS - 1]]
}

fn print_row(what: &str, [recall, ready]: &[[f64; 3]; 2]) {
    let range = |[_, min, max]: &[f64; 3]| format!("{min:.1}–{max:.1}");
    println!(
        "{what:>8}  {:>14.1}  {:>12}  {:>15.1}  {:>12}",
        recall[0],
        range(recall),
        ready[0],
        range(ready)
    );
}

/// A RAG store `bench` of `chunks` synthetic chunks in `ws`, set as the one recall uses.
fn rag_fixture(ws: &Path, chunks: usize, embedder: &LlamaEmbedder) {
    let agents = ws.join("agents");
    std::fs::create_dir_all(harvey::rag::rag_dir(&agents)).expect("rag dir");
    let path = harvey::rag::files::own_path(&agents, "bench");
    harvey::bench::footprint::build_store(&path, embedder, chunks).expect("the store builds");
    let settings = harvey::rag::settings::RagSettings {
        active: vec!["bench".into()],
        enabled: true,
    };
    settings.save(&agents).expect("rag settings");
}

/// One new process answering one query under a 1024-token budget, in ms.
fn cold_recall(bin: &Path, ws: &Path, query: &str) -> f64 {
    let t = Instant::now();
    let out = Command::new(bin)
        .arg("-w")
        .arg(ws)
        .args(["memory", "recall", query, "--budget", "1024"])
        .output()
        .expect("harvey runs");
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ms
}

/// A new REPL with `model` that reads `/exit` at once, in ms: the user-felt start.
fn prompt_ready(bin: &Path, ws: &Path, model: &Path) -> f64 {
    use std::io::Write;
    use std::process::Stdio;
    let t = Instant::now();
    let mut child = Command::new(bin)
        .arg("-w")
        .arg(ws)
        .arg("-m")
        .arg(model)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("harvey runs");
    let mut stdin = child.stdin.take().expect("a stdin");
    stdin.write_all(b"/exit\n").expect("harvey reads /exit");
    drop(stdin);
    let out = child.wait_with_output().expect("harvey ends");
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ms
}

/// A workspace with `n` memory files, reconciled into the index, with a vector each.
fn fixture(ws: &Path, n: usize, embedder: &dyn Embedder) {
    let dir = ws.join("agents/memories");
    for m in fixtures::synthetic(n, &topics()) {
        let path = dir.join(m.mtype.as_str()).join(format!("{}.spmd", m.id));
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("type dir");
        std::fs::write(&path, harvey::memory::file::render(&m)).expect("memory file");
    }
    let (store, report) = MemoryStore::open(&ws.join("agents"), ws).expect("store opens");
    assert_eq!(report.indexed, n, "{:?}", report.warnings);
    fixtures::random_vectors(&store, embedder);
}

/// The shared topic words without "password" (this bench's fixture as measured).
fn topics() -> Vec<&'static str> {
    fixtures::TOPICS
        .iter()
        .copied()
        .filter(|t| *t != "password")
        .collect()
}
