//! `harvey bench`: load time, harvey's prefill/decode speed against a raw llama.cpp loop
//! and against llama.cpp's own llama-bench binary (`reference`) in the same run, TTFT
//! over the turns of a scripted chat with and without KV prefix
//! reuse, peak memory split into weights, KV cache and the rest, and each KV cache type's
//! size and speed at given depths (`kv`), and prompt-lookup decoding's cost and gain
//! (`lookup`). Returns a report; `render` turns it into text.

pub mod agent;
pub mod footprint;
pub mod free_text;
pub mod kv;
pub mod lookup;
pub mod mining;
pub mod pace;
pub mod reference;
pub mod render;
pub mod rss;

use std::time::Instant;

use serde::Serialize;

use crate::chat::{run_turn, Conversation, SYSTEM_PROMPT};
use crate::engine::reference::{raw_generate, RawTimings};
use crate::engine::{
    Engine, EngineError, EngineParams, GenerateOptions, LlamaEngine, Message, Role, SamplingParams,
};

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub params: EngineParams,
    pub turns: usize,
    /// Tokens generated per measurement of decode speed.
    pub decode_tokens: usize,
    /// Tokens per chat turn reply.
    pub turn_tokens: usize,
    /// Cache depths (tokens) at which each KV cache type's decode speed is measured.
    pub kv_depths: Vec<usize>,
    /// Longest reply per prompt of the lookup workloads; 0 skips them.
    pub lookup_tokens: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub model: String,
    pub model_bytes: u64,
    pub threads: u32,
    pub threads_batch: u32,
    pub n_ctx: u32,
    pub n_batch: u32,
    pub load_ms: f64,
    pub harvey: Speed,
    pub reference: RawTimings,
    /// harvey / reference; ≈ 1.0 means no engine overhead.
    pub prefill_ratio: f64,
    pub decode_ratio: f64,
    /// TTFT per turn with prefix reuse (what harvey does).
    pub ttft_ms_reuse: Vec<f64>,
    /// TTFT per turn when every turn re-prefills the whole prompt.
    pub ttft_ms_full: Vec<f64>,
    /// Prompt tokens evaluated per turn with reuse.
    pub evaluated_reuse: Vec<usize>,
    pub prompt_tokens: Vec<usize>,
    /// First-turn TTFT with a cold cache vs with the stable prefix restored from a state file.
    pub first_turn_ttft_cold_ms: f64,
    pub first_turn_ttft_cached_ms: f64,
    /// Tokens in the stable prefix that was saved/restored.
    pub prefix_tokens: usize,
    /// Peak resident memory minus the model file size (Linux only).
    pub peak_rss_minus_model_mb: Option<f64>,
    /// The KV cache type of the main run (`engine.kv_cache_type` or `--kv-cache-type`).
    pub kv_cache_type: String,
    pub memory: Memory,
    /// Every KV cache type side by side: size and speed at the requested depths.
    pub kv_cache: Vec<kv::KvCacheRow>,
    /// The memory-footprint scenario (`--footprint`), run after everything else.
    pub footprint: Option<footprint::Footprint>,
    /// Prefill and decode beside llama.cpp's own llama-bench (set by the caller, which
    /// runs it after this report's engine is gone).
    pub llama_bench: Option<reference::Reference>,
    /// What one decode of 1 + k rows costs against one row (prompt-lookup verification).
    pub verify_cost: Vec<crate::engine::cost::VerifyCost>,
    /// Decode speed with `engine.lookup` off, auto and on: "quote" and "free" workloads.
    pub lookup: Vec<lookup::LookupRow>,
}

/// Peak memory of the main run, split into what it is made of.
#[derive(Debug, Clone, Serialize)]
pub struct Memory {
    /// Peak resident set size (`VmHWM`), Linux only; taken before the reference loop and
    /// the KV comparison load the model again.
    pub peak_rss_bytes: Option<u64>,
    /// The model file (mmapped; all of it is resident after decoding).
    pub weights_bytes: u64,
    /// The chat context's KV cache.
    pub kv_bytes: u64,
    /// Peak RSS − weights − KV: compute buffers, the aside context, the runtime.
    pub rest_bytes: Option<i64>,
}

