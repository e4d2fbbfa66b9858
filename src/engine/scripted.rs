//! A scripted engine for deterministic turn-loop tests: replies come from a list, tokens
//! are words, and the prefix-reuse counters behave like the real engine's.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::prompt::{common_prefix, reusable_prefix};
use super::{
    AbortFlag, Completion, Engine, EngineError, GenerateOptions, Message, ModelInfo,
    SamplingParams, StopReason, TurnStats,
};
use crate::tokens::TokenCounter;

pub struct ScriptedEngine {
    info: ModelInfo,
    replies: VecDeque<String>,
    cached: Vec<i32>,
    /// Every prompt it was asked to answer (chat and aside), for assertions.
    pub prompts: Vec<Vec<Message>>,
    /// How many of those went through `generate_aside`.
    pub aside_calls: usize,
    /// `GenerateOptions::banned` of every chat generation, in order.
    pub banned: Vec<Vec<String>>,
    /// `GenerateOptions::sampling` of every chat generation, in order.
    pub sampling: Vec<SamplingParams>,
    /// `GenerateOptions::assistant_prefix` and `grammar` of every chat generation, in order.
    pub prefixes: Vec<(Option<String>, Option<String>)>,
    /// Every call in order, shared (see [`Self::log`]): for a test that handed the
    /// engine to an `App`.
    log: Arc<Mutex<Vec<Call>>>,
    /// `Some((n, flag))`: raise `flag` once an aside call has given `n` words (input
    /// arriving while a summary is written). Shared, see [`Self::interrupt_asides`].
    interrupt: Interrupt,
}

/// See [`ScriptedEngine::interrupt_asides`].
pub type Interrupt = Arc<Mutex<Option<(usize, AbortFlag)>>>;

