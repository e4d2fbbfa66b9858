//! One generation on one context: trim the KV cache to the reusable prefix, prefill the
//! rest in `n_batch` chunks, then sample (`decode.rs`) until EOG, the token limit, the end
//! of the context or an abort.
//!
//! `cached` must mirror the run's sequence (`Run::seq`) exactly; callers clear both on
//! error.

use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::prompt::{chunk_ranges, reusable_prefix};
use super::types::{rate, AbortFlag, Completion, GenerateOptions, StopReason, TurnStats};
use super::EngineError;

/// One generation: the borrowed pieces and the clock.
pub(super) struct Run<'m> {
    pub model: &'m LlamaModel,
    pub n_ctx: usize,
    pub n_batch: usize,
    pub started: Instant,
    /// Template text a reply stops before (not applied under a grammar, whose output is
    /// bounded by the grammar itself).
    pub turn_stops: &'m [String],
    /// Control tokens that do not end a generation: banned under a grammar.
    pub inner_controls: &'m [LlamaToken],
    /// Whether and how the decode loop drafts from the context (`decode.rs`).
    pub lookup: super::lookup::LookupMode,
    /// What verifying drafts cost, kept by the engine across replies (`lookup::RowTimings`).
    pub row_timings: &'m std::cell::Cell<super::lookup::RowTimings>,
    /// The KV cache sequence this run reads and writes: 0 for the chat (and for an aside
    /// context of its own), 1 for an aside call sharing the chat context.
    pub seq: i32,
}

impl Run<'_> {
    pub fn execute(
        &self,
        ctx: &mut LlamaContext,
        cached: &mut Vec<LlamaToken>,
        prompt: &[LlamaToken],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        let keep = trim_cache(ctx, cached, prompt, self.seq);
        let mut batch = LlamaBatch::new(self.n_batch.max(1), 1);
        let prefill_started = Instant::now();
        let chunks = self.prefill(ctx, &mut batch, cached, &prompt[keep..], &opts.abort)?;
        let prefill_elapsed = prefill_started.elapsed();
        let mut stats = TurnStats {
            prompt_tokens: prompt.len(),
            evaluated_tokens: prompt.len() - keep,
            prefill_chunks: chunks.unwrap_or_default(),
            prefill_tps: rate(prompt.len() - keep, prefill_elapsed),
            ..TurnStats::default()
        };
        if chunks.is_none() {
            return Ok(Completion {
                text: String::new(),
                stop: StopReason::Aborted,
                stats,
            });
        }
        let last = batch.n_tokens() - 1;
        let (text, stop) =
            self.sample_loop(ctx, &mut batch, cached, last, opts, on_text, &mut stats)?;
        Ok(Completion { text, stop, stats })
    }

    /// Decodes `tokens` after the cached prefix in chunks of at most `n_batch`, asking for
    /// logits on the very last one. Returns how many decode calls it made, or `None` when
    /// aborted between chunks.
    pub fn prefill(
        &self,
        ctx: &mut LlamaContext,
        batch: &mut LlamaBatch,
        cached: &mut Vec<LlamaToken>,
        tokens: &[LlamaToken],
        abort: &AbortFlag,
    ) -> Result<Option<usize>, EngineError> {
        let mut decoded = 0;
        for (start, end) in chunk_ranges(tokens.len(), self.n_batch) {
            if abort.is_raised() {
                return Ok(None);
            }
            batch.clear();
            for (offset, &token) in tokens[start..end].iter().enumerate() {
                let pos = position(cached.len() + offset)?;
                let wants_logits = start + offset + 1 == tokens.len();
                batch
                    .add(token, pos, &[self.seq], wants_logits)
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
            }
            ctx.decode(batch)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
            cached.extend_from_slice(&tokens[start..end]);
            decoded += 1;
        }
        Ok(Some(decoded))
    }
}

impl Run<'_> {
    /// The caller's stop strings first (their indices decide `StopString`), then the
    /// template's turn markers unless a grammar bounds the output.
    pub(super) fn stops(&self, opts: &GenerateOptions) -> Vec<String> {
        let mut stops = opts.stop.clone();
        if opts.grammar.is_none() {
            stops.extend(self.turn_stops.iter().cloned());
        }
        stops
    }
}

pub(super) fn position(index: usize) -> Result<i32, EngineError> {
    i32::try_from(index).map_err(|_| EngineError::Decode(format!("position {index} out of range")))
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Keeps the reusable prefix of the KV cache for `prompt` and drops the rest.
/// Returns how many prompt tokens are already in the cache.
pub(super) fn trim_cache(
    ctx: &mut LlamaContext,
    cached: &mut Vec<LlamaToken>,
    prompt: &[LlamaToken],
    seq: i32,
) -> usize {
    let keep = reusable_prefix(cached, prompt);
    truncate_cache(ctx, cached, keep, seq)
}

/// Drops everything of sequence `seq` after its first `keep` cached tokens; returns what
/// is kept.
pub(super) fn truncate_cache(
    ctx: &mut LlamaContext,
    cached: &mut Vec<LlamaToken>,
    keep: usize,
    seq: i32,
) -> usize {
    let Ok(seq_id) = u32::try_from(seq) else {
        return 0;
    };
    // `false` means partial removal is unsupported (e.g. recurrent models): start over.
    let partial = u32::try_from(keep).is_ok_and(|p| {
        matches!(
            ctx.clear_kv_cache_seq(Some(seq_id), Some(p), None),
            Ok(true)
        )
    });
    if !partial {
        clear_seq(ctx, seq);
        cached.clear();
        return 0;
    }
    cached.truncate(keep);
    keep
}

/// Empties sequence `seq`; the whole cache if llama.cpp cannot remove one sequence.
pub(super) fn clear_seq(ctx: &mut LlamaContext, seq: i32) {
    let removed = u32::try_from(seq)
        .is_ok_and(|s| matches!(ctx.clear_kv_cache_seq(Some(s), None, None), Ok(true)));
    if !removed {
        ctx.clear_kv_cache();
    }
}
