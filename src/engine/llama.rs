//! The llama.cpp-backed engine: load, render, tokenize, generate with KV prefix reuse.
//!
//! The model and its context live in one owner (`ModelContext`, a self-referential cell),
//! so the context, which borrows the model, is always dropped first. `cached` mirrors the
//! tokens in the KV cache (sequence 0) exactly; every path that may leave the cache in an
//! unknown state clears both.

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use self_cell::self_cell;

use super::backend::backend;
use super::prompt::{chunk_ranges, reusable_prefix, split_rendered, Segment};
use super::template::template_family;
use super::types::{
    rate, AbortFlag, Completion, GenerateOptions, Message, ModelInfo, StopReason, TurnStats,
};
use super::utf8::Utf8Stream;
use super::{gguf, EngineError, EngineParams};
use crate::tokens::TokenCounter;

self_cell!(
    struct ModelContext {
        owner: LlamaModel,
        #[covariant]
        dependent: LlamaContext,
    }
);

/// A loaded chat model with one context.
pub struct LlamaEngine {
    cell: ModelContext,
    template: LlamaChatTemplate,
    info: ModelInfo,
    /// Tokens currently in the KV cache, in position order.
    cached: Vec<LlamaToken>,
}

impl LlamaEngine {
    /// Loads the GGUF at `params.model_path` (mmap) and creates its context.
    pub fn load(params: &EngineParams) -> Result<Self, EngineError> {
        let path = &params.model_path;
        let bad_file = |reason: String| EngineError::BadModelFile {
            path: path.clone(),
            reason,
        };
        let file_bytes = std::fs::metadata(path)
            .map_err(|e| bad_file(e.to_string()))?
            .len();
        gguf::check_file(path).map_err(bad_file)?;
        let load_err = |step: &'static str, reason: String| EngineError::Load {
            step,
            path: path.clone(),
            reason,
        };
        let backend = backend().map_err(|e| load_err("initialize the backend", e))?;
        let started = Instant::now();
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| load_err("load the model", rejected(&e.to_string())))?;
        let (template, template_name) = chat_template(&model);
        let info = describe(&model, params, file_bytes, template_name);
        let ctx_params = context_params(&info);
        let cell =
            ModelContext::try_new(model, |m| m.new_context(backend, ctx_params)).map_err(|e| {
                load_err(
                    "create a context (not enough memory for n_ctx?)",
                    e.to_string(),
                )
            })?;
        let info = ModelInfo {
            load_time: started.elapsed(),
            ..info
        };
        Ok(Self {
            cell,
            template,
            info,
            cached: Vec::new(),
        })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Number of tokens in the KV cache.
    pub fn cached_tokens(&self) -> usize {
        self.cached.len()
    }

    /// Forgets the KV cache; the next prompt is prefilled from scratch.
    pub fn reset(&mut self) {
        self.cell.with_dependent_mut(|_, ctx| ctx.clear_kv_cache());
        self.cached.clear();
    }

    /// The prompt text the template produces for `messages` (with the assistant opener).
    pub fn render(&self, messages: &[Message]) -> Result<String, EngineError> {
        let chat = messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.as_str().to_string(), strip_nul(&m.content)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| EngineError::Template(e.to_string()))?;
        self.cell
            .borrow_owner()
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| EngineError::Template(e.to_string()))
    }

    /// Tokenizes the rendered prompt: template scaffolding with special tokens, message
    /// text without, so typed `<|im_start|>` stays plain text.
    pub fn tokenize_prompt(&self, messages: &[Message]) -> Result<Vec<LlamaToken>, EngineError> {
        let rendered = self.render(messages)?;
        let contents: Vec<String> = messages.iter().map(|m| strip_nul(&m.content)).collect();
        let refs: Vec<&str> = contents.iter().map(String::as_str).collect();
        let segments = split_rendered(&rendered, &refs).ok_or_else(|| {
            EngineError::Template("message text not found in the rendered prompt".into())
        })?;
        let vocab = self.cell.borrow_owner().vocab();
        let mut tokens = Vec::with_capacity(rendered.len() / 3);
        for segment in segments {
            match segment {
                Segment::Template(text) => {
                    tokens.extend(vocab.tokenize(text.as_bytes(), false, true))
                }
                Segment::Content(text) => {
                    tokens.extend(vocab.tokenize(text.as_bytes(), false, false))
                }
            }
        }
        if vocab.should_add_bos() && tokens.first() != Some(&vocab.bos()) {
            tokens.insert(0, vocab.bos());
        }
        Ok(tokens)
    }

    /// Tokenizes `text` the way the whole rendered prompt would be if it were one string
    /// with special tokens parsed (what llama.cpp's own tools do).
    pub fn tokenize_raw(&self, text: &str, parse_special: bool) -> Vec<i32> {
        let vocab = self.cell.borrow_owner().vocab();
        vocab
            .tokenize(text.as_bytes(), false, parse_special)
            .into_iter()
            .map(|t| t.0)
            .collect()
    }

    /// Renders, tokenizes and generates a reply, reusing the cached prefix.
    pub fn generate(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        let started = Instant::now();
        let prompt = self.tokenize_prompt(messages)?;
        let n_ctx = self.info.n_ctx as usize;
        if prompt.len() >= n_ctx {
            return Err(EngineError::PromptTooLong {
                tokens: prompt.len(),
                n_ctx,
                fits: n_ctx.saturating_sub(1),
            });
        }
        let n_batch = self.info.n_batch as usize;
        let Self { cell, cached, .. } = self;
        cell.with_dependent_mut(|model, ctx| {
            let run = Run {
                model,
                n_ctx,
                n_batch,
                started,
            };
            let result = run.execute(ctx, cached, &prompt, opts, on_text);
            if result.is_err() {
                ctx.clear_kv_cache();
                cached.clear();
            }
            result
        })
    }
}

