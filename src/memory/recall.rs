//! The one recall path: silos return ranked candidates, packing fits them into an exact
//! token budget, and the result is the `[memory context]` block.
//!
//! A [`Silo`] is anything that can answer a query with ranked, rendered items: the memory
//! store here; RAG stores and the knowledge base plug in the same way. Packing puts
//! factual items (workspace profile, project facts) first under their own cap, then the
//! best remaining items that fit; an item that does not fit is skipped and packing goes
//! on. Every cost is counted with the loaded model's tokenizer, and the final block is
//! counted again as a whole, so the reported number is exactly what the model gets.

use serde::Serialize;

use super::index::Row;
use super::query::fts_query;
use super::store::{now_unix, MemoryStore, StoreError};
use super::types::MemoryType;
use crate::tokens::TokenCounter;

/// Where an item goes in the block (the order of the variants is the block's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Profile,
    Facts,
    /// Summaries of the last sessions (query-independent, like the facts).
    Sessions,
    Experience,
    Knowledge,
}

impl Section {
    pub fn header(self) -> &'static str {
        match self {
            Section::Profile => "[workspace profile]",
            Section::Facts => "[project facts]",
            Section::Sessions => "[recent sessions]",
            Section::Experience => "[relevant experience]",
            Section::Knowledge => "[knowledge]",
        }
    }

    /// Factual sections share the factual cap, come first and do not depend on the query.
    pub fn is_factual(self) -> bool {
        matches!(self, Section::Profile | Section::Facts | Section::Sessions)
    }
}

/// The first line of the block.
pub const BLOCK_HEADER: &str = "[memory context]";

/// One recallable item, rendered as it will appear in the block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub id: String,
    /// Which silo it came from (`memory`, a RAG store, `knowledge`).
    pub source: String,
    pub section: Section,
    /// The item's line(s) in the block, without the trailing newline.
    pub text: String,
    /// Larger is better; comparable within one silo.
    pub score: f64,
}

/// Something recall can ask.
pub trait Silo {
    fn name(&self) -> &str;
    /// Candidates for `query`: factual items (if the silo has any; they must not depend
    /// on the query) and relevance hits. An empty query asks for the factual items only.
    fn candidates(&self, query: &str, k: usize) -> Result<Vec<Candidate>, StoreError>;
}

/// An item that made it into the block, with its exact token cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Packed {
    #[serde(flatten)]
    pub candidate: Candidate,
    pub tokens: usize,
}

/// The assembled `[memory context]` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Injection {
    /// The exact text injected (empty when nothing was recalled).
    pub text: String,
    /// Tokens of `text` by the model's tokenizer.
    pub tokens: usize,
    pub budget: usize,
    pub items: Vec<Packed>,
    /// Candidates that did not fit.
    pub skipped: usize,
}

impl Injection {
    /// `memory: 7 items, 312/1024 tokens`
    pub fn summary_line(&self) -> String {
        let n = self.items.len();
        let s = if n == 1 { "" } else { "s" };
        format!(
            "memory: {n} item{s}, {}/{} tokens",
            self.tokens, self.budget
        )
    }
}

/// Budget for the block: `floor(n_ctx × budget_pct)`.
pub fn budget(n_ctx: u32, budget_pct: f64) -> usize {
    (f64::from(n_ctx) * budget_pct.clamp(0.0, 1.0)).floor() as usize
}

