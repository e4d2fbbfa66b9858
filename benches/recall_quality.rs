//! `cargo bench --bench recall_quality [FILE]`: recall quality on LoCoMo-style long
//! conversations, side by side for full text only, vectors only and the default hybrid
//! ranking, in one run.
//!
//! Each dialogue turn becomes a `workflow` memory ("Speaker: text", the turn id as a tag,
//! `created_at` from its session's date); each question (categories 1–4 with evidence) is
//! recalled through the session-start path (`memory::recall::recall` with the memory
//! silo, exact token counts from the default model's vocabulary). Reported: recall@1/5/10/
//! 20 (share of a question's evidence turns among the first k), hit@10 (share of questions
//! with at least one evidence turn in the first 10), recall inside 256/512/1024-token
//! budgets, recall@10 per category, and ms per query (query embedding included).
//!
//! The data is not part of the repository (licence): pass its path as the argument, or
//! set HARVEY_LOCOMO; the default is `../shared/data/locomo-dev.json` beside the
//! project. Missing data → one line and exit 0. HARVEY_RECALL_GRID=1 also prints the
//! fusion settings that were compared when the default was chosen (`=only`: just
//! those; `=feedback`: the pseudo-relevance feedback settings). HARVEY_RECALL_NOISE=1
//! adds the noise check (`noise.rs`: a store of unrelated chunks beside the memories;
//! `=only`: just that). HARVEY_RECALL_MISSES=1 (or `=only`) counts the default
//! ranking's misses by reason (`misses.rs`). HARVEY_RECALL_MODES=default runs the
//! default ranking alone; HARVEY_RECALL_DATE=w overrides its date weight.
//! HARVEY_RECALL_VECTORS=file keeps the memories' vectors in that file between runs
//! (a second run of a lever that changes keys or ranking embeds no memory; it then
//! reports no cost per memory written).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use harvey::engine::{LlamaEmbedder, Vocabulary};
use harvey::memory::rank::{Mode, Ranking};
use harvey::memory::recall::{recall, Limits, MemorySilo};
use harvey::memory::{keys, Memory, MemoryStore, MemoryType};

#[path = "recall_quality/feedback.rs"]
mod feedback;
#[path = "recall_quality/grid.rs"]
mod grid;
#[path = "recall_quality/memo.rs"]
mod memo;
#[path = "recall_quality/misses.rs"]
mod misses;
#[path = "recall_quality/noise.rs"]
mod noise;
use grid::grid;
use memo::Memo;

const KS: [usize; 4] = [1, 5, 10, 20];
const BUDGETS: [usize; 3] = [256, 512, 1024];
const FACTUAL_SHARE: f64 = 0.5;

struct Question {
    text: String,
    evidence: Vec<String>,
    category: u64,
}

