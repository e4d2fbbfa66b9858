//! Shared test helpers: the real default model and engine settings for tests.

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
    LlamaEngine::load(&EngineParams {
        model_path: model_path(),
        n_ctx,
        n_batch,
        threads: 2,
        threads_batch: 2,
    })
    .expect("the default model loads")
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