impl Memory {
    fn new(peak_rss_bytes: Option<u64>, weights_bytes: u64, kv_bytes: u64) -> Self {
        let signed = |b: u64| i64::try_from(b).unwrap_or(i64::MAX);
        Self {
            peak_rss_bytes,
            weights_bytes,
            kv_bytes,
            rest_bytes: peak_rss_bytes
                .map(|rss| signed(rss) - signed(weights_bytes) - signed(kv_bytes)),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Speed {
    pub prompt_tokens: usize,
    pub prefill_tps: f64,
    pub generated_tokens: usize,
    pub decode_tps: f64,
}

/// Lines a user might type in a short chat, each adding similar text.
const TURNS: &[&str] = &[
    "Tell me one fact about the Moon.",
    "Now one fact about Mars.",
    "And one about Jupiter.",
    "One about Saturn, please.",
    "What about Venus?",
    "Tell me one fact about Mercury.",
    "Now one about Neptune.",
    "And Uranus?",
    "One fact about Pluto.",
    "Finally, one about the Sun.",
];

pub(crate) const SPEED_PROMPT: &str =
    "Write a long, detailed story about a lighthouse keeper who finds a message in a bottle. \
Describe the sea, the weather, the lighthouse and the keeper's thoughts in detail.";

pub fn run(opts: &BenchOptions) -> Result<BenchReport, EngineError> {
    let started = Instant::now();
    let mut engine = LlamaEngine::load(&opts.params)?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let info = engine.info().clone();
    // The loop against raw llama.cpp's: both decode one token at a time.
    let configured = engine.lookup();
    engine.set_lookup(crate::engine::LookupMode::Off);
    let harvey = speed(&mut engine, opts.decode_tokens)?;
    engine.set_lookup(configured);
    let reuse = chat_turns(&mut engine, opts, false)?;
    let full = chat_turns(&mut engine, opts, true)?;
    let (cold, cached, prefix_tokens) = first_turn_with_saved_prefix(&mut engine, opts)?;
    // Before the reference loop maps the model a second time.
    let peak_rss = peak_rss_bytes();
    let rendered = engine.render_prompt(&speed_messages())?;
    let verify_cost = lookup::cost_table(&mut engine)?;
    let lookup = if opts.lookup_tokens > 0 {
        lookup::workloads(&mut engine, opts.lookup_tokens)?
    } else {
        Vec::new()
    };
    // The comparison loads up to two more contexts; free this one's memory first.
    drop(engine);
    let reference = raw_generate(&opts.params, &rendered, opts.decode_tokens)?;
    let kv_cache = kv::compare(&opts.params, &opts.kv_depths, opts.decode_tokens)?;
    Ok(BenchReport {
        model: info.name,
        model_bytes: info.file_bytes,
        threads: info.threads,
        threads_batch: info.threads_batch,
        n_ctx: info.n_ctx,
        n_batch: info.n_batch,
        load_ms,
        prefill_ratio: ratio(harvey.prefill_tps, reference.prefill_tps),
        decode_ratio: ratio(harvey.decode_tps, reference.decode_tps),
        harvey,
        reference,
        ttft_ms_reuse: reuse.iter().map(|t| t.0).collect(),
        evaluated_reuse: reuse.iter().map(|t| t.1).collect(),
        prompt_tokens: reuse.iter().map(|t| t.2).collect(),
        ttft_ms_full: full.iter().map(|t| t.0).collect(),
        first_turn_ttft_cold_ms: cold,
        first_turn_ttft_cached_ms: cached,
        prefix_tokens,
        peak_rss_minus_model_mb: peak_rss.map(|rss| (rss as f64 - info.file_bytes as f64) / 1e6),
        kv_cache_type: info.kv_type,
        memory: Memory::new(peak_rss, info.file_bytes, info.kv_bytes),
        kv_cache,
        footprint: None,
        llama_bench: None,
        verify_cost,
        lookup,
    })
}

fn speed_messages() -> Vec<Message> {
    vec![
        Message::new(Role::System, SYSTEM_PROMPT),
        Message::new(Role::User, SPEED_PROMPT),
    ]
}

pub(crate) fn greedy(max_tokens: usize) -> GenerateOptions {
    GenerateOptions {
        max_tokens: Some(max_tokens),
        ..GenerateOptions::new(SamplingParams::greedy())
    }
}

fn speed(engine: &mut LlamaEngine, n: usize) -> Result<Speed, EngineError> {
    engine.reset();
    let c = engine.generate(&speed_messages(), &greedy(n), &mut |_| {})?;
    Ok(Speed {
        prompt_tokens: c.stats.prompt_tokens,
        prefill_tps: c.stats.prefill_tps,
        generated_tokens: c.stats.completion_tokens,
        decode_tps: c.stats.decode_tps,
    })
}

/// (ttft ms, evaluated tokens, prompt tokens) per turn.
fn chat_turns(
    engine: &mut LlamaEngine,
    opts: &BenchOptions,
    full_prefill: bool,
) -> Result<Vec<(f64, usize, usize)>, EngineError> {
    engine.reset();
    let mut conversation = Conversation::new(SYSTEM_PROMPT);
    let mut out = Vec::with_capacity(opts.turns);
    for line in TURNS.iter().cycle().take(opts.turns) {
        if full_prefill {
            engine.reset();
        }
        let c = run_turn(
            engine,
            &mut conversation,
            line,
            &greedy(opts.turn_tokens),
            &mut |_| {},
        )?;
        out.push((
            c.stats.ttft_ms,
            c.stats.evaluated_tokens,
            c.stats.prompt_tokens,
        ));
    }
    Ok(out)
}

/// A stable prefix like a real session's: system prompt + a profile and project facts.
const STABLE_CONTEXT: &str = "[memory context]\n[workspace profile]\nThe user is Ada, a Rust developer who works on a Raspberry Pi 500 and prefers short answers with examples.\n[project facts]\n- harvey: a terminal agent in Rust that runs GGUF models in-process with llama.cpp.\n- Build with cargo build --release; tests run with scripts/test.sh.\n- Memories live in agents/memories as .spmd files with YAML front matter.\n";

/// (cold TTFT, TTFT after restoring the saved prefix, prefix tokens) for a first turn.
fn first_turn_with_saved_prefix(
    engine: &mut LlamaEngine,
    opts: &BenchOptions,
) -> Result<(f64, f64, usize), EngineError> {
    use crate::chat::prefix_cache::{restore_or_save, stable_prefix_ids};
    let dir = std::env::temp_dir().join(format!("harvey-bench-{}", std::process::id()));
    let ids = stable_prefix_ids(engine, SYSTEM_PROMPT, STABLE_CONTEXT);
    let messages = [
        Message::new(Role::System, SYSTEM_PROMPT),
        Message::new(Role::User, format!("{STABLE_CONTEXT}{}", TURNS[0])),
    ];
    engine.reset();
    let cold = engine
        .generate(&messages, &greedy(opts.turn_tokens), &mut |_| {})?
        .stats
        .ttft_ms;
    engine.reset();
    restore_or_save(engine, &dir, &ids, 1);
    engine.reset();
    let restore_started = Instant::now();
    let outcome = restore_or_save(engine, &dir, &ids, 1);
    let restore_ms = restore_started.elapsed().as_secs_f64() * 1000.0;
    let cached = engine
        .generate(&messages, &greedy(opts.turn_tokens), &mut |_| {})?
        .stats
        .ttft_ms
        + restore_ms;
    let _ = std::fs::remove_dir_all(&dir);
    let restored = matches!(
        outcome,
        crate::chat::prefix_cache::PrefixOutcome::Restored { .. }
    );
    Ok((cold, if restored { cached } else { f64::NAN }, ids.len()))
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Peak resident set size of this process (`VmHWM`), Linux only.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_hwm_is_parsed_in_bytes() {
        let status = "Name:\tharvey\nVmPeak:\t  900 kB\nVmHWM:\t  123456 kB\nVmRSS:\t 1 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(123_456 * 1024));
        assert_eq!(parse_vm_hwm("Name: x\n"), None);
    }

    #[test]
    fn the_rest_is_what_weights_and_kv_do_not_explain() {
        let m = Memory::new(Some(500), 300, 50);
        assert_eq!(m.rest_bytes, Some(150));
        assert_eq!(Memory::new(None, 300, 50).rest_bytes, None);
        assert_eq!(Memory::new(Some(100), 300, 50).rest_bytes, Some(-250));
    }

    #[test]
    fn ratio_guards_zero() {
        assert_eq!(ratio(5.0, 0.0), 0.0);
        assert!((ratio(90.0, 100.0) - 0.9).abs() < 1e-12);
    }
}