struct Conversation {
    memories: Vec<Memory>,
    questions: Vec<Question>,
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let data = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HARVEY_LOCOMO").map(PathBuf::from))
        .unwrap_or_else(|| root.join("../shared/data/locomo-dev.json"));
    if !data.exists() {
        println!(
            "recall_quality: skipped, no data at {} (pass a LoCoMo JSON path or set HARVEY_LOCOMO)",
            data.display()
        );
        return;
    }
    let conversations = match load(&data) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{}: {e}", data.display());
            std::process::exit(1);
        }
    };
    let vocab = Vocabulary::load(&root.join("models/SmolLM2-135M-Instruct.Q4_1.gguf"))
        .unwrap_or_else(|e| fail(&format!("{e}: run scripts/fetch-models.sh")));
    let threads = harvey::app::physical_cores();
    let embedder = LlamaEmbedder::load(&root.join("models/all-MiniLM-L6-v2.gguf"), threads)
        .unwrap_or_else(|e| fail(&format!("{e}: run scripts/fetch-embedder.sh")));
    let embedder = Arc::new(Memo::new(Arc::new(embedder)));
    let dir = tempfile::tempdir().unwrap_or_else(|e| fail(&e.to_string()));
    let was_kept = embedder.is_kept();
    let built = Instant::now();
    let mut stores: Vec<(MemoryStore, &Conversation)> = conversations
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                build_store(&dir.path().join(i.to_string()), c, &embedder),
                c,
            )
        })
        .collect();
    let n: usize = stores.iter().map(|(_, c)| c.questions.len()).sum();
    let turns: usize = stores.iter().map(|(_, c)| c.memories.len()).sum();
    println!(
        "{} ({} conversations, {turns} turns, {n} questions of categories 1-4)",
        data.display(),
        stores.len()
    );
    embedder.save();
    println!(
        "cost per memory written (index + embedding): {:.2} ms{}",
        built.elapsed().as_secs_f64() * 1000.0 / turns.max(1) as f64,
        if was_kept {
            " (vectors from HARVEY_RECALL_VECTORS: not a cost)"
        } else {
            ""
        }
    );
    let base = lever_settings(Ranking::default());
    let mut modes = vec![
        ("full text only", base.with_mode(Mode::Lexical)),
        ("vectors only", base.with_mode(Mode::Vector)),
        ("default (hybrid)", base),
    ];
    if std::env::var("HARVEY_RECALL_MODES").is_ok_and(|v| v == "default") {
        modes.drain(..2);
    }
    let grid_only =
        std::env::var("HARVEY_RECALL_GRID").is_ok_and(|v| v == "only" || v == "feedback");
    if grid_only {
        grid(&mut stores);
        return;
    }
    let misses_env = std::env::var("HARVEY_RECALL_MISSES").unwrap_or_default();
    if misses_env == "only" {
        misses::misses(&mut stores, base, &vocab);
        return;
    }
    let noise_env = std::env::var("HARVEY_RECALL_NOISE").unwrap_or_default();
    if noise_env == "only" {
        embedder.clear();
        noise::noise(
            &stores,
            &root.join("README.md"),
            &embedder,
            &vocab,
            dir.path(),
        );
        return;
    }
    print_header();
    let mut results = Vec::new();
    for (name, ranking) in modes {
        embedder.clear();
        let s = evaluate(&mut stores, ranking, &vocab, true);
        print_row(name, &s);
        results.push((name, s));
    }
    print_categories(&results);
    if misses_env == "1" {
        misses::misses(&mut stores, base, &vocab);
    }
    if noise_env == "1" {
        embedder.clear();
        noise::noise(
            &stores,
            &root.join("README.md"),
            &embedder,
            &vocab,
            dir.path(),
        );
    }
    if std::env::var("HARVEY_RECALL_GRID").is_ok_and(|v| v == "1") {
        grid(&mut stores);
    }
}

/// The ranking with levers overridden for a comparison run: HARVEY_RECALL_DATE=w sets
/// the date weight (0 = dates are words only).
fn lever_settings(mut r: Ranking) -> Ranking {
    if let Some(w) = std::env::var("HARVEY_RECALL_DATE")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        r.date_weight = w;
    }
    r
}

fn fail(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(1)
}

#[derive(Default)]
struct Scores {
    questions: usize,
    recall_at: [f64; 4],
    hit10: f64,
    budget: [f64; 3],
    by_category: HashMap<u64, (f64, usize)>,
    ms: Vec<f64>,
}

fn evaluate(
    stores: &mut [(MemoryStore, &Conversation)],
    ranking: Ranking,
    vocab: &Vocabulary,
    budgets: bool,
) -> Scores {
    let mut s = Scores::default();
    for (store, conv) in stores.iter_mut() {
        store.set_ranking(ranking);
        let silo = MemorySilo(store);
        for q in &conv.questions {
            let t = Instant::now();
            let list = recall(&[&silo], &q.text, Limits::list(20, FACTUAL_SHARE), vocab)
                .unwrap_or_else(|e| fail(&e.to_string()));
            s.ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let ranked: Vec<String> = list
                .items
                .iter()
                .map(|p| turn_of(&p.candidate.id))
                .collect();
            for (i, k) in KS.iter().enumerate() {
                s.recall_at[i] += share(&q.evidence, &ranked[..ranked.len().min(*k)]);
            }
            let top10 = &ranked[..ranked.len().min(10)];
            s.hit10 += f64::from(u8::from(q.evidence.iter().any(|e| top10.contains(e))));
            let entry = s.by_category.entry(q.category).or_default();
            entry.0 += share(&q.evidence, top10);
            entry.1 += 1;
            if budgets {
                for (i, b) in BUDGETS.iter().enumerate() {
                    let packed = recall(
                        &[&silo],
                        &q.text,
                        Limits::budgeted(*b, FACTUAL_SHARE),
                        vocab,
                    )
                    .unwrap_or_else(|e| fail(&e.to_string()));
                    let ids: Vec<String> = packed
                        .items
                        .iter()
                        .map(|p| turn_of(&p.candidate.id))
                        .collect();
                    s.budget[i] += share(&q.evidence, &ids);
                }
            }
            s.questions += 1;
        }
    }
    s
}

