//! The full-text side of the index: BM25F over postings of the active memories
//! (`memory::lexical`), kept in a file beside the database (`harvey-index.db.postings`).
//! A process maps that file when it was built for the store's current state (the
//! store's random id and the index's generation counter), so a session start searches
//! without building anything; when the memories changed, the postings are built again
//! from the SQLite rows and the file replaced. The file is a cache: deleting it costs
//! one build.

use std::path::{Path, PathBuf};

use super::Index;
use crate::memory::lexical::{Bm25, DocMeta, DocText, LexicalIndex};
use crate::memory::rank::Feedback;
use crate::memory::types::MemoryType;

/// Which memories a full-text search may return: recallable at `now`, of `types` (all
/// when empty), last written at a time `within` accepts.
pub struct Scope<'a> {
    pub types: &'a [MemoryType],
    pub now: i64,
    pub within: &'a dyn Fn(i64) -> bool,
}

impl Index {
    /// The `limit` best recallable memories of `types` (all when empty) for `query` by
    /// full-text relevance (BM25F over the in-memory postings, rebuilt when the memories
    /// changed), best first.
    pub fn search(
        &self,
        query: &str,
        types: &[MemoryType],
        now: i64,
        limit: usize,
    ) -> crate::storage::Result<Vec<(DocMeta, f64)>> {
        self.with_lexical(|index| {
            index.search(query, limit, |d| {
                d.expires.is_none_or(|e| e > now) && (types.is_empty() || types.contains(&d.mtype))
            })
        })
    }

    /// As [`Self::search`], with the query widened by the telling words of `feedback`
    /// (texts of the first pass's best hits; see [`crate::memory::rank::Feedback`]),
    /// among the memories `scope` accepts. A memory's score does not depend on the
    /// scope, so lists of two scopes merge by id.
    pub fn search_within(
        &self,
        query: &str,
        feedback: &[&str],
        setting: &Feedback,
        scope: &Scope<'_>,
        limit: usize,
    ) -> crate::storage::Result<Vec<(DocMeta, f64)>> {
        self.with_lexical(|index| {
            let own = index.query_terms(query);
            let mut terms: Vec<(String, f32)> = own.iter().map(|t| (t.clone(), 1.0)).collect();
            if !feedback.is_empty() {
                for (t, w) in index.feedback_terms(&own, feedback, setting.terms) {
                    terms.push((t, w * setting.weight));
                }
            }
            index.search_terms(&terms, limit, |d| {
                d.expires.is_none_or(|e| e > scope.now)
                    && (scope.types.is_empty() || scope.types.contains(&d.mtype))
                    && (scope.within)(d.updated)
            })
        })
    }

    /// What ranking needs of the active memory `id` (from the postings).
    pub fn meta(&self, id: &str) -> crate::storage::Result<Option<DocMeta>> {
        self.with_lexical(|index| index.meta(id))
    }

    /// Runs `f` on the full-text postings: the ones in hand or the saved file when they
    /// are current, else built again (and saved).
    fn with_lexical<T>(&self, f: impl FnOnce(&LexicalIndex) -> T) -> crate::storage::Result<T> {
        let stamp = self.lexical_stamp()?;
        let mut slot = self.lexical.borrow_mut();
        let index = match slot.take() {
            Some(index) if index.stamp() == stamp => index,
            _ => {
                let saved = self
                    .lexical_file
                    .as_deref()
                    .and_then(|path| LexicalIndex::open(path, stamp, Bm25::default()));
                match saved {
                    Some(index) => index,
                    None => self.build_lexical(stamp)?,
                }
            }
        };
        let out = f(&index);
        *slot = Some(index);
        Ok(out)
    }

    /// What the postings must have been built for: the store's random id (a new
    /// database never matches an old file) and the generation of its memories.
    fn lexical_stamp(&self) -> crate::storage::Result<crate::vector::Stamp> {
        Ok(crate::vector::Stamp {
            store: self.tables.vector_stamp()?.store,
            generation: self.generation()?,
        })
    }

    /// The postings built from the rows, saved for the next process (a failed save
    /// costs that process a build, nothing else).
    fn build_lexical(&self, stamp: crate::vector::Stamp) -> crate::storage::Result<LexicalIndex> {
        let index = self.lexical_index(stamp)?;
        if let Some(path) = &self.lexical_file {
            if let Err(e) = index.save(path) {
                tracing::warn!("cannot save the full-text postings {}: {e}", path.display());
            }
        }
        Ok(index)
    }

