//! A scripted engine for deterministic turn-loop tests: replies come from a list, tokens
//! are words, and the prefix-reuse counters behave like the real engine's.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use super::prompt::reusable_prefix;
use super::{
    Completion, Engine, EngineError, GenerateOptions, Message, ModelInfo, StopReason, TurnStats,
};
use crate::tokens::TokenCounter;

pub struct ScriptedEngine {
    info: ModelInfo,
    replies: VecDeque<String>,
    cached: Vec<String>,
    /// Every prompt it was asked to answer, for assertions.
    pub prompts: Vec<Vec<Message>>,
}

impl ScriptedEngine {
    pub fn new(n_ctx: u32, replies: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let info = ModelInfo {
            path: PathBuf::from("scripted"),
            name: "scripted".into(),
            file_bytes: 0,
            n_params: 0,
            n_ctx_train: n_ctx,
            n_ctx,
            n_batch: n_ctx,
            threads: 1,
            threads_batch: 1,
            template_name: "scripted".into(),
            load_time: Duration::ZERO,
        };
        Self {
            info,
            replies: replies.into_iter().map(Into::into).collect(),
            cached: Vec::new(),
            prompts: Vec::new(),
        }
    }

    fn words(&self, messages: &[Message]) -> Vec<String> {
        let rendered = self.render_prompt(messages).unwrap_or_default();
        rendered.split_whitespace().map(str::to_string).collect()
    }
}

impl TokenCounter for ScriptedEngine {
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

impl Engine for ScriptedEngine {
    fn info(&self) -> &ModelInfo {
        &self.info
    }
    fn count_prompt(&self, messages: &[Message]) -> Result<usize, EngineError> {
        Ok(self.words(messages).len())
    }
    fn render_prompt(&self, messages: &[Message]) -> Result<String, EngineError> {
        let mut out = String::new();
        for m in messages {
            out.push_str(&format!(
                "<{}> {} </{}>\n",
                m.role.as_str(),
                m.content,
                m.role.as_str()
            ));
        }
        out.push_str("<assistant>");
        Ok(out)
    }
    fn generate(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        let prompt = self.words(messages);
        let n_ctx = self.info.n_ctx as usize;
        if prompt.len() >= n_ctx {
            return Err(EngineError::PromptTooLong {
                tokens: prompt.len(),
                n_ctx,
                fits: n_ctx - 1,
            });
        }
        self.prompts.push(messages.to_vec());
        let keep = reusable_prefix(&self.cached, &prompt);
        let reply = self
            .replies
            .pop_front()
            .unwrap_or_else(|| "(no scripted reply)".into());
        let mut text = String::new();
        let mut stop = StopReason::EndOfGeneration;
        for (i, word) in reply.split_inclusive(' ').enumerate() {
            if opts.abort.is_raised() {
                stop = StopReason::Aborted;
                break;
            }
            if opts.max_tokens.is_some_and(|m| i >= m) {
                stop = StopReason::MaxTokens;
                break;
            }
            on_text(word);
            text.push_str(word);
        }
        self.cached = prompt.clone();
        self.cached
            .extend(text.split_whitespace().map(str::to_string));
        let stats = TurnStats {
            prompt_tokens: prompt.len(),
            evaluated_tokens: prompt.len() - keep,
            completion_tokens: text.split_whitespace().count(),
            ..TurnStats::default()
        };
        Ok(Completion { text, stop, stats })
    }
    fn cached_tokens(&self) -> usize {
        self.cached.len()
    }
    fn reset(&mut self) {
        self.cached.clear();
    }
}
