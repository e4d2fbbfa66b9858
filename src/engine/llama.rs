//! The llama.cpp-backed engine: load, render, tokenize, generate with KV prefix reuse,
//! and save/restore a prompt prefix as a state file.
//!
//! The model and its contexts live in one owner (`ModelContexts`, a self-referential
//! cell), so contexts, which borrow the model, are always dropped first. The `chat`
//! context holds the conversation in sequence 0; summaries and other one-off calls that
//! must not disturb it run in its free cells as sequence 1, or in an `aside` context of
//! their own (see `aside.rs`). Each `cached` list mirrors its sequence exactly; every path
//! that may leave a cache in an unknown state clears both.

mod aside;

use std::cell::Cell;
use std::path::Path;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use self_cell::self_cell;

use super::backend::backend;
use super::chat_render::{self, Renderer};
use super::load::{context_params, describe, fingerprint};
use super::lookup::{RowTimings, MAX_DRAFT};
use super::prompt::{placeholder, scaffold_pieces, split_by_scaffold, split_rendered, Segment};
use super::run::{clear_seq, truncate_cache, Run};
use super::types::{AbortFlag, Completion, GenerateOptions, Message, ModelInfo};
use super::{EngineError, EngineParams, KvCacheType, LookupMode};
use crate::model::gguf;
use crate::tokens::TokenCounter;
use aside::Target;

/// The contexts that borrow the model.
struct Contexts<'m> {
    chat: LlamaContext<'m>,
    aside: Option<LlamaContext<'m>>,
}

self_cell!(
    struct ModelContexts {
        owner: LlamaModel,
        #[covariant]
        dependent: Contexts,
    }
);

/// Which context a call runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Chat,
    Aside,
}

/// A loaded chat model with its contexts.
pub struct LlamaEngine {
    cell: ModelContexts,
    backend: &'static LlamaBackend,
    renderer: Renderer,
    /// Tool schemas the template's tools section lists (empty: none).
    tools: Vec<serde_json::Value>,
    /// Special tokens that stand for a tool call's opener and closer in this vocabulary
    /// (`<tool_call>`): the model's own call in a reply is tokenized with them.
    call_markers: Vec<String>,
    /// Template text a reply stops before (turn markers spelt out as plain text).
    turn_stops: Vec<String>,
    /// Control tokens that do not end a generation, banned under a grammar (found once
    /// at load: `decode::inner_control_tokens`).
    inner_controls: Vec<LlamaToken>,
    info: ModelInfo,
    /// The element type both contexts' KV caches use.
    kv_cache_type: KvCacheType,
    /// Prompt-lookup decoding in both contexts.
    lookup: LookupMode,
    /// Tokens in the chat context's KV cache, in position order.
    chat_cached: Vec<LlamaToken>,
    aside_cached: Vec<LlamaToken>,
    /// Tokens sequence 1 of the chat context holds between aside calls: the prompt of the
    /// last shared call that asked to keep it (`GenerateOptions::keep_prompt`), else none.
    shared_cached: Vec<LlamaToken>,
    /// The aside context's n_ctx (0 while there is none).
    aside_n_ctx: u32,
    /// Whether aside calls may run as sequence 1 of the chat context (not for recurrent or
    /// hybrid models).
    shares_aside: bool,
    /// Aside calls that did.
    shared_calls: usize,
    /// What decodes of 1 + k rows took, from one reply to the next (`lookup::RowTimings`).
    row_timings: Cell<RowTimings>,
}

