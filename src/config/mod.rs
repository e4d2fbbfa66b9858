//! Configuration: `agents/harvey.yaml` in the workspace, parsed in two steps — a raw serde
//! shape that rejects unknown keys (`raw`), then an immutable, validated [`Config`].
//!
//! The only importer of `serde_yaml` for configuration. Holds no runtime state: mutable
//! things (the active RAG store, toggles from the REPL) live in the session.

mod load;
mod persist;
mod raw;
mod resolve;
mod upstream;

pub use crate::text::duration::{format_duration, parse_duration};
pub use load::{load, parse, parse_noted, ConfigError, CONFIG_FILE};
pub use persist::save_security;
pub use upstream::Upstream;

use std::path::PathBuf;

pub const DEFAULT_N_CTX: u32 = 4096;
pub const DEFAULT_N_BATCH: u32 = 256;
/// Share of n_ctx the prompt before the first message may take (`engine.fixed_prompt_pct`):
/// instructions, tools, guidance, the workspace map and the memory context. The memory
/// budget gives way when the rest is larger.
pub const DEFAULT_FIXED_PROMPT_PCT: f64 = 0.45;
/// f16 until q8_0 is shown not to be slower on an idle machine (issue 19).
pub const DEFAULT_KV_CACHE_TYPE: &str = "f16";
/// Saved prefixes kept per model under `agents/cache/` (`engine.cache_prefix_keep`): each
/// change of facts, profile or guidance saves another; older ones are pruned.
pub const DEFAULT_CACHE_PREFIX_KEEP: usize = 3;
/// `engine.lookup` when the config does not say.
pub const DEFAULT_LOOKUP: &str = "auto";
pub const DEFAULT_TEMPERATURE: f32 = 0.7;
pub const DEFAULT_TOP_K: i32 = 40;
pub const DEFAULT_TOP_P: f32 = 0.95;
pub const DEFAULT_MIN_P: f32 = 0.05;
pub const DEFAULT_REPEAT_PENALTY: f32 = 1.1;
pub const DEFAULT_REPEAT_LAST_N: i32 = 64;
pub const DEFAULT_SEED: u32 = 42;
pub const DEFAULT_MAX_TOKENS: u32 = 512;
pub const DEFAULT_MODELS_DIR: &str = "models";
pub const DEFAULT_BUDGET_PCT: f64 = 0.25;
pub const DEFAULT_FACTUAL_SHARE: f64 = 0.5;
pub const DEFAULT_MEMORY_TOP_K: usize = 5;
pub const DEFAULT_RECENT_SESSIONS: usize = 3;
pub const DEFAULT_EMBEDDER: &str = "auto";
pub const DEFAULT_WARN_AT_PCT: f64 = 0.80;
pub const DEFAULT_KEEP_TURNS: usize = 6;
pub const DEFAULT_RAG_CHUNK_TOKENS: usize = 256;
pub const DEFAULT_RAG_TOP_K: usize = 5;
pub const DEFAULT_MAX_TOOL_ROUNDS: usize = 5;
/// Tokens a turn may add to the prompt before the model must answer: every one of them is
/// prefilled (about 20 s of a 1.5B's prefill on a 2-core machine).
pub const DEFAULT_TURN_TOKENS: usize = 1100;
/// Share of n_ctx the `[workspace files]` map may take (0: no map).
pub const DEFAULT_WORKSPACE_MAP_PCT: f64 = 0.06;
/// Share of n_ctx the `[evidence]` block of one question may take.
pub const DEFAULT_EVIDENCE_PCT: f64 = 0.08;
pub const DEFAULT_RUN_TIMEOUT: &str = "2m";

/// The resolved configuration. Built once at startup; never mutated.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub model: ModelConfig,
    pub engine: EngineConfig,
    pub sampling: SamplingConfig,
    pub memory: MemoryConfig,
    pub tools: ToolsConfig,
    pub security: SecurityConfig,
    /// Warnings from reading the file (keys of the Go tool), shown once at start.
    pub notices: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolsConfig {
    /// Whether the model may call tools (toggle with `/tools on|off`).
    pub enabled: bool,
    /// Tool calls allowed per user turn before the model is told to answer.
    pub max_rounds_per_turn: usize,
    /// Tokens a turn may add to the prompt (the request with its evidence, the calls and
    /// their results) before the model is told to answer from what it has; 0: only the
    /// context's size limits it.
    pub turn_tokens: usize,
    /// Ask before a tool writes a memory.
    pub confirm_memory_writes: bool,
    /// Let `write_file` / `edit_file` write where nobody can confirm them (`harvey run`,
    /// input that is not a terminal). Off: such writes are refused.
    pub allow_writes: bool,
    /// `tools.route`: who picks a turn's first step (see [`RouteMode`]).
    pub route: RouteMode,
    /// Share of n_ctx the `[workspace files]` map at session start may take (0: none).
    pub workspace_map_pct: f64,
    /// Share of n_ctx the `[evidence]` block sent with a question may take (0: no block;
    /// the first step is then the router's).
    pub evidence_pct: f64,
    /// `tools.schemas`: how the tools are described in the fixed prompt (see [`ToolSchemas`]).
    pub schemas: ToolSchemas,
}

