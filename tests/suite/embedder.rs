//! The real embedding model (models/all-MiniLM-L6-v2.gguf, made by
//! scripts/fetch-embedder.sh): fidelity against an independent implementation, its
//! tokenization against tokenizer.json, long inputs, hybrid recall on paraphrases, and
//! the knowledge base in a fresh workspace through the CLI.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, OnceLock};

use harvey::engine::embed::ArrivingEmbedder;
use harvey::engine::LlamaEmbedder;
use harvey::memory::{Draft, MemoryStore};
use harvey::tokens::Embedder;
use harvey::vector::cosine;
use serde::Deserialize;

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models")
}

/// One embedder for the whole test binary (as one process shares it in the product).
fn embedder() -> Arc<LlamaEmbedder> {
    static E: OnceLock<Arc<LlamaEmbedder>> = OnceLock::new();
    E.get_or_init(|| {
        let path = models().join("all-MiniLM-L6-v2.gguf");
        assert!(
            path.is_file(),
            "{} is missing: run scripts/fetch-embedder.sh (scripts/test.sh does)",
            path.display()
        );
        Arc::new(LlamaEmbedder::load(&path, 2).expect("the embedder loads"))
    })
    .clone()
}

#[derive(Deserialize)]
struct Reference {
    how: String,
    sentences: Vec<RefSentence>,
}

#[derive(Deserialize)]
struct RefSentence {
    text: String,
    token_ids: Vec<i32>,
    vector: Vec<f32>,
}

fn reference() -> Reference {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/embed_reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn embeddings_match_an_independent_implementation() {
    let r = reference();
    assert!(r.how.contains("numpy"), "the fixture says how it was made");
    assert!(r.sentences.len() >= 5);
    let e = embedder();
    let texts: Vec<&str> = r.sentences.iter().map(|s| s.text.as_str()).collect();
    let got = e.embed(&texts).unwrap();
    for (s, v) in r.sentences.iter().zip(&got) {
        assert_eq!(v.len(), 384);
        let c = cosine(v, &s.vector);
        assert!(c >= 0.99, "cosine {c:.4} for {:?}", s.text);
        assert_eq!(e.tokens(&s.text), s.token_ids, "token ids for {:?}", s.text);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "normalized");
    }
    // One at a time (a short input alone goes to the one-thread context) gives the same
    // vectors as a batch.
    for (text, batched) in texts.iter().zip(&got) {
        let single = e.embed(&[text]).unwrap();
        let c = cosine(&single[0], batched);
        assert!(c > 0.9999, "cosine {c:.6} alone vs batched for {text:?}");
    }
    // The last single input is remembered (one recall asks every source for the same
    // query): asked again it is the same vector; each text above, asked right after
    // another, got its own.
    let last = texts[texts.len() - 1];
    assert_eq!(e.embed(&[last]).unwrap(), e.embed(&[last]).unwrap());
}

#[test]
fn tokenization_matches_tokenizer_json() {
    let mut tok =
        tokenizers::Tokenizer::from_file(models().join("all-MiniLM-L6-v2.tokenizer.json"))
            .expect("tokenizer.json loads (scripts/fetch-embedder.sh puts it in models/)");
    // The file pads to 128 and truncates for training; compare the tokens themselves.
    tok.with_padding(None);
    tok.with_truncation(None).unwrap();
    let sample = [
        "How do I reset my password?",
        "The Raspberry Pi 500+ has four Cortex-A76 cores.",
        "Crème brûlée at the café, naïve résumé!",
        "fn main() { println!(\"{}\", 2 + 2); } // 4",
        "UNSTRUCTURED   whitespace\tand\nnewlines",
        "emoji 🙂 and CJK 日本語 and math ∑ x²",
        "tokenization-with-hyphens_and_underscores ... ellipsis",
        "",
    ];
    let e = embedder();
    for text in sample {
        let want: Vec<i32> = tok
            .encode(text, true)
            .unwrap()
            .get_ids()
            .iter()
            .map(|&i| i as i32)
            .collect();
        assert_eq!(e.tokens(text), want, "{text:?}");
    }
}

