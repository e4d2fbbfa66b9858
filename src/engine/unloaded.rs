//! The engine slot while one model is freed and the next loads (`/model use`): it holds
//! the old model's description and refuses work, so nothing can reach a freed model.

use std::path::Path;

use super::{Completion, Engine, EngineError, GenerateOptions, Message, ModelInfo};
use crate::tokens::TokenCounter;

pub struct Unloaded {
    info: ModelInfo,
}

impl Unloaded {
    pub fn new(info: ModelInfo) -> Self {
        Self { info }
    }

    fn refuse<T>(&self) -> Result<T, EngineError> {
        Err(EngineError::Unloaded {
            path: self.info.path.clone(),
        })
    }
}

impl TokenCounter for Unloaded {
    fn count_tokens(&self, text: &str) -> usize {
        // Sized before any model is loaded: the documented chars/4 estimate.
        text.len().div_ceil(4)
    }
}

impl Engine for Unloaded {
    fn info(&self) -> &ModelInfo {
        &self.info
    }
    fn count_prompt(&self, _: &[Message]) -> Result<usize, EngineError> {
        self.refuse()
    }
    fn render_prompt(&self, _: &[Message]) -> Result<String, EngineError> {
        self.refuse()
    }
    fn generate(
        &mut self,
        _: &[Message],
        _: &GenerateOptions,
        _: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        self.refuse()
    }
    fn generate_aside(
        &mut self,
        _: &[Message],
        _: &GenerateOptions,
        _: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        self.refuse()
    }
    fn prompt_ids(&self, _: &[Message]) -> Result<Vec<i32>, EngineError> {
        self.refuse()
    }
    fn warm_prefix(&mut self, _: &[i32]) -> Result<usize, EngineError> {
        self.refuse()
    }
    fn save_state(&self, _: &Path) -> Result<usize, EngineError> {
        self.refuse()
    }
    fn load_state(&mut self, _: &Path, _: &[i32]) -> Result<(), EngineError> {
        self.refuse()
    }
    fn cached_tokens(&self) -> usize {
        0
    }
    fn reset(&mut self) {}
}
