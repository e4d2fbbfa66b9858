//! The full-text side of the index: BM25F over in-memory postings of the active memories,
//! rebuilt from the SQLite rows when the index's generation counter moves.

use super::Index;
use crate::memory::lexical::{DocMeta, DocText, LexicalIndex};
use crate::memory::rank::Feedback;
use crate::memory::types::MemoryType;

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
    ) -> rusqlite::Result<Vec<(DocMeta, f64)>> {
        self.with_lexical(|index| {
            let found = index.search(query, limit, |d| {
                d.expires.is_none_or(|e| e > now) && (types.is_empty() || types.contains(&d.mtype))
            });
            found.into_iter().map(|(d, s)| (d.clone(), s)).collect()
        })
    }

    /// As [`Self::search`], with the query widened by the telling words of `feedback`
    /// (texts of the first pass's best hits; see [`super::rank::Feedback`]).
    pub fn search_expanded(
        &self,
        query: &str,
        feedback: &[&str],
        setting: &Feedback,
        types: &[MemoryType],
        now: i64,
        limit: usize,
    ) -> rusqlite::Result<Vec<(DocMeta, f64)>> {
        self.with_lexical(|index| {
            let own = index.query_terms(query);
            let mut terms: Vec<(String, f32)> = own.iter().map(|t| (t.clone(), 1.0)).collect();
            for (t, w) in index.feedback_terms(&own, feedback, setting.terms) {
                terms.push((t, w * setting.weight));
            }
            let found = index.search_terms(&terms, limit, |d| {
                d.expires.is_none_or(|e| e > now) && (types.is_empty() || types.contains(&d.mtype))
            });
            found.into_iter().map(|(d, s)| (d.clone(), s)).collect()
        })
    }

    /// What ranking needs of the active memory `id` (from the in-memory copy).
    pub fn meta(&self, id: &str) -> rusqlite::Result<Option<DocMeta>> {
        self.with_lexical(|index| index.meta(id).cloned())
    }

    /// Runs `f` on the full-text postings, rebuilt first when the memories changed.
    fn with_lexical<T>(&self, f: impl FnOnce(&LexicalIndex) -> T) -> rusqlite::Result<T> {
        let generation = self.generation()?;
        let mut slot = self.lexical.borrow_mut();
        let index = match slot.take() {
            Some((g, index)) if g == generation => index,
            _ => self.lexical_index()?,
        };
        let out = f(&index);
        *slot = Some((generation, index));
        Ok(out)
    }

    /// The postings of every active memory (one query).
    fn lexical_index(&self) -> rusqlite::Result<LexicalIndex> {
        let mut stmt = self.conn.prepare(
            "SELECT m.id, m.type, m.expires, m.confidence, m.updated, \
             f.description, f.summary, f.tags, f.action, f.body \
             FROM memories m JOIN memories_fts f ON f.rowid = m.rowid WHERE m.archived = 0",
        )?;
        let mut rows = stmt.query([])?;
        let mut docs: Vec<(DocMeta, [String; 5])> = Vec::new();
        while let Some(r) = rows.next()? {
            let text = |i: usize| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
            let mtype: String = r.get(1)?;
            docs.push((
                DocMeta {
                    id: r.get(0)?,
                    mtype: MemoryType::parse(&mtype).unwrap_or(MemoryType::ToolUse),
                    expires: r.get(2)?,
                    confidence: r.get(3)?,
                    updated: r.get(4)?,
                },
                [text(5)?, text(6)?, text(7)?, text(8)?, text(9)?],
            ));
        }
        Ok(LexicalIndex::build(docs.iter().map(|(meta, f)| DocText {
            meta: meta.clone(),
            fields: [&f[0], &f[1], &f[2], &f[3], &f[4]],
        })))
    }
}
