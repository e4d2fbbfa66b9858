//! Ranking: how a full-text list and a vector list become one relevance order, and how
//! confidence and recency adjust it. Pure functions over ids and scores, shared by the
//! memory store, the RAG stores and the knowledge base, so every silo's scores are on
//! the same 0–1 scale and can be compared in one list.
//!
//! Chosen on LoCoMo dev data (`cargo bench --bench recall_quality`; numbers in
//! the closing note of issue 13): normalized score blending, full text weighted 0.6. Each side is scaled by its own best hit
//! (bm25 / best bm25; cosine relative to the query's best and to the spread of its
//! candidates), so a query's own distribution decides what is similar — MiniLM gives loose
//! paraphrases cosines of 0.25–0.4, and an absolute floor dropped exactly the matches
//! full text cannot find. Reciprocal-rank fusion was measured too and lost: its scores
//! are nearly flat over the first ranks, so the priors reordered them.
//! Priors are mild: they break near-ties, they never override relevance.
//!
//! Scaling by a source's own best hit makes that hit relevant by construction: a RAG
//! store holding only a bread recipe would offer it at 1.0 for any question. So the
//! stores beside the memories (RAG, knowledge base) must first show evidence on an
//! absolute scale ([`Ranking::with_evidence`]): a raw cosine of at least
//! `evidence_cosine`, for vector and full-text hits alike. Measured with the noise check
//! of `recall_quality` (a store of unrelated chunks beside LoCoMo's memories).

use std::collections::HashMap;
use std::hash::Hash;

/// Which lists take part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Full text and vectors (vectors only when an embedder is loaded).
    Hybrid,
    /// Full text alone (as with `memory.embedder: none`).
    Lexical,
    /// Vectors alone (benchmarks).
    Vector,
}

/// How two lists are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// `Σ w / (k + rank)`, scaled so that first in every list is 1.
    Rrf { k: f64 },
    /// `w_lex · lexical + w_vec · vector`, each normalized to 0–1 within the query.
    Blend,
}

/// Ranking settings (one set for every query and every silo).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranking {
    pub mode: Mode,
    pub fusion: Fusion,
    pub lexical_weight: f64,
    pub vector_weight: f64,
    /// Vector hits below this absolute cosine are dropped (0 = none).
    pub min_cosine: f32,
    /// Vector hits below `best × relative_floor` are dropped.
    pub relative_floor: f32,
    /// Candidates fetched from each list for a short list: `k × pool_factor`, at least
    /// `min_pool`, and never more than `max(k, min_pool)` for a long one (a budget).
    pub pool_factor: usize,
    pub min_pool: usize,
    /// How much confidence (0–1, neutral 0.5) may move a score: ±strength/2.
    pub confidence_strength: f64,
    /// How much recency may move a score (a year-old item loses about this share × 0.75).
    pub recency_strength: f64,
    /// Where the weakest vector candidate lands on the 0–1 scale: its cosine is mapped
    /// to `tail / (1 + tail)` of the best one's (0 = min–max, the weakest gets nothing).
    pub vector_tail: f64,
    /// Raw cosine a RAG chunk or knowledge-base observation must reach to count as
    /// relevant at all, when its store has vectors (see [`Ranking::with_evidence`]).
    pub evidence_cosine: f32,
    /// Pseudo-relevance feedback for the memory store's full-text side (the RAG stores
    /// and the knowledge base rank through FTS5 and do not use it).
    pub feedback: Feedback,
    /// What a memory said inside the time a query names ("in May 2023") gains, on the
    /// 0–1 relevance scale (see [`super::when`]; 0 = dates are words only).
    pub date_weight: f64,
}

/// Pseudo-relevance feedback: the first pass's best `docs` memories lend their `terms`
/// most telling words to the query at `weight` (the query's own words weigh 1), and the
/// full-text list is fetched again. Off when `docs` is 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    pub docs: usize,
    pub terms: usize,
    pub weight: f32,
}

