//! `harvey bench --pace`: harvey's decode speed side by side with llama.cpp's own benchmark
//! loop ([`crate::engine::pace`]) at the same KV depth, for one or more models in one run.
//!
//! Four loops per model, interleaved round by round so a busy machine slows them alike:
//! - `llama_bench`: llama-bench's shape (DEPTH + N cells, one sequence, random tokens,
//!   nothing sampled): the yardstick.
//! - `harvey_shape`: the same loop in the engine's context (its n_ctx, two sequences):
//!   what the context shape costs.
//! - `greedy`: harvey's engine decoding a reply at that depth, greedy.
//! - `sampled`: the same with the config's sampling (penalties, top-k, …): what a user gets.
//! - `free_off` / `free_auto`: a story after a varied record at the same depth
//!   ([`super::free_text`]), greedy, with `engine.lookup` off and `auto`: what drafting
//!   costs on text it cannot draft (the goal: `auto` within 3 % of the yardstick).

use std::path::PathBuf;

use serde::Serialize;

use super::kv::filler_messages;
use crate::engine::pace::{PaceReference, Shape};
use crate::engine::{
    EngineError, EngineParams, GenerateOptions, LlamaEngine, LookupMode, SamplingParams,
};

#[derive(Debug, Clone)]
pub struct PaceOptions {
    pub params: EngineParams,
    /// Every model measured; the params' own model when empty.
    pub models: Vec<PathBuf>,
    pub depth: usize,
    pub n_gen: usize,
    pub rounds: usize,
    /// The config's sampling, for the `sampled` loop.
    pub sampling: SamplingParams,
}

