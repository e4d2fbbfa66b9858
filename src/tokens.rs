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