impl Feedback {
    pub const OFF: Feedback = Feedback {
        docs: 0,
        terms: 0,
        weight: 0.0,
    };

    pub fn is_on(&self) -> bool {
        self.docs > 0 && self.terms > 0 && self.weight > 0.0
    }
}

/// Measured on LoCoMo dev (recall_quality grid): 3 memories, 10 words at 0.15 moved
/// hybrid recall@10 from 0.689 to 0.700 and recall@1 from 0.358 to 0.367; heavier
/// weights (0.35, 0.5) lost recall@1, and a vector-side (Rocchio) feedback lost recall@10.
pub const DEFAULT_FEEDBACK: Feedback = Feedback {
    docs: 3,
    terms: 10,
    weight: 0.15,
};

/// Measured on LoCoMo dev (recall_quality, `HARVEY_RECALL_DATE`).
pub const DEFAULT_DATE_WEIGHT: f64 = 0.3;

pub const DEFAULT_LEXICAL_WEIGHT: f64 = 0.6;
pub const DEFAULT_VECTOR_WEIGHT: f64 = 0.4;
pub const DEFAULT_RELATIVE_FLOOR: f32 = 0.5;
pub const DEFAULT_POOL_FACTOR: usize = 4;
pub const DEFAULT_MIN_POOL: usize = 50;
pub const DEFAULT_CONFIDENCE_STRENGTH: f64 = 0.1;
pub const DEFAULT_RECENCY_STRENGTH: f64 = 0.05;
pub const DEFAULT_VECTOR_TAIL: f64 = 0.25;
/// MiniLM gives unrelated text cosines under about 0.15 and loose paraphrases 0.25–0.4.
pub const DEFAULT_EVIDENCE_COSINE: f32 = 0.25;

impl Default for Ranking {
    fn default() -> Self {
        Self {
            mode: Mode::Hybrid,
            fusion: Fusion::Blend,
            lexical_weight: DEFAULT_LEXICAL_WEIGHT,
            vector_weight: DEFAULT_VECTOR_WEIGHT,
            min_cosine: 0.0,
            relative_floor: DEFAULT_RELATIVE_FLOOR,
            pool_factor: DEFAULT_POOL_FACTOR,
            min_pool: DEFAULT_MIN_POOL,
            confidence_strength: DEFAULT_CONFIDENCE_STRENGTH,
            recency_strength: DEFAULT_RECENCY_STRENGTH,
            vector_tail: DEFAULT_VECTOR_TAIL,
            evidence_cosine: DEFAULT_EVIDENCE_COSINE,
            feedback: DEFAULT_FEEDBACK,
            date_weight: DEFAULT_DATE_WEIGHT,
        }
    }
}

impl Ranking {
    /// The ranking before it was measured (kept for the benchmark's comparison):
    /// unweighted RRF, an absolute 0.3 cosine floor, priors as strong multipliers.
    pub fn legacy() -> Self {
        Self {
            fusion: Fusion::Rrf { k: 60.0 },
            lexical_weight: 1.0,
            vector_weight: 1.0,
            min_cosine: 0.3,
            relative_floor: 0.0,
            pool_factor: 3,
            min_pool: 0,
            confidence_strength: 1.0,
            recency_strength: 0.2,
            feedback: Feedback::OFF,
            date_weight: 0.0,
            ..Self::default()
        }
    }

    pub fn with_mode(self, mode: Mode) -> Self {
        Self { mode, ..self }
    }

    /// Candidates to fetch from each list to return `k` items.
    pub fn pool(&self, k: usize) -> usize {
        k.saturating_mul(self.pool_factor)
            .min(k.max(self.min_pool))
            .max(self.min_pool)
            .max(k)
    }

    pub fn uses_lexical(&self) -> bool {
        self.mode != Mode::Vector
    }