/// How packing is limited.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub budget: usize,
    /// Share of the budget factual items may use.
    pub factual_share: f64,
    /// Most non-factual items.
    pub max_relevant: usize,
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
        for c in silo.candidates(query, limits.max_relevant)? {
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

/// Packs candidates best-first: factual ones under `factual_share × budget`, then the
/// rest into what remains. A candidate that does not fit is skipped; packing goes on.
pub fn pack<C: TokenCounter + ?Sized>(
    mut candidates: Vec<Candidate>,
    limits: Limits,
    counter: &C,
) -> Injection {
    candidates.sort_by(|a, b| {
        b.section
            .is_factual()
            .cmp(&a.section.is_factual())
            .then(b.score.total_cmp(&a.score))
    });
    let line_cost = |text: &str| counter.count_tokens(&format!("{text}\n"));
    let header_cost = line_cost(BLOCK_HEADER);
    let factual_cap =
        (limits.budget as f64 * limits.factual_share.clamp(0.0, 1.0)).floor() as usize;
    let mut used = header_cost;
    let mut factual_used = 0;
    let mut relevant = 0;
    let mut opened: Vec<Section> = Vec::new();
    let mut chosen: Vec<Packed> = Vec::new();
    let mut skipped = 0;
    for c in candidates {
        let factual = c.section.is_factual();
        if !factual && relevant >= limits.max_relevant {
            skipped += 1;
            continue;
        }
        let header = if opened.contains(&c.section) {
            0
        } else {
            line_cost(c.section.header())
        };
        let cost = line_cost(&c.text);
        let fits_total = used + header + cost <= limits.budget;
        let fits_factual = !factual || factual_used + header + cost <= factual_cap;
        if !(fits_total && fits_factual) {
            skipped += 1;
            continue;
        }
        used += header + cost;
        if factual {
            factual_used += header + cost;
        } else {
            relevant += 1;
        }
        if header > 0 {
            opened.push(c.section);
        }
        chosen.push(Packed {
            candidate: c,
            tokens: cost,
        });
    }
    // Tokenizing pieces and the whole can differ by a merge at a boundary: the
    // whole is what counts, so drop the weakest items until it fits.
    loop {
        let text = render(&chosen);
        let tokens = if text.is_empty() {
            0
        } else {
            counter.count_tokens(&text)
        };
        if tokens <= limits.budget || chosen.is_empty() {
            return Injection {
                text,
                tokens,
                budget: limits.budget,
                items: chosen,
                skipped,
            };
        }
        // Relevant items go first, so the factual part (the cached prefix) stays put.
        let weakest = chosen
            .iter()
            .enumerate()
            .min_by(|a, b| {
                let key = |p: &Packed| (!p.candidate.section.is_factual(), p.candidate.score);
                let (fa, sa) = key(a.1);
                let (fb, sb) = key(b.1);
                fb.cmp(&fa).then(sa.total_cmp(&sb))
            })
            .map_or(0, |(i, _)| i);
        chosen.remove(weakest);
        skipped += 1;
    }
}

/// The block text: header, then each non-empty section with its items in rank order.
pub fn render(items: &[Packed]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut text = format!("{BLOCK_HEADER}\n");
    for section in [
        Section::Profile,
        Section::Facts,
        Section::Sessions,
        Section::Experience,
        Section::Knowledge,
    ] {
        let mut lines = items
            .iter()
            .filter(|p| p.candidate.section == section)
            .peekable();
        if lines.peek().is_none() {
            continue;
        }
        text.push_str(section.header());
        text.push('\n');
        for p in lines {
            text.push_str(&p.candidate.text);
            text.push('\n');
        }
    }
    text
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

/// Relevance combined with confidence and recency. `relevance` is in 0–1 (bm25
/// normalized by the best hit); confidence 0.5 and a fresh memory leave it unchanged.
pub fn combine(relevance: f64, confidence: f64, updated: i64, now: i64) -> f64 {
    let age_days = ((now - updated).max(0) as f64) / 86_400.0;
    let recency = 0.5_f64.powf(age_days / 180.0);
    relevance * (0.5 + confidence) * (0.8 + 0.2 * recency)
}

/// A ranked memory hit (the `recall` command's answer, without a budget).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub row: Row,
    pub score: f64,
}

/// Most factual candidates considered per recall (bounds the work at 100k memories).
const FACTUAL_POOL: usize = 32;

/// Vector hits below this cosine similarity are noise for a MiniLM-class model (unrelated
/// sentences land around 0.0–0.2) and are not fused.
pub const MIN_COSINE: f32 = 0.3;

/// Relevance from fused ranks, in 0–1: `1.0` for an item first in both lists.
pub fn fused_relevance(score: f64, lists: usize) -> f64 {
    (score / crate::vector::rrf_max(lists.max(1))).clamp(0.0, 1.0)
}

impl MemoryStore {
    /// Ranked hits among recallable memories of `types` (all when empty): full text, and
    /// when the store has an embedder, the nearest vectors too, fused by reciprocal rank.
    pub fn search(
        &self,
        query: &str,
        types: &[MemoryType],
        k: usize,
    ) -> Result<Vec<Hit>, StoreError> {
        let now = now_unix();
        // Fetch more than k so confidence and recency can reorder near-ties.
        let pool = k.saturating_mul(3).max(k);
        let db_err = |source| StoreError::Index {
            path: self.dir().join("memories.db"),
            source,
        };
        let lexical = match fts_query(query) {
            Some(fts) => self
                .index()
                .search(&fts, types, now, pool)
                .map_err(db_err)?,
            None => Vec::new(),
        };
        let nearest = self.nearest(query, types, now, pool)?;
        let mut hits: Vec<Hit> = if nearest.is_empty() {
            let best = lexical.iter().map(|(_, rel)| *rel).fold(0.0_f64, f64::max);
            lexical
                .into_iter()
                .map(|(row, rel)| {
                    let relevance = if best > 0.0 { rel / best } else { 0.0 };
                    let score = combine(relevance, row.confidence, row.updated, now);
                    Hit { row, score }
                })
                .collect()
        } else {
            let ids = |l: &[(Row, f64)]| l.iter().map(|(r, _)| r.id.clone()).collect::<Vec<_>>();
            let lists = vec![
                ids(&lexical),
                nearest.iter().map(|(id, _)| id.clone()).collect(),
            ];
            let mut rows: std::collections::HashMap<String, Row> = lexical
                .into_iter()
                .map(|(row, _)| (row.id.clone(), row))
                .collect();
            let mut out = Vec::new();
            for (id, fused) in crate::vector::rrf(&lists) {
                let row = match rows.remove(&id) {
                    Some(row) => row,
                    None => match self.index().get(&id).map_err(db_err)? {
                        Some(row) => row,
                        None => continue,
                    },
                };
                let score = combine(fused_relevance(fused, 2), row.confidence, row.updated, now);
                out.push(Hit { row, score });
            }
            out
        };
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.row.id.cmp(&b.row.id)));
        hits.truncate(k);
        Ok(hits)
    }

    /// The vector half of [`Self::search`]: empty without an embedder, for an empty
    /// query, or when embedding fails (then full text answers alone, with a warning).
    fn nearest(
        &self,
        query: &str,
        types: &[MemoryType],
        now: i64,
        k: usize,
    ) -> Result<Vec<(String, f32)>, StoreError> {
        let Some(embedder) = self.embedder() else {
            return Ok(Vec::new());
        };
        if query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let q = match embedder.embed(&[query]) {
            Ok(mut v) if !v.is_empty() => v.swap_remove(0),
            Ok(_) => return Ok(Vec::new()),
            Err(e) => {
                tracing::warn!("{e}; recall uses full text only");
                return Ok(Vec::new());
            }
        };
        let found = self
            .index()
            .vector_search(&q, embedder.model_id(), types, now, k)
            .map_err(|source| StoreError::Index {
                path: self.dir().join("memories.db"),
                source,
            })?;
        Ok(found
            .into_iter()
            .filter(|(_, s)| *s >= MIN_COSINE)
            .collect())
    }
}

