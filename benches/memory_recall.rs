//! `cargo bench --bench memory_recall`: recall latency and session-start injection
//! assembly at 1k, 10k and 100k memories, side by side with a bare FTS5 query over the
//! same index (the reference: the least work any full-text recall can do).
//!
//! Token costs are counted with the default model's vocabulary (as in a session).
//! Set HARVEY_BENCH_SIZES=1000,10000 to choose sizes.
//!
//! A second table is the hard case for full text: words that overlap heavily (a
//! 45-word vocabulary, 6 words per description and 10 per summary, queries of 3 such
//! words, so most memories match every query), with the embedder loaded: the whole
//! session-start assembly, query embedding included (memory vectors are random unit
//! vectors: an exact scan costs the same whatever they hold).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

#[path = "support/fixtures.rs"]
mod fixtures;

use harvey::engine::Vocabulary;
use harvey::memory::query::fts_query;
use harvey::memory::rank::{Feedback, Mode, Ranking};
use harvey::memory::recall::{recall, CostCache, Limits, MemorySilo};
use harvey::memory::{Memory, MemoryStore, MemoryType};
use harvey::tokens::{Embedder, WordCounter};

const QUERIES: &[&str] = &[
    "How do I fix git?",
    "what's the error",
    "git: error",
    "\"quoted\" (parens) AND OR NOT *",
    "linker killed, out of memory",
    "deploy the service to the pi",
    "which port does the server listen on?",
    "cargo build fails with no space left on device",
    "How should I write commit messages?",
    "postgres connection refused",
];

const ROUNDS: usize = 300;

fn main() {
    let model =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    let vocab = match Vocabulary::load(&model) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{e}: run scripts/fetch-models.sh");
            std::process::exit(1);
        }
    };
    let sizes: Vec<usize> = std::env::var("HARVEY_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    println!(
        "{:>8}  {:>22}  {:>22}  {:>22}  {:>22}  {:>22}  {:>8}",
        "memories",
        "bare FTS5 p50/p99 ms",
        "recall p50/p99 ms",
        "assembly p50/p99 ms",
        "assembly cached costs",
        "(no tokenizer) ms",
        "load s"
    );
    for &n in &sizes {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut store, _) = MemoryStore::open(dir.path(), dir.path()).expect("store opens");
        let started = Instant::now();
        store
            .index_only(&fixtures::synthetic(n, fixtures::TOPICS))
            .expect("bulk index");
        let load_s = started.elapsed().as_secs_f64();
        let conn =
            rusqlite::Connection::open(store.dir().join(harvey::memory::location::INDEX_FILE))
                .expect("db");
        let bare = measure(|q| {
            if let Some(fts) = fts_query(q) {
                let mut stmt = conn
                    .prepare_cached("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?1 ORDER BY rank LIMIT 15")
                    .expect("prepare");
                let rows: Vec<i64> = stmt
                    .query_map([fts], |r| r.get(0))
                    .expect("query")
                    .filter_map(Result::ok)
                    .collect();
                std::hint::black_box(rows);
            }
        });
        let search = measure(|q| {
            std::hint::black_box(store.search(q, &[], 5).expect("search"));
        });
        let limits = Limits::budgeted(1024, 0.5);
        let silo = MemorySilo(&store);
        let assembly = measure(|q| {
            std::hint::black_box(recall(&[&silo], q, limits, &vocab).expect("recall"));
        });
        // With token counts cached in the index (a returning session: the first
        // round fills the cache, the measured rounds hit it).
        let cached = measure(|q| {
            let costs = CostCache::new(&vocab, &store, "bench-model");
            std::hint::black_box(recall(&[&silo], q, limits, &costs).expect("recall"));
            costs.save();
        });
        // The same assembly with a free token counter: what the tokenizer costs.
        let counting = measure(|q| {
            std::hint::black_box(recall(&[&silo], q, limits, &WordCounter).expect("recall"));
        });
        println!(
            "{n:>8}  {:>10.3} / {:>9.3}  {:>10.3} / {:>9.3}  {:>10.3} / {:>9.3}  {:>10.3} / {:>9.3}  {:>10.3} / {:>9.3}  {load_s:>8.1}",
            bare.0, bare.1, search.0, search.1, assembly.0, assembly.1, cached.0, cached.1, counting.0, counting.1
        );
    }
    println!("target: session-start assembly p99 <= 10 ms at 10k memories (Pi budget 200 ms)");
    overlapping_words(&vocab, &sizes);
}

