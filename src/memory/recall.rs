//! The one recall path: silos return ranked candidates, [`recall`] merges them (each
//! item once) and packs them into the `[memory context]` block (see [`super::pack`]).
//!
//! A [`Silo`] is anything that can answer a query with ranked, rendered items whose
//! scores are relevance in 0–1 from the shared ranking ([`super::rank`]), so items of
//! different silos compare: the memory store here; session summaries, RAG stores and the
//! knowledge base plug in the same way.

use super::index::Row;
use super::store::{now_unix, MemoryStore, StoreError};
use super::types::MemoryType;
use crate::tokens::TokenCounter;

pub use super::pack::{
    budget, pack, render, Candidate, Injection, Limits, Packed, Section, BLOCK_HEADER,
};

/// Something recall can ask.
pub trait Silo {
    fn name(&self) -> &str;
    /// Candidates for `query`: factual items (if the silo has any; they must not depend
    /// on the query) and relevance hits. An empty query asks for the factual items only.
    fn candidates(&self, query: &str, k: usize) -> Result<Vec<Candidate>, StoreError>;
}

/// Asks every silo and packs the answers into one block.
pub fn recall<C: TokenCounter + ?Sized>(
    silos: &[&dyn Silo],
    query: &str,
    limits: Limits,
    counter: &C,
) -> Result<Injection, StoreError> {
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for silo in silos {
        for c in silo.candidates(query, limits.wanted())? {
            // The same item (or the same chunk text in two RAG stores) enters once.
            if seen.insert(dedup_key(&c)) {
                candidates.push(c);
            }
        }
    }
    Ok(pack(candidates, limits, counter))
}

/// What makes two candidates the same: a memory's id; for sourced lines
/// (`- (rag:…) text`, `- (kb:…) text`) the text after the source.
fn dedup_key(c: &Candidate) -> String {
    match c.text.strip_prefix("- (").and_then(|t| t.split_once(") ")) {
        Some((_, rest)) if c.source != "memory" => format!("{:?}:{rest}", c.section),
        _ => format!("{}:{}", c.source, c.id),
    }
}

/// A memory as one block line: `- description: summary Action: …`.
pub fn memory_line(row: &Row) -> String {
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut line = format!("- {}", flat(&row.description));
    let summary = flat(&row.summary);
    if !summary.is_empty() && summary != flat(&row.description) {
        line.push_str(": ");
        line.push_str(&summary);
    }
    if let Some(action) = row.action.as_deref().map(flat).filter(|a| !a.is_empty()) {
        line.push_str(" Action: ");
        line.push_str(&action);
    }
    line
}

/// Token counts remembered in the index, keyed by the tokenizer's identity (the
/// model file's fingerprint) and a hash of the exact text, so a count is never stale.
/// Tokenizing every candidate line dominated session-start assembly (see
/// `benches/memory_recall.rs`); with the cache, a returning session only tokenizes what
/// is new. A cache failure only costs speed: the count is then computed.
pub struct CostCache<'a, C: TokenCounter + ?Sized> {
    counter: &'a C,
    store: &'a MemoryStore,
    model: String,
    fresh: std::cell::RefCell<Vec<(String, usize)>>,
}

impl<'a, C: TokenCounter + ?Sized> CostCache<'a, C> {
    pub fn new(counter: &'a C, store: &'a MemoryStore, model: &str) -> Self {
        Self {
            counter,
            store,
            model: model.to_string(),
            fresh: std::cell::RefCell::new(Vec::new()),
        }
    }

    fn key(&self, text: &str) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(self.model.as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.finalize()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The counter behind the cache.
    pub fn counter(&self) -> &'a C {
        self.counter
    }

    /// Writes the counts computed since the last save.
    pub fn save(&self) {
        let fresh = std::mem::take(&mut *self.fresh.borrow_mut());
        if let Err(e) = self.store.index().save_costs(&fresh) {
            tracing::warn!("cannot save token counts: {e}");
        }
    }
}

impl<C: TokenCounter + ?Sized> TokenCounter for CostCache<'_, C> {
    fn count_tokens(&self, text: &str) -> usize {
        let key = self.key(text);
        if let Ok(Some(n)) = self.store.index().cached_cost(&key) {
            return n;
        }
        let n = self.counter.count_tokens(text);
        self.fresh.borrow_mut().push((key, n));
        n
    }
}

/// Most factual candidates considered per recall (bounds the work at 100k memories).
const FACTUAL_POOL: usize = 32;

/// The memory store as a silo.
pub struct MemorySilo<'a>(pub &'a MemoryStore);

const FACTUAL: [MemoryType; 2] = [MemoryType::WorkspaceProfile, MemoryType::ProjectFact];

fn section_of(t: MemoryType) -> Section {
    match t {
        MemoryType::WorkspaceProfile => Section::Profile,
        MemoryType::ProjectFact => Section::Facts,
        _ => Section::Experience,
    }
}

impl Silo for MemorySilo<'_> {
    fn name(&self) -> &str {
        "memory"
    }

    fn candidates(&self, query: &str, k: usize) -> Result<Vec<Candidate>, StoreError> {
        let store = self.0;
        let now = now_unix();
        let candidate = |row: &Row, score: f64| Candidate {
            id: row.id.clone(),
            source: "memory".into(),
            section: section_of(row.mtype),
            text: memory_line(row),
            score,
            written: row.updated,
        };
        // Factual: by confidence and recency, not by the query, so this part of the
        // block is the same for every first message and can be cached as a prefix.
        let top = store
            .index()
            .top(&FACTUAL, now, FACTUAL_POOL)
            .map_err(|source| StoreError::Index {
                path: store.dir().join(crate::memory::location::INDEX_FILE),
                source,
            })?;
        let mut out: Vec<Candidate> = top
            .iter()
            .map(|row| {
                candidate(
                    row,
                    store.ranking().prior(1.0, row.confidence, row.updated, now),
                )
            })
            .collect();
        if query.is_empty() {
            return Ok(out);
        }
        // Relevance over every type: a project fact that matches the query is found even
        // outside the factual pool (a duplicate of a pooled one is dropped by `recall`).
        out.extend(
            store
                .search(query, &[], k)?
                .iter()
                .map(|h| candidate(&h.row, h.score)),
        );
        Ok(out)
    }
}
