//! What verifying a prompt-lookup draft costs: one decode of 1 + k rows, each with logits,
//! against one decode of a single row, at a given cache depth. The answer decides how long
//! a draft may be (`lookup::MAX_DRAFT`) and is printed by `harvey bench`.
//!
//! Rows are decoded on top of a prefilled cache and removed again, so every measurement
//! sees the same depth; the sizes take turns within each repetition so that a machine
//! that slows down mid-run slows every size alike.

use std::time::Instant;

use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;
use serde::Serialize;

use super::llama::LlamaEngine;
use super::run::position;
use super::EngineError;

/// One batch size's cost.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyCost {
    /// Draft tokens verified (the batch has `k + 1` rows).
    pub k: usize,
    /// Median wall time of one decode, milliseconds.
    pub ms: f64,
    /// `ms` over the single-row decode's: what a step with a draft costs in plain steps.
    pub relative: f64,
}

impl LlamaEngine {
    /// Times decodes of `k + 1` rows for each `k` in `ks` (0 is always measured) over a
    /// cache of `depth` filler tokens, `reps` times each. Leaves the chat cache empty.
    pub fn verify_cost(
        &mut self,
        depth: usize,
        ks: &[usize],
        reps: usize,
    ) -> Result<Vec<VerifyCost>, EngineError> {
        let mut sizes = vec![0];
        sizes.extend(ks.iter().copied().filter(|&k| k > 0));
        let largest = sizes.iter().copied().max().unwrap_or(0);
        let n_ctx = self.info().n_ctx as usize;
        let n_batch = self.info().n_batch as usize;
        if depth + largest + 1 >= n_ctx || largest + 1 > n_batch {
            return Err(EngineError::PromptTooLong {
                tokens: depth + largest + 1,
                n_ctx,
                fits: n_ctx.saturating_sub(largest + 2),
            });
        }
        self.reset();
        let filler: Vec<i32> = self
            .tokenize_raw("The quick brown fox jumps over the lazy dog. ", false)
            .into_iter()
            .cycle()
            .take(depth)
            .collect();
        self.warm_prefix(&filler)?;
        let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(reps); sizes.len()];
        for _ in 0..reps.max(1) {
            for (i, &k) in sizes.iter().enumerate() {
                times[i].push(self.time_rows(depth, k + 1, &filler)?);
            }
        }
        self.reset();
        let medians: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
        let base = medians[0];
        Ok(sizes
            .iter()
            .zip(medians)
            .map(|(&k, ms)| VerifyCost {
                k,
                ms,
                relative: if base > 0.0 { ms / base } else { 0.0 },
            })
            .collect())
    }

    /// One decode of `rows` rows (logits for all) after `depth` cached tokens, then the
    /// rows are dropped again. Milliseconds.
    fn time_rows(&mut self, depth: usize, rows: usize, filler: &[i32]) -> Result<f64, EngineError> {
        let decode_err = |e: String| EngineError::Decode(e);
        self.with_chat(|ctx| {
            let mut batch = LlamaBatch::new(rows, 1);
            for (i, &t) in filler.iter().cycle().take(rows).enumerate() {
                batch
                    .add(LlamaToken(t), position(depth + i)?, &[0], true)
                    .map_err(|e| decode_err(e.to_string()))?;
            }
            let started = Instant::now();
            ctx.decode(&mut batch)
                .map_err(|e| decode_err(e.to_string()))?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let from = u32::try_from(depth).map_err(|e| decode_err(e.to_string()))?;
            match ctx.clear_kv_cache_seq(Some(0), Some(from), None) {
                Ok(true) => Ok(ms),
                _ => Err(decode_err("could not drop the measured rows".into())),
            }
        })
    }
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_is_the_middle_value() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 3.0);
        assert_eq!(median(&mut []), 0.0);
    }
}
