//! The one recall path as the session uses it: the `[memory context]` pinned at the
//! first message, `/memory recall` and `harvey memory recall` (all through
//! [`App::recall_with`] and `sources::Sources`), the stable part cached with the system
//! prompt, and which RAG stores take part.

use super::App;
use crate::memory::recall::{budget, CostCache, Injection, Limits};
use crate::memory::MemoryStore;
use crate::rag::RagStore;

impl App {
    /// Recalls memories for the session's first message and pins them as the
    /// `[memory context]` block (once per session; it stays fixed so the KV cache
    /// survives). `None` when memory or injection is off, or nothing could be recalled.
    /// The `[workspace files]` map goes first in the same block, memory or not.
    pub fn inject_memory(&mut self, query: &str) -> Option<&Injection> {
        let map = self.workspace_map_text();
        self.conversation.set_context(Some(map.clone()));
        let m = &self.config.memory;
        if !(m.enabled && m.inject_on_start) {
            return None;
        }
        let store = self.memory.as_ref()?;
        let injection = match self.recall(store, query, None) {
            Ok(i) => i,
            Err(e) => {
                self.notices.push(format!("memory recall failed: {e}"));
                return None;
            }
        };
        self.conversation
            .set_context(Some(format!("{map}{}", injection.text)));
        self.injection = Some(injection);
        self.injection.as_ref().filter(|i| !i.items.is_empty())
    }

    /// The one recall path: memories, recent sessions, the active RAG stores and the
    /// knowledge base, packed in one ranked list under `budget` tokens (default:
    /// `floor(n_ctx × memory.budget_pct)` of the live context).
    pub fn recall(
        &self,
        store: &MemoryStore,
        query: &str,
        budget_tokens: Option<usize>,
    ) -> Result<Injection, crate::memory::StoreError> {
        let m = &self.config.memory;
        let limits = Limits::budgeted(
            budget_tokens.unwrap_or_else(|| self.memory_budget()),
            m.factual_share,
        );
        self.recall_with(store, query, limits)
    }

    /// [`Self::recall`] under any limits (a list of k items for `/memory recall`).
    pub fn recall_with(
        &self,
        store: &MemoryStore,
        query: &str,
        limits: Limits,
    ) -> Result<Injection, crate::memory::StoreError> {
        let costs = CostCache::new(self.engine.as_ref(), store, &self.engine.info().fingerprint);
        let injection = self.sources(store).recall(query, limits, &costs);
        costs.save();
        injection
    }

    /// Every source recall draws from in this session.
    pub fn sources<'a>(&'a self, store: &'a MemoryStore) -> crate::sources::Sources<'a> {
        let rag: &[RagStore] = if self.rag_enabled { &self.rag } else { &[] };
        crate::sources::Sources::new(
            &self.config.memory,
            Some(store),
            self.sessions.as_ref(),
            rag,
            self.kb.as_ref(),
        )
    }

    /// Re-reads which RAG stores recall uses (after `/rag use|on|off|drop`); returns
    /// problems to show.
    pub fn reload_rag(&mut self) -> Vec<String> {
        let (stores, enabled, notes) = crate::rag::open_active(
            &self.workspace.join("agents"),
            &self.config.memory.rag,
            self.embedder.as_ref(),
        );
        self.rag = stores;
        self.rag_enabled = enabled;
        notes
    }

    /// The part of the `[memory context]` that does not depend on the first message
    /// (workspace profile and project facts): the session's first message extends it,
    /// so it can be cached with the system prompt as the stable prefix. Recent session
    /// summaries come right after it: they change whenever a session ends, so caching
    /// them would invalidate the saved prefix every time.
    /// The `[workspace files]` map comes first: it is part of the cached prefix.
    pub fn stable_memory_context(&self) -> String {
        format!("{}{}", self.workspace_map_text(), self.stable_memory())
    }

    fn stable_memory(&self) -> String {
        let m = &self.config.memory;
        match (&self.memory, m.enabled && m.inject_on_start) {
            (Some(store), true) => {
                let text = self
                    .recall(store, "", None)
                    .map(|i| i.text)
                    .unwrap_or_default();
                // Recent sessions change at every session end: they follow the cached part.
                let header = format!("{}\n", crate::memory::Section::Sessions.header());
                let stable = match text.find(&header) {
                    Some(at) => &text[..at],
                    None => &text,
                };
                // A header alone is not worth a different cache key.
                if stable.trim() == crate::memory::recall::BLOCK_HEADER {
                    String::new()
                } else {
                    stable.to_string()
                }
            }
            _ => String::new(),
        }
    }

    /// `floor(n_ctx × memory.budget_pct)`, from the live context, or less where the
    /// fixed prompt's cap (`engine.fixed_prompt_pct`) leaves less after the system prompt
    /// and the workspace map — but never under a quarter of it: memory is what harvey is
    /// for, and a window too small for its own instructions still remembers a little
    /// (the notice of [`Self::over_fixed_cap`] says the cap is passed).
    pub fn memory_budget(&self) -> usize {
        let own = budget(self.engine.info().n_ctx, self.config.memory.budget_pct);
        own.min(self.fixed_room().max(own / 4))
    }

    /// What to tell the user when the prompt before the first message is over
    /// `engine.fixed_prompt_pct` even without memory (instructions, tools, guidance and
    /// the map alone): `None` when it fits.
    pub fn over_fixed_cap(&self) -> Option<String> {
        let parts = self.context_parts().ok()?;
        (parts.fixed > parts.fixed_cap).then(|| {
            format!(
                "the prompt before your first message takes {} tokens, {:.0}% of n_ctx {} \
                 (engine.fixed_prompt_pct allows {}): a long HARVEY.md/AGENTS.md, \
                 tools.schemas: template or a small n_ctx leave little room for the \
                 conversation; /context shows each part",
                parts.fixed,
                100.0 * parts.fixed as f64 / parts.n_ctx.max(1) as f64,
                parts.n_ctx,
                parts.fixed_cap
            )
        })
    }

    /// `floor(n_ctx × engine.fixed_prompt_pct)`: what everything before the first message
    /// may take.
    pub fn fixed_cap(&self) -> usize {
        budget(
            self.engine.info().n_ctx,
            self.config.engine.fixed_prompt_pct,
        )
    }

    /// What the fixed prompt's cap leaves for the memory context: the cap less the system
    /// prompt and the context block holding only the map (its framing counted), exact.
    fn fixed_room(&self) -> usize {
        let map = self.workspace_map_text();
        let probe = [
            crate::engine::Message::new(crate::engine::Role::System, self.conversation.system()),
            self.conversation.context_message(&map),
        ];
        // Memory text joined to the map's may tokenize a little longer than apart.
        const JOIN_MARGIN: usize = 8;
        let taken = match self.engine.count_prompt(&probe) {
            Ok(taken) => taken,
            // A template that cannot render a system turn alone (Gemma folds it into the
            // first user turn): the system text and the map, counted plainly.
            Err(_) => {
                self.engine.count_tokens(self.conversation.system())
                    + self.engine.count_tokens(&map)
            }
        };
        self.fixed_cap().saturating_sub(taken + JOIN_MARGIN)
    }
}
