//! Plain data the engine takes and returns. No llama.cpp types leak out of `engine/`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool's result, answering the assistant's call.
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One chat message, before the template renders it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
        }
    }
}

/// The sampler chain settings. `temperature == 0` means greedy decoding.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingParams {
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub repeat_penalty: f32,
    pub repeat_last_n: i32,
    pub seed: u32,
}

impl SamplingParams {
    /// Greedy decoding with no penalties (override fields with `..greedy()`).
    pub fn greedy() -> Self {
        Self {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            repeat_penalty: 1.0,
            repeat_last_n: 0,
            seed: 0,
        }
    }

    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
    }
}

/// How to load a model and size its context.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineParams {
    pub model_path: PathBuf,
    /// Requested context size; capped at the model's training context.
    pub n_ctx: u32,
    pub n_batch: u32,
    pub threads: u32,
    pub threads_batch: u32,
    /// `model.template`: `None` or `auto` = the file's own template, else the fallback
    /// for its architecture; otherwise a llama.cpp built-in format's name.
    pub template: Option<String>,
    /// Element type of the K and V caches.
    pub kv_cache_type: KvCacheType,
    /// Prompt-lookup decoding (`engine.lookup`).
    pub lookup: super::LookupMode,
    /// `engine.mmap`: map the model file or read it into memory.
    pub mmap: super::MmapMode,
}

/// `engine.kv_cache_type`: the element type of the KV cache. q8_0 stores 32 values in 34
/// bytes (8.5 bits each) against f16's 16 bits; llama.cpp needs flash attention for a
/// quantized V cache, so the engine turns it on with q8_0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KvCacheType {
    #[default]
    F16,
    Q8_0,
}

impl KvCacheType {
    pub const ALL: [KvCacheType; 2] = [KvCacheType::F16, KvCacheType::Q8_0];

    pub fn as_str(self) -> &'static str {
        match self {
            KvCacheType::F16 => "f16",
            KvCacheType::Q8_0 => "q8_0",
        }
    }

    /// The setting's value (`f16`, `q8_0`); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(text.trim()))
    }

    /// Bytes that `elements` cache values take (q8_0: blocks of 32 in 34 bytes).
    pub fn bytes_for(self, elements: u64) -> u64 {
        match self {
            KvCacheType::F16 => elements * 2,
            KvCacheType::Q8_0 => elements.div_ceil(32) * 34,
        }
    }
}

/// What was loaded, for `/status` and logs.
#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    pub path: PathBuf,
    pub name: String,
    pub file_bytes: u64,
    pub n_params: u64,
    pub n_ctx_train: u32,
    pub n_ctx: u32,
    pub n_batch: u32,
    pub threads: u32,
    pub threads_batch: u32,
    /// The chat template's family (`chatml`, `gemma`, `llama3`, `custom`, …).
    pub template_name: String,
    /// Why that template (`the model file's own template`, `set by model.template`, `the
    /// file has no template; architecture gemma3`).
    pub template_reason: String,
    #[serde(serialize_with = "serialize_ms")]
    pub load_time: Duration,
    /// Identifies the model file: size + sha256 of its first MiB (cheap even for 4 GB).
    pub fingerprint: String,
    /// sha256 of the chat template text (or the fallback's name).
    pub template_fingerprint: String,
    /// Whether the template lists the tools itself (its own tools section, rendered by
    /// the Jinja engine); then the system prompt does not describe them again.
    pub template_tools: bool,
    /// Whether the template renders a second system message as a turn of its own (then
    /// the memory block goes in one, not in a user turn).
    pub template_system_turns: bool,
    /// The template's text, or the built-in format's name (tells the tool-call family).
    #[serde(skip)]
    pub template_text: String,
    /// KV cache element type (part of a saved state's identity).
    pub kv_type: String,
    /// Bytes of the chat context's KV cache (n_ctx × layers × (K + V widths) × element
    /// size, from the model's metadata); 0 when the metadata is incomplete.
    pub kv_bytes: u64,
    /// What the load adjusted or warns about (n_ctx lowered to fit memory, a model
    /// larger than memory); the app shows them at startup.
    #[serde(skip)]
    pub notes: Vec<String>,
}

fn serialize_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis().try_into().unwrap_or(u64::MAX))
}

/// Per-generation options.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub sampling: SamplingParams,
    /// Stop after this many generated tokens (`None`: until EOG or the context is full).
    pub max_tokens: Option<usize>,
    pub abort: AbortFlag,
    /// A GBNF grammar (root rule `root`) that constrains every sampled token.
    pub grammar: Option<String>,
    /// Generation stops right before the first of these strings (which is not returned).
    pub stop: Vec<String>,
    /// Text the assistant's reply starts with (continued, not repeated, by the model).
    pub assistant_prefix: Option<String>,
    /// A stop found by looking at the text (a tool call in JSON that starts a line);
    /// reported as [`StopReason::StopString`], like `stop`.
    pub stop_finder: Option<super::stops::StopFinder>,
    /// Texts the reply may not contain as one token each (e.g. a family's `<tool_call>`
    /// opener while the turn answers without tools); a text that is no single token of
    /// the vocabulary is ignored.
    pub banned: Vec<String>,
    /// For an aside call that runs in the chat context's free cells: keep its prompt
    /// there afterwards, so the next aside call that starts the same way (the router's
    /// fixed instructions) decodes only what differs. The chat takes the cells back
    /// whenever it may need them.
    pub keep_prompt: bool,
}

