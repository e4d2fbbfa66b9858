//! The noise check of `recall_quality` (`HARVEY_RECALL_NOISE=1`, or `=only` to skip the
//! other tables): the same questions recalled through the memory silo alone, then with a
//! RAG store of unrelated chunks beside it (the project's own README, chunked and embedded
//! as `harvey rag ingest` would). A relevance floor that holds across sources keeps
//! recall@10 of the conversation's evidence where it was and leaves the budget to the
//! memories; per-source scaling lets every store's best chunk in as if it were relevant.

use std::path::Path;
use std::sync::Arc;

use harvey::memory::recall::{recall, Limits, MemorySilo, Silo};
use harvey::memory::MemoryStore;
use harvey::rag::ingest::IngestOptions;
use harvey::rag::{RagSilo, RagStore};
use harvey::tokens::TokenCounter;

use super::{fail, share, turn_of, Conversation, Memo, FACTUAL_SHARE};

/// The budget the noise is measured in (the session start's default at 4096 × 0.25).
const BUDGET: usize = 1024;
/// `memory.rag.top_k`'s default.
const RAG_TOP_K: usize = 5;

#[derive(Default)]
struct Noise {
    questions: usize,
    recall10: f64,
    in_budget: f64,
    rag_in_top10: f64,
    rag_tokens: f64,
    packed_any: usize,
}

/// Builds the unrelated store from `readme` and prints both rows.
pub fn noise(
    stores: &[(MemoryStore, &Conversation)],
    readme: &Path,
    embedder: &Arc<Memo>,
    counter: &dyn TokenCounter,
    dir: &Path,
) {
    let mut rag = RagStore::at(&dir.join("noise.db"), "noise", Some(embedder.clone()))
        .unwrap_or_else(|e| fail(&e.to_string()));
    let opts = IngestOptions {
        workspace: readme.parent().unwrap_or(readme),
        chunk_tokens: 256,
    };
    let report = rag
        .ingest(&[readme.to_path_buf()], &opts, &mut |_| {}, &|| false)
        .unwrap_or_else(|e| fail(&e.to_string()));
    println!(
        "\nbeside an unrelated RAG store ({} chunks of {}), budget {BUDGET}:",
        report.chunks_added,
        readme.display()
    );
    println!(
        "{:<42} {:>6} {:>7} {:>12} {:>12} {:>12}",
        "sources", "R@10", "in1024", "rag in top10", "rag tokens", "rag packed"
    );
    let silo = RagSilo::new(&rag, RAG_TOP_K);
    print_noise("memories alone (hybrid)", &measure(stores, None, counter));
    print_noise(
        "memories + unrelated store",
        &measure(stores, Some(&silo), counter),
    );
}

fn measure(
    stores: &[(MemoryStore, &Conversation)],
    rag: Option<&RagSilo<'_>>,
    counter: &dyn TokenCounter,
) -> Noise {
    let mut n = Noise::default();
    for (store, conv) in stores {
        let memory = MemorySilo(store);
        let mut silos: Vec<&dyn Silo> = vec![&memory];
        silos.extend(rag.map(|r| r as &dyn Silo));
        for q in &conv.questions {
            let list = recall(&silos, &q.text, Limits::list(10, FACTUAL_SHARE), counter)
                .unwrap_or_else(|e| fail(&e.to_string()));
            let ranked: Vec<String> = list
                .items
                .iter()
                .map(|p| turn_of(&p.candidate.id))
                .collect();
            n.recall10 += share(&q.evidence, &ranked);
            n.rag_in_top10 += list.items.iter().filter(|p| is_rag(p)).count() as f64;
            let packed = recall(
                &silos,
                &q.text,
                Limits::budgeted(BUDGET, FACTUAL_SHARE),
                counter,
            )
            .unwrap_or_else(|e| fail(&e.to_string()));
            let ids: Vec<String> = packed
                .items
                .iter()
                .map(|p| turn_of(&p.candidate.id))
                .collect();
            n.in_budget += share(&q.evidence, &ids);
            let rag_tokens: usize = packed
                .items
                .iter()
                .filter(|p| is_rag(p))
                .map(|p| p.tokens)
                .sum();
            n.rag_tokens += rag_tokens as f64;
            n.packed_any += usize::from(rag_tokens > 0);
            n.questions += 1;
        }
    }
    n
}

fn is_rag(p: &harvey::memory::recall::Packed) -> bool {
    p.candidate.source.starts_with("rag:")
}

fn print_noise(name: &str, n: &Noise) {
    let q = n.questions.max(1) as f64;
    println!(
        "{:<42} {:>6.3} {:>7.3} {:>12.2} {:>12.1} {:>11.1}%",
        name,
        n.recall10 / q,
        n.in_budget / q,
        n.rag_in_top10 / q,
        n.rag_tokens / q,
        100.0 * n.packed_any as f64 / q
    );
}
