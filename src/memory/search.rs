//! Relevance search over the memory index: a full-text list and (with an embedder) a
//! vector list, fused by the shared [`Ranking`], then the confidence and recency priors.

use std::collections::HashMap;

use super::index::Row;
use super::lexical::DocMeta;
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
        let lexical: Vec<(DocMeta, f64)> = if ranking.uses_lexical() {
            self.index()
                .search(query, types, now, pool)
                .map_err(|e| self.index_error(e))?
        } else {
            Vec::new()
        };
        let nearest = if ranking.uses_vectors() {
            ranking.keep_similar(self.nearest(query, types, now, pool)?)
        } else {
            Vec::new()
        };
        let lexical_ids: Vec<(String, f64)> =
            lexical.iter().map(|(d, s)| (d.id.clone(), *s)).collect();
        let mut metas: HashMap<String, DocMeta> = lexical
            .into_iter()
            .map(|(d, _)| (d.id.clone(), d))
            .collect();
        let mut scored = Vec::new();
        for (id, relevance) in ranking.fuse(&lexical_ids, &nearest) {
            let meta = match metas.remove(&id) {
                Some(meta) => meta,
                None => match self.index().meta(&id).map_err(|e| self.index_error(e))? {
                    Some(meta) => meta,
                    None => continue,
                },
            };
            let score = ranking.prior(relevance, meta.confidence, meta.updated, now);
            scored.push((meta.id, score));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        let mut hits = Vec::with_capacity(scored.len());
        for (id, score) in scored {
            if let Some(row) = self.index().get(&id).map_err(|e| self.index_error(e))? {
                hits.push(Hit { row, score });
            }
        }
        Ok(hits)
    }

    fn index_error(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Index {
            path: self.dir().join(crate::memory::location::INDEX_FILE),
            source,
        }
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
            .map_err(|e| self.index_error(e))
    }
}
