//! The second model family, Gemma 3 270M: its file has no chat template, so harvey picks
//! llama.cpp's built-in `gemma` format from the architecture; replies stop on
//! `<end_of_turn>`; every prompt harvey renders (chat, memory context, tool calls, the
//! session summary) works with Gemma turns. Skipped with one line when the file is absent.
//!
//! The fixture is the pretrained 270M model (google/gemma-3-270m), not the instruction-
//! tuned one: it answers the first words right ("Honey.") and then, never having learnt
//! `<end_of_turn>`, writes on to `max_tokens`. So a free reply is asserted bounded and free
//! of template text; ending by an end-of-generation token is shown under a grammar (the
//! tool call), where only such a token may follow a complete call.

use harvey::app::{workspace_tools, App};
use harvey::chat::prefix_cache::PrefixOutcome;
use harvey::config::Config;
use harvey::engine::{Engine, Message, Role, StopReason};
use harvey::repl::handle_line;
use harvey::tools::grammar::{call_grammar, call_max_tokens};

use crate::support::{forced_call, gemma_engine, gemma_path, greedy};

/// Template text that must never reach a reply, whatever the family.
const TEMPLATE_TEXT: &[&str] = &[
    "<start_of_turn>",
    "<end_of_turn>",
    "<|im_start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<bos>",
    "<eos>",
];

fn assert_no_template_text(what: &str, text: &str) {
    for marker in TEMPLATE_TEXT {
        assert!(!text.contains(marker), "{what} contains {marker}: {text:?}");
    }
}

