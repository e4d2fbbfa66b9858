//! Composition root: builds everything once from the config and the command line.
//!
//! `App` owns the engine and the conversation; the REPL and `harvey run` drive it.
//! Nothing here prints.

mod access;
mod build;
mod close;
mod commands;
mod compress;
pub mod context;
mod evidence;
mod hints;
mod later;
mod map;
mod open;
mod recall;
mod skills;
mod switch;
mod tools;
mod turn;

pub use later::PendingReport;
pub use open::{embedder_path, open_embedder, open_memory_and_embedder, settle_embedders};
pub use skills::Suggested;
pub use switch::SwitchReport;

pub use tools::{
    call_forms, default_tools, offer_tools, system_head, system_prompt, tools_with_abort,
    workspace_tools,
};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::chat::agent::{run_agent_turn, AgentTurn, ToolSet, TurnEvent};
use crate::chat::prefix_cache::{
    head_ids, restore_or_save_in, stable_prefix_ids_in, Places, PrefixOutcome, SharedHead,
};
use crate::chat::rolling::{Compression, TagSource};
use crate::chat::{Conversation, TurnError, TurnLimits};
use crate::config::{Config, ConfigError};
use crate::engine::{
    AbortFlag, Completion, Engine, EngineError, EngineParams, GenerateOptions, TurnStats,
};
use crate::kb::KnowledgeBase;
use crate::memory::recall::Injection;
use crate::memory::MemoryStore;
use crate::model::find::ModelLookupError;
use crate::rag::RagStore;
use crate::session::{Recorder, SessionIndex};
use crate::tokens::Embedder;
use crate::tools::grammar::call_max_tokens;
use crate::tools::Registry;

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
    workspace: PathBuf,
    config: Config,
    engine: Box<dyn Engine>,
    conversation: Conversation,
    /// Stats of every turn of this session, oldest first.
    turns: Vec<TurnStats>,
    /// Where the last turn's time went (`/status`).
    last_steps: Vec<crate::chat::agent::Step>,
    /// Rolling-summary compressions of this session, oldest first.
    compressions: Vec<Compression>,
    /// What happened to the stable prompt prefix at startup.
    prefix: PrefixOutcome,
    /// The shared head cache outside the workspace (`None`: off, or no home to put it in).
    shared_cache: Option<PathBuf>,
    /// Tools the model may call, and the grammar for calling them.
    tools: Registry,
    /// How the model's calls open and the grammar each continues under.
    call_forms: crate::chat::agent::CallForms,
    /// `max_tokens` of a tool call: the grammar's worst case in tokens.
    tool_max_tokens: usize,
    /// `/tools on|off` (starts as `tools.enabled`).
    tools_enabled: bool,
    /// The project guidance in the system prompt (`HARVEY.md`/`AGENTS.md`), for `/context`.
    guidance: String,
    /// Things the user should know at startup (guidance cut, …).
    notices: Vec<String>,
    abort: AbortFlag,
    /// The memory store (`None` when memory is off or could not be opened).
    memory: Option<MemoryStore>,
    /// The sentence embedder shared by memory, RAG stores and the knowledge base.
    embedder: Option<Arc<dyn Embedder>>,
    /// The knowledge base (`None` when memory is off or it could not be opened).
    kb: Option<KnowledgeBase>,
    /// The RAG stores recall uses (`/rag use`), and whether it uses them (`/rag on|off`).
    rag: Vec<RagStore>,
    rag_enabled: bool,
    /// The `[memory context]` injected at session start (`None` until the first message).
    injection: Option<Injection>,
    /// The `[workspace files]` block of this session (built at first use; see `map`).
    workspace_map: std::cell::OnceCell<Option<crate::workspace_map::fit::MapBlock>>,
    /// The evidence index (opened at the first question; see `evidence`).
    evidence: Option<crate::evidence::Index>,
    /// The index could not be opened (said once).
    evidence_failed: bool,
    /// The block sent with the last message (`harvey run --json` shows its sources).
    last_evidence: Option<crate::evidence::Block>,
    /// The session record under `agents/sessions/`.
    recorder: Recorder,
    /// The sessions index and stats (`None` if it could not be opened).
    sessions: Option<SessionIndex>,
    /// Every exchange of this session (user, reply), uncompressed, for the summary.
    transcript: Vec<(String, String)>,
    /// `/rename NAME`: the session's name in the index.
    session_name: Option<String>,
    /// Asks the user whether a writing tool call may run (installed by the REPL; used
    /// when `tools.confirm_memory_writes` is on).
    confirm_writes: Option<Box<crate::chat::agent::Confirm>>,
    /// Asks the user a question and returns the answer (installed by the REPL; `None`
    /// when nobody can answer, e.g. `harvey run`).
    ask: Option<std::rc::Rc<Ask>>,
    /// Whether the model's file writes may be confirmed through `ask`: the REPL sets it
    /// when its input is a terminal (someone is there to read the diff). Otherwise such
    /// writes are refused unless `tools.allow_writes` is on.
    ask_file_writes: bool,
    /// A note for the next recorded exchange (e.g. where a continued session came from).
    pending_notes: Vec<String>,
    /// Text attached to the next user message only (`!prog`, `/kb inject`, …).
    attachments: crate::chat::attachment::Attachments,
    /// The session's command settings (from `security:`, changed by `/safemode`).
    security: crate::command::Settings,
    /// `agents/harvey-audit.jsonl` (the Go tool's `agents/audit.jsonl` is never written).
    audit: crate::command::AuditLog,
    /// The last turn's `<think>` block (`/think show`); never part of the conversation.
    last_thought: Option<String>,
    /// The first failure to write the session record: the close reports it (an exchange
    /// that did not reach the disk must not pass unsaid).
    record_problem: Option<String>,
    /// Notes for the record's close (e.g. the signal that ended a run).
    end_notes: Vec<String>,
    closed: bool,
}

