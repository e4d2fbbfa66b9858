//! Relevance search over the memory index: a full-text list and (with an embedder) a
//! vector list, fused by the shared [`Ranking`], then the confidence and recency priors.

use std::collections::HashMap;

use super::index::{Row, Scope};
use super::lexical::DocMeta;
use super::rank::Ranking;
use super::store::{now_unix, MemoryStore, StoreError};
use super::types::MemoryType;
use super::when::{self, Window};

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
        // A date the query names is matched against when memories were said; its words
        // leave the full-text query (the embedding keeps the whole question).
        let dated = (ranking.date_weight > 0.0)
            .then(|| when::dated(query, now))
            .flatten();
        let words = dated.as_ref().map_or(query, |d| d.rest.as_str());
        let window = dated.as_ref().map(|d| &d.window);
        let scope = Scope {
            types,
            now,
            within: &|_| true,
        };
        let lexical = if ranking.uses_lexical() {
            self.lexical(words, &[], &scope, window, pool)?
        } else {
            Vec::new()
        };
        tracing::debug!("phase: full text (first pass)");
        let nearest = if ranking.uses_vectors() {
            ranking.keep_similar(self.nearest(query, types, now, pool)?)
        } else {
            Vec::new()
        };
        tracing::debug!("phase: vectors");
        let mut scored = self.fused(&ranking, lexical, &nearest, now, window)?;
        if ranking.uses_lexical() && ranking.feedback.is_on() && !scored.is_empty() {
            let mut texts = Vec::new();
            for (id, _) in scored.iter().take(ranking.feedback.docs) {
                if let Some(row) = self.index().get(id).map_err(|e| self.index_error(e))? {
                    texts.push(feedback_text(&row));
                }
            }
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let lexical = self.lexical(words, &texts, &scope, window, pool)?;
            scored = self.fused(&ranking, lexical, &nearest, now, window)?;
        }
        tracing::debug!("phase: feedback pass");
        scored.truncate(k);
        let mut hits = Vec::with_capacity(scored.len());
        for (id, score) in scored {
            if let Some(row) = self.index().get(&id).map_err(|e| self.index_error(e))? {
                hits.push(Hit { row, score });
            }
        }
        Ok(hits)
    }

    /// The full-text list for `words` (widened by `feedback` texts when given); with a
    /// `window`, the best hits said inside it join the list, so a dated question finds
    /// the turns of its day even when other days share more of its words.
    fn lexical(
        &self,
        words: &str,
        feedback: &[&str],
        scope: &Scope<'_>,
        window: Option<&Window>,
        pool: usize,
    ) -> Result<Vec<(DocMeta, f64)>, StoreError> {
        let setting = self.ranking().feedback;
        let index = self.index();
        let mut list = index
            .search_within(words, feedback, &setting, scope, pool)
            .map_err(|e| self.index_error(e))?;
        if let Some(window) = window {
            let inside = Scope {
                within: &|at| window.contains(at),
                ..*scope
            };
            let more = index
                .search_within(words, feedback, &setting, &inside, pool)
                .map_err(|e| self.index_error(e))?;
            let seen: std::collections::HashSet<String> =
                list.iter().map(|(d, _)| d.id.clone()).collect();
            list.extend(more.into_iter().filter(|(d, _)| !seen.contains(&d.id)));
            list.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
        }
        Ok(list)
    }

    /// The two lists fused, priors applied, the date match added, best first (ties by
    /// id).
    fn fused(
        &self,
        ranking: &Ranking,
        lexical: Vec<(DocMeta, f64)>,
        nearest: &[(String, f32)],
        now: i64,
        window: Option<&Window>,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        let lexical_ids: Vec<(String, f64)> =
            lexical.iter().map(|(d, s)| (d.id.clone(), *s)).collect();
        let mut metas: HashMap<String, DocMeta> = lexical
            .into_iter()
            .map(|(d, _)| (d.id.clone(), d))
            .collect();
        let mut scored = Vec::new();
        for (id, relevance) in ranking.fuse(&lexical_ids, nearest) {
            let meta = match metas.remove(&id) {
                Some(meta) => meta,
                None => match self.index().meta(&id).map_err(|e| self.index_error(e))? {
                    Some(meta) => meta,
                    None => continue,
                },
            };
            let score = ranking.prior(relevance, meta.confidence, meta.updated, now)
                + window.map_or(0.0, |w| ranking.date_weight * w.closeness(meta.updated));
            scored.push((meta.id, score));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(scored)
    }

    fn index_error(&self, source: crate::storage::Error) -> StoreError {
        StoreError::Index {
            path: self.dir().join(crate::memory::location::INDEX_FILE),
            source,
        }
    }

    /// The vector half of [`Self::search`]: empty without an embedder, for an empty
    /// query, or when embedding fails (then full text answers alone, with a warning).
    /// The memories nearest to `query` by embedding, with their cosine similarity, best
    /// first (none without an embedder).
    pub fn similar(&self, query: &str, k: usize) -> Result<Vec<(Row, f32)>, StoreError> {
        let mut out = Vec::new();
        for (id, cosine) in self.nearest(query, &[], now_unix(), k)? {
            if let Some(row) = self.index().get(&id).map_err(|e| self.index_error(e))? {
                out.push((row, cosine));
            }
        }
        Ok(out)
    }

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
        tracing::debug!("phase: query embedded");
        self.index()
            .vector_search(&q, embedder.model_id(), types, now, k)
            .map_err(|e| self.index_error(e))
    }
}