/// Tokens per second over the rounds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    fn of(mut values: Vec<f64>) -> Self {
        values.retain(|v| v.is_finite());
        if values.is_empty() {
            return Self::default();
        }
        values.sort_by(f64::total_cmp);
        Self {
            min: values[0],
            median: values[values.len() / 2],
            max: values[values.len() - 1],
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PaceRow {
    pub model: String,
    /// Tokens in the cache when the timed decoding started (harvey's prompt length).
    pub depth: usize,
    pub n_gen: usize,
    pub threads: u32,
    pub llama_bench: Spread,
    pub harvey_shape: Spread,
    pub greedy: Spread,
    pub sampled: Spread,
    pub free_off: Spread,
    pub free_auto: Spread,
    /// Drafted and kept tokens of `free_auto` over its rounds.
    pub free_auto_drafted: usize,
    pub free_auto_accepted: usize,
    /// Medians over the yardstick's median.
    pub shape_ratio: f64,
    pub greedy_ratio: f64,
    pub sampled_ratio: f64,
    pub free_off_ratio: f64,
    pub free_auto_ratio: f64,
    /// The median of each round's own ratio (the loop over the yardstick of the same
    /// round): a machine whose pace drifts between rounds moves both alike.
    pub shape_paired: f64,
    pub greedy_paired: f64,
    pub sampled_paired: f64,
    pub free_off_paired: f64,
    pub free_auto_paired: f64,
}

pub fn run(opts: &PaceOptions) -> Result<Vec<PaceRow>, EngineError> {
    let models = if opts.models.is_empty() {
        vec![opts.params.model_path.clone()]
    } else {
        opts.models.clone()
    };
    // Every file is checked before the first is measured: a typo in the last one should
    // not cost the minutes the others take.
    for path in &models {
        crate::model::gguf::check_file(path).map_err(|reason| EngineError::BadModelFile {
            path: path.clone(),
            reason,
        })?;
    }
    models
        .into_iter()
        .map(|model_path| {
            let params = EngineParams {
                model_path,
                lookup: LookupMode::Off,
                ..opts.params.clone()
            };
            row(&params, opts)
        })
        .collect()
}

/// The loops of a round, in their first round's order.
const LOOPS: usize = 6;

fn row(params: &EngineParams, opts: &PaceOptions) -> Result<PaceRow, EngineError> {
    let mut engine = LlamaEngine::load(params)?;
    let messages = filler_messages(&engine, opts.depth)?;
    let free = super::free_text::messages(&engine, opts.depth)?;
    let depth = engine.tokenize_prompt(&messages)?.len();
    let reference = PaceReference::load(params)?;
    let mut loops: [Vec<f64>; LOOPS] = Default::default();
    let greedy = super::greedy(opts.n_gen);
    let sampled = GenerateOptions {
        max_tokens: Some(opts.n_gen),
        ..GenerateOptions::new(opts.sampling.clone())
    };
    let (mut drafted, mut accepted) = (0, 0);
    for round in 0..opts.rounds.max(1) {
        // Each round starts with another loop, so none always runs first or last.
        for k in 0..LOOPS {
            let i = (k + round) % LOOPS;
            let tps = match i {
                0 => reference.decode_tps(Shape::LlamaBench, depth, opts.n_gen)?,
                1 => reference.decode_tps(Shape::Harvey, depth, opts.n_gen)?,
                _ => {
                    let (prompt, options, lookup) = match i {
                        2 => (&messages, &greedy, LookupMode::Off),
                        3 => (&messages, &sampled, LookupMode::Off),
                        4 => (&free, &greedy, LookupMode::Off),
                        _ => (&free, &greedy, LookupMode::Auto),
                    };
                    engine.set_lookup(lookup);
                    engine.reset();
                    let stats = engine.generate(prompt, options, &mut |_| {})?.stats;
                    if i == 5 {
                        drafted += stats.draft_tokens;
                        accepted += stats.accepted_tokens;
                    }
                    stats.decode_tps
                }
            };
            loops[i].push(tps);
        }
    }
    let paired = |i: usize| paired_ratio(&loops[i], &loops[0]);
    let ratios: Vec<f64> = (1..LOOPS).map(paired).collect();
    let [bench, shape, greedy, sampled, free_off, free_auto] = loops.map(Spread::of);
    let over = |s: &Spread| {
        if bench.median > 0.0 {
            s.median / bench.median
        } else {
            0.0
        }
    };
    Ok(PaceRow {
        model: engine.info().name.clone(),
        depth,
        n_gen: opts.n_gen,
        threads: params.threads,
        shape_ratio: over(&shape),
        greedy_ratio: over(&greedy),
        sampled_ratio: over(&sampled),
        free_off_ratio: over(&free_off),
        free_auto_ratio: over(&free_auto),
        shape_paired: ratios[0],
        greedy_paired: ratios[1],
        sampled_paired: ratios[2],
        free_off_paired: ratios[3],
        free_auto_paired: ratios[4],
        free_auto_drafted: drafted,
        free_auto_accepted: accepted,
        llama_bench: bench,
        harvey_shape: shape,
        greedy,
        sampled,
        free_off,
        free_auto,
    })
}

/// The median of `loop_tps[r] / reference[r]` over the rounds (0 when none can be taken).
fn paired_ratio(loop_tps: &[f64], reference: &[f64]) -> f64 {
    let ratios: Vec<f64> = loop_tps
        .iter()
        .zip(reference)
        .filter(|(_, r)| **r > 0.0)
        .map(|(l, r)| l / r)
        .collect();
    Spread::of(ratios).median
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_is_named_before_anything_is_measured() {
        let missing = std::path::PathBuf::from("/nonexistent/harvey-pace.gguf");
        let opts = PaceOptions {
            params: EngineParams {
                model_path: missing.clone(),
                n_ctx: 512,
                n_batch: 256,
                threads: 1,
                threads_batch: 1,
                template: None,
                kv_cache_type: Default::default(),
                lookup: LookupMode::Off,
                mmap: Default::default(),
            },
            models: vec![missing.clone()],
            depth: 16,
            n_gen: 4,
            rounds: 1,
            sampling: SamplingParams::greedy(),
        };
        match run(&opts) {
            Err(EngineError::BadModelFile { path, .. }) => assert_eq!(path, missing),
            other => panic!("expected a bad model file error, got {other:?}"),
        }
    }

    #[test]
    fn spread_takes_the_middle_and_ignores_non_numbers() {
        let s = Spread::of(vec![3.0, f64::NAN, 1.0, 2.0]);
        assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
        let empty = Spread::of(vec![f64::NAN]);
        assert_eq!(empty.median, 0.0);
    }

    #[test]
    fn paired_ratio_follows_a_drifting_machine() {
        // The machine slows to half pace for the last rounds and once in between; the
        // loop runs at 0.9× of the yardstick in all but that one round, which the ratio
        // of the medians reads as 0.45×.
        let reference = [50.0, 50.0, 50.0, 25.0, 25.0];
        let tps = [45.0, 45.0, 22.5, 22.5, 22.5];
        let medians = Spread::of(tps.to_vec()).median / Spread::of(reference.to_vec()).median;
        assert!((medians - 0.45).abs() < 1e-9);
        assert!((paired_ratio(&tps, &reference) - 0.9).abs() < 1e-9);
        assert_eq!(paired_ratio(&[1.0], &[0.0]), 0.0, "no round to pair");
    }
}
