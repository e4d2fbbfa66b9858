//! Raw YAML shape -> validated [`Config`]. Validation errors name the key.

use std::path::PathBuf;

use super::raw::*;
use super::*;
use crate::engine::{KvCacheType, LookupMode, MmapMode};

/// The least `tools.turn_tokens` that leaves room for a request, its evidence and one
/// short result.
const MIN_TURN_TOKENS: usize = 256;

/// The built-in defaults (an empty file resolves to exactly this).
pub fn resolve_defaults() -> Config {
    let raw = RawConfig::default();
    Config {
        model: model(raw.model),
        engine: engine(raw.engine),
        sampling: sampling(raw.sampling),
        memory: memory(raw.memory),
        tools: tools(raw.tools),
        security: security_defaults(),
        notices: Vec::new(),
    }
}

fn security_defaults() -> SecurityConfig {
    let raw = RawSecurity::default();
    SecurityConfig {
        safe_mode: raw.safe_mode,
        allowed_commands: raw.allowed_commands,
        run_timeout: parse_duration(&raw.run_timeout)
            .unwrap_or(std::time::Duration::from_secs(120)),
    }
}

fn security(raw: RawSecurity) -> Result<SecurityConfig, (String, String)> {
    for name in &raw.allowed_commands {
        crate::command::policy::check_name(name)
            .map_err(|m| ("security.allowed_commands".to_string(), m))?;
    }
    let run_timeout = parse_duration(&raw.run_timeout)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            (
                "security.run_timeout".to_string(),
                format!(
                    "{:?} is not a duration: write it like 2m, 90s, 1m30s or 500ms",
                    raw.run_timeout
                ),
            )
        })?;
    Ok(SecurityConfig {
        safe_mode: raw.safe_mode,
        allowed_commands: raw.allowed_commands,
        run_timeout,
    })
}

/// Validates and converts; `Err((key, message))` names the offending key.
pub fn resolve(raw: RawConfig) -> Result<Config, (String, String)> {
    check_model(&raw.model)?;
    check_engine(&raw.engine)?;
    check_sampling(&raw.sampling)?;
    check_memory(&raw.memory)?;
    check_tools(&raw.tools)?;
    Ok(Config {
        model: model(raw.model),
        engine: engine(raw.engine),
        sampling: sampling(raw.sampling),
        memory: memory(raw.memory),
        tools: tools(raw.tools),
        security: security(raw.security)?,
        notices: Vec::new(),
    })
}

fn tools(t: RawTools) -> ToolsConfig {
    ToolsConfig {
        enabled: t.enabled,
        max_rounds_per_turn: t.max_rounds_per_turn,
        turn_tokens: t.turn_tokens,
        confirm_memory_writes: t.confirm_memory_writes,
        allow_writes: t.allow_writes,
        route: match t.route.trim() {
            "on" => RouteMode::On,
            "off" => RouteMode::Off,
            _ => RouteMode::Auto,
        },
        workspace_map_pct: t.workspace_map_pct,
        evidence_pct: t.evidence_pct,
        schemas: match t.schemas.trim() {
            "template" => ToolSchemas::Template,
            _ => ToolSchemas::Compact,
        },
    }
}

type Check = Result<(), (String, String)>;

fn require(ok: bool, key: &str, message: &str) -> Check {
    if ok {
        Ok(())
    } else {
        Err((key.to_string(), message.to_string()))
    }
}

fn check_model(m: &RawModel) -> Check {
    match m.template.as_deref().map(str::trim) {
        Some(name) if !crate::model::template::is_known_setting(name) => Err((
            "model.template".into(),
            format!(
                "'{name}' is not a chat format llama.cpp knows; use one of: {}",
                crate::model::template::settings_list()
            ),
        )),
        _ => Ok(()),
    }
}