#[test]
fn long_inputs_are_cut_explicitly_and_many_inputs_are_batched() {
    let e = embedder();
    let long = "the greenhouse pump runs every morning ".repeat(400);
    let ids = e.tokens(&long);
    assert_eq!(ids.len(), 256, "cut to the model's limit");
    assert_eq!(ids.last(), e.tokens("").last(), "the separator is kept");
    let many: Vec<String> = (0..150)
        .map(|i| format!("sentence number {i} about valves"))
        .collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let mut inputs = refs.clone();
    inputs.push(&long);
    let vs = e.embed(&inputs).unwrap();
    assert_eq!(vs.len(), 151);
    assert!(vs.iter().all(|v| v.len() == 384));
}

fn memory(description: &str, summary: &str) -> Draft {
    Draft {
        mtype: "tool_use".into(),
        description: description.into(),
        summary: summary.into(),
        ..Draft::default()
    }
}

#[test]
fn the_vector_path_finds_a_paraphrase_that_full_text_misses() {
    let ws = tempfile::tempdir().unwrap();
    let agents = ws.path().join("agents");
    let (mut store, _) = MemoryStore::open(&agents, ws.path()).unwrap();
    let target = store
        .write(&memory(
            "Connect the VPN before running the deploy script",
            "The deploy script hangs unless the VPN tunnel is up.",
        ))
        .unwrap()
        .id()
        .to_string();
    for (d, s) in [
        (
            "Use cargo nextest for the test suite",
            "It runs tests in parallel.",
        ),
        (
            "The database password rotates monthly",
            "Ask the admin for the new one.",
        ),
        ("Prefer short commit messages", "One line, imperative mood."),
        (
            "Large downloads go to the external disk",
            "The SD card is nearly full.",
        ),
        (
            "Postgres listens on port 5433 here",
            "Not the default 5432.",
        ),
    ] {
        store.write(&memory(d, s)).unwrap();
    }
    // VPN = private network, deploy = rollout, hangs = freezes: no shared stem.
    let query = "the rollout freezes without the private network";
    let lexical: Vec<String> = store
        .search(query, &[], 3)
        .unwrap()
        .into_iter()
        .map(|h| h.row.id)
        .collect();
    assert!(
        !lexical.contains(&target),
        "full text alone must miss it for this test to mean anything: {lexical:?}"
    );
    let e: Arc<dyn Embedder> = embedder();
    assert_eq!(
        store.set_embedder(e).unwrap(),
        6,
        "every memory got a vector"
    );
    let hybrid: Vec<String> = store
        .search(query, &[], 3)
        .unwrap()
        .into_iter()
        .map(|h| h.row.id)
        .collect();
    assert_eq!(hybrid.first(), Some(&target), "{hybrid:?}");
}