/// `tools.schemas`: `compact` (the default) describes each tool in one line of harvey's
/// own (name, parameters, enum values, what it is for) and leaves the arguments' shape to
/// the call grammar; `template` hands every tool's JSON schema to the model's template,
/// as the model was trained to read them. With Qwen2.5-Coder the fourteen schemas take
/// ~1,600 tokens of every prompt; the compact lines a fifth of that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSchemas {
    Compact,
    Template,
}

/// `tools.route`: `auto` (the default) asks the model in an aside call which tool a
/// request needs first, or none, when the model's template has a tools section (the
/// instruction-tuned families); `on` always; `off` leaves the choice to the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteMode {
    Auto,
    On,
    Off,
}

/// `security:` — running programs (`!prog`, `/run`, the `run_command` tool).
#[derive(Debug, Clone, PartialEq)]
pub struct SecurityConfig {
    /// Programs not on the allowlist need a yes (changed with `/safemode`).
    pub safe_mode: bool,
    /// Bare program names that run without asking in safe mode.
    pub allowed_commands: Vec<String>,
    /// A command still running after this is killed with its process group.
    pub run_timeout: std::time::Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// An explicit GGUF file (relative paths are relative to the workspace).
    pub path: Option<PathBuf>,
    /// Where to look for GGUF files (relative to the workspace).
    pub models_dir: PathBuf,
    /// `model.template`: `None` = auto (the file's template, else the built-in format for
    /// its architecture); otherwise a llama.cpp built-in format's name.
    pub template: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    pub n_ctx: u32,
    /// Share of n_ctx for everything before the first message ([`DEFAULT_FIXED_PROMPT_PCT`]).
    pub fixed_prompt_pct: f64,
    pub n_batch: u32,
    /// Decode threads; `None` = the machine's physical cores.
    pub threads: Option<u32>,
    /// Prefill (batch) threads; `None` = the machine's physical cores.
    pub threads_batch: Option<u32>,
    /// Save the stable prompt prefix under `agents/cache/` and restore it at start.
    pub cache_prefix: bool,
    /// Saved prefixes kept per model (the newest; at least 1).
    pub cache_prefix_keep: usize,
    /// Keep the system prompt's workspace-independent head, evaluated, once per model in
    /// the shared cache outside the workspace (`$HARVEY_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/harvey/prefix`, else `~/.cache/harvey/prefix`).
    pub cache_shared: bool,
    /// `engine.kv_cache_type`: f16 (default) or q8_0 (about half the KV memory).
    pub kv_cache_type: crate::engine::KvCacheType,
    /// `engine.lookup`: prompt-lookup decoding, auto (default), on or off.
    pub lookup: crate::engine::LookupMode,
    /// `engine.mmap`: map the model file or read it into memory: auto (default), on, off.
    pub mmap: crate::engine::MmapMode,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SamplingConfig {
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub repeat_penalty: f32,
    pub repeat_last_n: i32,
    pub seed: u32,
    pub max_tokens: u32,
}

impl SamplingConfig {
    /// The engine's sampling parameters for these settings.
    pub fn params(&self) -> crate::engine::SamplingParams {
        crate::engine::SamplingParams {
            temperature: self.temperature,
            top_k: self.top_k,
            top_p: self.top_p,
            min_p: self.min_p,
            repeat_penalty: self.repeat_penalty,
            repeat_last_n: self.repeat_last_n,
            seed: self.seed,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MemoryConfig {
    pub enabled: bool,
    pub inject_on_start: bool,
    pub budget_pct: f64,
    pub factual_share: f64,
    pub top_k: usize,
    pub recent_sessions: usize,
    /// `memory.summary_at`: when a session's summary and mining run.
    pub summary_at: SummaryAt,
    pub embedder: Embedder,
    pub rolling_summary: RollingSummaryConfig,
    pub mining: MiningConfig,
    pub rag: RagConfig,
    pub knowledge_base: KnowledgeBaseConfig,
}

/// `memory.summary_at`: `later` (the default) closes a session at once and leaves its
/// summary and mining to the next interactive session, which does them while it waits
/// for input; `close` does them before the process ends, as a session closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryAt {
    Later,
    Close,
}

/// `memory.embedder`: `auto`, `none` or a path to an embedding GGUF.
#[derive(Debug, Clone, PartialEq)]
pub enum Embedder {
    Auto,
    None,
    Path(PathBuf),
}

/// `memory.mining`: end-of-session memory proposals from the model.
#[derive(Debug, Clone, PartialEq)]
pub struct MiningConfig {
    /// `auto` (only models with at least `min_params` parameters), `on` or `off`.
    pub on_exit: MineOnExit,
    pub min_params: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MineOnExit {
    Auto,
    On,
    Off,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RollingSummaryConfig {
    pub enabled: bool,
    pub warn_at_pct: f64,
    pub keep_turns: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RagConfig {
    pub enabled: bool,
    pub active: Option<String>,
    pub chunk_tokens: usize,
    pub top_k: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KnowledgeBaseConfig {
    pub enabled: bool,
    /// Defaults to the workspace directory's name when unset.
    pub project: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        resolve::resolve_defaults()
    }
}
