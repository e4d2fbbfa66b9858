//! A minimal raw llama.cpp loop through the same crate, for benchmarks: the yardstick
//! harvey's engine is compared with (its overhead ratio should be about 1.0).
//!
//! It loads its own model and context (the file is mmapped, so pages are shared), decodes
//! the prompt in `n_batch` chunks, then greedy-decodes a fixed number of tokens, ignoring
//! end-of-generation so every run does the same work.

use std::num::NonZeroU32;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;

use super::backend::backend;
use super::load::WithKvCacheType;
use super::prompt::chunk_ranges;
use super::{rate, EngineError, EngineParams};

/// What the raw loop measured.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RawTimings {
    pub prompt_tokens: usize,
    pub generated_tokens: usize,
    pub prefill_tps: f64,
    pub decode_tps: f64,
}

/// Prefills `prompt` (special tokens parsed) and greedy-decodes `n_gen` tokens.
pub fn raw_generate(
    params: &EngineParams,
    prompt: &str,
    n_gen: usize,
) -> Result<RawTimings, EngineError> {
    let fail = |step: &'static str, reason: String| EngineError::Load {
        step,
        path: params.model_path.clone(),
        reason,
    };
    let backend = backend().map_err(|e| fail("initialize the backend", e))?;
    let model =
        LlamaModel::load_from_file(backend, &params.model_path, &LlamaModelParams::default())
            .map_err(|e| fail("load the model", e.to_string()))?;
    let ctx_params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(params.n_ctx))
        .with_n_batch(params.n_batch)
        .with_n_ubatch(params.n_batch)
        .with_n_threads(i32::try_from(params.threads).unwrap_or(1))
        .with_n_threads_batch(i32::try_from(params.threads_batch).unwrap_or(1))
        .with_kv_cache_type(params.kv_cache_type);
    let mut ctx = model
        .new_context(backend, ctx_params)
        .map_err(|e| fail("create a context", e.to_string()))?;
    let tokens = model.vocab().tokenize(prompt.as_bytes(), false, true);
    let n_ctx = params.n_ctx as usize;
    if tokens.len() + n_gen > n_ctx {
        return Err(EngineError::PromptTooLong {
            tokens: tokens.len() + n_gen,
            n_ctx,
            fits: n_ctx,
        });
    }
    let decode_err = |e: llama_cpp_2::DecodeError| EngineError::Decode(e.to_string());
    let add_err = |e: llama_cpp_2::llama_batch::BatchAddError| EngineError::Decode(e.to_string());
    let n_batch = params.n_batch as usize;
    let mut batch = LlamaBatch::new(n_batch.max(1), 1);
    let started = Instant::now();
    for (start, end) in chunk_ranges(tokens.len(), n_batch) {
        batch.clear();
        for (i, &token) in tokens[start..end].iter().enumerate() {
            let pos = i32::try_from(start + i).unwrap_or(i32::MAX);
            batch
                .add(token, pos, &[0], start + i + 1 == tokens.len())
                .map_err(add_err)?;
        }
        ctx.decode(&mut batch).map_err(decode_err)?;
    }
    let prefill = started.elapsed();
    let mut sampler = LlamaSampler::greedy();
    let mut logits_at = batch.n_tokens() - 1;
    let started = Instant::now();
    for i in 0..n_gen {
        let token = sampler.sample(&ctx, logits_at);
        batch.clear();
        let pos = i32::try_from(tokens.len() + i).unwrap_or(i32::MAX);
        batch.add(token, pos, &[0], true).map_err(add_err)?;
        ctx.decode(&mut batch).map_err(decode_err)?;
        logits_at = 0;
    }
    let decode = started.elapsed();
    Ok(RawTimings {
        prompt_tokens: tokens.len(),
        generated_tokens: n_gen,
        prefill_tps: rate(tokens.len(), prefill),
        decode_tps: rate(n_gen, decode),
    })
}
