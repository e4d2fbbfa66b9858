//! Shared test helpers: the real default model and engine settings for tests.

pub mod http;
pub mod pdf;
pub mod process;

use std::path::PathBuf;

use harvey::engine::{AbortFlag, EngineParams, GenerateOptions, LlamaEngine, SamplingParams};

/// The default GGUF, fetched by `scripts/fetch-models.sh` (the test command runs it).
pub fn model_path() -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/fetch-models.sh (scripts/test.sh does)",
        path.display()
    );
    path
}

/// Loads the real model with a small context so tests stay quick.
pub fn engine(n_ctx: u32, n_batch: u32) -> LlamaEngine {
    load(model_path(), n_ctx, n_batch)
}

/// The second test family, Gemma 3 270M (no chat template in the file), fetched by
/// `scripts/fetch-models.sh --test` (scripts/test.sh runs it). `None`, with one line on
/// stderr saying so, when it is absent: its tests are then skipped.
pub fn gemma_path(test: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/gemma-3-270m-q4_k_m.gguf");
    if path.is_file() {
        return Some(path);
    }
    eprintln!(
        "{test}: skipped, {} is absent (scripts/fetch-models.sh --test fetches it)",
        path.display()
    );
    None
}

/// Loads Gemma 3 270M with a small context.
pub fn gemma_engine(path: PathBuf, n_ctx: u32) -> LlamaEngine {
    load(path, n_ctx, 512)
}

fn load(model_path: PathBuf, n_ctx: u32, n_batch: u32) -> LlamaEngine {
    LlamaEngine::load(&EngineParams {
        model_path,
        n_ctx,
        n_batch,
        threads: 2,
        threads_batch: 2,
        template: None,
        kv_cache_type: Default::default(),
        lookup: Default::default(),
    })
    .expect("the model loads")
}

pub fn greedy(max_tokens: usize) -> GenerateOptions {
    GenerateOptions {
        sampling: SamplingParams {
            temperature: 0.0,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            repeat_penalty: 1.1,
            repeat_last_n: 64,
            seed: 42,
        },
        max_tokens: Some(max_tokens),
        abort: AbortFlag::new(),
        grammar: None,
        stop: Vec::new(),
        assistant_prefix: None,
    }
}
