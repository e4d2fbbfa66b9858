//! Shared test helpers: the real default model and engine settings for tests.

pub mod http;
pub mod pdf;
pub mod process;

use std::path::PathBuf;

use harvey::engine::{AbortFlag, EngineParams, GenerateOptions, LlamaEngine, SamplingParams};

/// The default GGUF, fetched by `scripts/fetch-models.sh` (the test command runs it).
pub fn model_path() -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/fetch-models.sh (scripts/test.sh does)",
        path.display()
    );
    path
}

/// Loads the real model with a small context so tests stay quick.
pub fn engine(n_ctx: u32, n_batch: u32) -> LlamaEngine {
    load(model_path(), n_ctx, n_batch)
}

/// A model file the test command fetches; a missing one fails the test with the command
/// that fetches it (a test never passes by skipping its model).
pub fn required_model(file: &str, fetch: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(file);
    assert!(
        path.is_file(),
        "{} is missing: run {fetch} (scripts/test.sh does)",
        path.display()
    );
    path
}

/// The second test family, Gemma 3 270M (no chat template in the file), fetched by
/// `scripts/fetch-models.sh --test`. `Some` always; a missing file fails the test.
pub fn gemma_path(_test: &str) -> Option<PathBuf> {
    Some(required_model(
        "gemma-3-270m-q4_k_m.gguf",
        "scripts/fetch-models.sh --gemma",
    ))
}

/// The instruction-tuned test family, Qwen2.5-Coder-0.5B-Instruct (its template has a
/// tools section), fetched by `scripts/fetch-models.sh --test`.
pub fn qwen_path() -> PathBuf {
    required_model(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "scripts/fetch-models.sh --qwen-small",
    )
}

/// Loads Gemma 3 270M with a small context.
pub fn gemma_engine(path: PathBuf, n_ctx: u32) -> LlamaEngine {
    load(path, n_ctx, 512)
}

/// The default model's engine settings for tests: two threads, the file's template, an
/// f16 cache and `engine.lookup`'s default (override fields with `..params(…)`).
pub fn params(n_ctx: u32, n_batch: u32) -> EngineParams {
    EngineParams {
        model_path: model_path(),
        n_ctx,
        n_batch,
        threads: 2,
        threads_batch: 2,
        template: None,
        kv_cache_type: Default::default(),
        lookup: Default::default(),
        mmap: Default::default(),
    }
}

pub fn load(model_path: PathBuf, n_ctx: u32, n_batch: u32) -> LlamaEngine {
    LlamaEngine::load(&EngineParams {
        model_path,
        ..params(n_ctx, n_batch)
    })
    .expect("the model loads")
}

pub fn greedy(max_tokens: usize) -> GenerateOptions {
    GenerateOptions {
        sampling: SamplingParams {
            temperature: 0.0,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            repeat_penalty: 1.1,
            repeat_last_n: 64,
            seed: 42,
        },
        max_tokens: Some(max_tokens),
        abort: AbortFlag::new(),
        grammar: None,
        stop: Vec::new(),
        stop_finder: None,
        banned: Vec::new(),
        keep_prompt: false,
        assistant_prefix: None,
    }
}

/// Decodes a tool call for `prompt` under the registry's grammar (forced: the reply
/// starts with the call opener) and checks that it ends by the grammar completing, parses,
/// names a registered tool and validates; returns the completion (its counters).
pub fn forced_call(
    e: &mut LlamaEngine,
    registry: &harvey::tools::Registry,
    system: &str,
    prompt: &str,
) -> harvey::engine::Completion {
    use harvey::engine::{Message, Role};
    use harvey::tools::grammar::{call_grammar, call_max_tokens};
    let grammar = call_grammar(&registry.list());
    let messages = [
        Message::new(Role::System, system),
        Message::new(Role::User, prompt),
    ];
    let mut opts = greedy(call_max_tokens(&grammar));
    opts.grammar = Some(grammar);
    opts.assistant_prefix = Some(harvey::tools::CALL_OPENER.into());
    let done = e.generate(&messages, &opts, &mut |_| {}).unwrap();
    let text = done
        .grammar_output()
        .unwrap_or_else(|stop| panic!("{prompt}: cut off ({stop:?}): {}", done.text));
    let call =
        harvey::tools::parse_call(text).unwrap_or_else(|err| panic!("{prompt}: {err}: {text}"));
    let tool = registry
        .get(&call.name)
        .unwrap_or_else(|| panic!("{prompt}: unregistered tool {}", call.name));
    harvey::tools::call::validate(tool.params(), &call.arguments)
        .unwrap_or_else(|err| panic!("{prompt}: {err}: {text}"));
    done
}

/// An app in `dir` answering from `replies` in order (a scripted engine of n_ctx 4096),
/// with tools off so a reply is never read as a tool call.
pub fn scripted_app(
    dir: &std::path::Path,
    replies: impl IntoIterator<Item = impl Into<String>>,
) -> harvey::app::App {
    let mut config = harvey::config::Config::default();
    config.tools.enabled = false;
    harvey::app::App::with_engine(
        dir.to_path_buf(),
        config,
        Box::new(harvey::engine::scripted::ScriptedEngine::new(4096, replies)),
    )
}

/// The memory context `app` sends after one turn on `line` (empty when none).
pub fn context_after_turn(app: &mut harvey::app::App, line: &str) -> String {
    app.turn(line, &mut |_| {}).unwrap();
    app.conversation().context().unwrap_or_default().to_string()
}
