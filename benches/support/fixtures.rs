//! Synthetic memories and random vectors shared by the memory benches (`memory_recall`,
//! `session_start`), included with `#[path]`: one fixture, so their numbers compare.

use harvey::memory::{Memory, MemoryStore, MemoryType};
use harvey::tokens::Embedder;

/// The queries' topic words (ranks 100, 130, 160, … of the Zipf list).
pub const TOPICS: &[&str] = &[
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

/// Random unit vectors for every memory without one (the scan costs the same).
pub fn random_vectors(store: &MemoryStore, embedder: &dyn Embedder) {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let dim = embedder.dim();
    loop {
        let missing = store
            .index()
            .missing_vectors(embedder.model_id(), 5_000)
            .expect("missing vectors");
        if missing.is_empty() {
            return;
        }
        let items: Vec<(String, Vec<f32>)> = missing
            .into_iter()
            .map(|(hash, _)| {
                let mut v: Vec<f32> = (0..dim)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        (seed % 2000) as f32 / 1000.0 - 1.0
                    })
                    .collect();
                harvey::vector::normalize(&mut v);
                (hash, v)
            })
            .collect();
        store
            .index()
            .put_vectors(embedder.model_id(), &items)
            .expect("put vectors");
    }
}

/// `n` memories whose words follow a Zipf-like law over a 20k-word vocabulary (as
/// natural text does), with the queries' topic words at mid-frequency ranks.
pub fn synthetic(n: usize, topics: &[&str]) -> Vec<Memory> {
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
        if rank >= 100 && (rank - 100) % 30 == 0 && (rank - 100) / 30 < topics.len() {
            topics[(rank - 100) / 30].to_string()
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
                evidence: None,
                body: words(30),
                extra: Default::default(),
            }
        })
        .collect()
}