/// A question to the user and the answer (`None`: input ended).
pub type Ask = dyn Fn(&str) -> Option<String>;

/// What closing a session did.
#[derive(Debug, Clone, PartialEq)]
pub struct CloseReport {
    pub record: PathBuf,
    pub summary: String,
    pub tags: Vec<String>,
    /// Whether the tags are the model's or the keyword fallback.
    pub tag_source: TagSource,
    /// The optional model work (summary, tags) was skipped by a Ctrl-C.
    pub skipped: bool,
    /// The summary and mining are left to the next interactive session
    /// (`memory.summary_at: later`).
    pub pending: bool,
    /// What could not be written (the record, the index): empty when all is on disk.
    pub problems: Vec<String>,
}

impl App {
    /// Offers the tools to the engine now loaded (its template may list them itself) and
    /// rewrites the system prompt to match.
    pub(crate) fn offer_tools_to_engine(&mut self) {
        let system = offer_tools(
            self.engine.as_mut(),
            &self.tools,
            self.tools_enabled,
            &self.guidance,
            self.config.tools.schemas,
        );
        self.conversation.set_system(system);
        let as_system = self.engine.info().template_system_turns;
        self.conversation.set_context_as_system(as_system);
        self.call_forms = call_forms(&self.tools, &self.engine.info().template_text);
        self.tool_max_tokens = call_max_tokens(&self.call_forms.fenced);
    }

    /// Generation options from the config, sharing the app's abort flag.
    pub fn generate_options(&self) -> GenerateOptions {
        let s = &self.config.sampling;
        GenerateOptions {
            sampling: s.params(),
            max_tokens: Some(s.max_tokens as usize),
            abort: self.abort.clone(),
            grammar: None,
            stop: Vec::new(),
            assistant_prefix: None,
            stop_finder: None,
            banned: Vec::new(),
            keep_prompt: false,
        }
    }

