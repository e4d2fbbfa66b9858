//! The one recall path over every source: memories, recent session summaries, the RAG
//! stores in use and the knowledge base's current project. The session start, `/memory
//! recall`, `harvey memory recall` (with and without `--budget`, batch or not) and
//! `/memory status` all call [`Sources::recall`], so the same query gives the same
//! ranking everywhere; only [`Limits`] differ (a budget, or a list of k items). The
//! model's `memory_search` tool asks it too, through [`Opened`]: the same sources opened
//! from disk as the session and `harvey memory recall` open them.

use std::path::Path;
use std::sync::Arc;

use crate::config::MemoryConfig;
use crate::kb::{KbSilo, KnowledgeBase};
use crate::memory::recall::{recall, Injection, Limits, MemorySilo, Silo};
use crate::memory::{MemoryStore, StoreError};
use crate::rag::{RagSilo, RagStore};
use crate::session::index::{SessionIndex, SessionSilo};
use crate::tokens::{Embedder, TokenCounter};

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

/// The sources beside the memory store, opened from disk: the RAG stores in use (none
/// when `/rag off`), the knowledge base's project and the sessions index. Problems are
/// returned as notes (this module never prints); a source that cannot be opened is left
/// out.
pub struct Opened {
    pub rag: Vec<RagStore>,
    pub kb: Option<KnowledgeBase>,
    pub sessions: Option<SessionIndex>,
}

impl Opened {
    pub fn open(
        workspace: &Path,
        config: &MemoryConfig,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> (Self, Vec<String>) {
        let agents = workspace.join("agents");
        let (rag, enabled, mut notes) =
            crate::rag::open_active(&agents, &config.rag, embedder.as_ref());
        // A knowledge base that was never made has nothing to recall: opening it would
        // create it, and a search must not write.
        let kb_exists = crate::kb::import::own_path(&agents).exists()
            || agents.join(crate::kb::import::GO_FILE).exists();
        let kb = if config.knowledge_base.enabled && kb_exists {
            let project =
                crate::kb::default_project(config.knowledge_base.project.as_deref(), workspace);
            match KnowledgeBase::open(&agents, &project, embedder) {
                Ok(kb) => {
                    if kb.is_foreign() {
                        notes.push(crate::kb::FOREIGN_NOTE.into());
                    }
                    Some(kb)
                }
                Err(e) => {
                    notes.push(format!("knowledge base unavailable: {e}"));
                    None
                }
            }
        } else {
            None
        };
        let sessions = match SessionIndex::open(&agents) {
            Ok(index) => {
                let _ = index.reconcile();
                Some(index)
            }
            Err(e) => {
                notes.push(format!("sessions index unavailable: {e}"));
                None
            }
        };
        let rag = if enabled { rag } else { Vec::new() };
        (Self { rag, kb, sessions }, notes)
    }

    /// Maps and checks the vector copies of the RAG stores and the knowledge base ahead
    /// of the first recall (see `vector::VectorCache::warm`): a session start does it
    /// while the embedder loads. How many are ready.
    pub fn warm(&self) -> usize {
        self.rag.iter().filter(|r| r.warm()).count()
            + self.kb.as_ref().is_some_and(KnowledgeBase::warm) as usize
    }

    /// Every source, with `store`, as the session start sees them.
    pub fn sources<'a>(&'a self, config: &MemoryConfig, store: &'a MemoryStore) -> Sources<'a> {
        Sources::new(
            config,
            Some(store),
            self.sessions.as_ref(),
            &self.rag,
            self.kb.as_ref(),
        )
    }
}
