//! `cargo bench --bench retrieval`: the embedder and hybrid recall, each beside a
//! reference measured in the same run.
//!
//! 1. Embed throughput (sentences/s) of the in-process embedder, one sentence per call
//!    and batched.
//! 2. Ingest throughput: a synthetic Markdown tree into a RAG store (files/s, chunks/s),
//!    beside the same ingest without an embedder (full text only: the cost of vectors).
//! 3. Hybrid recall latency p50/p99 at 10k memories and a RAG query at 100k chunks,
//!    beside full text alone and a bare scan over the same vectors in RAM (the floor for
//!    any exact vector search). Scanning the SQLite BLOBs row by row measured 10–20×
//!    that floor, so stores keep a copy (`vector::VectorCache`: int8 in a memory-mapped
//!    file); the first query pays for building it and is reported separately.
//!
//! Needs models/all-MiniLM-L6-v2.gguf (scripts/fetch-embedder.sh).
//! HARVEY_BENCH_CHUNKS=100000 and HARVEY_BENCH_MEMORIES=10000 choose the sizes (0 skips
//! that part); HARVEY_BENCH_EMBEDDER=path/to.gguf times another embedding file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use harvey::engine::LlamaEmbedder;
use harvey::memory::{Memory, MemoryStore, MemoryType};
use harvey::rag::ingest::IngestOptions;
use harvey::rag::RagStore;
use harvey::tokens::Embedder;

const QUERIES: &[&str] = &[
    "how do I water the plants in the morning",
    "the pump does not start",
    "why is the server refusing connections?",
    "deploy the service to the pi",
    "sensor readings look frozen",
    "which port does the web server use",
    "build fails: out of memory",
    "restart the heater when it is cold",
];

const ROUNDS: usize = 100;

fn env_size(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let path = std::env::var_os("HARVEY_BENCH_EMBEDDER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2.gguf")
        });
    let threads = harvey::app::physical_cores();
    let embedder: Arc<dyn Embedder> = match LlamaEmbedder::load(&path, threads) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("{e}: run scripts/fetch-embedder.sh");
            std::process::exit(1);
        }
    };
    println!("embedder {} ({threads} threads)", embedder.model_id());
    embed_throughput(embedder.as_ref());
    let (memories, chunks) = (
        env_size("HARVEY_BENCH_MEMORIES", 10_000),
        env_size("HARVEY_BENCH_CHUNKS", 100_000),
    );
    if chunks > 0 {
        ingest_throughput(&embedder);
        rag_query(&embedder, chunks);
    }
    if memories > 0 {
        memory_recall(&embedder, memories);
    }
}

fn sentences(n: usize) -> Vec<String> {
    let words = [
        "pump",
        "valve",
        "sensor",
        "heater",
        "greenhouse",
        "schedule",
        "moisture",
        "relay",
        "the",
        "of",
        "and",
        "runs",
        "checks",
        "morning",
        "evening",
        "water",
        "air",
        "cold",
        "server",
        "deploy",
        "build",
        "error",
        "memory",
        "config",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            let len = 8 + (seed % 17) as usize;
            (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    words[(seed % words.len() as u64) as usize]
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn embed_throughput(e: &dyn Embedder) {
    let texts = sentences(256);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    e.embed(&refs[..8]).expect("warm-up");
    let t = Instant::now();
    for s in &refs[..64] {
        e.embed(&[s]).expect("embed");
    }
    let single = 64.0 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    e.embed(&refs).expect("embed");
    let batched = refs.len() as f64 / t.elapsed().as_secs_f64();
    println!("embed: {single:.0} sentences/s one at a time, {batched:.0} sentences/s batched (8–24 words each)");
}

fn ingest_throughput(e: &Arc<dyn Embedder>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tree = dir.path().join("docs");
    std::fs::create_dir_all(&tree).expect("tree");
    let body = sentences(40 * 50);
    for f in 0..50 {
        let mut text = format!("# Document {f}\n\n");
        for (i, para) in body[f * 40..(f + 1) * 40].chunks(4).enumerate() {
            text.push_str(&format!("## Part {i}\n\n{}\n\n", para.join(". ")));
        }
        std::fs::write(tree.join(format!("doc{f}.md")), text).expect("write");
    }
    let opts = IngestOptions {
        workspace: dir.path(),
        chunk_tokens: 256,
    };
    for (label, embedder) in [("full text only", None), ("with vectors", Some(e.clone()))] {
        let db = dir.path().join(format!("{}.db", label.replace(' ', "_")));
        let mut store = RagStore::at(&db, "bench", embedder).expect("store");
        let t = Instant::now();
        let r = store
            .ingest(std::slice::from_ref(&tree), &opts, &mut |_| {}, &|| false)
            .expect("ingest");
        let s = t.elapsed().as_secs_f64();
        println!(
            "ingest ({label}): {} files, {} chunks in {s:.2} s = {:.1} files/s, {:.1} chunks/s",
            r.files_ingested,
            r.chunks_added,
            r.files_ingested as f64 / s,
            r.chunks_added as f64 / s
        );
    }
}

/// (p50, p99) in ms.
fn measure(mut f: impl FnMut(&str)) -> (f64, f64) {
    for q in QUERIES {
        f(q);
    }
    let mut times: Vec<f64> = (0..ROUNDS)
        .map(|i| {
            let t = Instant::now();
            f(QUERIES[i % QUERIES.len()]);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    (pct(0.5), pct(0.99))
}

fn random_unit_vectors(n: usize, dim: usize) -> Vec<Vec<f32>> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            let mut v: Vec<f32> = (0..dim)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % 2001) as f32 / 1000.0 - 1.0
                })
                .collect();
            harvey::vector::normalize(&mut v);
            v
        })
        .collect()
}

