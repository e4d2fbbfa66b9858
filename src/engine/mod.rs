//! The inference engine: the only module that imports `llama_cpp_2`.
//!
//! It loads a GGUF, renders chats with the model's template, counts tokens exactly,
//! and generates with KV-cache prefix reuse. It knows nothing of memory, sessions or
//! the terminal; callers get plain data (`types`) and stream text through a callback.
//!
//! llama.cpp aborts the process on some misuse (a decode larger than `n_batch`,
//! positions that do not continue the cache, sampling without logits). Every such path
//! is guarded here: prefill is chunked, positions come from the cached token list, and
//! the last prompt token is always decoded before sampling.

mod backend;
mod chat_render;
pub mod cost;
mod decode;
pub mod embed;
mod error;
pub mod gbnf;
pub mod jinja;
mod llama;
mod load;
pub mod lookup;
pub mod pace;
pub mod prompt;
pub mod reference;
mod run;
mod sampler;
// The test engine is not part of the product build: unit tests get it, and the integration
// tests enable the `scripted-engine` feature (Cargo.toml's self dev-dependency).
#[cfg(any(test, feature = "scripted-engine"))]
pub mod scripted;
pub mod stops;
pub use stops::{Scan, StopFinder};
mod types;
mod unloaded;
mod utf8;
mod vocab;

pub use embed::LlamaEmbedder;
pub use error::EngineError;
pub use llama::LlamaEngine;
pub use load::fingerprint as model_fingerprint;
pub use load::MmapMode;
pub use lookup::LookupMode;
// The template table lives in the model wing; `template` stays a name here for the
// engine's own files (`super::template`).
use crate::model::template;
pub use template::BUILTIN_TEMPLATES;
pub use types::{
    rate, AbortFlag, Completion, EngineParams, GenerateOptions, KvCacheType, Message, ModelInfo,
    Role, SamplingParams, StopReason, TurnStats,
};
pub use unloaded::Unloaded;
pub use vocab::{LazyVocabulary, Vocabulary};

use crate::tokens::TokenCounter;