impl LlamaEngine {
    /// Loads the GGUF at `params.model_path` (mapped or read, `engine.mmap`) and creates its chat context.
    pub fn load(params: &EngineParams) -> Result<Self, EngineError> {
        let path = &params.model_path;
        let bad_file = |reason: String| EngineError::BadModelFile {
            path: path.clone(),
            reason,
        };
        let file_bytes = std::fs::metadata(path)
            .map_err(|e| bad_file(e.to_string()))?
            .len();
        let header = gguf::check_file(path).map_err(bad_file)?;
        let print = fingerprint(path, file_bytes).map_err(|e| bad_file(e.to_string()))?;
        let load_err = |step: &'static str, reason: String| EngineError::Load {
            step,
            path: path.clone(),
            reason,
        };
        let backend = backend().map_err(|e| load_err("initialize the backend", e))?;
        let started = Instant::now();
        let model = LlamaModel::load_from_file(
            backend,
            path,
            &LlamaModelParams::default()
                .with_use_mmap(params.mmap.maps(header.quantization.as_deref())),
        )
        .map_err(|e| load_err("load the model", rejected(&e.to_string())))?;
        let chosen = chat_render::choose(&model, params.template.as_deref()).map_err(|e| {
            load_err(
                "set up a chat template",
                format!(
                    "no template could render a chat ({e}); set model.template to one of: {}",
                    super::template::settings_list()
                ),
            )
        })?;
        let call_markers = [
            "<tool_call>",
            "</tool_call>",
            "<|python_tag|>",
            "[TOOL_CALLS]",
        ]
        .into_iter()
        .filter(|m| super::load::is_special_token(&model, m))
        .map(String::from)
        .collect();
        let inner_controls = super::decode::inner_control_tokens(&model);
        let described = describe(&model, params, file_bytes);
        let shares_aside = !model.is_recurrent() && !model.is_hybrid();
        let seqs = if shares_aside { 2 } else { 1 };
        let ctx_params = context_params(&described, described.n_ctx, params.kv_cache_type, seqs);
        let cell = ModelContexts::try_new(model, |m| {
            m.new_context(backend, ctx_params)
                .map(|chat| Contexts { chat, aside: None })
        })
        .map_err(|e| {
            load_err(
                "create a context (not enough memory for n_ctx?)",
                e.to_string(),
            )
        })?;
        let info = ModelInfo {
            load_time: started.elapsed(),
            template_name: chosen.choice.family,
            template_reason: chosen.choice.reason,
            template_fingerprint: chosen.fingerprint,
            template_tools: chosen.renderer.has_tools_section(),
            template_system_turns: chosen.system_turns,
            template_text: chosen.choice.template,
            fingerprint: print,
            ..described
        };
        Ok(Self {
            cell,
            backend,
            kv_cache_type: params.kv_cache_type,
            lookup: params.lookup,
            renderer: chosen.renderer,
            tools: Vec::new(),
            call_markers,
            turn_stops: chosen.turn_stops,
            inner_controls,
            info,
            chat_cached: Vec::new(),
            aside_cached: Vec::new(),
            shared_cached: Vec::new(),
            aside_n_ctx: 0,
            shares_aside,
            shared_calls: 0,
            row_timings: Cell::new([None; MAX_DRAFT + 1]),
        })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The aside context's n_ctx; 0 while it does not exist.
    pub fn aside_n_ctx(&self) -> u32 {
        self.aside_n_ctx
    }

    /// Bytes of the aside context's KV cache (same element type as the chat's).
    pub fn aside_kv_bytes(&self) -> u64 {
        self.info.kv_bytes * u64::from(self.aside_n_ctx) / u64::from(self.info.n_ctx.max(1))
    }

    /// Prompt-lookup decoding from the next generation on (`engine.lookup`).
    pub fn set_lookup(&mut self, mode: LookupMode) {
        self.lookup = mode;
    }

    pub fn lookup(&self) -> LookupMode {
        self.lookup
    }

    /// Number of tokens in the chat context's KV cache.
    pub fn cached_tokens(&self) -> usize {
        self.chat_cached.len()
    }

    /// Positions llama.cpp itself holds for the chat (highest position + 1), to check that
    /// the token mirror and the real cache agree.
    pub fn kv_cache_len(&self) -> usize {
        let max = self.cell.borrow_dependent().chat.kv_cache_seq_pos_max(0);
        usize::try_from(max + 1).unwrap_or(0)
    }

    /// Runs `f` on the chat context; the caller keeps `chat_cached` true to it.
    pub(super) fn with_chat<R>(&mut self, f: impl FnOnce(&mut LlamaContext) -> R) -> R {
        self.release_shared();
        self.cell.with_dependent_mut(|_, c| f(&mut c.chat))
    }

