//! The settings grid of `recall_quality` (`HARVEY_RECALL_GRID=only` or `=1`): each
//! question's full-text and vector candidate lists are fetched once, then fusion and
//! BM25F settings are compared as arithmetic over them (seconds per setting).

use std::collections::HashMap;
use std::time::Instant;

use harvey::memory::lexical::{Bm25, DocMeta, DocText, LexicalIndex, FIELDS};
use harvey::memory::rank::{Fusion, Mode, Ranking};
use harvey::memory::MemoryStore;

use super::{fail, share, turn_of, Conversation};

/// One question's candidate lists, fetched once so that fusion settings can be compared
/// as pure arithmetic (the lists are what `MemoryStore::search` fuses).
pub struct Lists {
    pub lexical: Vec<(String, f64)>,
    /// The lexical score a perfect match would reach (0: not measured).
    pub ceiling: f64,
    pub vector: Vec<(String, f32)>,
    pub priors: HashMap<String, (f64, i64)>,
    pub evidence: Vec<String>,
}

pub const GRID_POOL: usize = 200;

fn lists(stores: &[(MemoryStore, &Conversation)]) -> Vec<Lists> {
    let now = chrono::Utc::now().timestamp();
    let mut out = Vec::new();
    for (store, conv) in stores {
        let index = store.index();
        let embedder = store.embedder().unwrap_or_else(|| fail("no embedder"));
        for q in &conv.questions {
            let lexical: Vec<(String, f64)> = index
                .search(&q.text, &[], now, GRID_POOL)
                .unwrap_or_else(|e| fail(&e.to_string()))
                .into_iter()
                .map(|(d, s)| (d.id, s))
                .collect();
            let vector = harvey::tokens::embed_query(embedder.as_ref(), &q.text, "bench")
                .map(|v| {
                    index
                        .vector_search(&v, embedder.model_id(), &[], now, GRID_POOL)
                        .unwrap_or_else(|e| fail(&e.to_string()))
                })
                .unwrap_or_default();
            let mut priors = HashMap::new();
            for id in lexical
                .iter()
                .map(|x| &x.0)
                .chain(vector.iter().map(|x| &x.0))
            {
                if let Ok(Some(m)) = index.meta(id) {
                    priors.insert(id.clone(), (m.confidence, m.updated));
                }
            }
            out.push(Lists {
                lexical,
                ceiling: 0.0,
                vector,
                priors,
                evidence: q.evidence.clone(),
            });
        }
    }
    out
}

/// recall@1, recall@10 and recall@20 of `ranking` (candidate pools of `pool`) over
/// the cached lists.
fn grid_scores(all: &[Lists], ranking: &Ranking, pool: usize) -> [f64; 3] {
    grid_scores_with(all, ranking, pool, None)
}

/// As [`grid_scores`]; with `share`, the lexical weight of a query shrinks when its
/// best full-text hit is below `share` of the query's ceiling.
fn grid_scores_with(
    all: &[Lists],
    base: &Ranking,
    pool: usize,
    ceiling_share: Option<f64>,
) -> [f64; 3] {
    let now = chrono::Utc::now().timestamp();
    let mut sums = [0.0; 3];
    for l in all {
        let mut ranking = *base;
        if let (Some(cs), Some(best)) = (ceiling_share, l.lexical.first().map(|x| x.1)) {
            if l.ceiling > 0.0 {
                ranking.lexical_weight *= (best / (cs * l.ceiling)).min(1.0);
            }
        }
        let ranked: Vec<String> = ranked_ids(l, &l.lexical, &ranking, pool, now)
            .iter()
            .take(20)
            .map(|id| turn_of(id))
            .collect();
        add_scores(&mut sums, l, &ranked);
    }
    let n = all.len().max(1) as f64;
    sums.map(|s| s / n)
}

pub fn add_scores(sums: &mut [f64; 3], l: &Lists, ranked: &[String]) {
    for (i, k) in [1, 10, 20].iter().enumerate() {
        sums[i] += share(&l.evidence, &ranked[..ranked.len().min(*k)]);
    }
}