/// What a conversation needs from a model. The llama.cpp engine is the product; the
/// scripted engine makes turn-loop tests deterministic.
pub trait Engine: TokenCounter {
    fn info(&self) -> &ModelInfo;
    /// Exact token count of the rendered prompt for `messages` (template included).
    fn count_prompt(&self, messages: &[Message]) -> Result<usize, EngineError>;
    /// The rendered prompt text, for `/context`.
    fn render_prompt(&self, messages: &[Message]) -> Result<String, EngineError>;
    /// Generates the assistant's reply to `messages`, streaming text to `on_text`.
    fn generate(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError>;
    /// Generates without touching the chat's KV cache (summaries, extraction).
    fn generate_aside(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError>;
    /// Tokens (prompt + reply) an aside call may take; inputs chunked to this run without
    /// a second context whenever the chat leaves room (see `llama/aside.rs`).
    fn aside_room(&self) -> usize {
        self.info().n_ctx as usize
    }
    /// Keeps only the part of the chat cache that `messages` begin with (the caller will
    /// replace the rest), freeing those cells for aside calls.
    fn keep_chat_prefix(&mut self, _messages: &[Message]) {}
    /// Token ids of the rendered prompt, exactly as `generate` would see them.
    fn prompt_ids(&self, messages: &[Message]) -> Result<Vec<i32>, EngineError>;
    /// Makes the chat KV cache hold exactly `ids`; returns how many were decoded.
    fn warm_prefix(&mut self, ids: &[i32]) -> Result<usize, EngineError>;
    /// Saves the chat KV cache (and its tokens) to a state file.
    fn save_state(&self, path: &std::path::Path) -> Result<usize, EngineError>;
    /// Restores a saved state if its tokens are exactly `expected`.
    fn load_state(&mut self, path: &std::path::Path, expected: &[i32]) -> Result<(), EngineError>;
    /// Token ids of an aside call's prompt, as `generate_aside` sees it (no tools section).
    fn aside_prompt_ids(&self, messages: &[Message]) -> Result<Vec<i32>, EngineError> {
        self.prompt_ids(messages)
    }
    /// Tokens an aside call's prompt keeps in the chat context between calls
    /// (`GenerateOptions::keep_prompt`); 0 when none.
    fn kept_aside_len(&self) -> usize {
        0
    }
    /// Makes the kept aside prompt exactly `ids`; returns how many were decoded.
    fn keep_aside_prefix(&mut self, _ids: &[i32]) -> Result<usize, EngineError> {
        Err(EngineError::Unsupported("keep an aside prompt"))
    }
    /// Saves the kept aside prompt to a state file.
    fn save_aside_state(&self, _path: &std::path::Path) -> Result<usize, EngineError> {
        Err(EngineError::Unsupported("keep an aside prompt"))
    }
    /// Restores a kept aside prompt if its tokens are exactly `expected`.
    fn load_aside_state(
        &mut self,
        _path: &std::path::Path,
        _expected: &[i32],
    ) -> Result<(), EngineError> {
        Err(EngineError::Unsupported("keep an aside prompt"))
    }
    /// Tokens currently held in the KV cache.
    fn cached_tokens(&self) -> usize;
    /// Drops the KV cache.
    fn reset(&mut self);
    /// Tool schemas (OpenAI-style function objects) for a template with a tools section
    /// (`info().template_tools`); engines without one ignore them.
    fn set_tools(&mut self, _tools: Vec<serde_json::Value>) {}
}

impl Engine for LlamaEngine {
    fn info(&self) -> &ModelInfo {
        LlamaEngine::info(self)
    }
    fn count_prompt(&self, messages: &[Message]) -> Result<usize, EngineError> {
        self.tokenize_prompt(messages).map(|t| t.len())
    }
    fn render_prompt(&self, messages: &[Message]) -> Result<String, EngineError> {
        self.render(messages)
    }
    fn generate(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        LlamaEngine::generate(self, messages, opts, on_text)
    }
    fn generate_aside(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        LlamaEngine::generate_aside(self, messages, opts, on_text)
    }
    fn aside_room(&self) -> usize {
        LlamaEngine::aside_room(self)
    }
    fn keep_chat_prefix(&mut self, messages: &[Message]) {
        LlamaEngine::keep_chat_prefix(self, messages);
    }
    fn prompt_ids(&self, messages: &[Message]) -> Result<Vec<i32>, EngineError> {
        LlamaEngine::prompt_ids(self, messages)
    }
    fn warm_prefix(&mut self, ids: &[i32]) -> Result<usize, EngineError> {
        LlamaEngine::warm_prefix(self, ids)
    }
    fn save_state(&self, path: &std::path::Path) -> Result<usize, EngineError> {
        LlamaEngine::save_state(self, path)
    }
    fn load_state(&mut self, path: &std::path::Path, expected: &[i32]) -> Result<(), EngineError> {
        LlamaEngine::load_state(self, path, expected)
    }
    fn aside_prompt_ids(&self, messages: &[Message]) -> Result<Vec<i32>, EngineError> {
        LlamaEngine::aside_prompt_ids(self, messages)
    }
    fn kept_aside_len(&self) -> usize {
        self.shared_aside_len()
    }
    fn keep_aside_prefix(&mut self, ids: &[i32]) -> Result<usize, EngineError> {
        LlamaEngine::keep_aside_prefix(self, ids)
    }
    fn save_aside_state(&self, path: &std::path::Path) -> Result<usize, EngineError> {
        LlamaEngine::save_aside_state(self, path)
    }
    fn load_aside_state(
        &mut self,
        path: &std::path::Path,
        expected: &[i32],
    ) -> Result<(), EngineError> {
        LlamaEngine::load_aside_state(self, path, expected)
    }
    fn cached_tokens(&self) -> usize {
        LlamaEngine::cached_tokens(self)
    }
    fn reset(&mut self) {
        LlamaEngine::reset(self);
    }
    fn set_tools(&mut self, tools: Vec<serde_json::Value>) {
        LlamaEngine::set_tools(self, tools);
    }
}
