//! harvey against llama.cpp's own `llama-bench` in the same run: harvey's prefill of a
//! ~512-token prompt beside llama-bench's pp512, and harvey's decode at a KV depth beside
//! llama-bench's tg at that same depth, with the same model, threads and KV cache type.
//!
//! The reference is the real binary (built by scripts/build-llama-bench.sh from the llama.cpp
//! sources harvey links, with harvey's ggml options), at its own defaults (n_batch 2048,
//! n_ubatch 512): a loop over the same library with harvey's settings would hide what those
//! settings cost. harvey's numbers are the engine's own `TurnStats` of `generate`, as in the
//! rest of the bench, on the prompts of the KV comparison (`kv::filler_messages`); llama-bench
//! runs after harvey's engine is dropped, so the two never share the cores or the memory.
//! Without the binary the llama-bench side says how to build it; harvey's side still runs.

pub mod llama_bench;

use std::path::PathBuf;

use serde::Serialize;

use super::greedy;
use super::kv::filler_messages;
use crate::engine::{EngineError, EngineParams, LlamaEngine, LookupMode, TurnStats};

/// The goal of issue 66: harvey's prefill at least this share of llama-bench's pp512.
pub const PREFILL_GOAL: f64 = 0.95;

/// llama-bench's standard prompt-processing test.
pub const PROMPT_TOKENS: usize = 512;

#[derive(Debug, Clone)]
pub struct ReferenceOptions {
    pub params: EngineParams,
    /// `--llama-bench PATH`; otherwise the build script's output.
    pub binary: Option<PathBuf>,
    /// KV depths (tokens) at which decoding is compared; 0 means harvey's shortest prompt.
    pub depths: Vec<usize>,
    pub decode_tokens: usize,
    /// Timed repetitions on each side (after one warm-up on harvey's; llama-bench has its own).
    pub reps: usize,
}

/// What both sides measured.
#[derive(Debug, Clone, Serialize)]
pub struct Reference {
    pub model: String,
    pub threads: u32,
    pub threads_batch: u32,
    /// harvey's n_batch (its n_ubatch is the same).
    pub n_batch: u32,
    pub kv_cache_type: String,
    pub reps: usize,
    pub llama_bench: Side,
    pub rows: Vec<Row>,
    /// Whether the prefill ratio reaches [`PREFILL_GOAL`]; `None` without llama-bench.
    pub prefill_goal_holds: Option<bool>,
}

/// The llama-bench side: what ran, or why nothing did.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Side {
    Ran {
        binary: PathBuf,
        /// llama-bench's n_batch and n_ubatch (of its first test).
        n_batch: u32,
        n_ubatch: u32,
        tests: Vec<llama_bench::Test>,
    },
    Unavailable {
        reason: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Prefill,
    Decode,
}

/// One comparison: harvey's rate and llama-bench's for the same work at the same depth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub phase: Phase,
    /// Tokens in the KV cache when the timed part began.
    pub depth: usize,
    /// Prompt tokens prefilled, or tokens generated (the fewest over harvey's repetitions).
    pub harvey_tokens: usize,
    pub harvey: Rate,
    /// harvey's tokens per second in each repetition (llama-bench's are in its tests).
    pub harvey_samples: Vec<f64>,
    /// llama-bench's `n_prompt` or `n_gen`.
    pub llama_bench_tokens: Option<usize>,
    pub llama_bench: Option<Rate>,
    /// harvey / llama-bench.
    pub ratio: Option<f64>,
}

/// Tokens per second over the repetitions: mean and sample standard deviation, as
/// llama-bench computes its `avg_ts` and `stddev_ts`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Rate {
    pub avg_ts: f64,
    pub stddev_ts: f64,
}