fn harvey_in(workdir: &std::path::Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .arg("--workdir")
        .arg(workdir)
        .args(args)
        // The fast test model, not whichever default is fetched here (the 1.5B Pi model).
        .env("HARVEY_MODEL", crate::support::model_path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"").unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_knowledge_base_works_in_a_fresh_workspace_and_feeds_recall() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("orchard");
    std::fs::create_dir(&ws).unwrap();
    let o = harvey_in(&ws, &["kb", "status", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let status: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        status["current_project"], "orchard",
        "default project = workspace name"
    );
    let o = harvey_in(
        &ws,
        &[
            "kb",
            "observe",
            "--kind",
            "decision",
            "Apple trees get pruned in late February, never in autumn",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let obs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = obs["id"].as_i64().unwrap();
    let o = harvey_in(
        &ws,
        &[
            "memory",
            "recall",
            "when should I cut back the fruit trees?",
            "--budget",
            "300",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let block = v["block"].as_str().unwrap();
    assert!(block.contains("[knowledge]"), "{block}");
    assert!(
        block.contains(&format!("(kb:{id} decision) Apple trees")),
        "{block}"
    );
}

#[test]
fn rag_cli_ingests_and_answers_with_path_and_lines() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path();
    let docs = ws.join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("pump.md"),
        "# Pump\n\n## Priming\n\nFill the pump housing with water before the first start, or the impeller runs dry and wears out.\n",
    )
    .unwrap();
    // Before any store: an error whose hint is a command line, not a REPL command.
    let o = harvey_in(ws, &["rag", "query", "pump"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("harvey rag new NAME"), "{err}");
    assert!(!err.contains("/rag"), "{err}");
    let o = harvey_in(ws, &["rag", "new", "garden"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("harvey rag ingest PATH"), "{said}");
    let o = harvey_in(ws, &["rag", "ingest", "docs", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["report"]["files_ingested"], 1);
    assert_eq!(r["report"]["vectors_added"], r["report"]["chunks_added"]);
    let o = harvey_in(
        ws,
        &[
            "rag",
            "query",
            "the impeller is damaged after starting dry",
            "--json",
        ],
    );
    let q: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(q["hits"][0]["path"], "docs/pump.md");
    assert_eq!(q["hits"][0]["start_line"], 3);
    assert_eq!(q["hits"][0]["end_line"], 5);
}

#[test]
fn a_missing_embedder_means_full_text_only_said_in_one_line() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: models/nowhere.gguf\n",
    )
    .unwrap();
    let o = harvey_in(ws.path(), &["memory", "status"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("full-text search only"))
        .collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("nowhere.gguf does not exist"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("vectors none"));

    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: none\n",
    )
    .unwrap();
    let o = harvey_in(ws.path(), &["memory", "status"]);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("full-text"),
        "none is a choice, not a problem"
    );
}

#[test]
fn an_embedder_loading_on_its_own_thread_gives_the_same_vectors() {
    let path = models().join("all-MiniLM-L6-v2.gguf");
    let arriving = ArrivingEmbedder::start(&path, 2).expect("the file checks out");
    let at_once = embedder();
    assert_eq!(
        arriving.model_id(),
        at_once.model_id(),
        "the id is known before the model is"
    );
    let query = ["how is the pump wired to the relay board?"];
    let batch = [
        "The greenhouse pump runs from 6 to 7 in the morning.",
        "Deploy the service to the Pi with scp, then restart it.",
        "The sensor readings froze after the firmware update.",
    ];
    for texts in [&query[..], &batch[..]] {
        let got = arriving.embed(texts).unwrap();
        let want = at_once.embed(texts).unwrap();
        assert_eq!(got.len(), texts.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(cosine(g, w) > 0.9999, "{texts:?}: {}", cosine(g, w));
        }
    }
    assert!(arriving.arrived());
    assert_eq!(arriving.dim(), at_once.dim());
    assert_eq!(arriving.max_tokens(), at_once.max_tokens());
}

/// A GGUF whose header is sound (one tensor, its data in the file) but whose
/// architecture llama.cpp does not know: it passes harvey's checks and fails the load.
fn unknown_architecture_gguf(path: &std::path::Path) {
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    };
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(1u64.to_le_bytes()); // tensors
    b.extend(1u64.to_le_bytes()); // key-value pairs
    string(&mut b, "general.architecture");
    b.extend(8u32.to_le_bytes()); // a string
    string(&mut b, "nonesuch");
    string(&mut b, "token_embd.weight");
    b.extend(1u32.to_le_bytes()); // dimensions
    b.extend(4u64.to_le_bytes());
    b.extend(0u32.to_le_bytes()); // F32
    b.extend(0u64.to_le_bytes()); // offset in the data
    b.resize(b.len().div_ceil(32) * 32, 0);
    b.extend([0u8; 16]);
    std::fs::write(path, b).unwrap();
}

#[test]
fn an_embedder_llama_cpp_refuses_costs_the_vectors_not_the_answer() {
    let ws = tempfile::tempdir().unwrap();
    let bad = ws.path().join("odd-embedder.gguf");
    unknown_architecture_gguf(&bad);
    let arriving = ArrivingEmbedder::start(&bad, 1).expect("the header is sound");
    assert!(!arriving.model_id().is_empty());
    let err = arriving.embed(&["hello"]).unwrap_err().to_string();
    assert!(err.contains("did not load"), "{err}");
    assert!(arriving.wait().is_err());

    std::fs::create_dir(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: odd-embedder.gguf\n",
    )
    .unwrap();
    let o = harvey_in(
        ws.path(),
        &[
            "memory",
            "add",
            "--type",
            "project_fact",
            "--description",
            "The relay board drives the greenhouse pump",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = harvey_in(ws.path(), &["memory", "recall", "greenhouse pump relay"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("relay board"),
        "full text still answers: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("did not load")).collect();
    assert_eq!(notes.len(), 1, "said once: {err}");
    assert!(notes[0].contains("full-text search only"), "{err}");
}