impl GenerateOptions {
    /// `sampling` with nothing else: no token limit, grammar, stop strings or prefix.
    pub fn new(sampling: SamplingParams) -> Self {
        Self {
            sampling,
            max_tokens: None,
            abort: AbortFlag::new(),
            grammar: None,
            stop: Vec::new(),
            assistant_prefix: None,
            stop_finder: None,
            banned: Vec::new(),
            keep_prompt: false,
        }
    }
}

/// Set from a signal handler; checked between decode steps.
#[derive(Debug, Clone, Default)]
pub struct AbortFlag(Arc<AtomicBool>);

impl AbortFlag {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn raise(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn clear(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model emitted an end-of-generation token.
    EndOfGeneration,
    MaxTokens,
    Aborted,
    /// The context window filled up; the reply is cut.
    ContextFull,
    /// One of `GenerateOptions::stop` appeared.
    StopString,
    /// The reply went on into harvey's own prompt and was ended before it (set by the
    /// agent, see `chat::prompt_echo`).
    PromptEcho,
}

impl StopReason {
    /// The name used in records and messages (`max_tokens`, `context_full`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndOfGeneration => "end_of_generation",
            StopReason::MaxTokens => "max_tokens",
            StopReason::Aborted => "aborted",
            StopReason::ContextFull => "context_full",
            StopReason::StopString => "stop_string",
            StopReason::PromptEcho => "prompt_echo",
        }
    }
}

/// Counters for one generation, all measured by the engine.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TurnStats {
    /// Tokens in the rendered prompt.
    pub prompt_tokens: usize,
    /// Prompt tokens actually decoded (the rest came from the KV cache).
    pub evaluated_tokens: usize,
    /// Decode calls the prefill made (`evaluated_tokens` in chunks of at most `n_batch`).
    pub prefill_chunks: usize,
    pub completion_tokens: usize,
    /// Of the completion, tokens inside `<think>…</think>` (set by the chat layer).
    pub thinking_tokens: usize,
    pub prefill_tps: f64,
    pub decode_tps: f64,
    pub ttft_ms: f64,
    /// Prompt-lookup draft tokens verified, and how many of them the sampler kept.
    pub draft_tokens: usize,
    pub accepted_tokens: usize,
}

impl TurnStats {
    /// These counters with an earlier generation's prefill folded in (`first` prefilled
    /// the prompt this one continued): a reply begun by a one-token lead spends its
    /// prefill there, and the step that waited for both should say so.
    pub fn after(&self, first: &TurnStats) -> TurnStats {
        if *first == TurnStats::default() {
            return self.clone();
        }
        let seconds = |tokens: usize, tps: f64| {
            if tokens == 0 || tps <= 0.0 {
                0.0
            } else {
                tokens as f64 / tps
            }
        };
        let evaluated = first.evaluated_tokens + self.evaluated_tokens;
        let prefill_s = seconds(first.evaluated_tokens, first.prefill_tps)
            + seconds(self.evaluated_tokens, self.prefill_tps);
        TurnStats {
            evaluated_tokens: evaluated,
            prefill_chunks: first.prefill_chunks + self.prefill_chunks,
            prefill_tps: if prefill_s > 0.0 {
                evaluated as f64 / prefill_s
            } else {
                0.0
            },
            ttft_ms: first.ttft_ms,
            ..self.clone()
        }
    }
}

/// A finished generation.
#[derive(Debug, Clone)]
pub struct Completion {
    pub text: String,
    pub stop: StopReason,
    pub stats: TurnStats,
}

impl Completion {
    /// The text of a grammar-constrained generation, if the grammar completed. Under a
    /// grammar the model can only end where the grammar may end, so `EndOfGeneration`
    /// means a whole sentence; any other stop (`max_tokens`, the end of the context,
    /// Ctrl-C) cut it off, and cut-off text must never be parsed as if it were whole.
    pub fn grammar_output(&self) -> Result<&str, StopReason> {
        match self.stop {
            StopReason::EndOfGeneration => Ok(&self.text),
            other => Err(other),
        }
    }
}

/// Tokens per second, 0 when nothing was timed.
pub fn rate(tokens: usize, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if tokens == 0 || secs <= 0.0 {
        0.0
    } else {
        tokens as f64 / secs
    }
}

#[cfg(test)]
mod tests {
    use super::TurnStats;

    #[test]
    fn a_lead_s_prefill_is_counted_with_the_reply_it_began() {
        let lead = TurnStats {
            evaluated_tokens: 900,
            prefill_tps: 45.0,
            completion_tokens: 1,
            ttft_ms: 20_000.0,
            ..TurnStats::default()
        };
        let rest = TurnStats {
            evaluated_tokens: 1,
            prefill_tps: 10.0,
            completion_tokens: 4,
            decode_tps: 8.0,
            ttft_ms: 120.0,
            ..TurnStats::default()
        };
        let both = rest.after(&lead);
        assert_eq!(both.evaluated_tokens, 901);
        // 20 s + 0.1 s of prefill for 901 tokens.
        assert!((both.prefill_tps - 901.0 / 20.1).abs() < 1e-9);
        assert_eq!(both.completion_tokens, 4);
        assert_eq!(both.decode_tps, 8.0);
        assert_eq!(both.ttft_ms, 20_000.0);
        assert_eq!(
            rest.after(&TurnStats::default()),
            rest,
            "no lead: the reply's own counters, its time to first token too"
        );
    }
}