/// The in-memory reference: a dot product over vectors already in RAM.
fn scan_in_memory(q: &[f32], all: &[Vec<f32>], k: usize) -> usize {
    let mut top = harvey::vector::TopK::new(k);
    for (i, v) in all.iter().enumerate() {
        let s: f32 = q.iter().zip(v).map(|(a, b)| a * b).sum();
        top.push(s, i);
    }
    top.into_sorted().len()
}

fn memory_recall(e: &Arc<dyn Embedder>, n: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut store, _) = MemoryStore::open(dir.path(), dir.path()).expect("store");
    let texts = sentences(n);
    let memories: Vec<Memory> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
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
                description: t.clone(),
                summary: t.clone(),
                action: None,
                confidence: 0.5,
                source_session: None,
                expires_at: None,
                evidence: None,
                body: String::new(),
                extra: Default::default(),
            }
        })
        .collect();
    store.index_only(&memories).expect("index");
    let missing = store
        .index()
        .missing_vectors(e.model_id(), n + 1)
        .expect("missing");
    let vectors = random_unit_vectors(missing.len(), e.dim());
    let items: Vec<(String, Vec<f32>)> = missing
        .into_iter()
        .map(|(h, _)| h)
        .zip(vectors.iter().cloned())
        .collect();
    store
        .index()
        .put_vectors(e.model_id(), &items)
        .expect("vectors");
    let fts_only = measure(|q| {
        store.search(q, &[], 5).expect("search");
    });
    store.use_embedder(e.clone());
    let t = Instant::now();
    store.search(QUERIES[0], &[], 5).expect("search");
    let first = t.elapsed().as_secs_f64() * 1000.0;
    let hybrid = measure(|q| {
        store.search(q, &[], 5).expect("search");
    });
    let embed_only = measure(|q| {
        e.embed(&[q]).expect("embed");
    });
    let q = &vectors[0];
    let in_memory = measure(|_| {
        scan_in_memory(q, &vectors, 15);
    });
    println!(
        "memories {n}: full text p50/p99 {:.2}/{:.2} ms | hybrid (incl. query embedding) {:.2}/{:.2} ms, first query (loads the vectors) {first:.1} ms | query embedding alone {:.2}/{:.2} ms | reference in-memory scan {:.2}/{:.2} ms",
        fts_only.0, fts_only.1, hybrid.0, hybrid.1, embed_only.0, embed_only.1, in_memory.0, in_memory.1
    );
}

fn rag_query(e: &Arc<dyn Embedder>, n: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let texts = sentences(n);
    let chunks: Vec<(String, usize, usize, String)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (
                format!("docs/file{}.md", i / 20),
                (i % 20) * 5 + 1,
                (i % 20) * 5 + 5,
                t.clone(),
            )
        })
        .collect();
    let vectors = random_unit_vectors(n, e.dim());
    let t = Instant::now();
    let mut full = RagStore::at(&dir.path().join("rag.db"), "bench", None).expect("store");
    full.bulk_insert(&chunks, Some((e.model_id(), &vectors)))
        .expect("insert");
    let load = t.elapsed().as_secs_f64();
    let fts_only = measure(|q| {
        full.query(q, 5).expect("query");
    });
    drop(full);
    let store = RagStore::at(&dir.path().join("rag.db"), "bench", Some(e.clone())).expect("store");
    let t = Instant::now();
    store.query(QUERIES[0], 5).expect("query");
    let first = t.elapsed().as_secs_f64() * 1000.0;
    let hybrid = measure(|q| {
        store.query(q, 5).expect("query");
    });
    let embed_only = measure(|q| {
        e.embed(&[q]).expect("embed");
    });
    let q = &vectors[0];
    let in_memory = measure(|_| {
        scan_in_memory(q, &vectors, 15);
    });
    let bytes = std::fs::metadata(dir.path().join("rag.db"))
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "rag chunks {n} ({:.0} MB, inserted in {load:.1} s): full text p50/p99 {:.2}/{:.2} ms | hybrid (incl. query embedding) {:.2}/{:.2} ms, first query (loads the vectors) {first:.0} ms | query embedding alone {:.2}/{:.2} ms | reference in-memory scan {:.2}/{:.2} ms",
        bytes as f64 / 1e6, fts_only.0, fts_only.1, hybrid.0, hybrid.1, embed_only.0, embed_only.1, in_memory.0, in_memory.1
    );
}
