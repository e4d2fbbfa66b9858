//! `cargo bench --bench memory_recall`: recall latency and session-start injection
//! assembly at 1k, 10k and 100k memories, side by side with a bare FTS5 query over the
//! same index (the reference: the least work any full-text recall can do).
//!
//! Token costs are counted with the default model's vocabulary (as in a session).
//! Set HARVEY_BENCH_SIZES=1000,10000 to choose sizes.

use std::path::PathBuf;
use std::time::Instant;

use harvey::engine::Vocabulary;
use harvey::memory::query::fts_query;
use harvey::memory::recall::{recall, CostCache, Limits, MemorySilo};
use harvey::memory::{Memory, MemoryStore, MemoryType};
use harvey::tokens::WordCounter;

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
    for n in sizes {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut store, _) = MemoryStore::open(dir.path(), dir.path()).expect("store opens");
        let started = Instant::now();
        store.index_only(&synthetic(n)).expect("bulk index");
        let load_s = started.elapsed().as_secs_f64();
        let conn = rusqlite::Connection::open(store.dir().join("memories.db")).expect("db");
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
        let limits = Limits {
            budget: 1024,
            factual_share: 0.5,
            max_relevant: 5,
        };
        let silo = MemorySilo(&store);
        let assembly = measure(|q| {
            std::hint::black_box(recall(&[&silo], q, limits, &vocab).expect("recall"));
        });
        // With token counts cached in memories.db (a returning session: the first
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
}

/// (p50, p99) in ms over ROUNDS calls cycling through QUERIES.
fn measure(mut f: impl FnMut(&str)) -> (f64, f64) {
    for q in QUERIES {
        f(q);
    }
    let mut times: Vec<f64> = (0..ROUNDS)
        .map(|i| {
            let q = QUERIES[i % QUERIES.len()];
            let t = Instant::now();
            f(q);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    (pct(0.5), pct(0.99))
}

/// `n` memories whose words follow a Zipf-like law over a 20k-word vocabulary (as
/// natural text does), with the queries' topic words at mid-frequency ranks.
fn synthetic(n: usize) -> Vec<Memory> {
    const TOPICS: &[&str] = &[
        "git",
        "cargo",
        "build",
        "error",
        "linker",
        "memory",
        "deploy",
        "server",
        "port",
        "postgres",
        "connection",
        "refused",
        "commit",
        "message",
        "docker",
        "permission",
        "space",
        "device",
        "release",
        "nginx",
        "reload",
        "ssh",
        "password",
        "python",
        "pi",
        "crash",
        "debug",
        "backup",
        "database",
        "config",
        "fix",
        "killed",
        "service",
    ];
    const VOCAB: usize = 20_000;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // Cumulative Zipf weights 1/(rank+1).
    let weights: Vec<f64> = (0..VOCAB)
        .scan(0.0, |acc, r| {
            *acc += 1.0 / (r as f64 + 1.0);
            Some(*acc)
        })
        .collect();
    let total = weights[VOCAB - 1];
    let word = |r: u64| -> String {
        let x = (r % 1_000_000) as f64 / 1_000_000.0 * total;
        let rank = weights.partition_point(|w| *w < x);
        // Topic words sit at ranks 100, 130, 160, …: common but not everywhere.
        if rank >= 100 && (rank - 100) % 30 == 0 && (rank - 100) / 30 < TOPICS.len() {
            TOPICS[(rank - 100) / 30].to_string()
        } else {
            format!("w{rank}")
        }
    };
    (0..n)
        .map(|i| {
            let mut words = |k: usize| (0..k).map(|_| word(next())).collect::<Vec<_>>().join(" ");
            let mtype = MemoryType::ALL[i % 10 % 5];
            Memory {
                id: format!("{}_{i:06x}", mtype.as_str()),
                mtype,
                kind: None,
                created_at: "2026-10-01T12:00:00Z".into(),
                updated_at: "2026-10-01T12:00:00Z".into(),
                supersedes: Vec::new(),
                tags: vec![words(1), words(1)],
                description: words(8),
                summary: words(16),
                action: None,
                confidence: 0.5,
                source_session: None,
                expires_at: None,
                body: words(30),
                extra: Default::default(),
            }
        })
        .collect()
}
