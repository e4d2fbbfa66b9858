//! The YAML shape of `agents/harvey.yaml`: every key optional, unknown keys rejected.
//!
//! Defaults live in `DEFAULT_*` constants in `mod.rs`; this file only mirrors the file.
//! Keys of the Go tool's file are accepted as raw values (`Foreign`) and translated or
//! reported by `upstream.rs`, so a misspelt harvey key is still an error with its place.

use serde::Deserialize;

use super::*;

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct RawConfig {
    pub model: RawModel,
    pub engine: RawEngine,
    pub sampling: RawSampling,
    pub memory: RawMemory,
    pub tools: RawTools,
    pub security: RawSecurity,
    // The Go tool's sections and flat keys.
    pub ollama: Foreign,
    pub llamafile: Foreign,
    pub llamacpp: Foreign,
    pub session: Foreign,
    pub model_aliases: Foreign,
    pub chunking: Foreign,
    pub skills: Foreign,
    pub learn_model: Foreign,
    pub knowledge_db: Foreign,
    pub auto_record: Foreign,
    pub safe_mode: Foreign,
    pub run_timeout: Foreign,
    pub ollama_timeout: Foreign,
    pub sessions_dir: Foreign,
    pub agents_dir: Foreign,
    pub model_cache_db: Foreign,
    pub syntax_highlight: Foreign,
    pub auto_format: Foreign,
    pub sensor_inject_format_findings: Foreign,
}

/// A key of the Go tool's file, kept as written.
pub type Foreign = Option<serde_yaml::Value>;

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawTools {
    pub enabled: bool,
    pub max_rounds_per_turn: usize,
    pub turn_tokens: usize,
    pub confirm_memory_writes: bool,
    pub allow_writes: bool,
    pub route: String,
    pub workspace_map_pct: f64,
    pub evidence_pct: f64,
    pub schemas: String,
    pub max_tool_calls_per_turn: Foreign,
    pub max_output_bytes: Foreign,
    pub tool_result_compaction: Foreign,
}

impl Default for RawTools {
    fn default() -> Self {
        Self {
            enabled: true,
            max_rounds_per_turn: DEFAULT_MAX_TOOL_ROUNDS,
            turn_tokens: DEFAULT_TURN_TOKENS,
            confirm_memory_writes: false,
            allow_writes: false,
            route: "auto".into(),
            workspace_map_pct: DEFAULT_WORKSPACE_MAP_PCT,
            evidence_pct: DEFAULT_EVIDENCE_PCT,
            schemas: "compact".into(),
            max_tool_calls_per_turn: None,
            max_output_bytes: None,
            tool_result_compaction: None,
        }
    }
}

/// `security:` — the Go tool's section and keys, which harvey uses as they are.
#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawSecurity {
    pub safe_mode: bool,
    pub allowed_commands: Vec<String>,
    pub run_timeout: String,
    pub permissions: Foreign,
}

impl Default for RawSecurity {
    fn default() -> Self {
        Self {
            safe_mode: true,
            allowed_commands: crate::command::policy::Settings::default_allowed(),
            run_timeout: DEFAULT_RUN_TIMEOUT.into(),
            permissions: None,
        }
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct RawModel {
    pub path: Option<String>,
    pub models_dir: Option<String>,
    pub template: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawEngine {
    pub n_ctx: u32,
    pub fixed_prompt_pct: f64,
    pub n_batch: u32,
    pub threads: u32,
    pub threads_batch: u32,
    pub cache_prefix: bool,
    pub cache_prefix_keep: usize,
    pub cache_shared: bool,
    pub kv_cache_type: String,
    pub lookup: String,
    pub mmap: String,
}

impl Default for RawEngine {
    fn default() -> Self {
        Self {
            n_ctx: DEFAULT_N_CTX,
            fixed_prompt_pct: DEFAULT_FIXED_PROMPT_PCT,
            n_batch: DEFAULT_N_BATCH,
            threads: 0,
            threads_batch: 0,
            cache_prefix: true,
            cache_prefix_keep: DEFAULT_CACHE_PREFIX_KEEP,
            cache_shared: true,
            kv_cache_type: DEFAULT_KV_CACHE_TYPE.into(),
            lookup: DEFAULT_LOOKUP.into(),
            mmap: "auto".into(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawSampling {
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub repeat_penalty: f32,
    pub repeat_last_n: i32,
    pub seed: u32,
    pub max_tokens: u32,
}

impl Default for RawSampling {
    fn default() -> Self {
        Self {
            temperature: DEFAULT_TEMPERATURE,
            top_k: DEFAULT_TOP_K,
            top_p: DEFAULT_TOP_P,
            min_p: DEFAULT_MIN_P,
            repeat_penalty: DEFAULT_REPEAT_PENALTY,
            repeat_last_n: DEFAULT_REPEAT_LAST_N,
            seed: DEFAULT_SEED,
            max_tokens: DEFAULT_MAX_TOKENS,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawMemory {
    pub enabled: bool,
    pub inject_on_start: bool,
    pub budget_pct: f64,
    pub factual_share: f64,
    pub top_k: usize,
    pub recent_sessions: usize,
    pub summary_at: String,
    pub embedder: String,
    pub rolling_summary: RawRollingSummary,
    pub mining: RawMining,
    pub rag: RawRag,
    pub knowledge_base: RawKnowledgeBase,
}

impl Default for RawMemory {
    fn default() -> Self {
        Self {
            enabled: true,
            inject_on_start: true,
            budget_pct: DEFAULT_BUDGET_PCT,
            factual_share: DEFAULT_FACTUAL_SHARE,
            top_k: DEFAULT_MEMORY_TOP_K,
            recent_sessions: DEFAULT_RECENT_SESSIONS,
            summary_at: "later".into(),
            embedder: DEFAULT_EMBEDDER.into(),
            rolling_summary: RawRollingSummary::default(),
            mining: RawMining::default(),
            rag: RawRag::default(),
            knowledge_base: RawKnowledgeBase::default(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawRollingSummary {
    pub enabled: bool,
    pub warn_at_pct: f64,
    pub keep_turns: usize,
}

impl Default for RawRollingSummary {
    fn default() -> Self {
        Self {
            enabled: true,
            warn_at_pct: DEFAULT_WARN_AT_PCT,
            keep_turns: DEFAULT_KEEP_TURNS,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawMining {
    pub on_exit: String,
    pub min_params: u64,
}

impl Default for RawMining {
    fn default() -> Self {
        Self {
            on_exit: "auto".into(),
            min_params: 1_000_000_000,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawRag {
    pub enabled: bool,
    pub active: Option<String>,
    pub chunk_tokens: usize,
    pub top_k: usize,
    pub stores: Foreign,
    pub db_path: Foreign,
    pub embedding_model: Foreign,
    pub model_map: Foreign,
}

impl Default for RawRag {
    fn default() -> Self {
        Self {
            enabled: true,
            active: None,
            chunk_tokens: DEFAULT_RAG_CHUNK_TOKENS,
            top_k: DEFAULT_RAG_TOP_K,
            stores: None,
            db_path: None,
            embedding_model: None,
            model_map: None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawKnowledgeBase {
    pub enabled: bool,
    pub project: Option<String>,
    pub path: Foreign,
}

impl Default for RawKnowledgeBase {
    fn default() -> Self {
        Self {
            enabled: true,
            project: None,
            path: None,
        }
    }
}