    /// One user turn; the reply streams to `on_text`. Older turns are folded out first
    /// (without the model) if that is what it takes to fit (see
    /// [`crate::chat::prepare_turn`]); their summary is [`Self::compress`]'s, later.
    pub fn turn(
        &mut self,
        text: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, TurnError> {
        self.agent_turn(text, &mut |e| {
            if let TurnEvent::Text(t) = e {
                on_text(&t);
            }
        })
        .map(|t| t.completion)
    }

    /// One user turn with tools (when enabled); events stream to `on_event`. A message
    /// that matches a prompt skill's `trigger` runs that skill ([`Self::triggered_turn`]).
    pub fn agent_turn(
        &mut self,
        text: &str,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Result<AgentTurn, TurnError> {
        if let Some(turn) = self.triggered_turn(text, on_event) {
            return turn;
        }
        self.turn_on(text, None, None, true, on_event)
    }

    /// [`Self::agent_turn`] that may call only the tools of `narrowed` (a skill's
    /// `allowed-tools`; the system prompt keeps listing them all, so the cached prefix
    /// survives, but the call grammar and the router know only these), and records
    /// `skill`'s scene (`INT. SKILL <NAME>`, speaking the given text) before the exchange.
    /// With `offer_skills` (and neither of those), the router may choose one of the
    /// workspace's skills for the first step; the skill then runs instead
    /// ([`Self::run_chosen_skill`]).
    pub(crate) fn turn_on(
        &mut self,
        text: &str,
        narrowed: Option<&Registry>,
        skill: Option<(&crate::skills::Skill, &str)>,
        offer_skills: bool,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Result<AgentTurn, TurnError> {
        self.abort.clear();
        // A skill's turn follows the skill's own instructions.
        let plain = narrowed.is_none() && skill.is_none();
        let (recall, evidence) = self.turn_context(text, plain, on_event);
        let opts = self.generate_options();
        let rolling = &self.config.memory.rolling_summary;
        let limits = TurnLimits {
            reply_reserve: self.reply_reserve(),
            keep_turns: rolling.enabled.then_some(rolling.keep_turns),
        };
        let confirm = self
            .config
            .tools
            .confirm_memory_writes
            .then_some(self.confirm_writes.as_deref());
        let ask_model_command = commands::yes_no(self.ask.clone(), "the model asks: ");
        let ask_file_write = commands::yes_no(self.ask.clone(), "");
        let offer_skills = offer_skills && narrowed.is_none() && skill.is_none();
        let skills = if offer_skills {
            self.skill_options()
        } else {
            Vec::new()
        };
        let route_dir = self.route_dir();
        let session = self.record_name_or_planned();
        let routed = self.with_hints(text, evidence.as_ref(), on_event);
        self.last_evidence = evidence;
        let narrowed_forms = narrowed.map(|r| call_forms(r, &self.engine.info().template_text));
        let registry = narrowed.unwrap_or(&self.tools);
        let tool_set = ToolSet {
            registry,
            forms: narrowed_forms.as_ref().unwrap_or(&self.call_forms),
            max_call_tokens: narrowed_forms
                .as_ref()
                .map_or(self.tool_max_tokens, |f| call_max_tokens(&f.fenced)),
            max_rounds: self.config.tools.max_rounds_per_turn,
            turn_tokens: self.config.tools.turn_tokens,
            confirm,
            ask: self
                .ask
                .is_some()
                .then_some(&ask_model_command as &crate::chat::agent::Confirm),
            ask_files: (self.ask.is_some() && self.ask_file_writes)
                .then_some(&ask_file_write as &crate::chat::agent::Confirm),
            route: self.routes().then_some(routed.text.as_str()),
            route_saved: self.route_saved(&route_dir),
            skills: &skills,
            request: text,
            session: session.as_deref(),
            remembered: routed.remembered,
            evidence: routed.evidence,
        };
        let tools = (self.tools_enabled && !registry.is_empty()).then_some(&tool_set);
        // Per-turn context rides on this user message only (the cached prefix stays).
        let attached = self.attachments.take();
        let sent = crate::chat::attachment::message_with(&attached, &routed.text);
        let turn = run_agent_turn(
            self.engine.as_mut(),
            &mut self.conversation,
            &sent,
            &opts,
            limits,
            tools,
            on_event,
        );
        self.settle_turn(text, turn, attached, recall, skill, on_event)
    }

    /// The record's file name (planned until its first exchange is written).
    fn record_name_or_planned(&self) -> Option<String> {
        self.recorder
            .path()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.recorder.planned_path())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    }

    /// Whether a router picks each turn's first step (`tools.route`; `auto`: when the
    /// model's template lists tools itself, the instruction-tuned families).
    fn routes(&self) -> bool {
        match self.config.tools.route {
            crate::config::RouteMode::On => true,
            crate::config::RouteMode::Off => false,
            crate::config::RouteMode::Auto => self.engine.info().template_tools,
        }
    }

    /// Appends the exchange to the session record. A failing disk loses the record, not
    /// the session: the problem is noted once.
    fn record(&mut self, text: &str, turn: &AgentTurn) {
        let mut notes: Vec<String> = std::mem::take(&mut self.pending_notes);
        if self.transcript.is_empty() {
            if let Some(i) = self.injection.as_ref().filter(|i| !i.items.is_empty()) {
                let ids: Vec<String> = i
                    .items
                    .iter()
                    .map(|p| format!("{} ({:.2})", p.candidate.id, p.candidate.score))
                    .collect();
                notes.push(format!("{}: {}", i.summary_line(), ids.join(", ")));
            }
        }
        for c in &turn.calls {
            let call = c
                .call
                .as_ref()
                .map_or_else(|| "(unparsed call)".into(), |c| c.summary());
            let outcome = if c.result.is_ok() { "ok" } else { "error" };
            notes.push(format!("tool: {call} → {outcome}"));
        }
        if let Some(c) = &turn.compression {
            notes.push(c.note());
        }
        let s = &turn.completion.stats;
        // The thought is kept as a note: the reply text (what summaries, mining and a
        // continued session read) is the answer alone.
        if let Some(thought) = &turn.thought {
            notes.push(format!(
                "thought ({} tokens, not part of the reply): {thought}",
                s.thinking_tokens
            ));
        }
        if let Some(cut) = cut_note(turn.completion.stop) {
            notes.push(cut);
        }
        notes.push(format!(
            "stats: {} prompt tokens ({} evaluated), {} generated at {:.1} tok/s, ttft {:.0} ms",
            s.prompt_tokens, s.evaluated_tokens, s.completion_tokens, s.decode_tps, s.ttft_ms
        ));
        self.transcript
            .push((text.to_string(), turn.completion.text.clone()));
        if let Err(e) = self.recorder.exchange(text, &turn.completion.text, notes) {
            if self.record_problem.is_none() {
                let problem = format!("cannot write the session record: {e}");
                self.notices.push(problem.clone());
                self.record_problem = Some(problem);
            }
        }
    }

    /// Tokens kept free for a reply: `sampling.max_tokens`, at most a quarter of n_ctx.
    pub fn reply_reserve(&self) -> usize {
        let n_ctx = self.engine.info().n_ctx as usize;
        (self.config.sampling.max_tokens as usize).min(n_ctx / 4)
    }

    /// Tokens the conversation occupies in the context right now (rendered, exact).
    pub fn context_used(&self) -> Result<usize, EngineError> {
        self.engine.count_prompt(&self.conversation.messages())
    }

    /// Starts a new conversation (the KV cache keeps the shared system-prompt prefix).
    /// Also drops what was attached for the next message.
    pub fn clear(&mut self) {
        self.conversation.clear();
        self.attachments.take();
    }

    /// Restores the stable prompt prefix (system prompt + the query-independent part of
    /// the memory context) from `agents/cache/` — whole, or its longest saved beginning
    /// there or in the shared head cache — prefills the rest and saves it.
    pub fn prepare_prefix(&mut self, stable_context: &str) -> &PrefixOutcome {
        if self.config.engine.cache_prefix {
            let engine = self.engine.as_ref();
            let ids = stable_prefix_ids_in(engine, &self.conversation, stable_context);
            let head = self
                .shared_cache
                .as_ref()
                .and_then(|dir| Some((dir.clone(), head_ids(engine, self.system_head()?))));
            let dir = self.cache_dir();
            let places = Places {
                dir: &dir,
                keep: self.config.engine.cache_prefix_keep,
                shared: head.as_ref().map(|(dir, ids)| SharedHead { dir, ids }),
            };
            self.prefix = restore_or_save_in(self.engine.as_mut(), &ids, &places);
        }
        &self.prefix
    }

    /// Uses `dir` as the shared head cache (`None`: none). `App::open` sets it from the
    /// environment when `engine.cache_shared` is on; an app built around a given engine
    /// (tests) has none until this is called.
    pub fn set_shared_cache(&mut self, dir: Option<PathBuf>) {
        self.shared_cache = dir;
    }

    /// `<workspace>/agents`, where all of harvey's files live.
    pub fn agents_dir(&self) -> PathBuf {
        self.workspace.join("agents")
    }

    /// `agents/cache/`: saved prompt prefixes and router instructions.
    fn cache_dir(&self) -> PathBuf {
        self.agents_dir().join("cache")
    }

    /// Where the router's instructions are saved. They are harvey's own text (the tools'
    /// `route()` lines are `&'static str`, the examples fixed; the user's skills are asked
    /// about apart): nothing learned from a workspace is in them, so they go to the
    /// shared cache when there is one (a new workspace restores them instead of
    /// prefilling ~500 tokens), else to `agents/cache`.
    fn route_dir(&self) -> PathBuf {
        self.shared_cache
            .clone()
            .unwrap_or_else(|| self.cache_dir())
    }

    fn route_saved<'a>(&self, dir: &'a Path) -> Option<crate::chat::route::Saved<'a>> {
        self.config
            .engine
            .cache_prefix
            .then_some(crate::chat::route::Saved {
                dir,
                keep: self.config.engine.cache_prefix_keep,
            })
    }
}