    /// The postings of every active memory (one query).
    fn lexical_index(&self, stamp: crate::vector::Stamp) -> crate::storage::Result<LexicalIndex> {
        let docs: Vec<(DocMeta, [String; 5])> = self
            .tables
            .active_texts()?
            .into_iter()
            .map(|t| {
                let meta = DocMeta {
                    id: t.id,
                    mtype: super::stored_type(&t.mtype),
                    expires: t.expires,
                    confidence: t.confidence,
                    updated: t.updated,
                };
                (meta, t.fields)
            })
            .collect();
        let texts = docs.iter().map(|(meta, f)| DocText {
            meta: meta.clone(),
            fields: [&f[0], &f[1], &f[2], &f[3], &f[4]],
        });
        Ok(LexicalIndex::build_stamped(stamp, Bm25::default(), texts))
    }
}

/// `<database>.postings`: the saved full-text postings of the index at `database`.
pub fn postings_path(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".postings");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::location::index_path;
    use crate::memory::store::now_unix;
    use crate::memory::{Draft, MemoryStore};

    const WORDS: [&str; 12] = [
        "pump",
        "valve",
        "deploy",
        "deployment",
        "server",
        "port",
        "release",
        "script",
        "changelog",
        "heater",
        "sensor",
        "cold",
    ];

    const QUERIES: [&str; 5] = [
        "how do I deploy the server?",
        "the pump valve is cold",
        "release script changelog",
        "sensor",
        "nothing matches this",
    ];

    fn draft(i: usize) -> Draft {
        let word = |k: usize| WORDS[(i * 7 + k * 5) % WORDS.len()];
        let mtype = ["workflow", "tool_use", "project_fact"][i % 3];
        serde_json::from_value(serde_json::json!({
            "type": mtype,
            "description": format!("{} {} note {i}", word(0), word(1)),
            "summary": format!("{} then {}", word(2), word(3)),
            "tags": [word(4)],
            "body": format!("{} {} {}", word(5), word(6), word(0)),
        }))
        .unwrap()
    }

    fn workspace(n: usize) -> (tempfile::TempDir, std::path::PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        let (mut store, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        for i in 0..n {
            store.write(&draft(i)).unwrap();
        }
        let file = postings_path(&index_path(&agents.join("memories")));
        (dir, agents, file)
    }

    fn lexical(store: &MemoryStore, now: i64) -> Vec<Vec<(DocMeta, f64)>> {
        QUERIES
            .iter()
            .map(|q| store.index().search(q, &[], now, 50).unwrap())
            .collect()
    }

    fn is_mapped(store: &MemoryStore) -> bool {
        let slot = store.index().lexical.borrow();
        slot.as_ref().is_some_and(LexicalIndex::is_mapped)
    }

    /// The fast path (a new process maps the postings an earlier one saved) returns the
    /// same items with the same scores as the full path (postings built from the rows),
    /// for full text alone and for the whole ranking (fusion, feedback, priors).
    #[test]
    fn saved_postings_rank_exactly_as_freshly_built_ones() {
        let (dir, agents, file) = workspace(40);
        let now = now_unix();
        let _ = std::fs::remove_file(&file);
        let (built_store, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        let built = lexical(&built_store, now);
        assert!(!is_mapped(&built_store), "no file: the postings were built");
        assert!(file.exists(), "and saved for the next process");
        assert!(built.iter().take(4).all(|hits| !hits.is_empty()));
        let (mapped_store, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        assert_eq!(lexical(&mapped_store, now), built);
        assert!(is_mapped(&mapped_store), "the next process mapped the file");
        for q in QUERIES {
            let ids = |s: &MemoryStore| -> Vec<String> {
                s.search(q, &[], 10)
                    .unwrap()
                    .into_iter()
                    .map(|h| h.row.id)
                    .collect()
            };
            assert_eq!(ids(&mapped_store), ids(&built_store), "{q}");
        }
    }

    #[test]
    fn a_stale_or_damaged_file_is_never_used() {
        let (dir, agents, file) = workspace(12);
        let (reader, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        let now = now_unix();
        let before = lexical(&reader, now);
        assert!(file.exists());
        // Another process writes: the saved postings no longer match the store.
        let (mut writer, _) = MemoryStore::open(&agents, dir.path()).unwrap();
        writer.write(&draft(100)).unwrap();
        let stale = std::fs::read(&file).unwrap();
        let after = lexical(&reader, now);
        assert_ne!(after, before, "the new memory is searched at once");
        assert_ne!(
            std::fs::read(&file).unwrap(),
            stale,
            "and the file replaced"
        );
        // A file cut short, or another file under the name, is rebuilt, not read.
        for damage in [&stale[..stale.len() / 2], b"not postings".as_slice()] {
            std::fs::write(&file, damage).unwrap();
            let (fresh, _) = MemoryStore::open(&agents, dir.path()).unwrap();
            assert_eq!(lexical(&fresh, now), after);
            assert!(!is_mapped(&fresh));
        }
    }
}
