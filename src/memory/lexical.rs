//! Full-text relevance over the active memories, in memory: BM25F over five fields
//! (description, summary, tags, action, body), English Snowball stems, the stopwords of
//! [`super::query`], and prefix matching of longer query terms.
//!
//! Why not FTS5's `bm25()`: when the words of a workspace's memories overlap heavily (a
//! small project vocabulary), nearly every row matches every query and SQLite scores and
//! sorts all of them through the virtual-table interface, ~30 ms per query at 10k
//! memories. These postings score the same rows in well under a millisecond. The index
//! is built from the SQLite rows when the memory rows change (the index's generation
//! counter, see `index::Index::generation`) and kept as bytes in the layout of
//! [`layout`], which is also a file beside the index database: the next process maps
//! that file instead of building (`index::fulltext`), so the session start searches
//! without work that grows with the store. It holds no text but the ids, only term
//! statistics and the few row fields the priors need, so callers fetch the rows of the
//! final list by id.
//!
//! Scoring (BM25F, Robertson & Zaragoza): per query term, the field-weighted,
//! length-normalized term frequency `tf~ = Σ w_f · tf_f / (1 − b + b · len_f / avg_f)`,
//! then `idf · tf~ / (k1 + tf~)`. A query stem of six or more characters also matches
//! every indexed stem it is a prefix of ("deploy" finds "deployments"); the expansions
//! count as one term, as FTS5's prefix queries do.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use rust_stemmers::{Algorithm, Stemmer};

use super::query::{is_topic, MAX_TERMS};
use super::types::MemoryType;
use crate::vector::Stamp;

mod layout;
use layout::{Bytes, Header, View};

/// The indexed fields, in this order everywhere.
pub const FIELDS: usize = 5;

/// BM25F settings (one set for every query; `benches/recall_quality.rs` compares others).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25 {
    /// Field weights: description, summary, tags, action, body.
    pub weights: [f32; FIELDS],
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalization (0 none, 1 full).
    pub b: f32,
    /// Shortest query term that also matches longer stems (`usize::MAX`: never).
    pub prefix_min: usize,
}

impl Default for Bm25 {
    fn default() -> Self {
        Self {
            // As the FTS5 bm25 weights they replace. k1, b and prefix_min measured on
            // LoCoMo dev (recall_quality grid): k1 0.9 / b 0.3 / prefix from 6 characters
            // gave hybrid R@10 0.689 vs 0.685 for FTS5's 1.2 / 0.75 / 4; b 0 reached 0.693
            // but favours long memories, which conversation turns do not exercise.
            //
            // Tags weigh 1, not FTS5's 2 (issue 47): they also hold the context keys of
            // `memory::keys`, and at 2 memories found only through the words of the
            // message before them displaced evidence found through its own words
            // (LoCoMo dev, multi-hop R@10: 0.459 at 2, 0.467 at 1.5, 0.469 at 1; at 0.5
            // single-hop lost 0.869 → 0.845).
            weights: [4.0, 2.0, 1.0, 1.0, 0.5],
            k1: 0.9,
            b: 0.3,
            prefix_min: 6,
        }
    }
}

/// Turns text into index terms: lowercase alphanumeric words, stopwords dropped,
/// Snowball-stemmed. The same for documents and queries.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl Analyzer {
    /// Calls `f` with each term of `text`, in order (repeats included).
    pub fn each_term(&self, text: &str, mut f: impl FnMut(String)) {
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            let w = word.to_lowercase();
            if !is_topic(&w) {
                continue;
            }
            f(self.stemmer.stem(&w).into_owned());
        }
    }

    /// The distinct terms of a query, in order, at most [`MAX_TERMS`].
    pub fn query_terms(&self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        self.each_term(text, |t| {
            if out.len() < MAX_TERMS && !out.contains(&t) {
                out.push(t);
            }
        });
        out
    }
}

