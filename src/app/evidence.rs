//! A question's `[evidence]` block ([`crate::evidence`]): the workspace's files, its
//! history, the memories and the session summaries that rank for it, fitted to
//! `tools.evidence_pct` of n_ctx and sent with the question (this message only, so the
//! cached prefix stays). With a block, the model answers from it or calls a tool itself:
//! no router and no question-kind rule chooses the first step.
//!
//! The index is opened and brought up to date at the first question of a session, and
//! refreshed before each later one (only changed files are read again). A failure only
//! loses the block: the turn goes on as it would without one.

use std::time::Instant;

use super::App;
use crate::chat::agent::{Step, StepKind, TurnEvent};
use crate::chat::route::memory::speaks_of_memory;
use crate::evidence::{Ask, Block, Index, MemoryUnit, Scope, SessionUnit};

/// Memories nearest to a request by meaning, asked of the store for each block.
const NEAR_POOL: usize = 5;

/// Words that open a request for information without a question mark ("Explain how the
/// parser works", "Tell me about the cache").
const ASKING: &[&str] = &[
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "explain",
    "describe",
    "tell",
    "summarize",
    "summarise",
    "show",
    "list",
    "find",
];

impl App {
    /// The evidence block for `text`, or `None` when the block is off, the request is
    /// neither a question about the workspace nor a request about the memory (a task, a
    /// memory to keep, a follow-up, a commit named by its place), or nothing ranks for it.
    pub(crate) fn evidence_for(
        &mut self,
        text: &str,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Option<Block> {
        let pct = self.config.tools.evidence_pct;
        if !self.tools_enabled || pct <= 0.0 {
            return None;
        }
        let scope = self.evidence_scope(text)?;
        let started = Instant::now();
        let n_ctx = self.engine.info().n_ctx;
        let budget = crate::memory::recall::budget(n_ctx, pct);
        self.evidence_index(on_event)?;
        let asked = self.ranked_words(text, scope);
        let ask = Ask {
            question: &asked,
            scope,
            near: self.near_memories(text),
            now: chrono::Utc::now().timestamp(),
        };
        let index = self.evidence.as_ref()?;
        let block = match index.gather_for(&ask, budget, self.engine.as_ref()) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!("evidence: {e}");
                return None;
            }
        };
        let what = format!("{} snippets, {} tokens", block.snippets.len(), block.tokens);
        Step::timed(StepKind::Evidence, what, started).send(on_event);
        (!block.snippets.is_empty()).then_some(block)
    }

    /// The words a block is ranked by: the request's, and for a request about the memory
    /// that points back ("Delete that memory."), the previous request's before them.
    fn ranked_words(&self, text: &str, scope: Scope) -> String {
        if scope != Scope::Memory || !self.points_back(text) {
            return text.to_string();
        }
        let turns = self.conversation.turns();
        let earlier = turns
            .iter()
            .rposition(|m| m.role == crate::engine::Role::User)
            .map(|i| crate::evidence::block::words_of(&turns[i].content));
        match earlier {
            Some(words) => format!("{words}\n{text}"),
            None => text.to_string(),
        }
    }

    /// Whether `text` follows an earlier exchange and points back at it ("it", "that"):
    /// such a request is a follow-up, and its own words are no question to search for.
    fn points_back(&self, text: &str) -> bool {
        self.conversation.turns().len() >= 2 && crate::text::back_reference::points_back(text)
    }

    /// The memories nearest to `text` by the embedder, with their cosine; empty without
    /// an embedder or a memory store (then memories rank by their words).
    fn near_memories(&self, text: &str) -> Vec<(String, f32)> {
        let Some(store) = self.memory.as_ref().filter(|_| self.config.memory.enabled) else {
            return Vec::new();
        };
        match store.similar(text, NEAR_POOL) {
            Ok(near) => near.into_iter().map(|(row, c)| (row.id, c)).collect(),
            Err(e) => {
                tracing::debug!("evidence: no vectors for the memories: {e}");
                Vec::new()
            }
        }
    }

    /// [`Self::evidence_for`], its step kept in `steps` too (the turn's steps begin with it).
    pub(crate) fn timed_evidence(
        &mut self,
        text: &str,
        steps: &mut Vec<Step>,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Option<Block> {
        self.evidence_for(text, &mut |e| {
            if let TurnEvent::Step(s) = &e {
                steps.push(s.clone());
            }
            on_event(e)
        })
    }

    /// What `text` is answered from: the memory for a request whose words speak of what
    /// the assistant remembers (a question or a change; not a new thing to keep), the
    /// workspace for a question (a question mark, or a first word that asks) that is not
    /// a task, not a memory to keep, not a follow-up to the previous exchange, not a
    /// commit named by its place or counted (the git tool answers that exactly; who or
    /// when something changed is in the history the index holds); `None` for the rest.
    pub(crate) fn evidence_scope(&self, text: &str) -> Option<Scope> {
        let registry = &self.tools;
        if crate::chat::route::told_to_remember(registry, text).is_some() {
            return None;
        }
        if speaks_of_memory(text) && self.config.memory.enabled && self.memory.is_some() {
            return Some(Scope::Memory);
        }
        let first = text.split_whitespace().next().unwrap_or("").to_lowercase();
        let asks = text.contains('?')
            || ASKING.contains(&first.trim_matches(|c: char| !c.is_alphanumeric()));
        if !asks
            || crate::chat::route::is_a_task(text)
            || crate::chat::route::names_a_commit(&text.to_lowercase())
        {
            return None;
        }
        (!self.points_back(text)).then_some(Scope::Workspace)
    }

    /// The index, opened at first use and refreshed (files, history, memories, session
    /// summaries); `None` when it cannot be opened (said once).
    fn evidence_index(&mut self, on_event: &mut dyn FnMut(TurnEvent)) -> Option<()> {
        if self.evidence.is_none() {
            match Index::open(&self.workspace) {
                Ok(index) => self.evidence = Some(index),
                Err(e) => {
                    if !self.evidence_failed {
                        on_event(TurnEvent::Notice(format!("no evidence block: {e}")));
                        self.evidence_failed = true;
                    }
                    return None;
                }
            }
        }
        let memories = self.memory_units();
        let sessions = self.session_units();
        let index = self.evidence.as_mut()?;
        let mut shown = false;
        let refreshed = index.refresh(&mut |done, total| {
            if total >= 200 && !shown {
                on_event(TurnEvent::Notice(format!(
                    "indexing the workspace: {total} files …"
                )));
                shown = true;
            }
            let _ = done;
        });
        let synced = refreshed
            .and_then(|_| index.sync_memories(&memories))
            .and_then(|_| index.sync_sessions(&sessions));
        if let Err(e) = synced {
            tracing::warn!("evidence refresh: {e}");
        }
        Some(())
    }

    /// The active memories as evidence units (their block lines).
    fn memory_units(&self) -> Vec<MemoryUnit> {
        let Some(store) = self.memory.as_ref() else {
            return Vec::new();
        };
        store
            .index()
            .list(false)
            .unwrap_or_default()
            .iter()
            // What onboarding read from the manifests is the files' to say: the files
            // themselves are in the index.
            .filter(|row| !row.tags.split([',', ' ']).any(|t| t.trim() == "manifest"))
            .map(|row| MemoryUnit {
                id: row.id.clone(),
                updated: row.updated,
                text: crate::memory::recall::memory_line(row),
            })
            .collect()
    }

    /// The summarized sessions as evidence units.
    fn session_units(&self) -> Vec<SessionUnit> {
        let Some(sessions) = self.sessions.as_ref() else {
            return Vec::new();
        };
        sessions
            .recent_summarized(10_000)
            .unwrap_or_default()
            .into_iter()
            .map(|s| SessionUnit {
                text: match &s.name {
                    Some(name) => format!("{name}: {}", s.summary),
                    None => s.summary.clone(),
                },
                started: s.started.chars().take(10).collect(),
                file: s.file,
            })
            .collect()
    }
}
