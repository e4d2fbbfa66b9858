//! Pseudo-relevance feedback compared on the grid's cached lists
//! (`HARVEY_RECALL_GRID=feedback`): the first pass's best memories lend words to the
//! query (full text) or move the query vector towards theirs (Rocchio), and the second
//! pass is fused as the product does.

use std::collections::HashMap;

use harvey::memory::lexical::{DocMeta, DocText, LexicalIndex};
use harvey::memory::rank::Ranking;
use harvey::memory::MemoryStore;

use super::grid::{add_scores, ranked_ids, Lists, GRID_POOL};
use super::{fail, turn_of, Conversation};

/// One setting: full-text feedback from `docs` memories, `terms` words at `weight`;
/// vector feedback from `vector_docs` memories at `gamma`.
#[derive(Clone, Copy)]
struct Setting {
    docs: usize,
    terms: usize,
    weight: f32,
    vector_docs: usize,
    gamma: f32,
}

/// A conversation's full-text index (description and tags, as the store indexes
/// turns) and its memories' texts.
struct Corpus {
    index: LexicalIndex,
    texts: HashMap<String, String>,
}

fn corpus(conv: &Conversation) -> Corpus {
    let texts = conv
        .memories
        .iter()
        .map(|m| (m.id.clone(), m.description.clone()))
        .collect();
    let tags: Vec<String> = conv.memories.iter().map(|m| m.tags.join(" ")).collect();
    let index = LexicalIndex::build(conv.memories.iter().zip(&tags).map(|(m, t)| DocText {
        meta: DocMeta {
            id: m.id.clone(),
            mtype: m.mtype,
            expires: None,
            confidence: m.confidence,
            updated: 0,
        },
        fields: [&m.description, "", t, "", ""],
    }));
    Corpus { index, texts }
}

fn settings() -> Vec<Setting> {
    let off = Setting {
        docs: 0,
        terms: 0,
        weight: 0.0,
        vector_docs: 0,
        gamma: 0.0,
    };
    let mut out = vec![off];
    for (docs, terms, weight) in [(3, 10, 0.1), (3, 10, 0.15), (3, 5, 0.2), (5, 10, 0.2)] {
        out.push(Setting {
            docs,
            terms,
            weight,
            ..off
        });
    }
    for vector_docs in [1, 2, 3, 5] {
        for gamma in [0.25, 0.5, 1.0] {
            let vectors = Setting {
                vector_docs,
                gamma,
                ..off
            };
            out.push(vectors);
            out.push(Setting {
                docs: 3,
                terms: 10,
                weight: 0.15,
                ..vectors
            });
        }
    }
    out
}

pub fn grid(stores: &[(MemoryStore, &Conversation)], all: &[Lists]) {
    println!("\npseudo-relevance feedback (hybrid, default fusion, default BM25F):");
    println!("{:<46} {:>6} {:>6} {:>6}", "setting", "R@1", "R@10", "R@20");
    let corpora: Vec<Corpus> = stores.iter().map(|(_, conv)| corpus(conv)).collect();
    let asked: Vec<(usize, &str)> = stores
        .iter()
        .enumerate()
        .flat_map(|(i, (_, c))| c.questions.iter().map(move |q| (i, q.text.as_str())))
        .collect();
    for setting in settings() {
        let mut sums = [0.0; 3];
        for (l, &(owner, question)) in all.iter().zip(&asked) {
            let ranked = second_pass(l, &stores[owner].0, &corpora[owner], question, setting);
            add_scores(&mut sums, l, &ranked);
        }
        let [r1, r10, r20] = sums.map(|s| s / all.len().max(1) as f64);
        let Setting {
            docs,
            terms,
            weight,
            vector_docs,
            gamma,
        } = setting;
        let name = format!("fb m={docs} n={terms} beta={weight} vm={vector_docs} gamma={gamma}");
        println!("{name:<46} {r1:>6.3} {r10:>6.3} {r20:>6.3}");
    }
}

/// The first 20 turns of one question's second pass.
fn second_pass(
    l: &Lists,
    store: &MemoryStore,
    corpus: &Corpus,
    question: &str,
    s: Setting,
) -> Vec<String> {
    let ranking = Ranking::default();
    let pool = ranking.pool(20);
    let now = chrono::Utc::now().timestamp();
    let first = ranked_ids(l, &l.lexical, &ranking, pool, now);
    let texts = |n: usize| first.iter().take(n).filter_map(|id| corpus.texts.get(id));
    let feedback: Vec<&str> = texts(s.docs).map(String::as_str).collect();
    let query = corpus.index.query_terms(question);
    let mut terms: Vec<(String, f32)> = query.iter().map(|t| (t.clone(), 1.0)).collect();
    for (t, w) in corpus.index.feedback_terms(&query, &feedback, s.terms) {
        terms.push((t, w * s.weight));
    }
    let lexical: Vec<(String, f64)> = corpus
        .index
        .search_terms(&terms, GRID_POOL, |_| true)
        .into_iter()
        .map(|(d, score)| (d.id.clone(), score))
        .collect();
    let mut second = Lists {
        lexical: Vec::new(),
        ceiling: 0.0,
        vector: l.vector.clone(),
        priors: l.priors.clone(),
        evidence: Vec::new(),
    };
    if s.vector_docs > 0 {
        second.vector = vector_feedback(store, question, texts(s.vector_docs), s.gamma);
    }
    ranked_ids(&second, &lexical, &ranking, pool, now)
        .iter()
        .take(20)
        .map(|id| turn_of(id))
        .collect()
}

/// The vector list for the query moved towards the first pass's best memories
/// (Rocchio): `q + gamma · mean(docs)`, normalized.
fn vector_feedback<'a>(
    store: &MemoryStore,
    question: &str,
    docs: impl Iterator<Item = &'a String>,
    gamma: f32,
) -> Vec<(String, f32)> {
    let embedder = store.embedder().unwrap_or_else(|| fail("no embedder"));
    let Some(mut q) = harvey::tokens::embed_query(embedder.as_ref(), question, "bench") else {
        return Vec::new();
    };
    // One text per call: the bench's embedder caches single texts.
    let vectors: Vec<Vec<f32>> = docs
        .filter_map(|t| harvey::tokens::embed_query(embedder.as_ref(), t, "bench"))
        .collect();
    let share = gamma / vectors.len().max(1) as f32;
    for v in &vectors {
        for (a, b) in q.iter_mut().zip(v) {
            *a += share * b;
        }
    }
    harvey::vector::normalize(&mut q);
    let now = chrono::Utc::now().timestamp();
    store
        .index()
        .vector_search(&q, embedder.model_id(), &[], now, GRID_POOL)
        .unwrap_or_else(|e| fail(&e.to_string()))
}