fn check_engine(e: &RawEngine) -> Check {
    require(e.n_ctx >= 64, "engine.n_ctx", "must be at least 64 tokens")?;
    require(e.n_batch >= 1, "engine.n_batch", "must be at least 1")?;
    require(
        e.fixed_prompt_pct > 0.0 && e.fixed_prompt_pct < 1.0,
        "engine.fixed_prompt_pct",
        "must be between 0 and 1 (0.45 leaves over half the window to the conversation)",
    )?;
    require(
        e.cache_prefix_keep >= 1,
        "engine.cache_prefix_keep",
        "must be at least 1 (to keep no saved prefix, set engine.cache_prefix: false)",
    )?;
    require(
        e.threads <= 1024,
        "engine.threads",
        "must be 0 (auto) or a thread count",
    )?;
    require(
        e.threads_batch <= 1024,
        "engine.threads_batch",
        "must be 0 (auto) or a thread count",
    )?;
    require(
        KvCacheType::parse(&e.kv_cache_type).is_some(),
        "engine.kv_cache_type",
        &format!(
            "{:?} is not a KV cache type: use f16 or q8_0 (about half the memory)",
            e.kv_cache_type
        ),
    )?;
    require(
        LookupMode::parse(&e.lookup).is_some(),
        "engine.lookup",
        &format!(
            "{:?} is not a lookup mode: use auto, on or off (prompt-lookup decoding)",
            e.lookup
        ),
    )?;
    require(
        MmapMode::parse(&e.mmap).is_some(),
        "engine.mmap",
        &format!(
            "{:?} is not an mmap mode: use auto, on (map the model file) or off (read it)",
            e.mmap
        ),
    )
}

fn check_sampling(s: &RawSampling) -> Check {
    require(
        s.temperature >= 0.0 && s.temperature.is_finite(),
        "sampling.temperature",
        "must be >= 0 (0 = greedy)",
    )?;
    require(
        s.top_p > 0.0 && s.top_p <= 1.0,
        "sampling.top_p",
        "must be in (0, 1]",
    )?;
    require(
        (0.0..=1.0).contains(&s.min_p),
        "sampling.min_p",
        "must be in [0, 1]",
    )?;
    require(s.top_k >= 0, "sampling.top_k", "must be >= 0 (0 = off)")?;
    require(
        s.repeat_penalty > 0.0,
        "sampling.repeat_penalty",
        "must be > 0 (1 = off)",
    )?;
    require(
        s.repeat_last_n >= -1,
        "sampling.repeat_last_n",
        "must be >= -1 (-1 = whole context)",
    )?;
    require(
        s.max_tokens >= 1,
        "sampling.max_tokens",
        "must be at least 1",
    )
}

fn check_memory(m: &RawMemory) -> Check {
    let pct = |v: f64| v > 0.0 && v <= 1.0;
    require(pct(m.budget_pct), "memory.budget_pct", "must be in (0, 1]")?;
    require(
        (0.0..=1.0).contains(&m.factual_share),
        "memory.factual_share",
        "must be in [0, 1]",
    )?;
    require(
        pct(m.rolling_summary.warn_at_pct),
        "memory.rolling_summary.warn_at_pct",
        "must be in (0, 1]",
    )?;
    require(
        matches!(m.summary_at.trim(), "later" | "close"),
        "memory.summary_at",
        "must be later or close",
    )?;
    require(
        matches!(
            m.mining.on_exit.trim(),
            "auto" | "on" | "off" | "true" | "false"
        ),
        "memory.mining.on_exit",
        "must be auto, on or off",
    )?;
    require(
        !m.embedder.trim().is_empty(),
        "memory.embedder",
        "must be auto, none or a path",
    )?;
    require(
        m.rag.chunk_tokens >= 16,
        "memory.rag.chunk_tokens",
        "must be at least 16",
    )
}

