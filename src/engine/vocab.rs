//! A model's vocabulary alone (llama.cpp's vocab-only load): exact token counts for
//! commands that never generate, such as `harvey memory recall --budget`, loaded only
//! when a count is not cached ([`LazyVocabulary`]).

use std::path::{Path, PathBuf};

use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;

use super::backend::backend;
use super::EngineError;
use crate::model::gguf;
use crate::tokens::TokenCounter;

/// The tokenizer of a GGUF, without weights or a context.
pub struct Vocabulary {
    model: LlamaModel,
    path: PathBuf,
}

impl Vocabulary {
    pub fn load(path: &Path) -> Result<Self, EngineError> {
        let bad_file = |reason: String| EngineError::BadModelFile {
            path: path.to_path_buf(),
            reason,
        };
        std::fs::metadata(path).map_err(|e| bad_file(e.to_string()))?;
        gguf::check_file(path).map_err(bad_file)?;
        let load_err = |step: &'static str, reason: String| EngineError::Load {
            step,
            path: path.to_path_buf(),
            reason,
        };
        let backend = backend().map_err(|e| load_err("initialize the backend", e))?;
        let params = LlamaModelParams::default().with_vocab_only(true);
        let model = LlamaModel::load_from_file(backend, path, &params)
            .map_err(|e| load_err("load the vocabulary", e.to_string()))?;
        Ok(Self {
            model,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The count of a text that could not be counted: more than any budget, small enough
/// that sums of a few never overflow.
pub const UNCOUNTED: usize = u32::MAX as usize;

/// A vocabulary loaded at its first count. Recall's token counts mostly come from the
/// index's cache (`memory::recall::CostCache`), so a command whose counts are all cached
/// never pays for the load (≈ 70 ms for SmolLM2's 49k tokens on a 2-core x86). A
/// failed load counts every text as [`UNCOUNTED`] (nothing fits) and is kept for
/// [`Self::error`], which the caller checks after its counts.
pub struct LazyVocabulary {
    path: PathBuf,
    loaded: std::sync::OnceLock<Result<Vocabulary, String>>,
}

impl LazyVocabulary {
    /// The model file must exist and look like a GGUF now (its first bytes: the whole
    /// header of a 151k-token vocabulary takes milliseconds to walk, and a recall whose
    /// counts are all cached never needs it); the tokenizer loads later, after the full
    /// check ([`Vocabulary::load`]).
    pub fn new(path: &Path) -> Result<Self, EngineError> {
        std::fs::metadata(path)
            .map_err(|e| e.to_string())
            .and_then(|_| gguf::check_start(path))
            .map_err(|reason| EngineError::BadModelFile {
                path: path.to_path_buf(),
                reason,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            loaded: std::sync::OnceLock::new(),
        })
    }

    fn get(&self) -> &Result<Vocabulary, String> {
        self.loaded
            .get_or_init(|| Vocabulary::load(&self.path).map_err(|e| e.to_string()))
    }

    /// Whether the vocabulary was needed (some count was not cached).
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    /// Why the vocabulary could not be loaded, if a count needed it and it failed.
    pub fn error(&self) -> Option<&str> {
        self.loaded
            .get()
            .and_then(|r| r.as_ref().err())
            .map(String::as_str)
    }
}

impl TokenCounter for LazyVocabulary {
    fn count_tokens(&self, text: &str) -> usize {
        match self.get() {
            Ok(v) => v.count_tokens(text),
            Err(_) => UNCOUNTED,
        }
    }
}

impl TokenCounter for Vocabulary {
    fn count_tokens(&self, text: &str) -> usize {
        // Exactly as the engine counts message text: no BOS, special tokens not parsed.
        self.model
            .vocab()
            .tokenize(text.replace('\0', "").as_bytes(), false, false)
            .len()
    }
}