fn share(evidence: &[String], found: &[String]) -> f64 {
    if evidence.is_empty() {
        return 0.0;
    }
    let found: HashSet<&String> = found.iter().collect();
    evidence.iter().filter(|e| found.contains(e)).count() as f64 / evidence.len() as f64
}

/// Which neighbouring turns lend context keys (previous, next): HARVEY_RECALL_CONTEXT
/// = `prev` (the default), `both`, `next` or `none`.
fn context_setting() -> (bool, bool) {
    match std::env::var("HARVEY_RECALL_CONTEXT").as_deref() {
        Ok("none") => (false, false),
        Ok("both") => (true, true),
        Ok("next") => (false, true),
        _ => (true, false),
    }
}

/// Memory id `turn_D1_3` → turn id `D1:3`.
fn turn_of(id: &str) -> String {
    id.strip_prefix("turn_").unwrap_or(id).replacen('_', ":", 1)
}

fn print_header() {
    println!(
        "{:<42} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8}",
        "mode",
        "R@1",
        "R@5",
        "R@10",
        "R@20",
        "hit@10",
        "in256",
        "in512",
        "in1024",
        "ms p50",
        "ms p99"
    );
}

fn print_row(name: &str, s: &Scores) {
    let n = s.questions.max(1) as f64;
    let mut ms = s.ms.clone();
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        ms.get(((ms.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "{:<42} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>8.2} {:>8.2}",
        name,
        s.recall_at[0] / n,
        s.recall_at[1] / n,
        s.recall_at[2] / n,
        s.recall_at[3] / n,
        s.hit10 / n,
        s.budget[0] / n,
        s.budget[1] / n,
        s.budget[2] / n,
        pct(0.5),
        pct(0.99)
    );
}

fn print_categories(results: &[(&str, Scores)]) {
    println!("\nrecall@10 by category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop):");
    for (name, s) in results {
        let mut cats: Vec<_> = s.by_category.iter().collect();
        cats.sort_by_key(|(c, _)| **c);
        let cells: Vec<String> = cats
            .iter()
            .map(|(c, (sum, n))| format!("{c}: {:.3} (n={n})", sum / (*n).max(1) as f64))
            .collect();
        println!("{name:<42} {}", cells.join("  "));
    }
}

fn build_store(dir: &Path, conv: &Conversation, embedder: &Arc<Memo>) -> MemoryStore {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| fail(&e.to_string()));
    let (mut store, _) = MemoryStore::open(dir, dir).unwrap_or_else(|e| fail(&e.to_string()));
    store
        .index_only(&conv.memories)
        .unwrap_or_else(|e| fail(&e.to_string()));
    store
        .set_embedder(embedder.clone())
        .unwrap_or_else(|e| fail(&e.to_string()));
    store
}

fn load(path: &Path) -> Result<Vec<Conversation>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let list = value
        .as_array()
        .ok_or("expected a JSON list of conversations")?;
    list.iter().map(conversation).collect()
}

