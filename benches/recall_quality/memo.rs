//! The benchmark's embedder: MiniLM with a cache of query vectors and, on request, a
//! file of the memories' vectors kept between runs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use harvey::engine::LlamaEmbedder;
use harvey::tokens::{EmbedError, Embedder, TokenCounter};

/// The embedder with a cache of query vectors, so the settings grid embeds each
/// question once; `clear` makes the timed modes pay for their query embeddings.
/// With HARVEY_RECALL_VECTORS=file, the memories' vectors are also kept in that file
/// between runs (a lever that changes only keys or ranking then costs no embedding;
/// the cost per memory written is not measured in such a run).
pub struct Memo {
    inner: Arc<LlamaEmbedder>,
    cache: Mutex<HashMap<String, Vec<f32>>>,
    kept: Mutex<HashMap<String, Vec<f32>>>,
    file: Option<PathBuf>,
}

impl Memo {
    pub fn new(inner: Arc<LlamaEmbedder>) -> Self {
        let file = std::env::var_os("HARVEY_RECALL_VECTORS").map(PathBuf::from);
        let kept = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Self {
            inner,
            cache: Mutex::new(HashMap::new()),
            kept: Mutex::new(kept),
            file,
        }
    }

    /// Whether the file held vectors before this run (then the cost per memory
    /// written is not measured).
    pub fn is_kept(&self) -> bool {
        self.file.is_some() && self.kept.lock().is_ok_and(|k| !k.is_empty())
    }

    /// Writes the memories' vectors to the file, when one is named.
    pub fn save(&self) {
        let (Some(file), Ok(kept)) = (&self.file, self.kept.lock()) else {
            return;
        };
        if let Ok(bytes) = serde_json::to_vec(&*kept) {
            let _ = std::fs::write(file, bytes);
        }
    }

    /// A batch (memories being indexed): what the file holds is not embedded again.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.file.is_none() {
            return self.inner.embed(texts);
        }
        let mut kept = self
            .kept
            .lock()
            .map_err(|_| EmbedError("vector file lock".into()))?;
        let missing: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !kept.contains_key(*t))
            .collect();
        if !missing.is_empty() {
            for (t, v) in missing.iter().zip(self.inner.embed(&missing)?) {
                kept.insert((*t).to_string(), v);
            }
        }
        Ok(texts.iter().map(|t| kept[*t].clone()).collect())
    }

    pub fn clear(&self) {
        if let Ok(mut c) = self.cache.lock() {
            c.clear();
        }
    }
}

impl TokenCounter for Memo {
    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
}

impl Embedder for Memo {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn max_tokens(&self) -> usize {
        self.inner.max_tokens()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.len() != 1 {
            return self.embed_batch(texts);
        }
        let key = texts[0].to_string();
        if let Some(v) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(vec![v]);
        }
        let out = self.inner.embed(texts)?;
        if let (Ok(mut c), Some(v)) = (self.cache.lock(), out.first()) {
            c.insert(key, v.clone());
        }
        Ok(out)
    }
}