/// What the ranking needs of an indexed memory besides its terms.
#[derive(Debug, Clone, PartialEq)]
pub struct DocMeta {
    pub id: String,
    pub mtype: MemoryType,
    pub expires: Option<i64>,
    pub confidence: f64,
    /// Last update, unix seconds.
    pub updated: i64,
}

/// An indexed memory as the index holds it (borrowed; what filters see).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DocRef<'a> {
    pub id: &'a str,
    pub mtype: MemoryType,
    pub expires: Option<i64>,
    pub confidence: f64,
    pub updated: i64,
}

impl DocRef<'_> {
    pub fn to_meta(&self) -> DocMeta {
        DocMeta {
            id: self.id.to_string(),
            mtype: self.mtype,
            expires: self.expires,
            confidence: self.confidence,
            updated: self.updated,
        }
    }
}

/// One active memory's text, as read from the index.
pub struct DocText<'a> {
    pub meta: DocMeta,
    pub fields: [&'a str; FIELDS],
}

/// The inverted index over one set of memories, as bytes (built or mapped).
pub struct LexicalIndex {
    analyzer: Analyzer,
    header: Header,
    bytes: Bytes,
}

impl LexicalIndex {
    /// Indexes `docs` (each id once) with the default settings.
    pub fn build<'a>(docs: impl IntoIterator<Item = DocText<'a>>) -> Self {
        Self::build_with(Bm25::default(), docs)
    }

    /// Indexes `docs` (each id once).
    pub fn build_with<'a>(params: Bm25, docs: impl IntoIterator<Item = DocText<'a>>) -> Self {
        let unstamped = Stamp {
            store: 0,
            generation: 0,
        };
        Self::build_stamped(unstamped, params, docs)
    }

    /// Indexes `docs` (each id once) for the store state `stamp` (written in the bytes,
    /// so a saved copy can be checked against the store later).
    pub fn build_stamped<'a>(
        stamp: Stamp,
        params: Bm25,
        docs: impl IntoIterator<Item = DocText<'a>>,
    ) -> Self {
        let analyzer = Analyzer::default();
        let mut metas: Vec<DocMeta> = Vec::new();
        let mut lengths: Vec<[u16; FIELDS]> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut postings: BTreeMap<String, layout::Postings> = BTreeMap::new();
        let mut totals = [0u64; FIELDS];
        for doc in docs {
            let Ok(at) = u32::try_from(metas.len()) else {
                break;
            };
            if !seen.insert(doc.meta.id.clone()) {
                continue;
            }
            let mut counts: BTreeMap<String, [u16; FIELDS]> = BTreeMap::new();
            let mut len = [0u16; FIELDS];
            for (f, text) in doc.fields.iter().enumerate() {
                analyzer.each_term(text, |term| {
                    let tf = counts.entry(term).or_insert([0; FIELDS]);
                    tf[f] = tf[f].saturating_add(1);
                    len[f] = len[f].saturating_add(1);
                });
                totals[f] += u64::from(len[f]);
            }
            for (term, tf) in counts {
                postings.entry(term).or_default().push((at, tf));
            }
            metas.push(doc.meta);
            lengths.push(len);
        }
        let n = metas.len().max(1) as f32;
        let avg_len = totals.map(|total| (total as f32 / n).max(1.0));
        let encoded = layout::encode(stamp, params, &metas, &lengths, avg_len, &postings)
            .or_else(|| {
                tracing::warn!("the full-text index is too large for its layout; searching none");
                layout::encode(stamp, params, &[], &[], avg_len, &BTreeMap::new())
            })
            .unwrap_or_default();
        Self::from_bytes(Bytes::Owned(encoded)).unwrap_or_else(|| Self::empty(stamp, params))
    }

    fn empty(stamp: Stamp, params: Bm25) -> Self {
        Self {
            analyzer: Analyzer::default(),
            header: Header {
                stamp,
                params,
                docs: 0,
                terms: 0,
                postings: 0,
                avg_len: [1.0; FIELDS],
                strings: 0,
            },
            bytes: Bytes::Owned(Vec::new()),
        }
    }

    fn from_bytes(bytes: Bytes) -> Option<Self> {
        let header = Header::parse(bytes.as_slice())?;
        Some(Self {
            analyzer: Analyzer::default(),
            header,
            bytes,
        })
    }

    /// The saved index at `path`, mapped, if it was built for `stamp` with `params`.
    /// Only the header is read: opening costs the same whatever the store holds.
    pub fn open(path: &Path, stamp: Stamp, params: Bm25) -> Option<Self> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: these files are replaced by rename, never truncated or written in
        // place, so the mapped bytes do not change under the mapping.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let index = Self::from_bytes(Bytes::Mapped(map))?;
        (index.header.stamp == stamp && index.header.params == params).then_some(index)
    }

    /// Saves the index at `path`: written under a temporary name, synced, renamed.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        layout::save(path, self.bytes.as_slice())
    }

    /// The store state the index was built for.
    pub fn stamp(&self) -> Stamp {
        self.header.stamp
    }

    /// Whether the bytes are a mapped file (not built by this process).
    pub fn is_mapped(&self) -> bool {
        matches!(self.bytes, Bytes::Mapped(_))
    }

    fn view(&self) -> View<'_> {
        View {
            header: &self.header,
            bytes: self.bytes.as_slice(),
        }
    }

    /// The indexed document `id`.
    pub fn meta(&self, id: &str) -> Option<DocMeta> {
        let view = self.view();
        view.find(id).map(|d| view.doc(d).to_meta())
    }

    pub fn len(&self) -> usize {
        self.header.docs
    }

    pub fn is_empty(&self) -> bool {
        self.header.docs == 0
    }

    /// The `k` best documents for `query` among those `keep` accepts, with their BM25F
    /// scores (positive), best first; ties by id.
    pub fn search(
        &self,
        query: &str,
        k: usize,
        keep: impl Fn(&DocRef<'_>) -> bool,
    ) -> Vec<(DocMeta, f64)> {
        let terms: Vec<(String, f32)> = self
            .analyzer
            .query_terms(query)
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        self.search_terms(&terms, k, keep)
    }

    /// As [`Self::search`] for analyzed terms, each with its weight.
    pub fn search_terms(
        &self,
        terms: &[(String, f32)],
        k: usize,
        keep: impl Fn(&DocRef<'_>) -> bool,
    ) -> Vec<(DocMeta, f64)> {
        if terms.is_empty() || k == 0 {
            return Vec::new();
        }
        let view = self.view();
        let n = self.header.docs;
        let mut scores = vec![0f32; n];
        let mut weighted = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        for (term, weight) in terms {
            self.score_term(term, *weight, &mut weighted, &mut touched, &mut scores);
        }
        let mut ranked: Vec<(u32, f32, DocRef<'_>)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .filter_map(|(i, s)| Some((u32::try_from(i).ok()?, *s)))
            .map(|(i, s)| (i, s, view.doc(i)))
            .filter(|(_, _, d)| keep(d))
            .collect();
        let by_score = |a: &(u32, f32, DocRef<'_>), b: &(u32, f32, DocRef<'_>)| {
            b.1.total_cmp(&a.1).then_with(|| a.2.id.cmp(b.2.id))
        };
        if ranked.len() > k {
            ranked.select_nth_unstable_by(k - 1, by_score);
            ranked.truncate(k);
        }
        ranked.sort_by(by_score);
        ranked
            .into_iter()
            .map(|(_, s, d)| (d.to_meta(), f64::from(s)))
            .collect()
    }

    /// Pseudo-relevance feedback: the `n` terms of `texts` (the best hits of a first
    /// pass) that best describe them, by Σ tf · idf, not already in `query`; weights
    /// scaled so the strongest is 1.
    pub fn feedback_terms(&self, query: &[String], texts: &[&str], n: usize) -> Vec<(String, f32)> {
        let docs = self.header.docs as f32;
        let view = self.view();
        let mut weight: HashMap<String, f32> = HashMap::new();
        for text in texts {
            self.analyzer
                .each_term(text, |t| *weight.entry(t).or_default() += 1.0);
        }
        let mut ranked: Vec<(String, f32)> = weight
            .into_iter()
            .filter(|(t, _)| !query.contains(t))
            .filter_map(|(t, tf)| {
                let df = view.df(&t) as f32;
                (df >= 2.0).then(|| {
                    let idf = (1.0 + (docs - df + 0.5) / (df + 0.5)).ln();
                    (t, tf * idf)
                })
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        ranked.truncate(n);
        let top = ranked.first().map_or(1.0, |x| x.1).max(f32::MIN_POSITIVE);
        ranked.into_iter().map(|(t, w)| (t, w / top)).collect()
    }

    /// The analyzed terms of a query.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        self.analyzer.query_terms(query)
    }

    /// The most a document could score for `query`: the sum of the idf of its terms
    /// that occur (each term's part tends to its idf as its frequency grows). A best
    /// hit far below it matched only the query's weak words.
    pub fn ceiling(&self, query: &str) -> f64 {
        let view = self.view();
        let n = self.header.docs as f64;
        let mut docs: Vec<u32> = Vec::new();
        let mut total = 0.0;
        for term in self.analyzer.query_terms(query) {
            docs.clear();
            for t in self.matches(&term) {
                docs.extend(view.postings(t).map(|(d, _)| d));
            }
            docs.sort_unstable();
            docs.dedup();
            if !docs.is_empty() {
                let df = docs.len() as f64;
                total += (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            }
        }
        total
    }

    /// Adds one query term's BM25F contribution to `scores`. `weighted` is scratch space
    /// (all zero on entry and on return), `touched` its list of non-zero slots.
    fn score_term(
        &self,
        term: &str,
        weight: f32,
        weighted: &mut [f32],
        touched: &mut Vec<u32>,
        scores: &mut [f32],
    ) {
        let view = self.view();
        touched.clear();
        for t in self.matches(term) {
            for (doc, tf) in view.postings(t) {
                let Some(slot) = weighted.get_mut(doc as usize) else {
                    continue;
                };
                if *slot == 0.0 {
                    touched.push(doc);
                }
                *slot += self.field_tf(&view, doc, &tf);
            }
        }
        if touched.is_empty() {
            return;
        }
        let n = self.header.docs as f32;
        let df = touched.len() as f32;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        let k1 = self.header.params.k1;
        for &doc in touched.iter() {
            let tf = std::mem::take(&mut weighted[doc as usize]);
            scores[doc as usize] += weight * idf * tf / (k1 + tf);
        }
    }

    /// The terms a query term reaches: itself, and for a long enough term every stem
    /// that starts with it.
    fn matches(&self, term: &str) -> std::ops::Range<usize> {
        let prefix = term.chars().count() >= self.header.params.prefix_min;
        self.view().terms_from(term, prefix)
    }

    /// The length-normalized, field-weighted frequency of a posting.
    fn field_tf(&self, view: &View<'_>, doc: u32, tf: &[u16; FIELDS]) -> f32 {
        let lengths = view.lengths(doc);
        let p = &self.header.params;
        (0..FIELDS)
            .filter(|&f| tf[f] > 0)
            .map(|f| {
                let norm = 1.0 - p.b + p.b * f32::from(lengths[f]) / self.header.avg_len[f];
                p.weights[f] * f32::from(tf[f]) / norm
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(id: &str, description: &'a str, body: &'a str) -> DocText<'a> {
        DocText {
            meta: DocMeta {
                id: id.into(),
                mtype: MemoryType::Workflow,
                expires: None,
                confidence: 0.5,
                updated: 0,
            },
            fields: [description, "", "", "", body],
        }
    }

    fn ids(index: &LexicalIndex, query: &str) -> Vec<String> {
        index
            .search(query, 10, |_| true)
            .into_iter()
            .map(|(d, _)| d.id)
            .collect()
    }

    #[test]
    fn own_words_outrank_the_same_words_held_as_tags() {
        let with_tags = |id: &str, description: &'static str, tags: &'static str| DocText {
            fields: [description, "", tags, "", ""],
            ..doc(id, description, "")
        };
        let index = LexicalIndex::build([
            with_tags(
                "keyed",
                "It taught me self-acceptance",
                "book becoming nicole",
            ),
            with_tags("said", "I finished the book Becoming Nicole", ""),
            with_tags("other", "The weather was nice", ""),
        ]);
        assert_eq!(ids(&index, "the book Becoming Nicole"), ["said", "keyed"]);
        assert_eq!(
            ids(&index, "nicole"),
            ["said", "keyed"],
            "a key alone still finds it"
        );
        let weights = Bm25::default().weights;
        assert!(
            weights[2] < weights[0],
            "tags weigh less than the description"
        );
    }

    #[test]
    fn stems_and_stopwords_apply_to_both_sides() {
        let index = LexicalIndex::build([
            doc("a", "Fixing the linker errors", ""),
            doc("b", "The weather was nice", ""),
        ]);
        assert_eq!(ids(&index, "how do I fix a linker error?"), ["a"]);
        assert!(ids(&index, "the was").is_empty(), "stopwords match nothing");
        assert!(ids(&index, "").is_empty());
        assert!(ids(&index, "\"(*:?)\" AND OR").is_empty());
    }

    #[test]
    fn longer_terms_match_as_prefixes_shorter_ones_do_not() {
        let index = LexicalIndex::build([
            doc("a", "deployment to the staging cluster", ""),
            doc("b", "a cat sat", ""),
            doc("c", "catalog of parts", ""),
        ]);
        assert_eq!(ids(&index, "deploy"), ["a"]);
        assert_eq!(ids(&index, "cat"), ["b"], "short terms are exact");
    }

    #[test]
    fn description_outweighs_body_and_rare_terms_outweigh_common_ones() {
        let index = LexicalIndex::build([
            doc("body", "notes", "postgres connection refused"),
            doc("desc", "postgres connection refused", "notes"),
            doc("common1", "connection pool", ""),
            doc("common2", "connection string", ""),
        ]);
        let found = ids(&index, "postgres connection");
        assert_eq!(&found[..2], ["desc", "body"]);
        let scores = index.search("postgres", 10, |_| true);
        let common = index.search("connection", 10, |_| true);
        let top_rare = scores.iter().find(|(d, _)| d.id == "desc").map(|x| x.1);
        let top_common = common.iter().find(|(d, _)| d.id == "desc").map(|x| x.1);
        assert!(top_rare > top_common, "{top_rare:?} vs {top_common:?}");
    }

    #[test]
    fn top_k_is_cut_after_filtering_and_ties_go_by_id() {
        let docs: Vec<String> = (0..20).map(|i| format!("m{i:02}")).collect();
        let index = LexicalIndex::build(docs.iter().map(|id| doc(id, "same words here", "")));
        let found: Vec<String> = index
            .search("same words", 3, |d| d.id >= "m05")
            .into_iter()
            .map(|(d, _)| d.id)
            .collect();
        assert_eq!(found, ["m05", "m06", "m07"]);
    }

    #[test]
    fn feedback_terms_are_the_telling_words_not_the_query_s() {
        let index = LexicalIndex::build([
            doc("a", "deploy the pump firmware with the flasher", ""),
            doc("b", "the flasher needs the firmware image", ""),
            doc("c", "the pump is in the basement", ""),
            doc("d", "the basement floods in spring", ""),
        ]);
        let query = index.query_terms("pump");
        let terms = index.feedback_terms(&query, &["deploy the pump firmware with the flasher"], 2);
        let words: Vec<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(words, ["firmwar", "flasher"], "{terms:?}");
        assert_eq!(terms[0].1, 1.0, "the strongest term weighs 1");
        assert!(terms.iter().all(|(_, w)| *w > 0.0 && *w <= 1.0));
        assert!(
            !words.contains(&"deploy"),
            "a word of no other memory cannot find anything new"
        );
    }
}
