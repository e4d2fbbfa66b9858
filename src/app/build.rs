//! Building the app: the workspace, its config and model, the engine, the tools and
//! the stores a session reads from.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::chat::prefix_cache::PrefixOutcome;
use crate::chat::Conversation;
use crate::config::{self, Config};
use crate::engine::{AbortFlag, Engine, LlamaEngine};
use crate::model::find::ModelSources;
use crate::project::read_guidance;
use crate::session::Recorder;
use crate::tools::grammar::call_max_tokens;
use crate::tools::Registry;

use super::open::{open_stores, Stores};
use super::{
    call_forms, commands, engine_params, offer_tools, tools_with_abort, App, AppError, AppOptions,
};

impl App {
    /// Loads the config, finds and loads the model.
    /// What the session reads from (memory, embedder, knowledge base, RAG stores,
    /// sessions index) opens on a second thread while the model loads: neither needs the
    /// other, and at 10k memories the stores take about as long as the 135M model's load.
    pub fn open(options: &AppOptions) -> Result<Self, AppError> {
        let (workspace, config, model_path) = Self::resolve(options)?;
        let loading = AtomicBool::new(true);
        let (engine, stores) = std::thread::scope(|s| {
            let opening =
                s.spawn(|| open_stores(&config, &workspace, || loading.load(Ordering::Relaxed)));
            let engine = LlamaEngine::load(&engine_params(&config, model_path));
            loading.store(false, Ordering::Relaxed);
            tracing::debug!("phase: model loaded");
            let stores = opening
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            tracing::debug!("phase: stores open");
            (engine, stores)
        });
        let shared = config
            .engine
            .cache_shared
            .then(crate::chat::prefix_cache::shared::shared_cache_dir)
            .flatten();
        let mut app = Self::with_stores(workspace, config, Box::new(engine?), stores);
        app.set_shared_cache(shared);
        Ok(app)
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
        let stores = open_stores(&config, &workspace, || false);
        Self::with_stores(workspace, config, engine, stores)
    }

    /// Builds an app around a loaded engine and opened stores, with the workspace's tools.
    fn with_stores(
        workspace: PathBuf,
        config: Config,
        engine: Box<dyn Engine>,
        stores: Stores,
    ) -> Self {
        let abort = AbortFlag::new();
        let (tools, notes) = tools_with_abort(&workspace, &config, &abort);
        let mut app = Self::assemble(workspace, config, engine, tools, stores);
        // The command tools stop on the same Ctrl-C as the reply.
        app.abort = abort;
        app.notices.extend(notes);
        app
    }

    /// Builds an app with a given tool registry (the system prompt describes it).
    pub fn with_tools(
        workspace: PathBuf,
        config: Config,
        engine: Box<dyn Engine>,
        tools: Registry,
    ) -> Self {
        let stores = open_stores(&config, &workspace, || false);
        Self::assemble(workspace, config, engine, tools, stores)
    }

    fn assemble(
        workspace: PathBuf,
        config: Config,
        engine: Box<dyn Engine>,
        tools: Registry,
        stores: Stores,
    ) -> Self {
        let mut engine = engine;
        let tools_enabled = config.tools.enabled;
        let guidance_budget = (engine.info().n_ctx as usize / 8).max(64);
        let guidance = read_guidance(&workspace, engine.as_ref(), guidance_budget);
        let system = offer_tools(
            engine.as_mut(),
            &tools,
            tools_enabled,
            &guidance.text,
            config.tools.schemas,
        );
        let call_forms = call_forms(&tools, &engine.info().template_text);
        let tool_max_tokens = call_max_tokens(&call_forms.fenced);
        let mut conversation = Conversation::new(system);
        conversation.set_context_as_system(engine.info().template_system_turns);
        let mut notices = config.notices.clone();
        notices.extend(engine.info().notes.iter().cloned());
        notices.extend(guidance.notices);
        let Stores {
            memory,
            embedder,
            kb,
            rag,
            rag_enabled,
            sessions,
            notices: store_notices,
        } = stores;
        notices.extend(store_notices);
        let agents = workspace.join("agents");
        let recorder = Recorder::new(&agents.join("sessions"), &engine.info().name);
        Self {
            memory,
            embedder,
            kb,
            rag,
            rag_enabled,
            injection: None,
            workspace_map: Default::default(),
            evidence: None,
            evidence_failed: false,
            last_evidence: None,
            recorder,
            sessions,
            transcript: Vec::new(),
            session_name: None,
            pending_notes: Vec::new(),
            attachments: Default::default(),
            security: commands::settings(&config.security),
            audit: crate::command::AuditLog::new(&agents),
            last_thought: None,
            record_problem: None,
            end_notes: Vec::new(),
            confirm_writes: None,
            ask_file_writes: false,
            ask: None,
            closed: false,
            guidance: guidance.text,
            notices,
            call_forms,
            tool_max_tokens,
            tools,
            tools_enabled,
            workspace,
            config,
            engine,
            conversation,
            turns: Vec::new(),
            last_steps: Vec::new(),
            compressions: Vec::new(),
            prefix: PrefixOutcome::Empty,
            shared_cache: None,
            abort: AbortFlag::new(),
        }
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
