//! The app's one door for the faces: what they may read of the session (accessors) and
//! the changes they may make, each named for what it does.
//!
//! `App`'s fields are private; the REPL, the subcommands and the benches go through
//! these methods. Nothing here prints or runs a turn.

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use crate::chat::agent::Confirm;
use crate::chat::attachment::Attachments;
use crate::chat::prefix_cache::PrefixOutcome;
use crate::chat::rolling::Compression;
use crate::chat::route::{self, Route};
use crate::chat::Conversation;
use crate::command::{AuditLog, Settings};
use crate::config::{Config, RouteMode};
use crate::engine::{AbortFlag, Engine, EngineError, TurnStats};
use crate::kb::KnowledgeBase;
use crate::memory::recall::Injection;
use crate::memory::MemoryStore;
use crate::rag::RagStore;
use crate::session::{Recorder, SessionIndex};
use crate::tokens::Embedder;
use crate::tools::Registry;

use super::{App, Ask};

/// Reading the session.
impl App {
    /// The workspace directory (canonical).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The loaded model.
    pub fn engine(&self) -> &dyn Engine {
        self.engine.as_ref()
    }

    /// The loaded model, for an operation that runs on it (mining, a router choice).
    pub fn engine_mut(&mut self) -> &mut dyn Engine {
        self.engine.as_mut()
    }

    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// Stats of every turn of this session, oldest first.
    pub fn turns(&self) -> &[TurnStats] {
        &self.turns
    }

    /// Where the last turn's time went, step by step (empty before any turn).
    pub fn last_steps(&self) -> &[crate::chat::agent::Step] {
        &self.last_steps
    }

    /// Rolling-summary compressions of this session, oldest first.
    pub fn compressions(&self) -> &[Compression] {
        &self.compressions
    }

    /// What happened to the stable prompt prefix at startup.
    pub fn prefix(&self) -> &PrefixOutcome {
        &self.prefix
    }

    /// The system prompt without the project's guidance: the workspace-independent head
    /// the shared cache may hold (`None` if the prompt does not end with the guidance).
    pub fn system_head(&self) -> Option<&str> {
        super::tools::system_head(self.conversation.system(), &self.guidance)
    }

    /// The warning to give when the prompt prefix could not be saved, if it was not.
    pub fn unsaved_prefix_note(&self) -> Option<String> {
        self.prefix.unsaved_note(&self.cache_dir())
    }

    /// The tools the model may call.
    pub fn tools(&self) -> &Registry {
        &self.tools
    }

    /// Whether the model is offered its tools (`/tools on|off`).
    pub fn tools_enabled(&self) -> bool {
        self.tools_enabled
    }

    /// Things the user should know at startup.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The flag a Ctrl-C raises to stop a reply, a command or an ingest.
    pub fn abort(&self) -> &AbortFlag {
        &self.abort
    }

    /// The memory store (`None` when memory is off or could not be opened).
    pub fn memory(&self) -> Option<&MemoryStore> {
        self.memory.as_ref()
    }

    /// The memory store, for a store operation (add, forget, onboarding, mining).
    pub fn memory_mut(&mut self) -> Option<&mut MemoryStore> {
        self.memory.as_mut()
    }

    /// The sentence embedder shared by memory, RAG stores and the knowledge base.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// The knowledge base (`None` when memory is off or it could not be opened).
    pub fn kb(&self) -> Option<&KnowledgeBase> {
        self.kb.as_ref()
    }

    /// The RAG stores recall uses.
    pub fn rag(&self) -> &[RagStore] {
        &self.rag
    }

    /// The `[memory context]` injected at session start (`None` until the first message).
    pub fn injection(&self) -> Option<&Injection> {
        self.injection.as_ref()
    }

    /// The `[evidence]` block sent with the last message (`None`: none was sent).
    pub fn last_evidence(&self) -> Option<&crate::evidence::Block> {
        self.last_evidence.as_ref()
    }

    /// The session record under `agents/sessions/`.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The sessions index (`None` if it could not be opened).
    pub fn sessions(&self) -> Option<&SessionIndex> {
        self.sessions.as_ref()
    }

    /// Every exchange of this session (user, reply), uncompressed.
    pub fn transcript(&self) -> &[(String, String)] {
        &self.transcript
    }

    /// Who answers the app's questions (`None` when nobody can, e.g. `harvey run`).
    pub fn asker(&self) -> Option<Rc<Ask>> {
        self.ask.clone()
    }

