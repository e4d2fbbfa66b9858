//! The one recall path over every source: memories, recent session summaries, the RAG
//! stores in use and the knowledge base's current project. The session start, `/memory
//! recall`, `harvey memory recall` (with and without `--budget`, batch or not) and
//! `/memory status` all call [`Sources::recall`], so the same query gives the same
//! ranking everywhere; only [`Limits`] differ (a budget, or a list of k items).

use crate::config::MemoryConfig;
use crate::kb::{KbSilo, KnowledgeBase};
use crate::memory::recall::{recall, Injection, Limits, MemorySilo, Silo};
use crate::memory::{MemoryStore, StoreError};
use crate::rag::{RagSilo, RagStore};
use crate::session::index::{SessionIndex, SessionSilo};
use crate::tokens::TokenCounter;

/// What recall may draw from (each part optional).
pub struct Sources<'a> {
    pub memory: Option<&'a MemoryStore>,
    pub sessions: Option<&'a SessionIndex>,
    /// The RAG stores in use (empty when `/rag off`).
    pub rag: &'a [RagStore],
    pub kb: Option<&'a KnowledgeBase>,
    /// `memory.recent_sessions`.
    pub recent_sessions: usize,
    /// `memory.rag.top_k`.
    pub rag_top_k: usize,
}

impl<'a> Sources<'a> {
    /// The sources a memory config enables, from what is open.
    pub fn new(
        config: &MemoryConfig,
        memory: Option<&'a MemoryStore>,
        sessions: Option<&'a SessionIndex>,
        rag: &'a [RagStore],
        kb: Option<&'a KnowledgeBase>,
    ) -> Self {
        Self {
            memory,
            sessions,
            rag,
            kb: kb.filter(|_| config.knowledge_base.enabled),
            recent_sessions: config.recent_sessions,
            rag_top_k: config.rag.top_k,
        }
    }

    /// Asks every source and packs one ranked list under `limits`.
    pub fn recall<C: TokenCounter + ?Sized>(
        &self,
        query: &str,
        limits: Limits,
        counter: &C,
    ) -> Result<Injection, StoreError> {
        let memory = self.memory.map(MemorySilo);
        let recent = self.sessions.map(|index| SessionSilo {
            index,
            recent: self.recent_sessions,
        });
        let rag: Vec<RagSilo<'_>> = self
            .rag
            .iter()
            .map(|s| RagSilo::new(s, self.rag_top_k))
            .collect();
        let kb = self.kb.map(KbSilo);
        let mut silos: Vec<&dyn Silo> = Vec::new();
        if let Some(m) = &memory {
            silos.push(m);
        }
        if let Some(r) = &recent {
            silos.push(r);
        }
        silos.extend(rag.iter().map(|r| r as &dyn Silo));
        if let Some(k) = &kb {
            silos.push(k);
        }
        recall(&silos, query, limits, counter)
    }

    /// Names of the sources in use (for `/memory status`).
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.memory.is_some() {
            out.push("memories".to_string());
        }
        if self.sessions.is_some() && self.recent_sessions > 0 {
            out.push(format!("recent sessions ({})", self.recent_sessions));
        }
        out.extend(self.rag.iter().map(|s| format!("rag:{}", s.name())));
        if let Some(kb) = self.kb {
            out.push(format!("kb:{}", kb.current_project().unwrap_or_default()));
        }
        out
    }
}