    pub fn uses_vectors(&self) -> bool {
        self.mode != Mode::Lexical
    }

    /// The vector hits worth fusing: above the absolute floor and `relative_floor` of
    /// the best one. `hits` are best first.
    pub fn keep_similar<K>(&self, hits: Vec<(K, f32)>) -> Vec<(K, f32)> {
        let best = hits.first().map_or(0.0, |h| h.1);
        let floor = self.min_cosine.max(best * self.relative_floor);
        hits.into_iter().filter(|(_, s)| *s >= floor).collect()
    }

    /// The hits of a store beside the memories that show evidence on an absolute scale:
    /// vector hits whose raw cosine reaches `evidence_cosine`, and full-text hits that
    /// are among them — or that lie past the end of a full `nearest` list (`pool` long)
    /// whose weakest hit still reaches the floor, where their cosine is unknown. Without
    /// vectors (no embedder, or the query could not be embedded) full text stands alone:
    /// its match on a query term is the evidence. `nearest` is best first.
    pub fn with_evidence<K: Eq + Hash>(
        &self,
        lexical: Vec<(K, f64)>,
        nearest: Vec<(K, f32)>,
        pool: usize,
    ) -> Lists<K> {
        if nearest.is_empty() {
            return (lexical, nearest);
        }
        let floor = self.evidence_cosine;
        let beyond_pool = nearest.len() >= pool && nearest.last().is_some_and(|h| h.1 >= floor);
        let nearest: Vec<(K, f32)> = nearest.into_iter().filter(|h| h.1 >= floor).collect();
        let confirmed: std::collections::HashSet<&K> = nearest.iter().map(|h| &h.0).collect();
        let lexical = lexical
            .into_iter()
            .filter(|h| beyond_pool || confirmed.contains(&h.0))
            .collect();
        (lexical, nearest)
    }

    /// Relevance in 0–1 for every key of either list, best first. `lexical` holds
    /// positive bm25 scores, `vector` cosines; both best first.
    pub fn fuse<K: Clone + Eq + Hash>(
        &self,
        lexical: &[(K, f64)],
        vector: &[(K, f32)],
    ) -> Vec<(K, f64)> {
        let lexical: &[(K, f64)] = if self.uses_lexical() { lexical } else { &[] };
        let vector: &[(K, f32)] = if self.uses_vectors() { vector } else { &[] };
        let mut out = match (lexical.is_empty(), vector.is_empty()) {
            (_, true) => by_best(lexical),
            (true, false) => vector_relevance(vector, self.vector_tail),
            (false, false) => match self.fusion {
                Fusion::Rrf { k } => self.rrf(lexical, vector, k),
                Fusion::Blend => self.blend(lexical, vector),
            },
        };
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    }

    fn rrf<K: Clone + Eq + Hash>(
        &self,
        lexical: &[(K, f64)],
        vector: &[(K, f32)],
        k: f64,
    ) -> Vec<(K, f64)> {
        let top = (self.lexical_weight + self.vector_weight) / (k + 1.0);
        let mut acc = Accumulator::default();
        for (i, (key, _)) in lexical.iter().enumerate() {
            acc.add(key, self.lexical_weight / (k + (i + 1) as f64));
        }
        for (i, (key, _)) in vector.iter().enumerate() {
            acc.add(key, self.vector_weight / (k + (i + 1) as f64));
        }
        acc.scaled(top)
    }

    fn blend<K: Clone + Eq + Hash>(
        &self,
        lexical: &[(K, f64)],
        vector: &[(K, f32)],
    ) -> Vec<(K, f64)> {
        let total = self.lexical_weight + self.vector_weight;
        let mut acc = Accumulator::default();
        for (key, rel) in by_best(lexical) {
            acc.add(&key, self.lexical_weight * rel);
        }
        for (key, rel) in vector_relevance(vector, self.vector_tail) {
            acc.add(&key, self.vector_weight * rel);
        }
        acc.scaled(total)
    }

