//! The instruction-tuned family, Qwen2.5-Coder-0.5B-Instruct: its own chat template is
//! rendered by the Jinja engine with the tools section, its calls and tool results go the
//! way that template writes them, short replies end by themselves, the render stays
//! append-only, the saved prefix (tools section included) is restored, and a session
//! summary is written. Only what holds for every output is asserted (another CPU may
//! decode greedily along another path).

use harvey::app::{call_forms, offer_tools, tools_with_abort, workspace_tools, App};
use harvey::chat::prefix_cache::{restore_or_save, stable_prefix_ids, PrefixOutcome};
use harvey::config::{Config, ToolSchemas};
use harvey::engine::{AbortFlag, Engine, LlamaEngine, Message, Role, StopReason};
use harvey::tools::call::validate;
use harvey::tools::{parse_call, Registry};

use crate::support::{greedy, load, qwen_path};

/// Template text that must never reach a reply.
const TEMPLATE_TEXT: &[&str] = &[
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<tool_response>",
    "[memory context]",
];

fn assert_no_template_text(what: &str, text: &str) {
    for marker in TEMPLATE_TEXT {
        assert!(!text.contains(marker), "{what} contains {marker}: {text:?}");
    }
}

fn qwen(n_ctx: u32) -> LlamaEngine {
    load(qwen_path(), n_ctx, 256)
}

/// The engine with the workspace tools offered the way its template takes them.
fn with_tools(e: &mut LlamaEngine, registry: &Registry) -> String {
    offer_tools(e, registry, true, "", ToolSchemas::Template)
}

#[test]
fn qwen_renders_its_own_template_with_the_tools_section() {
    let dir = tempfile::tempdir().unwrap();
    let registry = workspace_tools(dir.path());
    let mut e = qwen(2048);
    let info = e.info().clone();
    assert_eq!(
        info.template_reason,
        "the model file's own template (Jinja)"
    );
    assert!(info.template_tools, "Qwen's template has a tools section");
    assert!(info.template_system_turns);
    let system = with_tools(&mut e, &registry);
    assert!(
        !system.contains("Tools you can call"),
        "the template lists the tools; the system prompt must not: {system}"
    );
    let prompt = e
        .render(&[
            Message::new(Role::System, system.clone()),
            Message::new(Role::User, "hi"),
        ])
        .unwrap();
    assert!(
        prompt.starts_with("<|im_start|>system\nYou are Harvey"),
        "{prompt}"
    );
    assert!(
        prompt.contains("# Tools") && prompt.contains("<tools>"),
        "{prompt}"
    );
    for tool in registry.list() {
        assert!(
            prompt.contains(&format!("\"name\": \"{}\"", tool.name)),
            "{}: {prompt}",
            tool.name
        );
    }
    assert!(prompt.ends_with("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"));
    // Without tools offered, no tools section; the system prompt describes them instead.
    let plain = offer_tools(&mut e, &registry, false, "", ToolSchemas::Template);
    let prompt = e
        .render(&[
            Message::new(Role::System, plain),
            Message::new(Role::User, "hi"),
        ])
        .unwrap();
    assert!(!prompt.contains("<tools>"), "{prompt}");
    // Compact (the default): one line per tool in the system prompt, no schemas, the
    // family's own call form in the example, and far fewer tokens.
    let compact = offer_tools(&mut e, &registry, true, "", ToolSchemas::Compact);
    let messages = [
        Message::new(Role::System, compact.clone()),
        Message::new(Role::User, "hi"),
    ];
    let prompt = e.render(&messages).unwrap();
    assert!(!prompt.contains("<tools>"), "{prompt}");
    for tool in registry.list() {
        assert!(compact.contains(&format!("- {}(", tool.name)), "{compact}");
    }
    assert!(compact.contains("<tool_call>"), "{compact}");
    let compact_tokens = e.count_prompt(&messages).unwrap();
    with_tools(&mut e, &registry);
    let schema_tokens = e
        .count_prompt(&[
            Message::new(Role::System, system),
            Message::new(Role::User, "hi"),
        ])
        .unwrap();
    assert!(
        compact_tokens * 2 < schema_tokens,
        "compact {compact_tokens} vs schemas {schema_tokens}"
    );
}

