//! Relevance search over the memory index: a full-text list and (with an embedder) a
//! vector list, fused by the shared [`Ranking`], then the confidence and recency priors.

use std::collections::HashMap;

use super::index::Row;
use super::query::fts_query;
use super::store::{now_unix, MemoryStore, StoreError};
use super::types::MemoryType;

/// A ranked memory hit: `score` is relevance in 0–1 after the priors.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub row: Row,
    pub score: f64,
}

impl MemoryStore {
    /// Ranked hits among recallable memories of `types` (all when empty), best first.
    pub fn search(
        &self,
        query: &str,
        types: &[MemoryType],
        k: usize,
    ) -> Result<Vec<Hit>, StoreError> {
        let ranking = *self.ranking();
        let now = now_unix();
        let pool = ranking.pool(k);
        let db_err = |source| StoreError::Index {
            path: self.dir().join(crate::memory::location::INDEX_FILE),
            source,
        };
        let lexical: Vec<(Row, f64)> = match fts_query(query).filter(|_| ranking.uses_lexical()) {
            Some(fts) => self
                .index()
                .search(&fts, types, now, pool)
                .map_err(db_err)?,
            None => Vec::new(),
        };
        let nearest = if ranking.uses_vectors() {
            ranking.keep_similar(self.nearest(query, types, now, pool)?)
        } else {
            Vec::new()
        };
        let lexical_ids: Vec<(String, f64)> =
            lexical.iter().map(|(r, s)| (r.id.clone(), *s)).collect();
        let mut rows: HashMap<String, Row> = lexical
            .into_iter()
            .map(|(r, _)| (r.id.clone(), r))
            .collect();
        let mut hits = Vec::new();
        for (id, relevance) in ranking.fuse(&lexical_ids, &nearest) {
            let row = match rows.remove(&id) {
                Some(row) => row,
                None => match self.index().get(&id).map_err(db_err)? {
                    Some(row) => row,
                    None => continue,
                },
            };
            let score = ranking.prior(relevance, row.confidence, row.updated, now);
            hits.push(Hit { row, score });
        }
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
        let Some(q) = crate::tokens::embed_query(embedder.as_ref(), query, "recall") else {
            return Ok(Vec::new());
        };
        self.index()
            .vector_search(&q, embedder.model_id(), types, now, k)
            .map_err(|source| StoreError::Index {
                path: self.dir().join(crate::memory::location::INDEX_FILE),
                source,
            })
    }
}
