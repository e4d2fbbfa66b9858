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

/// The router's name for "no tool".
const NONE: &str = "none";

/// When "no tool" is right, in the router's list.
const NONE_WHEN: &str = "no tool: a general question or task answered from what you know \
(arithmetic, facts, explaining a concept, translating, writing new code)";

/// The request is cut to this many characters for the router (attachments add nothing to
/// the choice and would cost prefill).
const MAX_REQUEST_CHARS: usize = 600;

/// The router's prompt: the choices, then the request.
pub fn messages(registry: &Registry, request: &str) -> Vec<Message> {
    let mut list = String::new();
    for (name, when) in registry.routes() {
        list.push_str(&format!("- {name}: {when}\n"));
    }
    list.push_str(&format!("- {NONE}: {NONE_WHEN}\n"));
    let system = format!(
        "You pick the first step for a request to a coding assistant that works inside the \
user's software project and can use these tools. Questions about this project (its files, \
code, version, license, git history) need a tool; so do requests to remember, create, \
change or run something.\n\n{list}\nReply with one name from the list and nothing else."
    );
    let request: String = request.chars().take(MAX_REQUEST_CHARS).collect();
    vec![
        Message::new(Role::System, system),
        Message::new(Role::User, request),
    ]
}

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
        assert_eq!(g, "root ::= \"read_file\" | \"list_files\" | \"none\"");
    }

    #[test]
    fn replies_parse_to_routes_and_unknown_names_to_nothing() {
        let r = registry();
        assert_eq!(
            parse(&r, "list_files"),
            Some(Route::Tool("list_files".into()))
        );
        assert_eq!(parse(&r, " none\n"), Some(Route::Answer));
        assert_eq!(parse(&r, "git"), None);
        assert_eq!(parse(&r, ""), None);
    }

    #[test]
    fn the_prompt_lists_every_first_step_with_when_to_pick_it() {
        let m = messages(&registry(), "What is in src?");
        assert_eq!(m.len(), 2);
        assert!(m[0].content.contains("- read_file: read what a file says"));
        assert!(m[0].content.contains("- list_files: "));
        assert!(m[0].content.contains("- none: no tool"));
        assert_eq!(m[1].content, "What is in src?");
    }

    #[test]
    fn a_long_request_is_cut_for_the_router() {
        let long = "x".repeat(5000);
        let m = messages(&registry(), &long);
        assert_eq!(m[1].content.chars().count(), MAX_REQUEST_CHARS);
    }
}