    /// Text attached to the next user message only.
    pub fn attachments(&self) -> &Attachments {
        &self.attachments
    }

    /// The session's command settings (safe mode, allowlist, timeout).
    pub fn security(&self) -> &Settings {
        &self.security
    }

    /// `agents/harvey-audit.jsonl`.
    pub fn audit(&self) -> &AuditLog {
        &self.audit
    }

    /// The last turn's `<think>` block (`/think show`).
    pub fn last_thought(&self) -> Option<&str> {
        self.last_thought.as_deref()
    }
}

/// Changing the session.
impl App {
    /// A notice for the user (shown with the startup notices).
    pub fn add_notice(&mut self, notice: String) {
        self.notices.push(notice);
    }

    /// `/tools on|off`: whether the model is offered its tools from the next turn on.
    pub fn set_tools_enabled(&mut self, enabled: bool) {
        self.tools_enabled = enabled;
    }

    /// `/rename NAME`: the session's name in the index.
    pub fn rename_session(&mut self, name: &str) {
        self.session_name = Some(name.to_string());
    }

    /// Installs who answers the app's questions (the REPL's prompt).
    pub fn install_asker(&mut self, ask: Rc<Ask>) {
        self.ask = Some(ask);
    }

    /// Installs who confirms a writing tool call (used when
    /// `tools.confirm_memory_writes` is on).
    pub fn install_write_confirmation(&mut self, confirm: Box<Confirm>) {
        self.confirm_writes = Some(confirm);
    }

    /// Whether the model's file writes may be confirmed through the asker (someone is
    /// there to read the diff).
    pub fn set_ask_file_writes(&mut self, ask: bool) {
        self.ask_file_writes = ask;
    }

    /// Replaces the open knowledge base (`/kb import`).
    pub fn replace_knowledge_base(&mut self, kb: KnowledgeBase) {
        self.kb = Some(kb);
    }

    /// Caps every reply of this session at `n` tokens (`harvey run --max-tokens`).
    pub fn set_reply_max_tokens(&mut self, n: u32) {
        self.config.sampling.max_tokens = n;
    }

    /// Whether a router picks each turn's first step (the agent bench's `--route`).
    pub fn set_route(&mut self, route: RouteMode) {
        self.config.tools.route = route;
    }

    /// Forgets the conversation, the pinned memory block and the transcript, so the next
    /// message starts a session: recall runs for it and the block is injected as at any
    /// session start.
    pub fn start_fresh_session(&mut self) {
        self.clear();
        self.conversation.set_context(None);
        self.injection = None;
        self.forget_workspace_map();
        self.transcript.clear();
    }

    /// Records an exchange that did not go through a turn (its notes empty) in the
    /// session record and the transcript.
    pub fn record_exchange(&mut self, user: String, reply: String) -> std::io::Result<()> {
        self.recorder.exchange(&user, &reply, Vec::new())?;
        self.transcript.push((user, reply));
        Ok(())
    }

    /// Gets the first message's fixed work done ahead of it: the session-start prefix
    /// (system prompt, workspace map, memory context) restored or prefilled, then the
    /// router's instructions. The REPL runs it while its first prompt waits. Returns the
    /// warning to give when the prefix could not be saved.
    pub fn prepare_start(&mut self) -> Option<String> {
        let stable = self.stable_memory_context();
        self.prepare_prefix(&stable);
        if self.tools_enabled && self.routes() {
            let dir = self.route_dir();
            if let Some(saved) = self.route_saved(&dir) {
                route::warm(self.engine.as_mut(), &self.tools, saved);
            }
        }
        self.unsaved_prefix_note()
    }

    /// Only the router on `request`: which tool (or an answer) it picks first, shown what
    /// a turn shows it (the request's hint lines; a request to remember needs no model).
    pub fn choose_route(&mut self, request: &str) -> Result<Option<Route>, EngineError> {
        if let Some(told) = route::told_to_remember(&self.tools, request) {
            return Ok(Some(told));
        }
        let abort = self.abort.clone();
        let skills = self.skill_options();
        let menu = route::Menu {
            registry: &self.tools,
            skills: &skills,
        };
        if let Some(skill) = route::skill_for(self.engine.as_mut(), menu, request, &abort)? {
            return Ok(Some(skill));
        }
        let dir = self.route_dir();
        let saved = self.route_saved(&dir);
        let hinted = self.with_hints(request, None, &mut |_| {});
        route::choose(
            self.engine.as_mut(),
            &self.tools,
            &hinted.text,
            request,
            &abort,
            saved,
        )
    }
}