    /// Relevance adjusted by confidence and recency: a neutral item (confidence 0.5,
    /// updated now) keeps its relevance; the adjustment is bounded by the strengths.
    pub fn prior(&self, relevance: f64, confidence: f64, updated: i64, now: i64) -> f64 {
        let age_days = ((now - updated).max(0) as f64) / 86_400.0;
        let recency = 0.5_f64.powf(age_days / 180.0);
        let conf = 1.0 + self.confidence_strength * (confidence.clamp(0.0, 1.0) - 0.5);
        relevance * conf * (1.0 - self.recency_strength * (1.0 - recency))
    }
}

/// A full-text list (bm25 scores) and a vector list (cosines), each best first.
pub type Lists<K> = (Vec<(K, f64)>, Vec<(K, f32)>);

/// Scores divided by the best one (bm25 has no fixed scale).
fn by_best<K: Clone>(list: &[(K, f64)]) -> Vec<(K, f64)> {
    let best = list.iter().map(|(_, s)| *s).fold(0.0_f64, f64::max);
    list.iter()
        .map(|(k, s)| {
            (
                k.clone(),
                if best > 0.0 { (s / best).max(0.0) } else { 0.0 },
            )
        })
        .collect()
}

/// Cosines mapped to 0–1 within the query: the best hit 1, the weakest kept candidate
/// near 0 (min–max over the list, so the spread of this query's scores decides, not an
/// absolute cosine). A single hit, or hits that all tie, count fully.
fn vector_relevance<K: Clone>(list: &[(K, f32)], tail: f64) -> Vec<(K, f64)> {
    let best = list
        .iter()
        .map(|(_, s)| f64::from(*s))
        .fold(f64::MIN, f64::max);
    let worst = list
        .iter()
        .map(|(_, s)| f64::from(*s))
        .fold(f64::MAX, f64::min);
    // The tail of the list is not zero relevance: keep a floor under min–max.
    let low = worst - tail * (best - worst);
    list.iter()
        .map(|(k, s)| {
            let s = f64::from(*s);
            let rel = if best - low > 1e-9 {
                (s - low) / (best - low)
            } else {
                1.0
            };
            (k.clone(), rel.clamp(0.0, 1.0))
        })
        .collect()
}

/// Sums per key, keeping first-seen order for ties.
struct Accumulator<K> {
    order: Vec<K>,
    sums: HashMap<K, f64>,
}

impl<K> Default for Accumulator<K> {
    fn default() -> Self {
        Self {
            order: Vec::new(),
            sums: HashMap::new(),
        }
    }
}

impl<K: Clone + Eq + Hash> Accumulator<K> {
    fn add(&mut self, key: &K, value: f64) {
        match self.sums.get_mut(key) {
            Some(v) => *v += value,
            None => {
                self.sums.insert(key.clone(), value);
                self.order.push(key.clone());
            }
        }
    }