/// Memory ids of `l` fused by `ranking` with `lexical` as the full-text list, best first.
pub fn ranked_ids(
    l: &Lists,
    lexical: &[(String, f64)],
    ranking: &Ranking,
    pool: usize,
    now: i64,
) -> Vec<String> {
    let lexical = &lexical[..lexical.len().min(pool)];
    let vector = ranking.keep_similar(l.vector[..l.vector.len().min(pool)].to_vec());
    let mut scored: Vec<(String, f64)> = ranking
        .fuse(lexical, &vector)
        .into_iter()
        .map(|(id, rel)| {
            let (c, u) = l.priors.get(&id).copied().unwrap_or((0.5, now));
            (id, ranking.prior(rel, c, u, now))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(id, _)| id).collect()
}

/// Fusion settings compared on cached candidate lists (fast: no recall path, no
/// budgets); the default was chosen from this table.
pub fn grid(stores: &mut [(MemoryStore, &Conversation)]) {
    let started = Instant::now();
    let all = lists(stores);
    println!(
        "\nfusion settings on cached lists ({} questions, lists of {GRID_POOL}, {:.0} s to fetch):",
        all.len(),
        started.elapsed().as_secs_f64()
    );
    println!("{:<46} {:>6} {:>6} {:>6}", "setting", "R@1", "R@10", "R@20");
    let base = Ranking::default();
    let mut variants: Vec<(String, Ranking, usize)> = vec![
        ("full text only".into(), base.with_mode(Mode::Lexical), 50),
        ("vectors only".into(), base.with_mode(Mode::Vector), 50),
        ("default".into(), base, base.pool(20)),
        (
            "legacy (rrf 60, cos>=0.3, strong priors)".into(),
            Ranking::legacy(),
            60,
        ),
    ];
    for k in [10.0, 30.0, 60.0] {
        for w in [0.5, 0.6] {
            variants.push((
                format!("rrf k={k} lex={w}"),
                Ranking {
                    fusion: Fusion::Rrf { k },
                    lexical_weight: w,
                    vector_weight: 1.0 - w,
                    ..base
                },
                base.pool(20),
            ));
        }
    }
    for w in [0.4, 0.5, 0.6, 0.7] {
        for floor in [0.0_f32, 0.5] {
            for pool in [50, 200] {
                variants.push((
                    format!("blend lex={w} floor={floor} pool={pool}"),
                    Ranking {
                        lexical_weight: w,
                        vector_weight: 1.0 - w,
                        relative_floor: floor,
                        ..base
                    },
                    pool,
                ));
            }
        }
    }
    for tail in [0.0, 0.5, 1.0, 3.0] {
        variants.push((
            format!("default, vector tail {tail}"),
            Ranking {
                vector_tail: tail,
                ..base
            },
            base.pool(20),
        ));
    }
    variants.push((
        "default, no priors".into(),
        Ranking {
            confidence_strength: 0.0,
            recency_strength: 0.0,
            ..base
        },
        base.pool(20),
    ));
    for (name, ranking, pool) in variants {
        let [r1, r10, r20] = grid_scores(&all, &ranking, pool);
        println!("{name:<46} {r1:>6.3} {r10:>6.3} {r20:>6.3}");
    }
    if std::env::var("HARVEY_RECALL_GRID").as_deref() == Ok("feedback") {
        super::feedback::grid(stores, &all);
        return;
    }
    lexical_grid(stores, all);
}

/// BM25F settings, each with the default fusion and the same vector lists.
fn lexical_grid(stores: &[(MemoryStore, &Conversation)], mut all: Vec<Lists>) {
    let base = Bm25::default();
    let mut variants = vec![("bm25f default".to_string(), base)];
    variants.push((
        "no prefix terms".into(),
        Bm25 {
            prefix_min: usize::MAX,
            ..base
        },
    ));
    variants.push((
        "no prefix k1=0.9 b=0".into(),
        Bm25 {
            k1: 0.9,
            b: 0.0,
            prefix_min: usize::MAX,
            ..base
        },
    ));
    println!("\nBM25F settings (hybrid, default fusion; then full text alone):");
    println!(
        "{:<46} {:>6} {:>6} {:>6}   {:>6} {:>6}",
        "setting", "R@1", "R@10", "R@20", "ftR@1", "ftR@10"
    );
    let ranking = Ranking::default();
    let pool = ranking.pool(20);
    for (name, params) in variants {
        let mut at = 0;
        for (_, conv) in stores {
            let fields: Vec<[String; FIELDS]> = conv
                .memories
                .iter()
                .map(|m| {
                    [
                        m.description.clone(),
                        m.summary.clone(),
                        m.tags.join(" "),
                        m.action.clone().unwrap_or_default(),
                        m.body.clone(),
                    ]
                })
                .collect();
            let index = LexicalIndex::build_with(
                params,
                conv.memories.iter().zip(&fields).map(|(m, f)| DocText {
                    meta: DocMeta {
                        id: m.id.clone(),
                        mtype: m.mtype,
                        expires: None,
                        confidence: m.confidence,
                        updated: 0,
                    },
                    fields: [&f[0], &f[1], &f[2], &f[3], &f[4]],
                }),
            );
            for q in &conv.questions {
                all[at].lexical = index
                    .search(&q.text, GRID_POOL, |_| true)
                    .into_iter()
                    .map(|(d, s)| (d.id.clone(), s))
                    .collect();
                all[at].ceiling = index.ceiling(&q.text);
                at += 1;
            }
        }
        let [r1, r10, r20] = grid_scores(&all, &ranking, pool);
        let [f1, f10, _] = grid_scores(&all, &ranking.with_mode(Mode::Lexical), pool);
        println!("{name:<46} {r1:>6.3} {r10:>6.3} {r20:>6.3}   {f1:>6.3} {f10:>6.3}");
        for share in [0.3, 0.5, 0.75, 1.0] {
            let [r1, r10, r20] = grid_scores_with(&all, &ranking, pool, Some(share));
            println!(
                "{:<46} {r1:>6.3} {r10:>6.3} {r20:>6.3}",
                format!("  + lexical weight by ceiling x{share}")
            );
        }
    }
}
