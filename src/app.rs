//! Composition root: builds everything once from the config and the command line.
//!
//! `App` owns the engine and the conversation; the REPL and `harvey run` drive it.
//! Nothing here prints.

use std::path::{Path, PathBuf};

use crate::chat::{run_turn, Conversation, SYSTEM_PROMPT};
use crate::config::{self, Config, ConfigError};
use crate::engine::{
    AbortFlag, Completion, Engine, EngineError, EngineParams, GenerateOptions, LlamaEngine,
    SamplingParams, TurnStats,
};
use crate::models::{ModelLookupError, ModelSources};

/// What the command line decides before the app is built.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    pub workspace: PathBuf,
    pub model: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("workspace {path} is not a directory")]
    Workspace { path: PathBuf },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Model(#[from] ModelLookupError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

pub struct App {
    pub workspace: PathBuf,
    pub config: Config,
    pub engine: Box<dyn Engine>,
    pub conversation: Conversation,
    /// Stats of every turn of this session, oldest first.
    pub turns: Vec<TurnStats>,
    pub abort: AbortFlag,
}

impl App {
    /// Loads the config, finds and loads the model.
    pub fn open(options: &AppOptions) -> Result<Self, AppError> {
        let (workspace, config, model_path) = Self::resolve(options)?;
        let engine = LlamaEngine::load(&engine_params(&config, model_path))?;
        Ok(Self::with_engine(workspace, config, Box::new(engine)))
    }

    /// The workspace directory, its config and the model file, without loading anything.
    pub fn resolve(options: &AppOptions) -> Result<(PathBuf, Config, PathBuf), AppError> {
        let workspace = workspace_dir(&options.workspace)?;
        let config = config::load(&workspace)?;
        let sources = ModelSources::standard(
            options.model.clone(),
            config.model.path.as_deref(),
            &config.model.models_dir,
            &workspace,
        );
        let model_path = sources.find()?;
        Ok((workspace, config, model_path))
    }

    /// Builds an app around an already-loaded engine (tests use a scripted one).
    pub fn with_engine(workspace: PathBuf, config: Config, engine: Box<dyn Engine>) -> Self {
        Self {
            workspace,
            config,
            engine,
            conversation: Conversation::new(SYSTEM_PROMPT),
            turns: Vec::new(),
            abort: AbortFlag::new(),
        }
    }

    /// Generation options from the config, sharing the app's abort flag.
    pub fn generate_options(&self) -> GenerateOptions {
        let s = &self.config.sampling;
        GenerateOptions {
            sampling: SamplingParams {
                temperature: s.temperature,
                top_k: s.top_k,
                top_p: s.top_p,
                min_p: s.min_p,
                repeat_penalty: s.repeat_penalty,
                repeat_last_n: s.repeat_last_n,
                seed: s.seed,
            },
            max_tokens: Some(s.max_tokens as usize),
            abort: self.abort.clone(),
        }
    }

    /// One user turn; the reply streams to `on_text`.
    pub fn turn(
        &mut self,
        text: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        self.abort.clear();
        let opts = self.generate_options();
        let completion = run_turn(
            self.engine.as_mut(),
            &mut self.conversation,
            text,
            &opts,
            on_text,
        )?;
        self.turns.push(completion.stats.clone());
        Ok(completion)
    }

    /// Tokens the conversation occupies in the context right now (rendered, exact).
    pub fn context_used(&self) -> Result<usize, EngineError> {
        self.engine.count_prompt(&self.conversation.messages())
    }

    /// Starts a new conversation (the KV cache keeps the shared system-prompt prefix).
    pub fn clear(&mut self) {
        self.conversation.clear();
    }

    /// `<workspace>/agents`, where all of harvey's files live.
    pub fn agents_dir(&self) -> PathBuf {
        self.workspace.join("agents")
    }
}

fn workspace_dir(path: &Path) -> Result<PathBuf, AppError> {
    let bad = || AppError::Workspace {
        path: path.to_path_buf(),
    };
    let dir = path.canonicalize().map_err(|_| bad())?;
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(bad())
    }
}

/// Engine parameters from the config; unset thread counts become the physical cores.
pub fn engine_params(config: &Config, model_path: PathBuf) -> EngineParams {
    let cores = physical_cores();
    EngineParams {
        model_path,
        n_ctx: config.engine.n_ctx,
        n_batch: config.engine.n_batch,
        threads: config.engine.threads.unwrap_or(cores),
        threads_batch: config.engine.threads_batch.unwrap_or(cores),
    }
}

/// Physical cores (hyper-threads slow llama.cpp down), at least 1.
pub fn physical_cores() -> u32 {
    sysinfo::System::new()
        .physical_core_count()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}