    fn scaled(self, top: f64) -> Vec<(K, f64)> {
        let Self { order, sums } = self;
        order
            .into_iter()
            .map(|k| {
                let s = sums.get(&k).copied().unwrap_or(0.0);
                (
                    k,
                    if top > 0.0 {
                        (s / top).clamp(0.0, 1.0)
                    } else {
                        0.0
                    },
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[(&'static str, f64)]) -> Vec<&'static str> {
        list.iter().map(|(k, _)| *k).collect()
    }

    #[test]
    fn a_hit_in_both_lists_beats_a_hit_in_one() {
        let lex = [("a", 9.0), ("b", 8.0), ("c", 1.0)];
        let vec = [("c", 0.6_f32), ("d", 0.5), ("e", 0.2)];
        for fusion in [Fusion::Blend, Fusion::Rrf { k: 60.0 }] {
            let r = Ranking {
                fusion,
                ..Ranking::default()
            };
            let out = r.fuse(&lex, &vec);
            assert_eq!(out.len(), 5);
            assert!(out.iter().all(|(_, s)| (0.0..=1.0).contains(s)));
            let pos = |k| ids(&out).iter().position(|x| *x == k).unwrap();
            assert!(pos("c") < pos("e"), "{fusion:?}: {out:?}");
        }
    }

    #[test]
    fn evidence_is_an_absolute_cosine_for_both_lists() {
        let r = Ranking::default();
        let lex = vec![("recipe", 3.0), ("release", 2.0), ("far", 1.0)];
        // Only "release" is similar enough; "recipe" matched a word but not the meaning.
        let vec = vec![("release", 0.6_f32), ("recipe", 0.1)];
        let (l, v) = r.with_evidence(lex.clone(), vec.clone(), 50);
        assert_eq!(l, vec![("release", 2.0)]);
        assert_eq!(v, vec![("release", 0.6)]);
        // A full pool whose weakest hit still clears the floor: a full-text hit past it
        // may be similar too, so it stays.
        let (l, _) = r.with_evidence(lex.clone(), vec![("release", 0.6), ("x", 0.3)], 2);
        assert_eq!(l.len(), 3);
        // No vectors: full text is the only evidence there is.
        let (l, v) = r.with_evidence(lex.clone(), Vec::<(&str, f32)>::new(), 50);
        assert_eq!((l.len(), v.len()), (3, 0));
        // A lone unrelated hit is not relevant by construction.
        let (l, v) = r.with_evidence(Vec::new(), vec![("recipe", 0.1_f32)], 50);
        assert!(l.is_empty() && v.is_empty());
    }

    #[test]
    fn one_list_alone_is_scaled_by_its_best() {
        let r = Ranking::default();
        let out = r.fuse(&[("a", 4.0), ("b", 2.0)], &[] as &[(&str, f32)]);
        assert_eq!(out, vec![("a", 1.0), ("b", 0.5)]);
        let out = r.fuse(&[] as &[(&str, f64)], &[("x", 0.29_f32)]);
        assert_eq!(out, vec![("x", 1.0)], "a lone weak paraphrase still counts");
    }

    #[test]
    fn modes_ignore_the_other_list() {
        let lex = [("a", 1.0)];
        let vec = [("b", 0.9_f32)];
        let lexical = Ranking::default().with_mode(Mode::Lexical).fuse(&lex, &vec);
        assert_eq!(ids(&lexical), vec!["a"]);
        let vector = Ranking::default().with_mode(Mode::Vector).fuse(&lex, &vec);
        assert_eq!(ids(&vector), vec!["b"]);
    }

    #[test]
    fn the_similarity_floor_is_relative_to_the_best_hit() {
        let r = Ranking::default();
        let kept = r.keep_similar(vec![("a", 0.29_f32), ("b", 0.2), ("c", 0.1)]);
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(Ranking::legacy()
            .keep_similar(vec![("a", 0.29_f32)])
            .is_empty());
    }

    #[test]
    fn priors_break_ties_but_do_not_override_relevance() {
        let r = Ranking::default();
        let now = 1_000_000_000;
        let year = 365 * 86_400;
        assert!((r.prior(1.0, 0.5, now, now) - 1.0).abs() < 1e-12);
        let old_confident = r.prior(0.8, 1.0, now - year, now);
        let fresh_unsure = r.prior(0.9, 0.2, now, now);
        assert!(fresh_unsure > old_confident);
        assert!(r.prior(0.8, 0.9, now, now) > r.prior(0.8, 0.5, now, now));
        assert!(r.prior(0.8, 0.5, now, now) > r.prior(0.8, 0.5, now - year, now));
    }

    #[test]
    fn pool_is_deep_enough() {
        let r = Ranking::default();
        assert_eq!(r.pool(5), DEFAULT_MIN_POOL);
        assert_eq!(r.pool(100), 100, "a long list is deep enough by itself");
    }
}
