//! Where the misses are (`HARVEY_RECALL_MISSES=1`, or `=only`): for the default ranking,
//! each evidence turn not among a question's first 10, counted per category under the
//! first reason that applies:
//! - `date`: the question names a date (`memory::when`), which the turn's words lack;
//! - `name`: the question names someone in another form than the turns do ("Mel" for
//!   "Melanie"), or the turn does not name the question's person at all;
//! - `spread`: the question has several evidence turns and some of them were found;
//! - `no words`: the turn shares no topic stem with the question (speakers' names aside);
//! - `ranked low`: shares words, but others ranked higher.
//!
//! `HARVEY_RECALL_MISSES_FILE=path` also writes every miss (question, turn) there.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;

use harvey::engine::Vocabulary;
use harvey::memory::query::terms;
use harvey::memory::rank::Ranking;
use harvey::memory::recall::{recall, Limits, MemorySilo};
use harvey::memory::MemoryStore;
use rust_stemmers::{Algorithm, Stemmer};

use super::{fail, turn_of, Conversation, FACTUAL_SHARE};

const REASONS: [&str; 5] = ["date", "name", "spread", "no words", "ranked low"];

pub fn misses(stores: &mut [(MemoryStore, &Conversation)], ranking: Ranking, vocab: &Vocabulary) {
    let stemmer = Stemmer::create(Algorithm::English);
    let mut counts: BTreeMap<u64, [usize; 5]> = BTreeMap::new();
    let mut evidence_total: BTreeMap<u64, usize> = BTreeMap::new();
    let mut log =
        std::env::var_os("HARVEY_RECALL_MISSES_FILE").and_then(|p| std::fs::File::create(p).ok());
    let now = chrono::Utc::now().timestamp();
    for (store, conv) in stores.iter_mut() {
        let text: HashMap<String, &str> = conv
            .memories
            .iter()
            .map(|m| (turn_of(&m.id), m.description.as_str()))
            .collect();
        let speakers: HashSet<String> = conv
            .memories
            .iter()
            .filter_map(|m| m.description.split_once(':').map(|s| s.0.to_lowercase()))
            .collect();
        store.set_ranking(ranking);
        let silo = MemorySilo(store);
        for q in &conv.questions {
            let list = recall(&[&silo], &q.text, Limits::list(10, FACTUAL_SHARE), vocab)
                .unwrap_or_else(|e| fail(&e.to_string()));
            let top: Vec<String> = list
                .items
                .iter()
                .map(|p| turn_of(&p.candidate.id))
                .collect();
            let found = q.evidence.iter().filter(|e| top.contains(e)).count();
            *evidence_total.entry(q.category).or_default() += q.evidence.len();
            // Every turn names its speaker: a shared name is not a shared word.
            let topic = |t: &str| -> HashSet<String> {
                terms(t)
                    .iter()
                    .filter(|w| !speakers.contains(*w))
                    .map(|w| stemmer.stem(w).into_owned())
                    .collect()
            };
            let q_stems = topic(&q.text);
            for e in q.evidence.iter().filter(|e| !top.contains(e)) {
                let turn = text.get(e).copied().unwrap_or("");
                let reason = reason(&q.text, turn, &speakers, found, &q_stems, &topic(turn), now);
                counts.entry(q.category).or_default()[reason] += 1;
                if let Some(f) = log.as_mut() {
                    let _ = writeln!(
                        f,
                        "[{}|{}] {}\n    {e}: {turn}",
                        q.category, REASONS[reason], q.text
                    );
                }
            }
        }
    }
    println!("\nmisses at 10 (default ranking), evidence turns by first reason:");
    println!(
        "{:<10} {:>9} {:>7} {}",
        "category",
        "evidence",
        "missed",
        REASONS.join(" / ")
    );
    for (cat, c) in &counts {
        println!(
            "{cat:<10} {:>9} {:>7} {}",
            evidence_total.get(cat).copied().unwrap_or(0),
            c.iter().sum::<usize>(),
            c.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" / ")
        );
    }
}

fn reason(
    question: &str,
    turn: &str,
    speakers: &HashSet<String>,
    found: usize,
    q_stems: &HashSet<String>,
    t_stems: &HashSet<String>,
    now: i64,
) -> usize {
    if harvey::memory::when::dated(question, now).is_some() {
        return 0;
    }
    let turn_lower = turn.to_lowercase();
    let names: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .skip(1)
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .map(str::to_lowercase)
        .collect();
    let other_form = names
        .iter()
        .any(|n| !speakers.contains(n) && speakers.iter().any(|s| s.starts_with(n.as_str())));
    let unnamed = names
        .iter()
        .filter(|n| speakers.contains(*n))
        .any(|n| !turn_lower.contains(n.as_str()));
    if other_form || unnamed {
        return 1;
    }
    if found > 0 {
        return 2;
    }
    if q_stems.is_disjoint(t_stems) {
        return 3;
    }
    4
}