/// One call the scripted engine answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Through `generate_aside` (summaries, the router, tags), not the chat.
    pub aside: bool,
    pub messages: Vec<Message>,
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
            template_reason: "scripted engine".into(),
            load_time: Duration::ZERO,
            fingerprint: "scripted".into(),
            template_fingerprint: "scripted".into(),
            template_tools: false,
            template_system_turns: false,
            template_text: String::new(),
            kv_type: "none".into(),
            kv_bytes: 0,
            notes: Vec::new(),
        };
        Self {
            info,
            replies: replies.into_iter().map(Into::into).collect(),
            cached: Vec::new(),
            prompts: Vec::new(),
            aside_calls: 0,
            banned: Vec::new(),
            sampling: Vec::new(),
            prefixes: Vec::new(),
            log: Arc::default(),
            interrupt: Arc::default(),
        }
    }

    /// The calls this engine answers, in order: a handle that stays readable after the
    /// engine is boxed away.
    pub fn log(&self) -> Arc<Mutex<Vec<Call>>> {
        Arc::clone(&self.log)
    }

    /// Set it to `Some((n, flag))` to have `flag` raised once an aside call has given `n`
    /// words; a handle that stays usable after the engine is boxed away.
    pub fn interrupt_asides(&self) -> Interrupt {
        Arc::clone(&self.interrupt)
    }

    fn logged(&self, aside: bool, messages: &[Message]) {
        if let Ok(mut log) = self.log.lock() {
            log.push(Call {
                aside,
                messages: messages.to_vec(),
            });
        }
    }

    /// Adds replies to the end of the script.
    pub fn push_replies(&mut self, replies: impl IntoIterator<Item = impl Into<String>>) {
        self.replies.extend(replies.into_iter().map(Into::into));
    }

    fn ids(&self, messages: &[Message]) -> Vec<i32> {
        let rendered = self.render_prompt(messages).unwrap_or_default();
        rendered.split_whitespace().map(word_id).collect()
    }

    fn reply(
        &mut self,
        prompt_len: usize,
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> (String, StopReason) {
        let mut reply = self
            .replies
            .pop_front()
            .unwrap_or_else(|| "(no scripted reply)".into());
        // A stop string ends this reply; what follows it is where the next call resumes
        // (as a model continuing after an assistant prefix would).
        let hit = opts
            .stop
            .iter()
            .filter_map(|s| reply.find(s.as_str()).map(|i| (i, s.len())))
            .min();
        if let Some((at, len)) = hit {
            let rest = reply[at + len..].to_string();
            reply.truncate(at);
            self.replies.push_front(rest);
        }
        let (text, end) = self.emit(&reply, prompt_len, opts, on_text);
        if end == StopReason::StopString && hit.is_none() {
            // The caller's finder stopped it (as the real engine's scanner does): the rest
            // is where the next call resumes.
            self.replies.push_front(reply[text.len()..].to_string());
        }
        match (hit, end) {
            (Some(_), StopReason::EndOfGeneration) => (text, StopReason::StopString),
            _ => (text, end),
        }
    }

    fn emit(
        &self,
        reply: &str,
        prompt_len: usize,
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> (String, StopReason) {
        let room = (self.info.n_ctx as usize).saturating_sub(prompt_len);
        let mut text = String::new();
        let mut finder = opts
            .stop_finder
            .as_ref()
            .map(|f| super::stops::StopScanner::with_finder(&[], Some(f)));
        for (i, word) in reply.split_inclusive(' ').enumerate() {
            let stop = if opts.abort.is_raised() {
                Some(StopReason::Aborted)
            } else if opts.max_tokens.is_some_and(|m| i >= m) {
                Some(StopReason::MaxTokens)
            } else if i >= room {
                Some(StopReason::ContextFull)
            } else {
                None
            };
            if let Some(stop) = stop {
                return (text, stop);
            }
            let Some(scanner) = finder.as_mut() else {
                on_text(word);
                text.push_str(word);
                continue;
            };
            let (shown, stopped) = scanner.push(word);
            if !shown.is_empty() {
                on_text(&shown);
            }
            if stopped {
                return (scanner.text().to_string(), StopReason::StopString);
            }
            text = scanner.text().to_string();
        }
        if let Some(rest) = finder.as_mut().map(|s| s.finish()) {
            if !rest.is_empty() {
                on_text(&rest);
            }
        }
        (text, StopReason::EndOfGeneration)
    }

    fn check_fits(&self, prompt: &[i32]) -> Result<(), EngineError> {
        let n_ctx = self.info.n_ctx as usize;
        if prompt.len() >= n_ctx {
            return Err(EngineError::PromptTooLong {
                tokens: prompt.len(),
                n_ctx,
                fits: n_ctx - 1,
            });
        }
        Ok(())
    }
}

fn word_id(word: &str) -> i32 {
    word.bytes()
        .fold(7i32, |h, b| h.wrapping_mul(31).wrapping_add(i32::from(b)))
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
        Ok(self.ids(messages).len())
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
        let prompt = self.ids(messages);
        self.check_fits(&prompt)?;
        self.prompts.push(messages.to_vec());
        self.logged(false, messages);
        self.banned.push(opts.banned.clone());
        self.sampling.push(opts.sampling.clone());
        self.prefixes
            .push((opts.assistant_prefix.clone(), opts.grammar.clone()));
        let keep = reusable_prefix(&self.cached, &prompt);
        let (text, stop) = self.reply(prompt.len(), opts, on_text);
        self.cached = prompt.clone();
        self.cached.extend(text.split_whitespace().map(word_id));
        let stats = TurnStats {
            prompt_tokens: prompt.len(),
            evaluated_tokens: prompt.len() - keep,
            completion_tokens: text.split_whitespace().count(),
            ..TurnStats::default()
        };
        Ok(Completion { text, stop, stats })
    }
    fn generate_aside(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        let prompt = self.ids(messages);
        self.check_fits(&prompt)?;
        self.prompts.push(messages.to_vec());
        self.logged(true, messages);
        self.aside_calls += 1;
        let raise = self.interrupt.lock().ok().and_then(|r| r.clone());
        let mut words = 0;
        let mut counted = |t: &str| {
            words += 1;
            if let Some((after, flag)) = &raise {
                if words >= *after {
                    flag.raise();
                }
            }
            on_text(t);
        };
        let (text, stop) = self.reply(prompt.len(), opts, &mut counted);
        let stats = TurnStats {
            prompt_tokens: prompt.len(),
            evaluated_tokens: prompt.len(),
            completion_tokens: text.split_whitespace().count(),
            ..TurnStats::default()
        };
        Ok(Completion { text, stop, stats })
    }
    fn prompt_ids(&self, messages: &[Message]) -> Result<Vec<i32>, EngineError> {
        Ok(self.ids(messages))
    }
    fn warm_prefix(&mut self, ids: &[i32]) -> Result<usize, EngineError> {
        self.check_fits(ids)?;
        let keep = common_prefix(&self.cached, ids);
        self.cached = ids.to_vec();
        Ok(ids.len() - keep)
    }
    fn save_state(&self, path: &Path) -> Result<usize, EngineError> {
        let text = serde_json::to_string(&self.cached).unwrap_or_default();
        std::fs::write(path, &text).map_err(|e| EngineError::State {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        Ok(text.len())
    }
    fn load_state(&mut self, path: &Path, expected: &[i32]) -> Result<(), EngineError> {
        let fail = |reason: String| EngineError::State {
            path: path.to_path_buf(),
            reason,
        };
        self.cached.clear();
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        let ids: Vec<i32> = serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
        if ids != expected {
            return Err(fail("saved tokens differ from this prompt's prefix".into()));
        }
        self.cached = ids;
        Ok(())
    }
    fn cached_tokens(&self) -> usize {
        self.cached.len()
    }
    fn reset(&mut self) {
        self.cached.clear();
    }
}
