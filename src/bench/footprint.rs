//! The memory-footprint scenario of `harvey bench` (issue 19): the chat model and the
//! sentence embedder loaded, a RAG store of many chunks in use (one query: embed + full
//! text + vector scan), one chat turn and one rolling summary (an aside call: in the chat
//! context's free cells when they suffice, else in an aside context of its own). It
//! reports the peak resident set against the goal: peak RSS ≤ weights + the chat context's
//! KV cache + [`GOAL_SLACK_BYTES`].
//!
//! The store is built in a temporary directory from synthetic text and synthetic unit
//! vectors through `RagStore::bulk_insert` (nothing is embedded by the model), before the
//! peak is reset (`/proc/self/clear_refs`), so building it does not count. Linux only for
//! the RSS figures; elsewhere they are `None`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::greedy;
use super::rss::{self, Sample};
use crate::chat::rolling::summarize;
use crate::engine::{
    AbortFlag, EngineError, EngineParams, LlamaEmbedder, LlamaEngine, Message, Role,
};
use crate::rag::{RagError, RagStore};
use crate::tokens::Embedder;

/// What the goal allows beyond the weights and the chat KV cache.
pub const GOAL_SLACK_BYTES: u64 = 60 * 1_000_000;
/// Chunks in the store by default.
pub const DEFAULT_CHUNKS: usize = 100_000;
/// When set, `/proc/self/smaps` is copied to this file at the end (what the rest is made of).
pub const SMAPS_ENV: &str = "HARVEY_FOOTPRINT_SMAPS";
/// Chunks per `bulk_insert` call: keeps the synthetic vectors of one call small.
const INSERT_BATCH: usize = 2_000;