/// The record's note for a reply that did not end by itself: what the reply holds is
/// all the model said before it was stopped.
fn cut_note(stop: crate::engine::StopReason) -> Option<String> {
    use crate::engine::StopReason;
    let why = match stop {
        StopReason::EndOfGeneration | StopReason::StopString | StopReason::PromptEcho => {
            return None
        }
        StopReason::Aborted => "stopped by Ctrl-C or a termination signal",
        StopReason::MaxTokens => "sampling.max_tokens reached",
        StopReason::ContextFull => "the context window was full",
    };
    Some(format!("reply cut ({}): {why}", stop.as_str()))
}

/// Decode tok/s over the whole session (tokens / decode time), not a mean of turn rates.
pub fn average_decode_rate(turns: &[TurnStats]) -> f64 {
    let tokens: usize = turns.iter().map(|t| t.completion_tokens).sum();
    let seconds: f64 = turns
        .iter()
        .filter(|t| t.decode_tps > 0.0)
        .map(|t| t.completion_tokens as f64 / t.decode_tps)
        .sum();
    if seconds > 0.0 {
        tokens as f64 / seconds
    } else {
        0.0
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
        template: config.model.template.clone(),
        kv_cache_type: config.engine.kv_cache_type,
        lookup: config.engine.lookup,
        mmap: config.engine.mmap,
    }
}

pub use crate::platform::physical_cores;
