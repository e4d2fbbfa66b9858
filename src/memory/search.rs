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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::types::Draft;

    fn draft(description: &str) -> Draft {
        serde_json::from_value(serde_json::json!({"type": "workflow", "description": description}))
            .unwrap()
    }

    fn ids(store: &MemoryStore, query: &str) -> Vec<String> {
        let hits = store.search(query, &[], 10).unwrap();
        hits.into_iter().map(|h| h.row.description).collect()
    }

    #[test]
    fn postings_follow_writes_and_ignore_token_count_caching() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = MemoryStore::open(&dir.path().join("agents"), dir.path()).unwrap();
        store
            .write(&draft("The pump needs priming before the first run"))
            .unwrap();
        assert_eq!(
            ids(&store, "priming the pump"),
            ["The pump needs priming before the first run"]
        );
        let before = store.index().generation().unwrap();
        store.index().save_costs(&[("k".into(), 3)]).unwrap();
        assert_eq!(
            store.index().generation().unwrap(),
            before,
            "token counts change nothing"
        );
        // Written through another connection, as another process would.
        let mut other = MemoryStore::open(&dir.path().join("agents"), dir.path())
            .unwrap()
            .0;
        other
            .write(&draft("The valve sticks when the pump is cold"))
            .unwrap();
        drop(other);
        assert!(store.index().generation().unwrap() > before);
        let found = store.search("valve", &[], 10).unwrap();
        assert_eq!(
            found.len(),
            1,
            "another connection's memory is found at once"
        );
        store.forget(&found[0].row.id).unwrap();
        assert!(
            ids(&store, "valve").is_empty(),
            "a forgotten memory is gone at once"
        );
    }
}