    /// Forgets the chat KV cache; the next prompt is prefilled from scratch.
    pub fn reset(&mut self) {
        self.cell.with_dependent_mut(|_, c| c.chat.clear_kv_cache());
        self.chat_cached.clear();
        self.shared_cached.clear();
    }

    /// The prompt text the template produces for `messages` (with the assistant opener
    /// and, where the template has a section for them, the tools).
    pub fn render(&self, messages: &[Message]) -> Result<String, EngineError> {
        self.render_with(messages, true, |_, m| strip_nul(&m.content))
    }

    /// Tool schemas for the template's tools section (OpenAI-style function objects);
    /// the next prompt lists them. Empty: no tools section.
    pub fn set_tools(&mut self, tools: Vec<serde_json::Value>) {
        self.tools = tools;
    }

    fn render_with(
        &self,
        messages: &[Message],
        with_tools: bool,
        content: impl Fn(usize, &Message) -> String,
    ) -> Result<String, EngineError> {
        let chat: Vec<Message> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| Message::new(m.role, content(i, m)))
            .collect();
        let tools: &[serde_json::Value] = if with_tools { &self.tools } else { &[] };
        self.renderer
            .render(self.cell.borrow_owner(), &chat, tools)
            .map_err(EngineError::Template)
    }

    /// Tokenizes the rendered prompt: template scaffolding with special tokens, message
    /// text without, so typed `<|im_start|>` stays plain text. The scaffolding is learnt
    /// from a second render with placeholders for the messages, so a message that is
    /// itself template text is still tokenized as text.
    pub fn tokenize_prompt(&self, messages: &[Message]) -> Result<Vec<LlamaToken>, EngineError> {
        self.tokenize_rendered(messages, true)
    }

    /// [`Self::tokenize_prompt`], with or without the tools section (aside calls have none).
    fn tokenize_rendered(
        &self,
        messages: &[Message],
        with_tools: bool,
    ) -> Result<Vec<LlamaToken>, EngineError> {
        let rendered = self.render_with(messages, with_tools, |_, m| strip_nul(&m.content))?;
        let scaffold = self.render_with(messages, with_tools, |i, _| placeholder(i))?;
        let contents: Vec<String> = messages.iter().map(|m| strip_nul(&m.content)).collect();
        let refs: Vec<&str> = contents.iter().map(String::as_str).collect();
        let segments = scaffold_pieces(&scaffold, refs.len())
            .and_then(|pieces| split_by_scaffold(&rendered, &pieces, &refs))
            .or_else(|| split_rendered(&rendered, &refs))
            .ok_or_else(|| {
                EngineError::Template("message text not found in the rendered prompt".into())
            })?;
        let vocab = self.cell.borrow_owner().vocab();
        let mut tokens = Vec::with_capacity(rendered.len() / 3);
        let mut owners = super::prompt::ContentOwners::new(&refs);
        for segment in segments {
            match segment {
                Segment::Template(text) => {
                    tokens.extend(vocab.tokenize(text.as_bytes(), false, true))
                }
                Segment::Content(text) => {
                    let by_model = owners
                        .owner(text)
                        .is_some_and(|i| messages[i].role == super::Role::Assistant);
                    let markers: &[String] = if by_model { &self.call_markers } else { &[] };
                    for (piece, special) in super::prompt::split_markers(text, markers) {
                        tokens.extend(vocab.tokenize(piece.as_bytes(), false, special));
                    }
                }
            }
        }
        if vocab.should_add_bos() && tokens.first() != Some(&vocab.bos()) {
            tokens.insert(0, vocab.bos());
        }
        Ok(tokens)
    }

    /// Token ids of the rendered prompt (see [`Self::tokenize_prompt`]).
    pub fn prompt_ids(&self, messages: &[Message]) -> Result<Vec<i32>, EngineError> {
        Ok(self
            .tokenize_prompt(messages)?
            .into_iter()
            .map(|t| t.0)
            .collect())
    }

    /// Tokenizes `text` as one string, optionally parsing special tokens (what llama.cpp's
    /// own tools do with a whole rendered prompt).
    pub fn tokenize_raw(&self, text: &str, parse_special: bool) -> Vec<i32> {
        let vocab = self.cell.borrow_owner().vocab();
        vocab
            .tokenize(text.as_bytes(), false, parse_special)
            .into_iter()
            .map(|t| t.0)
            .collect()
    }

    /// Generates the reply to `messages` in the chat context, reusing its cached prefix.
    pub fn generate(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        self.generate_in(Slot::Chat, messages, opts, on_text)
    }

    /// Generates in the aside context, leaving the chat's KV cache untouched.
    pub fn generate_aside(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        self.generate_in(Slot::Aside, messages, opts, on_text)
    }

    fn generate_in(
        &mut self,
        slot: Slot,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        let started = Instant::now();
        if tracing::enabled!(target: "harvey::prompt", tracing::Level::TRACE) {
            let text = self.render_with(messages, slot == Slot::Chat, |_, m| strip_nul(&m.content));
            tracing::trace!(target: "harvey::prompt", "rendered prompt:\n{}", text.unwrap_or_default());
        }
        let mut prompt = self.tokenize_rendered(messages, slot == Slot::Chat)?;
        if let Some(prefix) = &opts.assistant_prefix {
            let vocab = self.cell.borrow_owner().vocab();
            prompt.extend(vocab.tokenize(strip_nul(prefix).as_bytes(), false, false));
        }
        let n_ctx = self.info.n_ctx as usize;
        if prompt.len() >= n_ctx {
            return Err(EngineError::PromptTooLong {
                tokens: prompt.len(),
                n_ctx,
                fits: n_ctx.saturating_sub(1),
            });
        }
        let target = match slot {
            Slot::Chat => {
                let reply = opts.max_tokens.unwrap_or(n_ctx);
                // Saturating: a call's cap can be `usize::MAX` (an unbounded grammar), and
                // a wrapped sum would keep the aside cells the chat is about to need.
                let need = prompt.len().saturating_add(reply).saturating_add(MAX_DRAFT);
                self.make_room_for_chat(need);
                Target::Chat(n_ctx)
            }
            Slot::Aside => {
                let reply = opts.max_tokens.unwrap_or(n_ctx);
                self.aside_target(prompt.len().saturating_add(reply))?
            }
        };
        let n_batch = (self.info.n_batch as usize).min(target.n_ctx());
        let Self {
            cell,
            chat_cached,
            aside_cached,
            shared_cached,
            turn_stops,
            inner_controls,
            lookup,
            row_timings,
            ..
        } = self;
        let hold = if opts.keep_prompt {
            prompt.len().min(n_ctx / 4)
        } else {
            0
        };
        cell.with_dependent_mut(|model, c| {
            if matches!(target, Target::Shared(_)) {
                aside::check_shared(&mut c.chat, shared_cached);
            }
            let (ctx, cached, seq) = match (target, c.aside.as_mut()) {
                (Target::Own(_), Some(aside)) => (aside, aside_cached, 0),
                (Target::Shared(_), _) => (&mut c.chat, &mut *shared_cached, aside::SHARED_SEQ),
                _ => (&mut c.chat, &mut *chat_cached, 0),
            };
            let run = Run {
                model,
                n_ctx: target.n_ctx(),
                n_batch,
                started,
                turn_stops,
                inner_controls,
                lookup: *lookup,
                row_timings,
                seq,
            };
            let result = run.execute(ctx, cached, &prompt, opts, on_text);
            if result.is_err() {
                clear_seq(ctx, seq);
                cached.clear();
            }
            if matches!(target, Target::Shared(_)) {
                let keep = if result.is_ok() { hold } else { 0 };
                let keep = keep.min(shared_cached.len());
                truncate_cache(&mut c.chat, shared_cached, keep, seq);
                // The chat's cells must be as they were; if llama.cpp had to clear more
                // than sequence 1, the chat prefills again rather than trust a stale mirror.
                let held = usize::try_from(c.chat.kv_cache_seq_pos_max(0) + 1).unwrap_or(0);
                if held != chat_cached.len() {
                    c.chat.clear_kv_cache();
                    chat_cached.clear();
                    shared_cached.clear();
                }
            }
            result
        })
    }

    /// Makes the chat KV cache hold exactly `ids` (decoding what is missing, no sampling).
    pub fn warm_prefix(&mut self, ids: &[i32]) -> Result<usize, EngineError> {
        let tokens: Vec<LlamaToken> = ids.iter().map(|&t| LlamaToken(t)).collect();
        if tokens.len() >= self.info.n_ctx as usize {
            return Err(EngineError::PromptTooLong {
                tokens: tokens.len(),
                n_ctx: self.info.n_ctx as usize,
                fits: self.info.n_ctx as usize - 1,
            });
        }
        let n_ctx = self.info.n_ctx as usize;
        let n_batch = self.info.n_batch as usize;
        self.make_room_for_chat(tokens.len());
        let Self {
            cell, chat_cached, ..
        } = self;
        cell.with_dependent_mut(|model, c| {
            let keep = super::prompt::common_prefix(chat_cached, &tokens);
            let keep = truncate_cache(&mut c.chat, chat_cached, keep, 0);
            let result = prefill_only(
                model,
                &mut c.chat,
                chat_cached,
                &tokens[keep..],
                n_ctx,
                n_batch,
                0,
            );
            if result.is_err() {
                c.chat.clear_kv_cache();
                chat_cached.clear();
            }
            result.map(|_| tokens.len() - keep)
        })
    }

    /// Saves the chat context's state (its cached tokens) to `path`.
    pub fn save_state(&self, path: &Path) -> Result<usize, EngineError> {
        let cached = &self.chat_cached;
        self.cell
            .borrow_dependent()
            .chat
            .state_seq_save_file(path, 0, cached)
            .map_err(|e| EngineError::State {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })
    }

    /// Loads a state saved by [`Self::save_state`] into the chat context. It is kept only
    /// if its tokens are exactly `expected`; otherwise the cache is cleared and an error
    /// says why (the caller prefills instead).
    pub fn load_state(&mut self, path: &Path, expected: &[i32]) -> Result<(), EngineError> {
        let capacity = self.info.n_ctx as usize;
        let fail = |reason: String| EngineError::State {
            path: path.to_path_buf(),
            reason,
        };
        self.shared_cached.clear();
        let Self {
            cell, chat_cached, ..
        } = self;
        cell.with_dependent_mut(|_, c| {
            c.chat.clear_kv_cache();
            chat_cached.clear();
            let loaded = c.chat.state_seq_load_file(path, 0, capacity);
            let (tokens, _) = loaded.map_err(|e| fail(e.to_string()))?;
            if tokens.iter().map(|t| t.0).ne(expected.iter().copied()) {
                c.chat.clear_kv_cache();
                return Err(fail("saved tokens differ from this prompt's prefix".into()));
            }
            *chat_cached = tokens;
            Ok(())
        })
    }
}