fn conversation(c: &serde_json::Value) -> Result<Conversation, String> {
    let conv = c["conversation"].as_object().ok_or("no conversation")?;
    let mut memories = Vec::new();
    for n in 1.. {
        let Some(turns) = conv.get(&format!("session_{n}")).and_then(|t| t.as_array()) else {
            if n > 60 {
                break;
            }
            continue;
        };
        let date = conv
            .get(&format!("session_{n}_date_time"))
            .and_then(|d| d.as_str())
            .and_then(parse_date)
            .unwrap_or_else(|| "2023-01-01T00:00:00Z".into());
        let context = context_setting();
        for (i, t) in turns.iter().enumerate() {
            let mut m = turn_memory(t, &date)?;
            let said = |j: usize| turns.get(j).and_then(|t| t["text"].as_str()).unwrap_or("");
            let mut around = String::new();
            if context.0 && i > 0 {
                around.push_str(said(i - 1));
            }
            if context.1 {
                around.push('\n');
                around.push_str(said(i + 1));
            }
            m.tags.extend(keys::context_keys(
                &around,
                &m.description,
                keys::CONTEXT_KEYS,
            ));
            memories.push(m);
        }
    }
    let questions = c["qa"]
        .as_array()
        .ok_or("no qa")?
        .iter()
        .filter_map(question)
        .collect();
    Ok(Conversation {
        memories,
        questions,
    })
}

fn turn_memory(t: &serde_json::Value, date: &str) -> Result<Memory, String> {
    let id = t["dia_id"].as_str().ok_or("a turn without dia_id")?;
    let mut text = format!(
        "{}: {}",
        t["speaker"].as_str().unwrap_or("someone"),
        t["text"].as_str().unwrap_or("")
    );
    if let Some(caption) = t.get("blip_caption").and_then(|c| c.as_str()) {
        text.push_str(&format!(" [shares a photo: {caption}]"));
    }
    Ok(Memory {
        id: format!("turn_{}", id.replacen(':', "_", 1)),
        mtype: MemoryType::Workflow,
        kind: None,
        created_at: date.into(),
        updated_at: date.into(),
        supersedes: Vec::new(),
        tags: vec![id.to_string()],
        description: text,
        summary: String::new(),
        action: None,
        confidence: 0.5,
        source_session: None,
        expires_at: None,
        evidence: None,
        body: String::new(),
        extra: Default::default(),
    })
}

fn question(q: &serde_json::Value) -> Option<Question> {
    let category = q["category"].as_u64()?;
    if !(1..=4).contains(&category) {
        return None;
    }
    let evidence: Vec<String> = q["evidence"]
        .as_array()?
        .iter()
        .filter_map(|e| e.as_str())
        .flat_map(|e| e.split([';', ' ', ',']))
        .filter_map(normalize_turn)
        .collect();
    (!evidence.is_empty()).then(|| Question {
        text: q["question"].as_str().unwrap_or("").to_string(),
        evidence,
        category,
    })
}

/// `D1:3`, `D:1:3` → `D1:3`.
fn normalize_turn(e: &str) -> Option<String> {
    let digits: Vec<&str> = e
        .trim()
        .trim_start_matches('D')
        .split(':')
        .filter(|p| !p.is_empty())
        .collect();
    match digits.as_slice() {
        [s, t] if s.parse::<u32>().is_ok() && t.parse::<u32>().is_ok() => Some(format!("D{s}:{t}")),
        _ => None,
    }
}

/// "1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00Z".
fn parse_date(text: &str) -> Option<String> {
    let (time, date) = text.split_once(" on ")?;
    let (hm, ampm) = time.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let mut h: u32 = h.parse().ok()?;
    let m: u32 = m.parse().ok()?;
    if ampm.eq_ignore_ascii_case("pm") && h < 12 {
        h += 12;
    } else if ampm.eq_ignore_ascii_case("am") && h == 12 {
        h = 0;
    }
    let mut parts = date.split([' ', ',']).filter(|p| !p.is_empty());
    let day: u32 = parts.next()?.parse().ok()?;
    let month = parts.next()?;
    let year: u32 = parts.next()?.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let mon = MONTHS.iter().position(|n| n.eq_ignore_ascii_case(month))? + 1;
    Some(format!("{year:04}-{mon:02}-{day:02}T{h:02}:{m:02}:00Z"))
}
