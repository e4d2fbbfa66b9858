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
/// base use only this trait. Implementations cut inputs longer than
/// [`Embedder::max_tokens`] explicitly; callers that must not lose text (RAG chunking)
/// size their pieces with the embedder's own [`TokenCounter`].
pub trait Embedder: TokenCounter + Send + Sync {
    /// A stable identifier of the embedding model (file fingerprint), stored next to
    /// vectors so a store can refuse vectors from another model.
    fn model_id(&self) -> &str;
    /// Vector length.
    fn dim(&self) -> usize;
    /// Tokens (as counted by `count_tokens`) one input may have before it is cut.
    fn max_tokens(&self) -> usize;
    /// One normalized vector per input text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// The vector of a search query, or `None` for an empty query or a failed embedding
/// (logged: the caller then searches full text only, as `what` says).
pub fn embed_query(embedder: &dyn Embedder, query: &str, what: &str) -> Option<Vec<f32>> {
    if query.trim().is_empty() {
        return None;
    }
    match embedder.embed(&[query]) {
        Ok(mut v) if !v.is_empty() => Some(v.swap_remove(0)),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("{e}; {what} uses full text only");
            None
        }
    }
}

/// Why embedding failed; the caller falls back to full-text search only.
#[derive(Debug, thiserror::Error)]
#[error("embedding failed: {0}")]
pub struct EmbedError(pub String);

/// A deterministic stand-in for tests of store logic (never on a product path): each
/// lower-cased word adds to one of `dim` buckets chosen by its hash, so texts that share
/// words are close and nothing is learned.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    pub dim: usize,
    pub id: String,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self {
            dim: 64,
            id: "hash-embedder".into(),
        }
    }
}

impl TokenCounter for HashEmbedder {
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn max_tokens(&self) -> usize {
        256
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        use std::hash::{Hash, Hasher};
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0_f32; self.dim.max(1)];
                for w in t
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    w.to_lowercase().hash(&mut h);
                    let n = v.len() as u64;
                    v[(h.finish() % n) as usize] += 1.0;
                }
                crate::vector::normalize(&mut v);
                v
            })
            .collect())
    }
}