impl TokenCounter for LlamaEngine {
    fn count_tokens(&self, text: &str) -> usize {
        self.tokenize_raw(&strip_nul(text), false).len()
    }
}

/// One generation: the borrowed pieces and the clock.
struct Run<'m> {
    model: &'m LlamaModel,
    n_ctx: usize,
    n_batch: usize,
    started: Instant,
}

impl Run<'_> {
    fn execute(
        &self,
        ctx: &mut LlamaContext,
        cached: &mut Vec<LlamaToken>,
        prompt: &[LlamaToken],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        let keep = trim_cache(ctx, cached, prompt);
        let mut batch = LlamaBatch::new(self.n_batch.max(1), 1);
        let prefill_started = Instant::now();
        let finished = self.prefill(ctx, &mut batch, cached, &prompt[keep..], &opts.abort)?;
        let prefill_elapsed = prefill_started.elapsed();
        let mut stats = TurnStats {
            prompt_tokens: prompt.len(),
            evaluated_tokens: prompt.len() - keep,
            prefill_tps: rate(prompt.len() - keep, prefill_elapsed),
            ..TurnStats::default()
        };
        if !finished {
            return Ok(Completion {
                text: String::new(),
                stop: StopReason::Aborted,
                stats,
            });
        }
        let last = batch.n_tokens() - 1;
        let (text, stop) =
            self.sample_loop(ctx, &mut batch, cached, last, opts, on_text, &mut stats)?;
        Ok(Completion { text, stop, stats })
    }

    /// Decodes `tokens` after the cached prefix in chunks of at most `n_batch`, asking for
    /// logits on the very last one. Returns false when aborted between chunks.
    fn prefill(
        &self,
        ctx: &mut LlamaContext,
        batch: &mut LlamaBatch,
        cached: &mut Vec<LlamaToken>,
        tokens: &[LlamaToken],
        abort: &AbortFlag,
    ) -> Result<bool, EngineError> {
        for (start, end) in chunk_ranges(tokens.len(), self.n_batch) {
            if abort.is_raised() {
                return Ok(false);
            }
            batch.clear();
            for (offset, &token) in tokens[start..end].iter().enumerate() {
                let pos = position(cached.len() + offset)?;
                let wants_logits = start + offset + 1 == tokens.len();
                batch
                    .add(token, pos, &[0], wants_logits)
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
            }
            ctx.decode(batch)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
            cached.extend_from_slice(&tokens[start..end]);
        }
        Ok(true)
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one private step of a generation; grouping would only rename the same state"
    )]
    fn sample_loop(
        &self,
        ctx: &mut LlamaContext,
        batch: &mut LlamaBatch,
        cached: &mut Vec<LlamaToken>,
        mut logits_at: i32,
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
        stats: &mut TurnStats,
    ) -> Result<(String, StopReason), EngineError> {
        let vocab = self.model.vocab();
        let mut sampler = super::sampler::build(self.model, &opts.sampling);
        let mut stream = Utf8Stream::default();
        let mut text = String::new();
        let mut decode_started: Option<Instant> = None;
        // Decode rate = tokens decoded one at a time / time since the first sample.
        let mut decoded = 0;
        let stop = loop {
            if opts.abort.is_raised() {
                break StopReason::Aborted;
            }
            let token = sampler.sample(ctx, logits_at);
            let since = *decode_started.get_or_insert_with(|| {
                stats.ttft_ms = ms(self.started.elapsed());
                Instant::now()
            });
            if vocab.is_eog(token) {
                break StopReason::EndOfGeneration;
            }
            stats.completion_tokens += 1;
            let piece = stream.push(&vocab.token_to_piece(token, false, None));
            if !piece.is_empty() {
                on_text(&piece);
                text.push_str(&piece);
            }
            if opts
                .max_tokens
                .is_some_and(|max| stats.completion_tokens >= max)
            {
                break StopReason::MaxTokens;
            }
            if cached.len() >= self.n_ctx {
                break StopReason::ContextFull;
            }
            batch.clear();
            batch
                .add(token, position(cached.len())?, &[0], true)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
            ctx.decode(batch)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
            cached.push(token);
            decoded += 1;
            stats.decode_tps = rate(decoded, since.elapsed());
            logits_at = 0;
        };
        let rest = stream.finish();
        if !rest.is_empty() {
            on_text(&rest);
            text.push_str(&rest);
        }
        Ok((text, stop))
    }
}

