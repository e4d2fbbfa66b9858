//! Memory recall: recall@5 on the dev set, hostile queries that must never error, and
//! the memory context injected into a session (the real model and a scripted one).

use std::path::Path;

use harvey::memory::file::render;
use harvey::memory::recall::{Limits, MemorySilo};
use harvey::memory::{Memory, MemoryStore, MemoryType};
use harvey::tokens::WordCounter;
use serde::Deserialize;

use super::memory::{open, put};

#[derive(Deserialize)]
struct DevSet {
    memories: Vec<DevMemory>,
    queries: Vec<DevQuery>,
}

#[derive(Deserialize)]
struct DevMemory {
    id: String,
    #[serde(rename = "type")]
    mtype: String,
    description: String,
    summary: String,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    action: Option<String>,
    tags: Vec<String>,
}

#[derive(Deserialize)]
struct DevQuery {
    q: String,
    expect: Vec<String>,
}

fn load_devset(ws: &Path) -> (MemoryStore, DevSet) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/memory_devset.json"),
    )
    .unwrap();
    let set: DevSet = serde_json::from_str(&text).unwrap();
    for (i, d) in set.memories.iter().enumerate() {
        let mtype = MemoryType::parse(&d.mtype).unwrap();
        let m = Memory {
            id: d.id.clone(),
            mtype,
            kind: d.kind.clone(),
            created_at: "2026-10-01T12:00:00Z".into(),
            updated_at: "2026-10-01T12:00:00Z".into(),
            supersedes: Vec::new(),
            tags: d.tags.clone(),
            description: d.description.clone(),
            summary: d.summary.clone(),
            action: d.action.clone(),
            confidence: 0.5,
            source_session: None,
            expires_at: None,
            evidence: None,
            body: String::new(),
            extra: Default::default(),
        };
        // The Go tool's extension and harvey's, alternately.
        let ext = ["spmd", "fountain", "md"][i % 3];
        put(
            ws,
            &format!("{mtype}/{}.{ext}", d.id),
            render(&m).as_bytes(),
        );
    }
    let (store, report) = open(ws);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.indexed, set.memories.len());
    (store, set)
}

#[test]
fn dev_set_recall_at_5() {
    let ws = tempfile::tempdir().unwrap();
    let (store, set) = load_devset(ws.path());
    assert!(set.memories.len() >= 40 && set.queries.len() >= 25);
    let types: std::collections::HashSet<&str> =
        set.memories.iter().map(|m| m.mtype.as_str()).collect();
    assert_eq!(types.len(), 5);
    let mut found = 0;
    let mut expected = 0;
    let mut misses = Vec::new();
    for q in &set.queries {
        let top: Vec<String> = store
            .search(&q.q, &[], 5)
            .unwrap_or_else(|e| panic!("query {:?} failed: {e}", q.q))
            .into_iter()
            .map(|h| h.row.id)
            .collect();
        for id in &q.expect {
            expected += 1;
            if top.contains(id) {
                found += 1;
            } else {
                misses.push(format!("{:?} -> {top:?} (wanted {id})", q.q));
            }
        }
    }
    let recall = f64::from(found) / f64::from(expected);
    eprintln!("dev set recall@5 = {found}/{expected} = {recall:.3}; misses: {misses:#?}");
    assert!(recall >= 0.9, "recall@5 {recall:.3}: {misses:#?}");
}

#[test]
fn hostile_queries_return_results_or_nothing_never_an_error() {
    let ws = tempfile::tempdir().unwrap();
    let (store, _) = load_devset(ws.path());
    for q in [
        "How do I fix git?",
        "what's the error",
        "git: error",
        "\"quoted\" (parens) AND OR NOT *",
        "NEAR(a b) ^col:x -y +z",
        "'; DROP TABLE memories; --",
        "\"unbalanced",
        "???",
        "",
        "日本語のテキスト",
        &"long ".repeat(500),
    ] {
        store
            .search(q, &[], 5)
            .unwrap_or_else(|e| panic!("{q:?}: {e}"));
        let silo = MemorySilo(&store);
        harvey::memory::recall::recall(
            &[&silo],
            q,
            Limits {
                budget: 200,
                factual_share: 0.5,
                max_relevant: 5,
            },
            &WordCounter,
        )
        .unwrap_or_else(|e| panic!("{q:?}: {e}"));
    }
}

mod injection {
    use harvey::app::App;
    use harvey::chat::prefix_cache::PrefixOutcome;
    use harvey::config::Config;
    use harvey::engine::scripted::ScriptedEngine;
    use harvey::repl::handle_line;

    use crate::support;