/// Rendering messages 1..k (with the assistant opener) followed by the assistant's text
/// is a prefix of rendering any longer conversation: the KV cache and the saved prefix
/// are reused, never re-prefilled. Checked on the text and on the token ids.
#[test]
fn qwen_render_is_append_only_through_tool_calls_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let registry = workspace_tools(dir.path());
    let mut e = qwen(4096);
    let system = with_tools(&mut e, &registry);
    let chat = [
        Message::new(Role::System, system),
        Message::new(Role::System, "Your notes: [memory context]\n- tabs, not spaces"),
        Message::new(Role::User, "What is in notes.txt?"),
        Message::new(
            Role::Assistant,
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>",
        ),
        Message::new(Role::Tool, "1: deploy with ./deploy.sh"),
        Message::new(Role::Assistant, "It says to deploy with ./deploy.sh."),
        Message::new(Role::User, "Thanks. And the folder?"),
        Message::new(
            Role::Assistant,
            "```json\n{\"name\": \"list_files\", \"arguments\": {}}\n```",
        ),
        Message::new(Role::Tool, "notes.txt"),
        Message::new(Role::Assistant, "Just notes.txt."),
    ];
    for k in 2..chat.len() {
        if chat[k].role != Role::Assistant {
            continue;
        }
        let head = format!("{}{}", e.render(&chat[..k]).unwrap(), chat[k].content);
        let head_ids = e.prompt_ids(&chat[..k]).unwrap();
        for j in k + 1..=chat.len() {
            let longer = e.render(&chat[..j]).unwrap();
            assert!(
                longer.starts_with(&head),
                "render 1..{k} + reply is not a prefix of 1..{j}:\n{head}\n---\n{longer}"
            );
            let ids = e.prompt_ids(&chat[..j]).unwrap();
            assert_eq!(
                &ids[..head_ids.len()],
                &head_ids[..],
                "ids 1..{k} vs 1..{j}"
            );
        }
    }
    // Tool results go back the way the template renders them: inside a user turn.
    let prompt = e.render(&chat[..5]).unwrap();
    assert!(prompt.contains("<|im_start|>user\n<tool_response>\n1: deploy with ./deploy.sh\n</tool_response><|im_end|>"), "{prompt}");
}

#[test]
fn qwen_short_replies_end_by_themselves_without_template_text() {
    let mut e = qwen(1024);
    let max_tokens = 96;
    for q in [
        "What is 2 + 2? Answer with the number only.",
        "Name the capital of France in one word.",
    ] {
        let messages = [
            Message::new(Role::System, "Answer briefly."),
            Message::new(Role::User, q),
        ];
        let c = e
            .generate(&messages, &greedy(max_tokens), &mut |_| {})
            .unwrap();
        assert_eq!(c.stop, StopReason::EndOfGeneration, "{q}: {:?}", c.text);
        assert!(c.stats.completion_tokens < max_tokens);
        assert!(!c.text.trim().is_empty());
        assert_no_template_text(q, &c.text);
    }
}

/// A call in the template's own form (`<tool_call>`, forced so every CPU takes it),
/// decoded under the grammar of registered tools, run, its result returned as the
/// template's tool message, then an answer that ends by itself.
#[test]
fn qwen_native_tool_call_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "deploy with ./deploy.sh\n").unwrap();
    // Every tool of a session: llama.cpp must accept the grammar built from all of them.
    let (registry, _) = tools_with_abort(dir.path(), &Config::default(), &AbortFlag::new());
    let mut e = qwen(4096);
    let system = with_tools(&mut e, &registry);
    let forms = call_forms(&registry, &e.info().template_text);
    assert_eq!(forms.openers, vec!["<tool_call>".to_string()]);
    let mut chat = vec![
        Message::new(Role::System, system),
        Message::new(
            Role::User,
            "Read the file notes.txt and tell me how to deploy.",
        ),
    ];
    let mut opts = greedy(harvey::tools::grammar::call_max_tokens(&forms.native));
    opts.grammar = Some(forms.native.clone());
    opts.assistant_prefix = Some("<tool_call>".into());
    let call = e.generate(&chat, &opts, &mut |_| {}).unwrap();
    let text = call.grammar_output().expect("the grammar completed");
    let parsed = parse_call(text).expect("the call parses");
    let tool = registry.get(&parsed.name).expect("a registered tool");
    validate(tool.params(), &parsed.arguments).expect("schema-valid arguments");
    let result = registry
        .call(&parsed.name, &parsed.arguments)
        .unwrap_or_else(|err| format!("error: {err}"));
    chat.push(Message::new(Role::Assistant, format!("<tool_call>{text}")));
    chat.push(Message::new(Role::Tool, result));
    let prompt = e.render(&chat).unwrap();
    assert!(prompt.contains("<tool_response>"), "{prompt}");
    let answer = e.generate(&chat, &greedy(160), &mut |_| {}).unwrap();
    assert_eq!(
        answer.stop,
        StopReason::EndOfGeneration,
        "{:?}",
        answer.text
    );
    assert!(!answer.text.trim().is_empty());
    assert_no_template_text("answer", &answer.text);
    eprintln!("qwen call: {text:?} -> {:?}", answer.text);
}