/// Decodes `tokens` after `cached` into sequence `seq` of `ctx`, no sampling (a prefix
/// made ready for the calls that start with it).
fn prefill_only(
    model: &LlamaModel,
    ctx: &mut LlamaContext,
    cached: &mut Vec<LlamaToken>,
    tokens: &[LlamaToken],
    n_ctx: usize,
    n_batch: usize,
    seq: i32,
) -> Result<Option<usize>, EngineError> {
    let run = Run {
        model,
        n_ctx,
        n_batch,
        started: Instant::now(),
        turn_stops: &[],
        inner_controls: &[],
        lookup: LookupMode::Off,
        row_timings: &Cell::new([None; MAX_DRAFT + 1]),
        seq,
    };
    let mut batch = LlamaBatch::new(n_batch.max(1), 1);
    run.prefill(ctx, &mut batch, cached, tokens, &AbortFlag::new())
}

impl TokenCounter for LlamaEngine {
    fn count_tokens(&self, text: &str) -> usize {
        self.tokenize_raw(&strip_nul(text), false).len()
    }
}

/// llama.cpp says only "null" when it rejects a file; say what that usually means.
fn rejected(reason: &str) -> String {
    format!("{reason} — the file is probably truncated or corrupt, or its architecture is unsupported by this llama.cpp (run with --verbose for llama.cpp's own log)")
}

fn strip_nul(text: &str) -> String {
    text.replace('\0', "")
}
