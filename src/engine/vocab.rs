//! A model's vocabulary alone (llama.cpp's vocab-only load): exact token counts for
//! commands that never generate, such as `harvey memory recall --budget`.

use std::path::{Path, PathBuf};

use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;

use super::backend::backend;
use super::EngineError;
use crate::gguf;
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

impl TokenCounter for Vocabulary {
    fn count_tokens(&self, text: &str) -> usize {
        // Exactly as the engine counts message text: no BOS, special tokens not parsed.
        self.model
            .vocab()
            .tokenize(text.replace('\0', "").as_bytes(), false, false)
            .len()
    }
}