/// Token counts remembered in `memories.db`, keyed by the tokenizer's identity (the
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

/// The memory store as a silo.
pub struct MemorySilo<'a>(pub &'a MemoryStore);

const FACTUAL: [MemoryType; 2] = [MemoryType::WorkspaceProfile, MemoryType::ProjectFact];
const EXPERIENTIAL: [MemoryType; 3] = [
    MemoryType::ToolUse,
    MemoryType::Workflow,
    MemoryType::UserPreference,
];

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
        };
        // Factual: by confidence and recency, not by the query, so this part of the
        // block is the same for every first message and can be cached as a prefix.
        let top = store
            .index()
            .top(&FACTUAL, now, FACTUAL_POOL)
            .map_err(|source| StoreError::Index {
                path: store.dir().join("memories.db"),
                source,
            })?;
        let mut out: Vec<Candidate> = top
            .iter()
            .map(|row| candidate(row, combine(1.0, row.confidence, row.updated, now)))
            .collect();
        if query.is_empty() {
            return Ok(out);
        }
        out.extend(
            store
                .search(query, &EXPERIENTIAL, k.saturating_mul(2))?
                .iter()
                .map(|h| candidate(&h.row, h.score)),
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::WordCounter;

    fn c(id: &str, section: Section, words: usize, score: f64) -> Candidate {
        let text = format!("- {id} {}", vec!["w"; words.saturating_sub(2)].join(" "));
        Candidate {
            id: id.into(),
            source: "memory".into(),
            section,
            text: text.trim_end().to_string(),
            score,
        }
    }

    fn limits(budget: usize) -> Limits {
        Limits {
            budget,
            factual_share: 0.5,
            max_relevant: 5,
        }
    }

    #[test]
    fn a_large_factual_item_does_not_starve_smaller_relevant_ones() {
        let candidates = vec![
            c("huge_fact", Section::Facts, 80, 5.0),
            c("small_fact", Section::Facts, 5, 4.0),
            c("exp1", Section::Experience, 6, 0.9),
            c("exp2", Section::Experience, 6, 0.8),
        ];
        let inj = pack(candidates, limits(60), &WordCounter);
        let ids: Vec<&str> = inj.items.iter().map(|p| p.candidate.id.as_str()).collect();
        assert_eq!(ids, vec!["small_fact", "exp1", "exp2"]);
        assert_eq!(inj.skipped, 1);
        assert!(inj.tokens <= 60);
        assert_eq!(inj.tokens, WordCounter.count_tokens(&inj.text));
    }

    #[test]
    fn an_item_that_does_not_fit_is_skipped_not_a_stop() {
        let candidates = vec![
            c("a", Section::Experience, 10, 0.9),
            c("too_big", Section::Experience, 40, 0.8),
            c("b", Section::Experience, 10, 0.7),
        ];
        let inj = pack(candidates, limits(30), &WordCounter);
        let ids: Vec<&str> = inj.items.iter().map(|p| p.candidate.id.as_str()).collect();
        assert_eq!(ids, vec!["a", "b"]);
        assert!(inj
            .text
            .starts_with("[memory context]\n[relevant experience]\n- a"));
    }

    #[test]
    fn sections_come_in_block_order_and_respect_the_factual_cap() {
        let candidates = vec![
            c("exp", Section::Experience, 4, 9.0),
            c("fact1", Section::Facts, 10, 2.0),
            c("fact2", Section::Facts, 10, 1.0),
            c("profile", Section::Profile, 4, 0.1),
        ];
        let inj = pack(candidates, limits(40), &WordCounter);
        // Factual cap 20: profile (4 + header 2) + fact1 (10 + header 2) = 18; fact2 no.
        let ids: Vec<&str> = inj.items.iter().map(|p| p.candidate.id.as_str()).collect();
        assert!(ids.contains(&"profile") && ids.contains(&"fact1") && !ids.contains(&"fact2"));
        let order: Vec<usize> = [
            "[workspace profile]",
            "[project facts]",
            "[relevant experience]",
        ]
        .iter()
        .map(|h| inj.text.find(h).unwrap())
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{}", inj.text);
    }

    #[test]
    fn relevant_items_are_capped_at_max_relevant() {
        let candidates = (0..10)
            .map(|i| {
                c(
                    &format!("e{i}"),
                    Section::Experience,
                    3,
                    1.0 - f64::from(i) / 10.0,
                )
            })
            .collect();
        let inj = pack(candidates, limits(1000), &WordCounter);
        assert_eq!(inj.items.len(), 5);
        assert_eq!(inj.skipped, 5);
    }

    #[test]
    fn nothing_recalled_means_no_block() {
        let inj = pack(Vec::new(), limits(100), &WordCounter);
        assert_eq!(inj.text, "");
        assert_eq!(inj.tokens, 0);
    }

    #[test]
    fn budget_is_floor_of_the_share() {
        assert_eq!(budget(4096, 0.25), 1024);
        assert_eq!(budget(2049, 0.25), 512);
        assert_eq!(budget(1000, 2.0), 1000);
    }

    #[test]
    fn recency_and_confidence_adjust_relevance() {
        let now = 1_000_000_000;
        let fresh = combine(1.0, 0.5, now, now);
        let old = combine(1.0, 0.5, now - 365 * 86_400, now);
        let confident = combine(1.0, 0.9, now, now);
        assert!((fresh - 1.0).abs() < 1e-9);
        assert!(old < fresh && confident > fresh);
    }
}