fn check_tools(t: &RawTools) -> Check {
    require(
        (1..=50).contains(&t.max_rounds_per_turn),
        "tools.max_rounds_per_turn",
        "must be between 1 and 50",
    )?;
    require(
        t.turn_tokens == 0 || (MIN_TURN_TOKENS..=1_000_000).contains(&t.turn_tokens),
        "tools.turn_tokens",
        "must be 0 (no limit but the context) or between 256 and 1000000",
    )?;
    require(
        matches!(t.route.trim(), "auto" | "on" | "off"),
        "tools.route",
        "must be auto, on or off",
    )?;
    require(
        matches!(t.schemas.trim(), "compact" | "template"),
        "tools.schemas",
        "must be compact or template",
    )?;
    require(
        (0.0..=0.5).contains(&t.workspace_map_pct),
        "tools.workspace_map_pct",
        "must be between 0 and 0.5",
    )?;
    require(
        (0.0..=0.5).contains(&t.evidence_pct),
        "tools.evidence_pct",
        "must be between 0 and 0.5",
    )
}

fn model(m: RawModel) -> ModelConfig {
    ModelConfig {
        path: m.path.filter(|p| !p.trim().is_empty()).map(PathBuf::from),
        models_dir: PathBuf::from(m.models_dir.unwrap_or_else(|| DEFAULT_MODELS_DIR.into())),
        template: m
            .template
            .map(|t| t.trim().to_string())
            .filter(|t| t != crate::model::template::AUTO_TEMPLATE),
    }
}

fn engine(e: RawEngine) -> EngineConfig {
    let auto = |n: u32| (n > 0).then_some(n);
    EngineConfig {
        n_ctx: e.n_ctx,
        fixed_prompt_pct: e.fixed_prompt_pct,
        n_batch: e.n_batch,
        threads: auto(e.threads),
        threads_batch: auto(e.threads_batch),
        cache_prefix: e.cache_prefix,
        cache_prefix_keep: e.cache_prefix_keep,
        cache_shared: e.cache_shared,
        kv_cache_type: KvCacheType::parse(&e.kv_cache_type).unwrap_or_default(),
        lookup: LookupMode::parse(&e.lookup).unwrap_or_default(),
        mmap: MmapMode::parse(&e.mmap).unwrap_or_default(),
    }
}

fn sampling(s: RawSampling) -> SamplingConfig {
    SamplingConfig {
        temperature: s.temperature,
        top_k: s.top_k,
        top_p: s.top_p,
        min_p: s.min_p,
        repeat_penalty: s.repeat_penalty,
        repeat_last_n: s.repeat_last_n,
        seed: s.seed,
        max_tokens: s.max_tokens,
    }
}

fn memory(m: RawMemory) -> MemoryConfig {
    let embedder = match m.embedder.trim() {
        "auto" => Embedder::Auto,
        "none" => Embedder::None,
        path => Embedder::Path(PathBuf::from(path)),
    };
    MemoryConfig {
        enabled: m.enabled,
        inject_on_start: m.inject_on_start,
        budget_pct: m.budget_pct,
        factual_share: m.factual_share,
        top_k: m.top_k,
        recent_sessions: m.recent_sessions,
        summary_at: match m.summary_at.trim() {
            "close" => SummaryAt::Close,
            _ => SummaryAt::Later,
        },
        embedder,
        rolling_summary: RollingSummaryConfig {
            enabled: m.rolling_summary.enabled,
            warn_at_pct: m.rolling_summary.warn_at_pct,
            keep_turns: m.rolling_summary.keep_turns,
        },
        mining: MiningConfig {
            on_exit: match m.mining.on_exit.trim() {
                "on" | "true" => MineOnExit::On,
                "off" | "false" => MineOnExit::Off,
                _ => MineOnExit::Auto,
            },
            min_params: m.mining.min_params,
        },
        rag: RagConfig {
            enabled: m.rag.enabled,
            active: m.rag.active,
            chunk_tokens: m.rag.chunk_tokens,
            top_k: m.rag.top_k,
        },
        knowledge_base: KnowledgeBaseConfig {
            enabled: m.knowledge_base.enabled,
            project: m.knowledge_base.project,
        },
    }
}