/// The words a hit lends to the second pass: its prose fields. Not the body (a long
/// body would outvote the short fields) and not the tags (labels such as ids, which
/// would pull in whatever shares the label rather than the topic).
fn feedback_text(row: &Row) -> String {
    [
        row.description.as_str(),
        row.summary.as_str(),
        row.action.as_deref().unwrap_or(""),
    ]
    .join("\n")
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
            found[0].row.description, "The valve sticks when the pump is cold",
            "another connection's memory is found at once"
        );
        // The priming memory follows it through feedback (they share "pump").
        assert_eq!(found.len(), 2, "{found:?}");
        store.forget(&found[0].row.id).unwrap();
        assert!(
            ids(&store, "valve").is_empty(),
            "a forgotten memory is gone at once"
        );
    }

    #[test]
    fn the_vector_copy_is_built_once_and_again_only_after_a_write() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        let (mut store, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        store.use_embedder(std::sync::Arc::new(crate::tokens::HashEmbedder::default()));
        for text in ["The pump needs priming", "The valve sticks when cold"] {
            store.write(&draft(text)).unwrap();
        }
        let copy = crate::vector::sidecar_path(&super::super::location::index_path(
            &agents.join("memories"),
        ));
        let inode = || std::fs::metadata(&copy).unwrap().ino();
        assert_eq!(ids(&store, "pump priming")[0], "The pump needs priming");
        let built = inode();
        for q in ["valve", "cold pump", "priming"] {
            assert!(!ids(&store, q).is_empty(), "{q}");
        }
        assert_eq!(inode(), built, "searches alone never rebuild the copy");
        store.write(&draft("The heater hums at night")).unwrap();
        assert_eq!(ids(&store, "heater hums")[0], "The heater hums at night");
        assert_ne!(inode(), built, "a write does");
    }

    #[test]
    fn the_missing_vector_scan_is_skipped_only_while_nothing_changed() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        let embedder: std::sync::Arc<dyn crate::tokens::Embedder> =
            std::sync::Arc::new(crate::tokens::HashEmbedder::default());
        let model = embedder.model_id().to_string();
        let (mut store, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        store.write(&draft("The pump needs priming")).unwrap();
        assert_eq!(store.set_embedder(embedder.clone()).unwrap(), 1);
        assert!(store.index().vectors_complete(&model).unwrap());
        // Another process writes without an embedder: the record no longer holds.
        let mut other = MemoryStore::open(&agents, dir.path()).unwrap().0;
        other.write(&draft("The valve sticks when cold")).unwrap();
        assert!(!store.index().vectors_complete(&model).unwrap());
        let (mut next, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        assert_eq!(next.set_embedder(embedder.clone()).unwrap(), 1, "embedded");
        assert_eq!(next.index().vector_coverage(&model).unwrap(), (2, 0));
        let (mut last, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        assert_eq!(last.set_embedder(embedder).unwrap(), 0);
    }

    #[test]
    fn feedback_finds_a_memory_that_shares_words_only_with_the_best_hit() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = MemoryStore::open(&dir.path().join("agents"), dir.path()).unwrap();
        for text in [
            "To publish a new version run the release script after updating the changelog",
            "The release script refuses to run when the changelog has uncommitted edits",
            "Lunch is served on the terrace when the weather is fine",
            "The build cache lives in the target directory",
        ] {
            store.write(&draft(text)).unwrap();
        }
        let query = "how do I publish a version";
        let found = ids(&store, query);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("To publish"), "{found:?}");
        assert!(
            found[1].starts_with("The release script refuses"),
            "{found:?}"
        );
        store.set_ranking(Ranking {
            feedback: crate::memory::rank::Feedback::OFF,
            ..*store.ranking()
        });
        assert_eq!(
            ids(&store, query).len(),
            1,
            "without feedback only the memory sharing the query's words is found"
        );
    }
}
