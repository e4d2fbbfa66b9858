//! The prompt before the first message (instructions, tools, guidance, the workspace map,
//! the memory context) is held to `engine.fixed_prompt_pct` of n_ctx with every model of
//! the suite, at 2K and 4K, also when the store holds more than the memory budget; and a
//! 2K window with the Qwen 0.5B runs a tool call and an answer (its fixed prompt alone
//! took 1,885 of 2,048 tokens with the template's tool schemas).

use harvey::app::App;
use harvey::config::Config;
use harvey::engine::{LlamaEngine, StopReason};

use crate::support::{engine, gemma_engine, gemma_path, load, qwen_path};

/// A workspace with a few files and more memories than any budget here holds.
fn workspace(app_dir: &std::path::Path) {
    std::fs::create_dir_all(app_dir.join("src")).unwrap();
    std::fs::write(
        app_dir.join("Cargo.toml"),
        "[package]\nname = \"tides\"\nversion = \"0.3.1\"\n",
    )
    .unwrap();
    std::fs::write(app_dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(app_dir.join("README.md"), "# tides\nPrints tide tables.\n").unwrap();
}

fn config(n_ctx: u32) -> Config {
    let mut c = Config::default();
    c.engine.n_ctx = n_ctx;
    c.engine.cache_prefix = false;
    c.memory.embedder = harvey::config::Embedder::None;
    c.sampling.max_tokens = 64;
    c.sampling.temperature = 0.0;
    c
}

/// `n` project facts, each in words of its own (near-duplicates would be folded together).
fn add_memories(app: &mut App, n: usize) {
    const PLACES: &[&str] = &[
        "Aberdeen",
        "Brest",
        "Cadiz",
        "Dover",
        "Esbjerg",
        "Faro",
        "Galway",
        "Hull",
        "Inverness",
        "Jersey",
        "Kiel",
        "Lisbon",
        "Malmo",
        "Nantes",
        "Oban",
        "Porto",
    ];
    const THINGS: &[&str] = &[
        "gauge",
        "buoy",
        "radar",
        "barometer",
        "anemometer",
        "sonar",
        "camera",
        "beacon",
    ];
    let mut out = Vec::new();
    for i in 0..n {
        let place = PLACES[i % PLACES.len()];
        let thing = THINGS[(i / PLACES.len()) % THINGS.len()];
        let line = format!(
            "/memory add project_fact The {place} {thing} feeds station {} of the tide tables",
            1000 + 37 * i
        );
        harvey::repl::handle_line(app, &line, &mut out).unwrap();
    }
}

/// The fixed part of the prompt after the session-start recall, against its cap.
fn check(name: &str, n_ctx: u32, load_engine: &dyn Fn(u32) -> LlamaEngine) {
    let ws = tempfile::tempdir().unwrap();
    workspace(ws.path());
    let config = config(n_ctx);
    let pct = config.engine.fixed_prompt_pct;
    let mut app = App::with_engine(
        ws.path().to_path_buf(),
        config,
        Box::new(load_engine(n_ctx)),
    );
    add_memories(&mut app, 60);
    let injected = app
        .inject_memory("Which station does the Dover gauge feed?")
        .map_or(0, |i| i.items.len());
    let parts = app.context_parts().unwrap();
    let cap = (f64::from(n_ctx) * pct).floor() as usize;
    assert_eq!(parts.fixed_cap, cap);
    assert!(
        parts.fixed <= cap,
        "{name} at {n_ctx}: {} tokens before the first message, cap {cap}: {:?}",
        parts.fixed,
        parts.parts
    );
    assert!(injected > 0, "{name} at {n_ctx}: some memory still fits");
    let named: usize = parts
        .parts
        .iter()
        .filter(|p| p.name != "pinned" && p.name != "conversation")
        .map(|p| p.tokens)
        .sum();
    assert_eq!(
        named, parts.fixed,
        "{name}: the rows add up to the fixed part"
    );
}

#[test]
fn fixed_prompt_stays_under_its_share_with_smollm2() {
    for n_ctx in [2048, 4096] {
        check("SmolLM2", n_ctx, &|n| engine(n, 256));
    }
}

#[test]
fn fixed_prompt_stays_under_its_share_with_gemma() {
    let path = gemma_path("fixed prompt").expect("gemma");
    for n_ctx in [2048, 4096] {
        check("Gemma 3 270M", n_ctx, &|n| gemma_engine(path.clone(), n));
    }
}

#[test]
fn fixed_prompt_stays_under_its_share_with_qwen() {
    for n_ctx in [2048, 4096] {
        check("Qwen 0.5B", n_ctx, &|n| load(qwen_path(), n, 256));
    }
}

/// "Remember that …" goes to `memory_write` without the router model, so a call is made
/// whatever the model decodes; in a 2K window the call is decoded whole (not cut off by a
/// full context), runs, and an answer follows that ends in bounds.
#[test]
fn qwen_2k_session_makes_a_call_and_answers() {
    let ws = tempfile::tempdir().unwrap();
    workspace(ws.path());
    let mut app = App::with_engine(
        ws.path().to_path_buf(),
        config(2048),
        Box::new(load(qwen_path(), 2048, 256)),
    );
    let turn = app
        .agent_turn(
            "Remember that the staging server is called kestrel.",
            &mut |_| {},
        )
        .expect("the turn fits a 2K window");
    let first = turn.calls.first().expect("a call was made");
    let call = first.call.as_ref().expect("the call was decoded whole");
    assert_eq!(call.name, "memory_write");
    assert!(
        matches!(
            turn.completion.stop,
            StopReason::EndOfGeneration | StopReason::StopString | StopReason::MaxTokens
        ),
        "{:?}",
        turn.completion.stop
    );
    assert!(!turn.completion.text.trim().is_empty(), "an answer follows");
    assert!(
        turn.steps
            .iter()
            .any(|s| s.kind == harvey::chat::agent::StepKind::Answer),
        "the answer is a timed step: {:?}",
        turn.steps
    );
    let used = app.context_used().unwrap();
    assert!(used < 2048, "{used}");
}