/// Keeps the reusable prefix of the KV cache for `prompt` and drops the rest.
/// Returns how many prompt tokens are already in the cache.
fn trim_cache(
    ctx: &mut LlamaContext,
    cached: &mut Vec<LlamaToken>,
    prompt: &[LlamaToken],
) -> usize {
    let keep = reusable_prefix(cached, prompt);
    let Ok(keep_pos) = u32::try_from(keep) else {
        ctx.clear_kv_cache();
        cached.clear();
        return 0;
    };
    // `false` means partial removal is unsupported (e.g. recurrent models): start over.
    if !matches!(
        ctx.clear_kv_cache_seq(Some(0), Some(keep_pos), None),
        Ok(true)
    ) {
        ctx.clear_kv_cache();
        cached.clear();
        return 0;
    }
    cached.truncate(keep);
    keep
}

/// llama.cpp says only "null" when it rejects a file; say what that usually means.
fn rejected(reason: &str) -> String {
    format!("{reason} — the file is probably truncated or corrupt, or its architecture is unsupported by this llama.cpp (run with --verbose for llama.cpp's own log)")
}

fn position(index: usize) -> Result<i32, EngineError> {
    i32::try_from(index).map_err(|_| EngineError::Decode(format!("position {index} out of range")))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn strip_nul(text: &str) -> String {
    text.replace('\0', "")
}

/// The GGUF's own template, or chatml when the file has none.
fn chat_template(model: &LlamaModel) -> (LlamaChatTemplate, String) {
    if let Ok(template) = model.chat_template(None) {
        let family = template.to_str().map(template_family).unwrap_or("custom");
        return (template, family.to_string());
    }
    match LlamaChatTemplate::new("chatml") {
        Ok(template) => (
            template,
            "chatml (fallback: the model has no template)".into(),
        ),
        Err(_) => unreachable_template(),
    }
}

#[expect(
    clippy::panic,
    reason = "\"chatml\" is a constant without NUL bytes; CString::new cannot fail"
)]
fn unreachable_template() -> (LlamaChatTemplate, String) {
    panic!("constant template name rejected")
}

fn describe(
    model: &LlamaModel,
    params: &EngineParams,
    file_bytes: u64,
    template_name: String,
) -> ModelInfo {
    let n_ctx_train = model.n_ctx_train();
    let n_ctx = if n_ctx_train > 0 {
        params.n_ctx.min(n_ctx_train)
    } else {
        params.n_ctx
    }
    .max(16);
    let name = model
        .meta_val_str("general.name")
        .ok()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| file_stem(&params.model_path));
    ModelInfo {
        path: params.model_path.clone(),
        name,
        file_bytes,
        n_params: model.n_params(),
        n_ctx_train,
        n_ctx,
        n_batch: params.n_batch.clamp(1, n_ctx),
        threads: params.threads.max(1),
        threads_batch: params.threads_batch.max(1),
        template_name,
        load_time: Duration::ZERO,
    }
}

fn file_stem(path: &std::path::Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn context_params(info: &ModelInfo) -> LlamaContextParams {
    let threads = i32::try_from(info.threads).unwrap_or(1);
    let threads_batch = i32::try_from(info.threads_batch).unwrap_or(1);
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(info.n_ctx))
        .with_n_batch(info.n_batch)
        .with_n_ubatch(info.n_batch)
        .with_n_threads(threads)
        .with_n_threads_batch(threads_batch)
}
