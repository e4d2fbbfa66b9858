//! The token-counting boundary.
//!
//! Budgets are exact: every count comes from the loaded model's tokenizer. Modules that
//! need counts (memory recall, prompt assembly) take a `&dyn TokenCounter` and never
//! import the engine, so they can be tested with a deterministic counter.

/// Counts tokens exactly as the loaded model will see them.
pub trait TokenCounter {
    /// Number of tokens `text` occupies when it is placed inside a message
    /// (no BOS, special-token parsing off, as user/memory text is tokenized).
    fn count_tokens(&self, text: &str) -> usize;
}

/// A counter for tests: one token per whitespace-separated word.
///
/// Not used on any product path; real counts come from the engine.
#[derive(Debug, Default, Clone, Copy)]
pub struct WordCounter;

impl TokenCounter for WordCounter {
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

/// Turns text into sentence embeddings (L2-normalized), for the vector half of recall.
///
/// Implemented by the engine's in-process embedding model; memory, RAG and the knowledge
/// base use only this trait. Implementations chunk or truncate long inputs explicitly.
pub trait Embedder {
    /// A stable identifier of the embedding model (file fingerprint), stored next to
    /// vectors so a store can refuse vectors from another model.
    fn model_id(&self) -> &str;
    /// Vector length.
    fn dim(&self) -> usize;
    /// One normalized vector per input text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Why embedding failed; the caller falls back to full-text search only.
#[derive(Debug, thiserror::Error)]
#[error("embedding failed: {0}")]
pub struct EmbedError(pub String);