impl Rate {
    pub fn of(samples: &[f64]) -> Self {
        let n = samples.len() as f64;
        if samples.is_empty() {
            return Self::default();
        }
        let avg_ts = samples.iter().sum::<f64>() / n;
        let stddev_ts = if samples.len() > 1 {
            let sq: f64 = samples.iter().map(|s| (s - avg_ts).powi(2)).sum();
            (sq / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Self { avg_ts, stddev_ts }
    }
}

/// harvey's side of one row: the depth, the fewest tokens, one rate per repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub phase: Phase,
    pub depth: usize,
    pub tokens: usize,
    pub samples: Vec<f64>,
}

pub fn run(opts: &ReferenceOptions) -> Result<Reference, EngineError> {
    let binary = llama_bench::locate(opts.binary.as_deref());
    let params = EngineParams {
        lookup: LookupMode::Off,
        ..opts.params.clone()
    };
    let mut engine = LlamaEngine::load(&params)?;
    let info = engine.info().clone();
    let reps = opts.reps.max(1);
    // A context smaller than 512 takes the longest prompt that leaves room for the reply.
    let prompt = PROMPT_TOKENS.min((info.n_ctx as usize).saturating_sub(2));
    let mut measured = vec![prefill(&mut engine, prompt, reps)?];
    for &depth in &opts.depths {
        if depth + opts.decode_tokens < info.n_ctx as usize {
            measured.push(decode(&mut engine, depth, opts.decode_tokens, reps)?);
        }
    }
    drop(engine);
    let side = match binary {
        Ok(binary) => llama_bench_side(binary, &params, &info, &measured, opts, reps),
        Err(e) => Side::Unavailable {
            reason: e.to_string(),
        },
    };
    let tests = match &side {
        Side::Ran { tests, .. } => tests.as_slice(),
        Side::Unavailable { .. } => &[],
    };
    let rows = rows(&measured, tests);
    Ok(Reference {
        model: info.name,
        threads: info.threads,
        threads_batch: info.threads_batch,
        n_batch: info.n_batch,
        kv_cache_type: info.kv_type,
        reps,
        prefill_goal_holds: goal_holds(&rows),
        llama_bench: side,
        rows,
    })
}

/// A prompt of about `tokens` into an empty cache, `reps` times after one warm-up.
fn prefill(engine: &mut LlamaEngine, tokens: usize, reps: usize) -> Result<Measured, EngineError> {
    let messages = filler_messages(engine, tokens)?;
    let mut runs = Vec::with_capacity(reps);
    for _ in 0..=reps {
        engine.reset();
        runs.push(engine.generate(&messages, &greedy(1), &mut |_| {})?.stats);
    }
    Ok(measured(Phase::Prefill, &runs[1..]))
}

/// `n` tokens decoded after a prompt of about `depth` tokens. The prompt is prefilled once;
/// each repetition then reuses it from the KV cache (harvey's prefix reuse re-evaluates one
/// token), as llama-bench restores its depth instead of prefilling it again.
fn decode(
    engine: &mut LlamaEngine,
    depth: usize,
    n: usize,
    reps: usize,
) -> Result<Measured, EngineError> {
    let messages = filler_messages(engine, depth)?;
    engine.reset();
    engine.generate(&messages, &greedy(1), &mut |_| {})?;
    let mut runs = Vec::with_capacity(reps);
    for _ in 0..reps {
        runs.push(engine.generate(&messages, &greedy(n), &mut |_| {})?.stats);
    }
    Ok(measured(Phase::Decode, &runs))
}

fn measured(phase: Phase, runs: &[TurnStats]) -> Measured {
    let (depth, tokens, samples) = match phase {
        Phase::Prefill => (
            0,
            runs.iter().map(|s| s.evaluated_tokens).min(),
            runs.iter().map(|s| s.prefill_tps).collect(),
        ),
        Phase::Decode => (
            runs.first().map_or(0, |s| s.prompt_tokens),
            runs.iter().map(|s| s.completion_tokens).min(),
            runs.iter().map(|s| s.decode_tps).collect(),
        ),
    };
    Measured {
        phase,
        depth,
        tokens: tokens.unwrap_or(0),
        samples,
    }
}

/// llama-bench's pp512 at depth 0 with the prefill threads, then its tg at harvey's actual
/// decode depths with the decode threads (two runs: one run of both would add pp tests at
/// every depth).
fn llama_bench_side(
    binary: PathBuf,
    params: &EngineParams,
    info: &crate::engine::ModelInfo,
    measured: &[Measured],
    opts: &ReferenceOptions,
    reps: usize,
) -> Side {
    let depths: Vec<usize> = measured
        .iter()
        .filter(|m| m.phase == Phase::Decode)
        .map(|m| m.depth)
        .collect();
    let pp = llama_bench::Request {
        model: &params.model_path,
        threads: info.threads_batch,
        n_prompt: PROMPT_TOKENS,
        n_gen: 0,
        depths: &[0],
        reps,
        kv_cache_type: params.kv_cache_type,
    };
    let tg = llama_bench::Request {
        threads: info.threads,
        n_prompt: 0,
        n_gen: opts.decode_tokens,
        depths: &depths,
        ..pp.clone()
    };
    let mut requests = vec![pp];
    if !depths.is_empty() {
        requests.push(tg);
    }
    let mut tests = Vec::new();
    for req in &requests {
        match llama_bench::run(&binary, &llama_bench::args(req)) {
            Ok(ran) => tests.extend(ran),
            Err(e) => {
                return Side::Unavailable {
                    reason: e.to_string(),
                }
            }
        }
    }
    let (n_batch, n_ubatch) = tests.first().map_or((0, 0), |t| (t.n_batch, t.n_ubatch));
    Side::Ran {
        binary,
        n_batch,
        n_ubatch,
        tests,
    }
}

/// Each of harvey's measurements beside the llama-bench test of the same phase and depth.
pub fn rows(measured: &[Measured], tests: &[llama_bench::Test]) -> Vec<Row> {
    measured
        .iter()
        .map(|m| {
            let test = tests.iter().find(|t| match m.phase {
                Phase::Prefill => t.is_prefill() && t.n_depth == 0,
                Phase::Decode => t.is_decode() && t.n_depth == m.depth,
            });
            let harvey = Rate::of(&m.samples);
            let reference = test.map(|t| Rate {
                avg_ts: t.avg_ts,
                stddev_ts: t.stddev_ts,
            });
            Row {
                phase: m.phase,
                depth: m.depth,
                harvey_tokens: m.tokens,
                harvey,
                harvey_samples: m.samples.clone(),
                llama_bench_tokens: test.map(|t| t.n_prompt + t.n_gen),
                ratio: reference
                    .filter(|r| r.avg_ts > 0.0)
                    .map(|r| harvey.avg_ts / r.avg_ts),
                llama_bench: reference,
            }
        })
        .collect()
}

fn goal_holds(rows: &[Row]) -> Option<bool> {
    rows.iter()
        .find(|r| r.phase == Phase::Prefill)
        .and_then(|r| r.ratio)
        .map(|ratio| ratio >= PREFILL_GOAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("../../tests/fixtures/llama-bench/smollm2.json");

    fn harvey(phase: Phase, depth: usize, samples: &[f64]) -> Measured {
        Measured {
            phase,
            depth,
            tokens: if phase == Phase::Prefill { 509 } else { 32 },
            samples: samples.to_vec(),
        }
    }

    #[test]
    fn rate_is_the_mean_and_sample_deviation() {
        let r = Rate::of(&[30.0, 32.0, 34.0]);
        assert!((r.avg_ts - 32.0).abs() < 1e-12);
        assert!((r.stddev_ts - 2.0).abs() < 1e-12);
        assert_eq!(Rate::of(&[5.0]).stddev_ts, 0.0);
        assert_eq!(Rate::of(&[]), Rate::default());
    }

    #[test]
    fn rows_pair_each_measurement_with_the_test_of_its_phase_and_depth() {
        let tests = llama_bench::parse(SAMPLE).unwrap();
        let measured = [
            harvey(Phase::Prefill, 0, &[100.0]),
            harvey(Phase::Decode, 64, &[50.0]),
            harvey(Phase::Decode, 999, &[40.0]),
        ];
        let rows = rows(&measured, &tests);
        let pp = tests.iter().find(|t| t.is_prefill() && t.n_depth == 0);
        let tg64 = tests.iter().find(|t| t.is_decode() && t.n_depth == 64);
        assert_eq!(rows[0].llama_bench.map(|r| r.avg_ts), pp.map(|t| t.avg_ts));
        assert_eq!(rows[0].llama_bench_tokens, Some(512));
        assert_eq!(
            rows[1].llama_bench.map(|r| r.avg_ts),
            tg64.map(|t| t.avg_ts)
        );
        assert_eq!(rows[1].llama_bench_tokens, Some(32));
        let want = 50.0 / tg64.map_or(1.0, |t| t.avg_ts);
        assert!((rows[1].ratio.unwrap() - want).abs() < 1e-12);
        // No llama-bench test at that depth: harvey's number alone.
        assert_eq!((rows[2].llama_bench, rows[2].ratio), (None, None));
    }

    #[test]
    fn without_llama_bench_the_rows_keep_harveys_numbers() {
        let rows = rows(&[harvey(Phase::Prefill, 0, &[30.0, 34.0])], &[]);
        assert_eq!(rows[0].harvey.avg_ts, 32.0);
        assert_eq!(rows[0].ratio, None);
        assert_eq!(goal_holds(&rows), None);
    }

    #[test]
    fn the_goal_is_the_prefill_ratio_against_095() {
        let row = |ratio| Row {
            phase: Phase::Prefill,
            depth: 0,
            harvey_tokens: 509,
            harvey: Rate::default(),
            harvey_samples: Vec::new(),
            llama_bench_tokens: Some(512),
            llama_bench: Some(Rate::default()),
            ratio: Some(ratio),
        };
        assert_eq!(goal_holds(&[row(0.83)]), Some(false));
        assert_eq!(goal_holds(&[row(0.95)]), Some(true));
    }
}