/// The overlapping-vocabulary case, hybrid, query embedding included.
fn overlapping_words(vocab: &Vocabulary, sizes: &[usize]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2.gguf");
    let embedder: Arc<dyn Embedder> =
        match harvey::engine::LlamaEmbedder::load(&path, harvey::app::physical_cores()) {
            Ok(e) => Arc::new(e),
            Err(e) => {
                println!("overlapping words: skipped ({e}: run scripts/fetch-embedder.sh)");
                return;
            }
        };
    println!(
        "\noverlapping words (45-word vocabulary), hybrid recall with the embedder\n{:>8}  {:>22}  {:>22}  {:>22}  {:>22}  {:>22}",
        "memories", "bare FTS5 p50/p99 ms", "full text only", "assembly, no feedback", "assembly p50/p99 ms", "first query ms"
    );
    for &n in sizes {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut store, _) = MemoryStore::open(dir.path(), dir.path()).expect("store opens");
        store.index_only(&overlapping(n)).expect("bulk index");
        fixtures::random_vectors(&store, embedder.as_ref());
        store.use_embedder(embedder.clone());
        let conn =
            rusqlite::Connection::open(store.dir().join(harvey::memory::location::INDEX_FILE))
                .expect("db");
        let queries = overlap_queries();
        let bare = measure_on(&queries, |q| {
            if let Some(fts) = fts_query(q) {
                let mut stmt = conn
                    .prepare_cached("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?1 ORDER BY rank LIMIT 50")
                    .expect("prepare");
                let rows: Vec<i64> = stmt
                    .query_map([fts], |r| r.get(0))
                    .expect("query")
                    .filter_map(Result::ok)
                    .collect();
                std::hint::black_box(rows);
            }
        });
        let limits = Limits::budgeted(1024, 0.5);
        let first = {
            let silo = MemorySilo(&store);
            let t = Instant::now();
            std::hint::black_box(recall(&[&silo], &queries[0], limits, vocab).expect("recall"));
            t.elapsed().as_secs_f64() * 1000.0
        };
        let hybrid = {
            let silo = MemorySilo(&store);
            measure_on(&queries, |q| {
                let costs = CostCache::new(vocab, &store, "bench-model");
                std::hint::black_box(recall(&[&silo], q, limits, &costs).expect("recall"));
                costs.save();
            })
        };
        store.set_ranking(Ranking {
            feedback: Feedback::OFF,
            ..Ranking::default()
        });
        let no_feedback = {
            let silo = MemorySilo(&store);
            measure_on(&queries, |q| {
                let costs = CostCache::new(vocab, &store, "bench-model");
                std::hint::black_box(recall(&[&silo], q, limits, &costs).expect("recall"));
                costs.save();
            })
        };
        store.set_ranking(Ranking::default().with_mode(Mode::Lexical));
        let lexical = {
            let silo = MemorySilo(&store);
            measure_on(&queries, |q| {
                let costs = CostCache::new(vocab, &store, "bench-model");
                std::hint::black_box(recall(&[&silo], q, limits, &costs).expect("recall"));
                costs.save();
            })
        };
        println!(
            "{n:>8}  {:>10.3} / {:>9.3}  {:>10.3} / {:>9.3}  {:>10.3} / {:>9.3}  {:>10.3} / {:>9.3}  {first:>22.1}",
            bare.0, bare.1, lexical.0, lexical.1, no_feedback.0, no_feedback.1, hybrid.0, hybrid.1
        );
    }
    println!("target: the whole assembly, query embedding included, p99 <= 10 ms at 10k");
}

const OVERLAP_WORDS: [&str; 45] = [
    "pump",
    "valve",
    "sensor",
    "heater",
    "greenhouse",
    "schedule",
    "moisture",
    "relay",
    "water",
    "morning",
    "evening",
    "deploy",
    "server",
    "port",
    "build",
    "error",
    "cargo",
    "git",
    "commit",
    "release",
    "backup",
    "database",
    "config",
    "service",
    "restart",
    "network",
    "disk",
    "memory",
    "thread",
    "cache",
    "log",
    "test",
    "script",
    "branch",
    "merge",
    "docker",
    "image",
    "python",
    "rust",
    "kernel",
    "driver",
    "camera",
    "light",
    "fan",
    "battery",
];

/// Memories over the 45-word vocabulary: 6 words per description, 10 per summary.
fn overlapping(n: usize) -> Vec<Memory> {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..n)
        .map(|i| {
            let mut words = |k: usize| {
                (0..k)
                    .map(|_| OVERLAP_WORDS[(next() % 45) as usize])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let mtype = [
                MemoryType::ToolUse,
                MemoryType::Workflow,
                MemoryType::UserPreference,
            ][i % 3];
            Memory {
                id: format!("{}_{i:06x}", mtype.as_str()),
                mtype,
                kind: None,
                created_at: "2026-10-01T12:00:00Z".into(),
                updated_at: "2026-10-01T12:00:00Z".into(),
                supersedes: Vec::new(),
                tags: Vec::new(),
                description: words(6),
                summary: words(10),
                action: None,
                confidence: 0.5,
                source_session: None,
                expires_at: None,
                evidence: None,
                body: String::new(),
                extra: Default::default(),
            }
        })
        .collect()
}

/// Queries of 3 vocabulary words.
fn overlap_queries() -> Vec<String> {
    (0..30)
        .map(|i| {
            let w = |k: usize| OVERLAP_WORDS[(i * 7 + k * 11) % 45];
            format!("{} {} {}", w(0), w(1), w(2))
        })
        .collect()
}

/// (p50, p99) in ms over ROUNDS calls cycling through QUERIES.
fn measure(f: impl FnMut(&str)) -> (f64, f64) {
    let queries: Vec<String> = QUERIES.iter().map(|q| q.to_string()).collect();
    measure_on(&queries, f)
}

/// (p50, p99) in ms over ROUNDS calls cycling through `queries` (after one warm-up round).
fn measure_on(queries: &[String], mut f: impl FnMut(&str)) -> (f64, f64) {
    for q in queries {
        f(q);
    }
    let mut times: Vec<f64> = (0..ROUNDS)
        .map(|i| {
            let q = &queries[i % queries.len()];
            let t = Instant::now();
            f(q);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    (pct(0.5), pct(0.99))
}
