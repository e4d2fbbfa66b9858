//! llama.cpp's own decode benchmark, in-process: the yardstick of `harvey bench --pace`.
//!
//! `llama-bench -d DEPTH -n N` decodes N tokens one at a time into a cache that already
//! holds DEPTH tokens, in a context of exactly DEPTH + N cells (one sequence, n_batch 2048,
//! n_ubatch 512, flash attention left to llama.cpp), feeding random token ids and never
//! sampling. [`PaceReference`] does the same through the same crate and the same compiled
//! llama.cpp, so a gap between it and harvey is harvey's own cost: its context shape (a
//! larger, two-sequence cache) or its per-token work (sampling, output).
//!
//! The "harvey shape" loop repeats the reference with the engine's context parameters,
//! which tells the two costs apart.

use std::cell::Cell;
use std::num::NonZeroU32;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::backend::backend;
use super::load::{context_params, describe, WithKvCacheType};
use super::{rate, EngineError, EngineParams};

/// llama-bench's defaults for batch sizes.
const BENCH_N_BATCH: u32 = 2048;
const BENCH_N_UBATCH: u32 = 512;

/// Which context the reference decodes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// llama-bench's: DEPTH + N cells, one sequence, its batch sizes.
    LlamaBench,
    /// The engine's: its n_ctx, n_batch = n_ubatch, two sequences in a unified cache.
    Harvey,
}

/// A model loaded for the reference loops.
pub struct PaceReference {
    model: LlamaModel,
    params: EngineParams,
    /// Deterministic stand-in for llama-bench's `rand()`.
    seed: Cell<u64>,
}

impl PaceReference {
    pub fn load(params: &EngineParams) -> Result<Self, EngineError> {
        let backend = backend().map_err(|e| load_error(params, "initialize the backend", e))?;
        let model =
            LlamaModel::load_from_file(backend, &params.model_path, &LlamaModelParams::default())
                .map_err(|e| load_error(params, "load the model", e.to_string()))?;
        Ok(Self {
            model,
            params: params.clone(),
            seed: Cell::new(0x9E37_79B9_7F4A_7C15),
        })
    }

    /// Tokens per second of `n_gen` one-token decodes after `depth` random tokens.
    pub fn decode_tps(&self, shape: Shape, depth: usize, n_gen: usize) -> Result<f64, EngineError> {
        let ctx_params = self.context_params(shape, depth + n_gen);
        let backend =
            backend().map_err(|e| load_error(&self.params, "initialize the backend", e))?;
        let mut ctx = self
            .model
            .new_context(backend, ctx_params)
            .map_err(|e| load_error(&self.params, "create a context", e.to_string()))?;
        let n_vocab = u64::try_from(self.model.n_vocab().max(1)).unwrap_or(1);
        let prompt: Vec<LlamaToken> = (0..depth).map(|_| self.next_token(n_vocab)).collect();
        for chunk in prompt.chunks(ctx.n_batch().max(1) as usize) {
            decode(&mut ctx, chunk)?;
        }
        let mut token = [self.next_token(n_vocab)];
        let started = Instant::now();
        for _ in 0..n_gen {
            decode(&mut ctx, &token)?;
            ctx.synchronize();
            token = [self.next_token(n_vocab)];
        }
        Ok(rate(n_gen, started.elapsed()))
    }

    fn context_params(&self, shape: Shape, cells: usize) -> LlamaContextParams {
        let threads = i32::try_from(self.params.threads.max(1)).unwrap_or(1);
        match shape {
            Shape::LlamaBench => {
                let n_ctx = u32::try_from(cells).unwrap_or(u32::MAX);
                LlamaContextParams::default()
                    .with_n_ctx(NonZeroU32::new(n_ctx))
                    .with_n_batch(BENCH_N_BATCH)
                    .with_n_ubatch(BENCH_N_UBATCH)
                    .with_n_threads(threads)
                    .with_n_threads_batch(threads)
                    .with_kv_cache_type(self.params.kv_cache_type)
            }
            Shape::Harvey => {
                let file_bytes = std::fs::metadata(&self.params.model_path)
                    .map(|m| m.len())
                    .unwrap_or(0);
                let info = describe(&self.model, &self.params, file_bytes);
                let seqs = if self.model.is_recurrent() || self.model.is_hybrid() {
                    1
                } else {
                    2
                };
                context_params(&info, info.n_ctx, self.params.kv_cache_type, seqs)
            }
        }
    }

    /// xorshift64*: the next pseudo-random token id below `n_vocab`.
    fn next_token(&self, n_vocab: u64) -> LlamaToken {
        let mut x = self.seed.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed.set(x);
        let draw = x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n_vocab;
        LlamaToken::new(i32::try_from(draw).unwrap_or(0))
    }
}

/// Decodes `tokens` as one batch with logits for the last, like `llama_batch_get_one`.
fn decode(ctx: &mut LlamaContext, tokens: &[LlamaToken]) -> Result<(), EngineError> {
    let mut batch = LlamaBatch::get_one(tokens).map_err(|e| EngineError::Decode(e.to_string()))?;
    ctx.decode(&mut batch)
        .map_err(|e| EngineError::Decode(e.to_string()))
}

fn load_error(params: &EngineParams, step: &'static str, reason: String) -> EngineError {
    EngineError::Load {
        step,
        path: params.model_path.clone(),
        reason,
    }
}
