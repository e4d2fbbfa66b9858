//! The first step of a turn, chosen apart: which tool a request needs, or none.
//!
//! Small instruction-tuned models (Qwen2.5-Coder 0.5B–1.5B) choose badly when the choice
//! is hidden in free generation: with fourteen tool schemas in the prompt the 1.5B calls a
//! tool for "What is 17 times 3?" and the 0.5B answers "What version is this package?"
//! from its imagination. Asked the narrower question on its own — one name from a short
//! list, under a grammar that admits only those names — the same models choose well. The
//! router asks that question in an aside call (the chat's KV cache is not touched); the
//! turn then opens the chosen call for the model, which writes only its arguments, or
//! lets the model answer with calls held back.

use crate::engine::{Engine, EngineError, GenerateOptions, Message, Role, SamplingParams};
use crate::tools::Registry;

/// What the router chose for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Call this tool first.
    Tool(String),
    /// Answer without a tool.
    Answer,
}

/// The router's name for "no tool": answer from what the model knows.
const NONE: &str = "answer";

/// When answering directly is right, in the router's list.
const NONE_WHEN: &str = "questions you can answer yourself: general knowledge, maths, explaining \
a concept, translating, greetings, writing example code in your reply";

/// The request is cut to this many characters for the router (attachments add nothing to
/// the choice and would cost prefill).
const MAX_REQUEST_CHARS: usize = 600;

/// The router's prompt: the choices with a few examples (none from the agent benchmark),
/// then the request.
pub fn messages(registry: &Registry, request: &str) -> Vec<Message> {
    let mut list = format!("- {NONE}: {NONE_WHEN}\n");
    for (name, when) in registry.routes() {
        list.push_str(&format!("- {name}: {when}\n"));
    }
    let offered: Vec<&str> = registry.routes().iter().map(|(n, _)| *n).collect();
    let examples: String = EXAMPLES
        .iter()
        .filter(|(_, choice)| *choice == NONE || offered.contains(choice))
        .map(|(request, choice)| format!("{request} -> {choice}\n"))
        .collect();
    let system = format!(
        "You decide how a coding assistant handles a request. The assistant works inside the \
user's software project. Use a tool only when the request is about this project (its files, \
code, version, license, git history), the user's earlier sessions, or asks to create, change, \
run or remember something; otherwise answer.\n\nOptions:\n{list}\nExamples:\n{examples}\n\
Reply with one option name only."
    );
    let request: String = request.chars().take(MAX_REQUEST_CHARS).collect();
    vec![
        Message::new(Role::System, system),
        Message::new(Role::User, request),
    ]
}

/// Requests unlike the benchmark's, one per kind of step.
const EXAMPLES: &[(&str, &str)] = &[
    ("How many days are in a leap year?", NONE),
    ("Show me the Makefile.", "read_file"),
    ("Write a Python function that checks for primes.", NONE),
    ("Where is the class UserSession defined?", "search_files"),
    ("Summarise the last three commits.", "git"),
    ("What is in the tests folder?", "list_files"),
    ("Start the dev server with npm run dev.", "run_command"),
    ("Create config/dev.yaml with port 8080.", "write_file"),
    ("Fix the typo 'recieve' in src/net.rs.", "edit_file"),
    (
        "What did I decide about the database last week?",
        "memory_search",
    ),
    (
        "Note that the staging server is called kestrel.",
        "memory_write",
    ),
];

/// A grammar that admits exactly one of the router's names.
pub fn grammar(registry: &Registry) -> String {
    let names: Vec<String> = registry
        .routes()
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .chain(std::iter::once(format!("\"{NONE}\"")))
        .collect();
    format!("root ::= {}", names.join(" | "))
}

/// Reads the router's reply (a name the grammar admitted) as a route.
pub fn parse(registry: &Registry, reply: &str) -> Option<Route> {
    let name = reply.trim();
    if name == NONE {
        return Some(Route::Answer);
    }
    registry
        .routes()
        .iter()
        .any(|(n, _)| *n == name)
        .then(|| Route::Tool(name.to_string()))
}

/// Asks the model for the request's first step, greedy, in an aside call. `None` when
/// the registry offers no first step or the reply was no name (cut off, aborted).
pub fn choose(
    engine: &mut dyn Engine,
    registry: &Registry,
    request: &str,
    abort: &crate::engine::AbortFlag,
) -> Result<Option<Route>, EngineError> {
    if registry.routes().is_empty() {
        return Ok(None);
    }
    let mut opts = GenerateOptions::new(SamplingParams::greedy());
    opts.grammar = Some(grammar(registry));
    opts.max_tokens = Some(16);
    opts.abort = abort.clone();
    let c = engine.generate_aside(&messages(registry, request), &opts, &mut |_| {})?;
    Ok(parse(registry, &c.text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::workspace::{ListFiles, ReadFile};

    fn registry() -> Registry {
        let mut r = Registry::new();
        let root = std::path::PathBuf::from(".");
        r.add(Box::new(ReadFile { root: root.clone() }));
        r.add(Box::new(ListFiles { root }));
        r
    }

    #[test]
    fn the_grammar_admits_each_first_step_and_none() {
        let g = grammar(&registry());
        assert_eq!(g, "root ::= \"read_file\" | \"list_files\" | \"answer\"");
    }

    #[test]
    fn replies_parse_to_routes_and_unknown_names_to_nothing() {
        let r = registry();
        assert_eq!(
            parse(&r, "list_files"),
            Some(Route::Tool("list_files".into()))
        );
        assert_eq!(parse(&r, " answer\n"), Some(Route::Answer));
        assert_eq!(parse(&r, "git"), None);
        assert_eq!(parse(&r, ""), None);
    }

    #[test]
    fn the_prompt_lists_every_first_step_with_when_to_pick_it() {
        let m = messages(&registry(), "What is in src?");
        assert_eq!(m.len(), 2);
        assert!(m[0].content.contains("- read_file: show or open a file"));
        assert!(m[0].content.contains("- list_files: "));
        assert!(m[0]
            .content
            .contains("- answer: questions you can answer yourself"));
        assert!(m[0].content.contains("Show me the Makefile. -> read_file"));
        assert!(
            !m[0].content.contains("-> git"),
            "examples only name offered steps"
        );
        assert_eq!(m[1].content, "What is in src?");
    }

    #[test]
    fn a_long_request_is_cut_for_the_router() {
        let long = "x".repeat(5000);
        let m = messages(&registry(), &long);
        assert_eq!(m[1].content.chars().count(), MAX_REQUEST_CHARS);
    }
}