/// What the scenario needs besides the engine parameters.
#[derive(Debug, Clone)]
pub struct FootprintOptions {
    /// The embedding GGUF (what `memory.embedder` resolves to).
    pub embedder: PathBuf,
    pub chunks: usize,
    /// Reply length of the chat turn, in tokens.
    pub turn_tokens: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum FootprintError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("the benchmark's RAG store: {0}")]
    Store(#[from] RagError),
    #[error("the benchmark's temporary directory {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The scenario's memory, split into what it is made of.
#[derive(Debug, Clone, Serialize)]
pub struct Footprint {
    pub chat_model: String,
    pub chat_model_bytes: u64,
    pub embedder: String,
    pub embedder_bytes: u64,
    /// Chat model file + embedder file (both mmapped).
    pub weights_bytes: u64,
    pub n_ctx: u32,
    pub chat_kv_bytes: u64,
    /// The aside context's n_ctx and KV cache after the summary (0 when it had none of
    /// its own: every aside call ran in the chat context's free cells).
    pub aside_n_ctx: u32,
    pub aside_kv_bytes: u64,
    /// Summary calls that ran in the chat context's free cells (sequence 1).
    pub aside_shared_calls: usize,
    pub chunks: usize,
    /// Size of the store's database file.
    pub store_bytes: u64,
    /// Seconds to build the store (not part of the measured peak).
    pub build_s: f64,
    /// Peak RSS after the build (`VmHWM`), Linux only.
    pub peak_rss_bytes: Option<u64>,
    /// Peak RSS − weights − chat KV: any aside context, compute buffers, the store, the runtime.
    pub rest_bytes: Option<i64>,
    /// weights + chat KV + the slack the goal allows.
    pub goal_bytes: u64,
    pub goal_holds: Option<bool>,
    /// RSS after each step (and the peak so far).
    pub steps: Vec<Sample>,
    pub query_ms: f64,
    pub turn_ms: f64,
    pub summary_ms: f64,
}

/// Runs the scenario in this process. Call it on its own (`--footprint-only`) for a clean
/// peak; after other work the peak is reset first, but freed heap may still be resident.
pub fn run(params: &EngineParams, opts: &FootprintOptions) -> Result<Footprint, FootprintError> {
    let dir = std::env::temp_dir().join(format!("harvey-footprint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| FootprintError::Io {
        path: dir.clone(),
        source,
    })?;
    let result = run_in(&dir, params, opts);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(
    dir: &Path,
    params: &EngineParams,
    opts: &FootprintOptions,
) -> Result<Footprint, FootprintError> {
    let mut steps = Vec::new();
    rss::reset_peak();
    steps.extend(rss::sample("start"));
    let embedder = std::sync::Arc::new(LlamaEmbedder::load(&opts.embedder, params.threads)?);
    steps.extend(rss::sample("embedder loaded"));
    let store_path = dir.join("footprint.harvey.db");
    let started = Instant::now();
    build_store(&store_path, embedder.as_ref(), opts.chunks)?;
    let build_s = started.elapsed().as_secs_f64();
    steps.extend(rss::sample("store built"));
    // The build is setup, not use: its freed heap must not count.
    rss::trim_heap();
    rss::reset_peak();
    steps.extend(rss::sample("heap trimmed, peak reset"));
    let mut engine = LlamaEngine::load(params)?;
    steps.extend(rss::sample("chat model loaded"));
    let store = RagStore::at(&store_path, "footprint", Some(embedder.clone()))?;
    let started = Instant::now();
    let hits = store.query(QUESTION, 5)?;
    let query_ms = started.elapsed().as_secs_f64() * 1000.0;
    steps.extend(rss::sample("store queried"));
    let knowledge: Vec<String> = hits.iter().map(|h| h.text.clone()).collect();
    let mut messages = history();
    messages.push(Message::new(
        Role::User,
        format!("[knowledge]\n{}\n\n{QUESTION}", knowledge.join("\n")),
    ));
    let started = Instant::now();
    let reply = engine.generate(&messages, &greedy(opts.turn_tokens), &mut |_| {})?;
    let turn_ms = started.elapsed().as_secs_f64() * 1000.0;
    steps.extend(rss::sample("chat turn"));
    messages.push(Message::new(Role::Assistant, reply.text));
    let started = Instant::now();
    summarize(&mut engine, None, &messages[1..], None, &AbortFlag::new())?;
    let summary_ms = started.elapsed().as_secs_f64() * 1000.0;
    steps.extend(rss::sample("summary (aside call)"));
    if let Some(path) = std::env::var_os(SMAPS_ENV) {
        let path = PathBuf::from(path);
        rss::keep_smaps(&path).map_err(|source| FootprintError::Io { path, source })?;
    }
    let info = engine.info().clone();
    let embedder_bytes = file_bytes(&opts.embedder);
    let weights_bytes = info.file_bytes + embedder_bytes;
    let peak = steps.last().and_then(|s| s.peak_rss_bytes);
    let goal_bytes = weights_bytes + info.kv_bytes + GOAL_SLACK_BYTES;
    Ok(Footprint {
        chat_model: file_name(&info.path),
        chat_model_bytes: info.file_bytes,
        embedder: file_name(&opts.embedder),
        embedder_bytes,
        weights_bytes,
        n_ctx: info.n_ctx,
        chat_kv_bytes: info.kv_bytes,
        aside_n_ctx: engine.aside_n_ctx(),
        aside_kv_bytes: engine.aside_kv_bytes(),
        aside_shared_calls: engine.shared_aside_calls(),
        chunks: opts.chunks,
        store_bytes: file_bytes(&store_path),
        build_s,
        peak_rss_bytes: peak,
        rest_bytes: peak.map(|p| signed(p) - signed(weights_bytes) - signed(info.kv_bytes)),
        goal_bytes,
        goal_holds: peak.map(|p| p <= goal_bytes),
        steps,
        query_ms,
        turn_ms,
        summary_ms,
    })
}

const QUESTION: &str = "How does the harbour pilot schedule tides for the ferry?";

/// A few earlier exchanges, so the summary has something to fold (~700 tokens).
fn history() -> Vec<Message> {
    let mut out = vec![Message::new(
        Role::System,
        crate::chat::SYSTEM_PROMPT.to_string(),
    )];
    for i in 0..6 {
        out.push(Message::new(Role::User, synthetic_text(1000 + i, 40)));
        out.push(Message::new(Role::Assistant, synthetic_text(2000 + i, 60)));
    }
    out
}

/// Fills a new store at `path` with `n` synthetic chunks and unit vectors.
/// A RAG store of `n` synthetic chunks (40 words each, 20 chunks a file) with synthetic
/// unit vectors under `embedder`'s model id, at `path` (nothing is embedded). Also the
/// session-start benchmark's 100k-chunk store.
pub fn build_store(path: &Path, embedder: &LlamaEmbedder, n: usize) -> Result<(), RagError> {
    // The store records the real embedder's id; the build inserts its own vectors and
    // never embeds, so a stand-in with that id and width will do.
    let embedder: std::sync::Arc<dyn Embedder> = std::sync::Arc::new(crate::tokens::HashEmbedder {
        id: embedder.model_id().to_string(),
        dim: embedder.dim(),
    });
    let dim = embedder.dim();
    let model = embedder.model_id().to_string();
    let mut store = RagStore::at(path, "footprint", Some(embedder))?;
    let mut done = 0;
    while done < n {
        let end = (done + INSERT_BATCH).min(n);
        let chunks: Vec<(String, usize, usize, String)> = (done..end)
            .map(|i| {
                let path = format!("docs/file{:05}.md", i / 20);
                let line = (i % 20) * 10 + 1;
                (path, line, line + 9, synthetic_text(i as u64, 40))
            })
            .collect();
        let vectors: Vec<Vec<f32>> = (done..end).map(|i| unit_vector(i as u64, dim)).collect();
        store.bulk_insert(&chunks, Some((&model, &vectors)))?;
        done = end;
    }
    Ok(())
}

const WORDS: &[&str] = &[
    "harbour",
    "pilot",
    "tide",
    "ferry",
    "schedule",
    "lighthouse",
    "keeper",
    "chart",
    "buoy",
    "channel",
    "anchor",
    "dock",
    "crane",
    "cargo",
    "manifest",
    "customs",
    "weather",
    "forecast",
    "swell",
    "gale",
    "engine",
    "rudder",
    "compass",
    "radar",
    "signal",
    "flag",
    "crew",
    "captain",
    "mate",
    "logbook",
    "knot",
    "mooring",
    "quay",
    "berth",
    "fuel",
    "ballast",
    "hull",
    "deck",
    "bridge",
    "galley",
    "night",
    "watch",
    "morning",
    "evening",
    "north",
    "south",
    "east",
    "west",
    "current",
    "depth",
    "sounding",
    "reef",
    "shoal",
    "beacon",
    "harbourmaster",
    "permit",
    "fee",
    "ticket",
    "passenger",
    "vehicle",
    "ramp",
    "timetable",
    "delay",
    "storm",
];

/// `words` words drawn deterministically from `seed`.
fn synthetic_text(seed: u64, words: usize) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(words);
    for _ in 0..words {
        state = xorshift(state);
        out.push(WORDS[(state % WORDS.len() as u64) as usize]);
    }
    let mut text = out.join(" ");
    text.push('.');
    text
}

/// A deterministic unit vector of `dim` components.
fn unit_vector(seed: u64, dim: usize) -> Vec<f32> {
    let mut state = seed.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03) | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            state = xorshift(state);
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    crate::vector::normalize(&mut v);
    v
}

fn xorshift(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

fn file_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn signed(b: u64) -> i64 {
    i64::try_from(b).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_vectors_are_unit_length_and_differ() {
        let a = unit_vector(1, 384);
        let b = unit_vector(2, 384);
        let norm = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        assert_eq!(a.len(), 384);
        assert_ne!(a, b);
        assert_eq!(a, unit_vector(1, 384));
    }

    #[test]
    fn synthetic_text_has_the_words_asked_for() {
        let t = synthetic_text(7, 40);
        assert_eq!(t.split_whitespace().count(), 40);
        assert!(t.ends_with('.'));
        assert_ne!(t, synthetic_text(8, 40));
    }
}