fn say(app: &mut App, line: &str) -> String {
    let mut out = Vec::new();
    handle_line(app, line, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn gemma_gets_the_gemma_format_chosen_from_its_architecture() {
    let Some(path) = gemma_path("gemma_gets_the_gemma_format") else {
        return;
    };
    // The header alone (no weights loaded) already says which format harvey will use.
    let header = harvey::gguf::read(&path).unwrap();
    assert!(!header.has_chat_template);
    assert_eq!(
        header.template_fallback.as_deref(),
        Some("gemma (architecture gemma3)")
    );
    let e = gemma_engine(path, 512);
    let info = e.info();
    assert_eq!(info.template_name, "gemma");
    assert_eq!(
        info.template_reason,
        "the file has no template; architecture gemma3"
    );
    let typed = "what does <start_of_turn> mean?";
    let messages = [
        Message::new(Role::System, "Be brief."),
        Message::new(Role::User, typed),
    ];
    let prompt = e.render_prompt(&messages).unwrap();
    assert!(
        prompt.starts_with("<start_of_turn>user\nBe brief.\n\n"),
        "{prompt:?}"
    );
    assert!(prompt.ends_with("<end_of_turn>\n<start_of_turn>model\n"));
    // The template's markers are one special token each; the typed one stays text.
    let ids = e.prompt_ids(&messages).unwrap();
    let marker = e.tokenize_raw("<start_of_turn>", true);
    assert_eq!(marker.len(), 1);
    let specials = ids.iter().filter(|&&t| t == marker[0]).count();
    assert_eq!(specials, 2, "user turn + model opener only: {ids:?}");
    assert_eq!(e.count_prompt(&messages).unwrap(), ids.len());
}

#[test]
fn gemma_replies_are_bounded_and_never_show_template_text() {
    let Some(path) = gemma_path("gemma_replies_are_bounded") else {
        return;
    };
    let mut e = gemma_engine(path, 1024);
    // Earlier turns show the format, rendered by the template like any history.
    let mut history = vec![Message::new(Role::System, "Answer in one or two words.")];
    for (q, a) in [
        ("What is 2 + 2?", "4."),
        ("What colour is the sky on a clear day?", "Blue."),
    ] {
        history.push(Message::new(Role::User, q));
        history.push(Message::new(Role::Assistant, a));
    }
    let max_tokens = 16;
    for q in ["What is the capital of France?", "What do bees make?"] {
        let mut messages = history.clone();
        messages.push(Message::new(Role::User, q));
        let c = e
            .generate(&messages, &greedy(max_tokens), &mut |_| {})
            .unwrap();
        assert_no_template_text(q, &c.text);
        match c.stop {
            // Ended by an end-of-generation token of the vocabulary (never shown).
            StopReason::EndOfGeneration => assert!(c.stats.completion_tokens < max_tokens),
            StopReason::MaxTokens => assert_eq!(c.stats.completion_tokens, max_tokens),
            other => panic!("{q}: {other:?}"),
        }
        eprintln!("gemma: {q} -> {:?} ({:?})", c.text, c.stop);
    }
}

#[test]
fn gemma_tool_call_under_the_grammar_parses() {
    let Some(path) = gemma_path("gemma_tool_call_under_the_grammar_parses") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "deploy with ./deploy.sh\n").unwrap();
    let registry = workspace_tools(dir.path());
    let system = harvey::app::system_prompt(&registry, true, "");
    let n_ctx = 2048;
    let max_tokens = call_max_tokens(&call_grammar(&registry.list()));
    let mut e = gemma_engine(path, n_ctx);
    for prompt in ["Read the file notes.txt.", "List the files here."] {
        let done = forced_call(&mut e, &registry, &system, prompt);
        assert!(done.stats.prompt_tokens + max_tokens <= n_ctx as usize);
    }
}

fn config(n_ctx: u32) -> Config {
    let mut c = Config::default();
    c.engine.n_ctx = n_ctx;
    c.sampling.max_tokens = 16;
    c.sampling.temperature = 0.0;
    c.tools.enabled = false;
    c
}

#[test]
fn gemma_memory_injection_prefix_cache_and_session_summary() {
    let Some(path) = gemma_path("gemma_memory_injection_prefix_cache_and_session_summary") else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().to_path_buf();
    let open = || {
        App::with_engine(
            root.clone(),
            config(1024),
            Box::new(gemma_engine(path.clone(), 1024)),
        )
    };
    let mut first = open();
    let out = say(
        &mut first,
        "/memory add project_fact The staging server is called kestrel and runs Debian",
    );
    assert!(out.starts_with("saved project_fact_"), "{out}");
    let stable = first.stable_memory_context();
    let saved = first.prepare_prefix(&stable).clone();
    assert!(matches!(saved, PrefixOutcome::Saved { .. }), "{saved:?}");
    let out = say(&mut first, "What is the staging server called?");
    let inj = first
        .injection()
        .cloned()
        .expect("injected at the first message");
    assert!(inj.text.contains("kestrel"), "{}", inj.text);
    // floor(1024 × 0.25), cut by engine.fixed_prompt_pct to no less than a quarter.
    assert_eq!(inj.budget, first.memory_budget());
    assert!((64..=256).contains(&inj.budget), "{}", inj.budget);
    assert_eq!(first.engine().count_tokens(&inj.text), inj.tokens);
    assert!(
        out.contains(&format!(
            "[memory: 1 item, {}/{} tokens]",
            inj.tokens, inj.budget
        )),
        "{out}"
    );
    // Gemma has no system turn: the system prompt opens the first user turn, then the
    // memory context, then the question — the stable part still comes first.
    let prompt = first
        .engine()
        .render_prompt(&first.conversation().messages())
        .unwrap();
    let system = prompt.find("You are Harvey").unwrap();
    let block = prompt.find("[memory context]").unwrap();
    let question = prompt.find("What is the staging server called?").unwrap();
    assert!(system < block && block < question, "{prompt}");
    assert!(prompt.starts_with("<start_of_turn>user\nYou are Harvey"));
    let reply = &first.transcript()[0].1;
    assert_no_template_text("reply", reply);
    let report = first.close_session(&mut |_| {}).expect("closed");
    assert!(!report.skipped);
    assert!(!report.summary.trim().is_empty());
    assert_no_template_text("summary", &report.summary);
    drop(first);

    // The next session restores the saved prefix: its key (model, template, tokens) holds.
    let mut second = open();
    let restored = second
        .prepare_prefix(&second.stable_memory_context())
        .clone();
    assert!(
        matches!(restored, PrefixOutcome::Restored { .. }),
        "{restored:?}"
    );
    let record = std::fs::read_to_string(&report.record).unwrap();
    assert_no_template_text("session record", &record);
}

/// `/model use` in a REPL process of its own (so its resident memory is its alone):
/// Gemma is freed, SmolLM2 loaded in the same process, the conversation carried over.
#[test]
fn model_use_switches_in_process_keeps_the_conversation_and_frees_memory() {
    let Some(gemma) = gemma_path("model_use_switches_in_process") else {
        return;
    };
    let ws = crate::support::process::workspace();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: none\nsampling:\n  max_tokens: 4\nengine:\n  n_ctx: 1024\n",
    )
    .unwrap();
    let smollm = crate::support::model_path();
    let script = format!(
        "My name is Ada.\n/model use {}\n/status\n/model list\n/model use no-such-model\n",
        smollm.display()
    );
    let mut cmd = crate::support::process::harvey(ws.path());
    cmd.arg("--model").arg(&gemma);
    let out = crate::support::process::with_stdin(cmd, &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("[model Gemma 3 270m → ")
            && stdout.contains("template chatml (the model file's own template (Jinja))]"),
        "{stdout}"
    );
    // The first turn is still there: system prompt + memory context + both messages.
    let kept: usize = stdout
        .split("[conversation kept: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(kept > 100, "{stdout}");
    assert!(
        stdout.contains(&format!(
            "context    {kept}/1024 tokens used ({kept} in KV cache)"
        )),
        "{stdout}"
    );
    // The 253 MB Gemma is freed before the 98 MB SmolLM2 loads.
    let mb = |label: &str| -> u64 {
        stdout
            .split("[resident memory: ")
            .nth(1)
            .and_then(|s| s.split(label).next())
            .and_then(|s| s.split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{label}: {stdout}"))
    };
    let (before, after) = (mb(" MB before"), mb(" MB after"));
    assert!(
        after + 100 < before,
        "resident {before} MB → {after} MB: {stdout}"
    );
    // The list marks the loaded model; a bad name leaves it loaded.
    assert!(
        stdout.contains("* SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{stdout}"
    );
    assert!(stdout.contains("no model \"no-such-model\""), "{stdout}");
}