/// The stable prefix grows by the tools section; it is saved at the first start and
/// restored from disk at the next, not re-prefilled.
#[test]
fn qwen_saved_prefix_with_the_tools_section_is_restored() {
    let ws = tempfile::tempdir().unwrap();
    let (registry, _) = tools_with_abort(ws.path(), &Config::default(), &AbortFlag::new());
    let cache = ws.path().join("cache");
    let mut first = qwen(2048);
    let system = with_tools(&mut first, &registry);
    let ids = stable_prefix_ids(&first, &system, "[memory context]\n[project facts]\n- x\n");
    // The tools section alone is several hundred tokens.
    assert!(ids.len() > 300, "{} tokens", ids.len());
    assert!(matches!(
        restore_or_save(&mut first, &cache, &ids, 3),
        PrefixOutcome::Saved { .. }
    ));
    drop(first);
    let mut second = qwen(2048);
    let system2 = with_tools(&mut second, &registry);
    assert_eq!(system, system2);
    assert_eq!(
        restore_or_save(&mut second, &cache, &ids, 3),
        PrefixOutcome::Restored { tokens: ids.len() }
    );
    assert_eq!(second.cached_tokens(), ids.len());
}

fn config(n_ctx: u32) -> Config {
    let mut c = Config::default();
    c.engine.n_ctx = n_ctx;
    c.sampling.max_tokens = 48;
    c.sampling.temperature = 0.0;
    c
}

/// A whole session with the product path: memory injected as a system turn (never
/// repeated back as a user turn would be), a reply, then the session summary at close.
#[test]
fn qwen_session_with_memory_and_summary() {
    let ws = tempfile::tempdir().unwrap();
    let mut app = App::with_engine(ws.path().to_path_buf(), config(2048), Box::new(qwen(2048)));
    let mut out = Vec::new();
    harvey::repl::handle_line(
        &mut app,
        "/memory add project_fact The staging server is called kestrel",
        &mut out,
    )
    .unwrap();
    let turn = app
        .agent_turn("What is the staging server called?", &mut |_| {})
        .unwrap();
    let messages = app.conversation().messages();
    assert_eq!(
        messages[1].role,
        Role::System,
        "the memory block is a system turn"
    );
    assert!(messages[1].content.contains("kestrel"));
    assert_no_template_text("reply", &turn.completion.text);
    for call in &turn.calls {
        if let Some(c) = &call.call {
            assert!(app.tools().get(&c.name).is_some(), "{c:?}");
        }
    }
    let report = app.close_session(&mut |_| {}).expect("closed");
    assert!(!report.summary.trim().is_empty());
    assert_no_template_text("summary", &report.summary);
}

/// A task of two steps (find, then read) through the product path, router on: whatever
/// the model writes, the turn ends, makes at most `tools.max_rounds_per_turn` calls,
/// runs no identical call twice, every call it made parses against the registry, and
/// the reply holds no template text.
#[test]
fn qwen_two_step_turn_stays_in_bounds() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("src/lib.rs"),
        "/// How strongly the moon pulls (0.5 to 1.5).\npub fn moon_phase_factor(day: u32) -> f64 {\n    1.0 + 0.5 * (f64::from(day) / 29.5).cos()\n}\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("README.md"), "# tides\n").unwrap();
    let config = config(4096);
    let max_rounds = config.tools.max_rounds_per_turn;
    let mut app = App::with_engine(ws.path().to_path_buf(), config, Box::new(qwen(4096)));
    let turn = app
        .agent_turn("What does moon_phase_factor return?", &mut |_| {})
        .unwrap();
    assert!(turn.calls.len() <= max_rounds, "{:?}", turn.calls);
    let mut run = Vec::new();
    for record in &turn.calls {
        let call = record.call.as_ref().expect("every call parses");
        let tool = app.tools().get(&call.name).expect("a registered tool");
        validate(tool.params(), &call.arguments).unwrap();
        if !record.reused {
            assert!(!run.contains(&call.key()), "ran twice: {call:?}");
            run.push(call.key());
        }
    }
    assert!(!turn.completion.text.trim().is_empty());
    assert_no_template_text("reply", &turn.completion.text);
}

/// The plain question in a folder with no project files: no file tool is offered, so
/// the 0.5B answers (it called `list_files` five times and gave no answer before).
#[test]
fn qwen_plain_question_in_an_empty_folder_is_answered_without_a_tool() {
    let ws = tempfile::tempdir().unwrap();
    let mut app = App::with_engine(ws.path().to_path_buf(), config(2048), Box::new(qwen(2048)));
    let turn = app
        .agent_turn(
            "What is the capital of France? Answer in one word.",
            &mut |_| {},
        )
        .unwrap();
    let reads: Vec<_> = turn
        .calls
        .iter()
        .filter_map(|c| c.call.as_ref())
        .filter(|c| ["list_files", "read_file", "search_files"].contains(&c.name.as_str()))
        .collect();
    assert!(reads.is_empty(), "{reads:?}");
    // Nothing to read and nothing remembered: the question is answered without a tool
    // (the router is not asked; it had sent this to memory_search, then memory_write).
    assert!(turn.calls.is_empty(), "{:?}", turn.calls);
    assert!(!turn.completion.text.trim().is_empty());
    assert_no_template_text("reply", &turn.completion.text);
    // The issue's own line: the 0.5B says Paris (asked for one word, greedy).
    assert!(
        turn.completion.text.to_lowercase().contains("paris"),
        "{:?}",
        turn.completion.text
    );
}
