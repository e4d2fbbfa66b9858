//! A call the router chose is opened with its head (the tool's name and the arguments
//! key) prefilled: the model decodes only the arguments, under a grammar that starts
//! there. With the scripted engine, what the model is handed and what the conversation
//! keeps; with the real model, that every tool's call written after its head parses,
//! names that tool and passes its schema.

use harvey::app::workspace_tools;
use harvey::chat::route::Route;
use harvey::engine::{Message, Role, StopReason};
use harvey::tools::call::validate;
use harvey::tools::formats::CallForm;
use harvey::tools::grammar::{call_max_tokens, chosen_split};
use harvey::tools::parse_call;

use super::route::{routed_turn, workspace};
use crate::support::greedy;

/// The chosen call's head (the name and the arguments key) is prefilled with the opener,
/// not decoded: the model writes only the arguments under a grammar that starts there,
/// and the conversation keeps the whole call as the model would have written it.
#[test]
fn a_chosen_calls_head_is_prefilled_and_only_its_arguments_decoded() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let (turn, engine, conversation) = routed_turn(
        &registry,
        &[
            "read_file",
            r#" {"path": "notes.txt"}}
</tool_call>"#,
            "You ",
            "deploy with ./deploy.sh.",
        ],
        "How do I deploy?",
    );
    let (prefix, grammar) = &engine.prefixes[0];
    assert_eq!(
        prefix.as_deref(),
        Some("<tool_call>\n{\"name\": \"read_file\", \"arguments\":")
    );
    let grammar = grammar.as_deref().unwrap();
    assert!(
        grammar.starts_with("root ::= ws args-read-file ws \"}\" ws \"</tool_call>\"\n"),
        "{grammar}"
    );
    assert!(!grammar.contains("call-list-files"), "one tool: {grammar}");
    let call = turn.calls[0].call.as_ref().unwrap();
    assert_eq!(call.name, "read_file");
    assert_eq!(call.arguments["path"], "notes.txt");
    assert!(turn.calls[0].result.as_ref().unwrap().contains("deploy.sh"));
    let written = conversation
        .turns()
        .iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert_eq!(
        written.content,
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>"
    );
    assert_eq!(turn.completion.text, "You deploy with ./deploy.sh.");
}

/// A git request that names its action in so many words: the rest's grammar still
/// allows only that action (the head carries the name, the rest the narrowed enum).
#[test]
fn a_chosen_git_call_keeps_its_narrowed_action_after_the_head() {
    let dir = workspace();
    let config = harvey::config::Config::default();
    let (registry, _) = harvey::app::default_tools(dir.path(), &config);
    let (turn, engine, _) = routed_turn(
        &registry,
        &[
            "git",
            r#" {"action": "uncommitted"}}</tool_call>"#,
            "Nothing ",
            "is uncommitted.",
        ],
        "Is there anything not committed yet?",
    );
    assert_eq!(turn.route, Some(Route::Tool("git".into())));
    let (prefix, grammar) = &engine.prefixes[0];
    assert_eq!(
        prefix.as_deref(),
        Some("<tool_call>\n{\"name\": \"git\", \"arguments\":")
    );
    let grammar = grammar.as_deref().unwrap();
    assert!(
        grammar.contains("v-git-action ::= \"\\\"uncommitted\\\"\"\n"),
        "{grammar}"
    );
    let call = turn.calls[0].call.as_ref().unwrap();
    assert_eq!(
        (call.name.as_str(), &call.arguments["action"]),
        ("git", &"uncommitted".into())
    );
}

/// SmolLM2 (a Hermes-form template) writes each read-only tool's arguments after its
/// prefilled head, for requests that fit the tool and one that fits none: every output completes
/// its grammar, and head + output parses as a call of that tool whose arguments pass the
/// tool's schema (what the grammar admits). Asserted for every output, not one reply.
#[test]
fn a_read_only_tools_call_after_its_head_parses_as_that_tool() {
    let dir = workspace();
    let config = harvey::config::Config::default();
    let (registry, _) = harvey::app::default_tools(dir.path(), &config);
    let system = harvey::app::system_prompt(&registry, true, "");
    let mut engine = crate::support::engine(4096, 512);
    let requests = ["How do I deploy?", "What is 17 times 3?"];
    // The router's usual choices (the writing tools' long strings would make a slow test).
    let chosen = ["read_file", "list_files", "search_files", "git"];
    let tools: Vec<_> = registry
        .list()
        .into_iter()
        .filter(|t| chosen.contains(&t.name))
        .collect();
    assert_eq!(tools.len(), chosen.len());
    for tool in tools {
        let split = chosen_split(&tool, CallForm::Tagged);
        let cap = call_max_tokens(&split.rest);
        for request in requests {
            let mut opts = greedy(cap);
            opts.grammar = Some(split.rest.clone());
            opts.assistant_prefix = Some(format!("<tool_call>\n{}", split.head));
            let messages = [
                Message::new(Role::System, system.clone()),
                Message::new(Role::User, request.to_string()),
            ];
            let out = engine.generate(&messages, &opts, &mut |_| {}).unwrap();
            assert_eq!(
                out.stop,
                StopReason::EndOfGeneration,
                "{}: {out:?}",
                tool.name
            );
            let text = format!("{}{}", split.head, out.grammar_output().unwrap());
            let call = parse_call(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", tool.name));
            assert_eq!(call.name, tool.name, "{text}");
            assert!(
                validate(&tool.params, &call.arguments).is_ok(),
                "{}: {text}",
                tool.name
            );
            assert!(text.trim_end().ends_with("</tool_call>"), "{text}");
        }
    }
}