    fn say(app: &mut App, line: &str) -> String {
        let mut out = Vec::new();
        handle_line(app, line, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn config(n_ctx: u32) -> Config {
        let mut c = Config::default();
        c.engine.n_ctx = n_ctx;
        c.sampling.max_tokens = 8;
        c.sampling.temperature = 0.0;
        c
    }

    #[test]
    fn real_model_a_memory_saved_in_one_session_is_injected_in_the_next() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().to_path_buf();
        {
            let mut first = App::with_engine(
                root.clone(),
                config(2048),
                Box::new(support::engine(2048, 512)),
            );
            let out = say(
                &mut first,
                "/memory add project_fact The staging server is called kestrel and runs Debian",
            );
            assert!(out.starts_with("saved project_fact_"), "{out}");
            say(&mut first, "hello");
        }
        let mut second = App::with_engine(
            root.clone(),
            config(2048),
            Box::new(support::engine(2048, 512)),
        );
        // The query-independent part (facts) is known before the first message and is
        // saved with the system prompt as the stable prefix.
        let stable = second.stable_memory_context();
        assert!(stable.contains("kestrel"), "{stable}");
        let saved = second.prepare_prefix(&stable).clone();
        assert!(matches!(saved, PrefixOutcome::Saved { .. }), "{saved:?}");
        let out = say(&mut second, "What is the staging server called?");
        let inj = second
            .injection()
            .cloned()
            .expect("injected at the first message");
        assert!(inj.text.contains("kestrel"), "{}", inj.text);
        assert!(
            inj.text.starts_with("[memory context]\n[project facts]\n"),
            "{}",
            inj.text
        );
        // floor(2048 × 0.25), cut by engine.fixed_prompt_pct to no less than a quarter.
        assert_eq!(inj.budget, second.memory_budget());
        assert!((128..=512).contains(&inj.budget), "{}", inj.budget);
        assert!(inj.tokens <= inj.budget);
        // The reported number is the model's own count of the injected block.
        assert_eq!(second.engine().count_tokens(&inj.text), inj.tokens);
        assert!(
            out.contains(&format!(
                "[memory: 1 item, {}/{} tokens]",
                inj.tokens, inj.budget
            )),
            "{out}"
        );
        // It is what the model saw: right after the system prompt, before the question.
        let prompt = second
            .engine()
            .render_prompt(&second.conversation().messages())
            .unwrap();
        let block = prompt.find("[memory context]").unwrap();
        let system = prompt.find("You are Harvey").unwrap();
        let question = prompt.find("What is the staging server called?").unwrap();
        assert!(system < block && block < question, "{prompt}");
        // /context shows the exact text and count; later turns leave it as it is.
        let shown = say(&mut second, "/context memory");
        assert!(
            shown.contains(&format!("{} of {} tokens", inj.tokens, inj.budget)),
            "{shown}"
        );
        assert!(shown.contains(&inj.text), "{shown}");
        // /context alone counts it as its own part of the prompt.
        let parts = say(&mut second, "/context");
        let memory_row = crate::suite::files::number_after(&parts, "\n  memory context");
        assert!(memory_row >= inj.tokens, "{parts}");
        say(&mut second, "and the other server?");
        assert_eq!(second.conversation().context(), Some(inj.text.as_str()));
        assert!(inj.text.starts_with(&stable));

        // A third session restores that prefix instead of prefilling it.
        let mut third = App::with_engine(root, config(2048), Box::new(support::engine(2048, 512)));
        let restored = third.prepare_prefix(&third.stable_memory_context()).clone();
        let PrefixOutcome::Restored { tokens } = restored else {
            panic!("{restored:?}");
        };
        let c = third
            .turn("What is the staging server called?", &mut |_| {})
            .unwrap();
        assert!(third.conversation().context().unwrap().contains("kestrel"));
        assert_eq!(c.stats.evaluated_tokens, c.stats.prompt_tokens - tokens);
    }

    #[test]
    fn injection_happens_once_and_respects_inject_on_start() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().to_path_buf();
        let engine = ScriptedEngine::new(4096, ["one", "two", "three"]);
        let mut app = App::with_engine(root.clone(), Config::default(), Box::new(engine));
        say(
            &mut app,
            "/memory add user_preference Prefer short answers without preamble",
        );
        say(
            &mut app,
            "/memory add tool_use Use ripgrep to search the tree",
        );
        let out = say(&mut app, "how should answers look? short?");
        assert!(out.contains("[memory: 1 item,"), "{out}");
        let first = app.conversation().context().unwrap().to_string();
        assert!(first.contains("Prefer short answers"), "{first}");
        assert!(
            !first.contains("ripgrep"),
            "only relevant experience: {first}"
        );
        say(&mut app, "ripgrep?");
        say(&mut app, "/clear");
        say(&mut app, "ripgrep again?");
        assert_eq!(app.conversation().context(), Some(first.as_str()));

        let mut off = Config::default();
        off.memory.inject_on_start = false;
        let engine = ScriptedEngine::new(4096, ["one"]);
        let mut app = App::with_engine(root, off, Box::new(engine));
        let out = say(&mut app, "how should answers look?");
        assert!(!out.contains("[memory:"), "{out}");
        // Only the workspace map: no memory block.
        let context = app.conversation().context().unwrap_or_default();
        assert!(!context.contains("[memory context]"), "{context}");
        assert!(say(&mut app, "/context memory").contains("injection is off"));
        assert!(say(&mut app, "/memory status").contains("1024 tokens"));
    }
}
