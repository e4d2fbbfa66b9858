//! The embedder as a session start uses it: identified at once, loaded on a thread of
//! its own. Its id is all the stores need to open and check their vectors, and
//! llama.cpp's load of the model (≈ 50 ms of the ≈ 55 a 2-core x86 takes, most of it the
//! vocabulary) is the longest step of a start; meanwhile the stores open, and their
//! vector copies are mapped and checked. The first call that needs the model waits for
//! it (or loads it, when no thread could be started).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::{EmbedderFile, LlamaEmbedder};
use crate::engine::EngineError;
use crate::tokens::{EmbedError, Embedder, TokenCounter};

pub struct ArrivingEmbedder {
    file: EmbedderFile,
    threads: u32,
    loaded: OnceLock<Result<LlamaEmbedder, String>>,
}

impl ArrivingEmbedder {
    /// Checks and fingerprints `path` here (a bad file is an error now, as with
    /// [`LlamaEmbedder::load`]) and starts loading it on another thread.
    pub fn start(path: &Path, threads: u32) -> Result<Arc<Self>, EngineError> {
        let arriving = Arc::new(Self {
            file: EmbedderFile::identify(path)?,
            threads,
            loaded: OnceLock::new(),
        });
        let loader = arriving.clone();
        let spawned = std::thread::Builder::new()
            .name("embedder-load".into())
            .spawn(move || {
                let _ = loader.wait();
            });
        if let Err(e) = spawned {
            tracing::debug!("embedder: no loading thread ({e}); it loads at first use");
        }
        Ok(arriving)
    }

    /// The loaded model, with its query context made: waits while the load is under way
    /// (or runs it here); the error says why llama.cpp could not load the file. Once it
    /// returned, no llama.cpp call of this embedder runs on another thread (`main` relies
    /// on that before it exits).
    pub fn wait(&self) -> Result<&LlamaEmbedder, &str> {
        self.loaded
            .get_or_init(|| {
                let model = LlamaEmbedder::load_file(&self.file, self.threads)
                    .map_err(|e| e.to_string())?;
                model.prepare_query_context();
                Ok(model)
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Whether the load has ended (well or not): work meant to fill the wait for it is
    /// no longer free.
    pub fn arrived(&self) -> bool {
        self.loaded.get().is_some()
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl TokenCounter for ArrivingEmbedder {
    /// The model's count; without a model (its load failed) none of its inputs will be
    /// embedded either, and a rough count (4 bytes a token) keeps callers going.
    fn count_tokens(&self, text: &str) -> usize {
        match self.wait() {
            Ok(model) => model.count_tokens(text),
            Err(_) => text.len().div_ceil(4),
        }
    }
}

impl Embedder for ArrivingEmbedder {
    /// Known before the model loads.
    fn model_id(&self) -> &str {
        self.file.id()
    }

    fn dim(&self) -> usize {
        self.wait().map_or(0, |m| m.dim())
    }

    /// Without a model, the cap every model gets (its inputs fail to embed anyway).
    fn max_tokens(&self) -> usize {
        self.wait()
            .map_or(super::MAX_TOKENS as usize - 2, |m| m.max_tokens())
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let model = self
            .wait()
            .map_err(|e| EmbedError(format!("the embedder did not load: {e}")))?;
        model.embed(texts)
    }
}
