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

use std::path::Path;

use super::prefix_cache::{restore_or_save_held, Held, PrefixOutcome};
use crate::engine::prompt::common_prefix;
use crate::engine::{Engine, EngineError, GenerateOptions, Message, Role, SamplingParams};
use crate::tools::Registry;

/// What the router chose for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Call this tool first.
    Tool(String),
    /// Answer without a tool.
    Answer,
    /// Run the user's skill of this name (its body is read only now).
    Skill(String),
}

/// A skill the router may choose: its name, the catalog's one-line summary (what the
/// router is shown) and the whole description (what a request is matched against).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillOption {
    pub name: String,
    pub summary: String,
    pub about: String,
}

/// What the router chooses among: the registry's first steps and the workspace's skills
/// (none where the workspace has none: then the prompt is the same in every workspace).
#[derive(Clone, Copy)]
pub struct Menu<'a> {
    pub registry: &'a Registry,
    pub skills: &'a [SkillOption],
}

impl<'a> From<&'a Registry> for Menu<'a> {
    fn from(registry: &'a Registry) -> Self {
        Menu {
            registry,
            skills: &[],
        }
    }
}

/// How the router words its options. The names steer a small model as much as the
/// hints do, and not the same way for every size: measured on three held-out lists and the
/// agent benchmark's tasks (docs/benchmarks.md, "The router's wording"), the 1.5B chose better with
/// [`Wording::STEERED`] (11, 12, 11 of 12 against 9, 12, 10) and the 0.5B worse (7, 8, 8
/// against 8, 9, 9), so the wording follows the model's size ([`Wording::for_params`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wording {
    /// The name for "no tool": answer from what the model knows.
    pub none: &'static str,
    /// Whether tools are shown under [`LABELS`] instead of their own names.
    pub labels: bool,
    /// Whether the examples marked for it in [`EXAMPLES`] (two plain questions) are shown.
    more_examples: bool,
}

impl Wording {
    /// Tool names as they are, `answer` for no tool (the 0.5B's better choice).
    pub const PLAIN: Wording = Wording {
        none: "answer",
        labels: false,
        more_examples: false,
    };
    /// `remember`/`recall` for the memory tools, `reply_directly` for no tool, two more
    /// plain-question examples. Probe of the 1.5B on six held-out plain questions:
    /// `answer` 3/6, `answer` listed last 2/6, `no_tool` 0/6, `reply_directly` 5/6, and
    /// 1/6 without the memory labels.
    pub const STEERED: Wording = Wording {
        none: "reply_directly",
        labels: true,
        more_examples: true,
    };

    /// Models from this many parameters on get [`Wording::STEERED`].
    pub const STEERED_FROM_PARAMS: u64 = 1_000_000_000;

    /// The wording for a model of `n_params` parameters.
    pub fn for_params(n_params: u64) -> Wording {
        if n_params >= Self::STEERED_FROM_PARAMS {
            Self::STEERED
        } else {
            Self::PLAIN
        }
    }

    /// The router's name for tool `name`.
    pub fn label(self, name: &str) -> &str {
        LABELS
            .iter()
            .find(|(tool, _)| self.labels && *tool == name)
            .map_or(name, |(_, shown)| shown)
    }
}

/// When answering directly is right, in the router's list.
const NONE_WHEN: &str = "questions you can answer yourself: general knowledge, maths, explaining \
a concept, translating, greetings, writing example code in your reply";

/// Names [`Wording::STEERED`] shows instead of a tool's own, where the tool's name pulls
/// a model the wrong way: with `memory_write` beside `write_file`, "remember that I prefer
/// tabs" went to `write_file` with both Qwen models. The grammar admits the label;
/// [`parse`] maps it back.
const LABELS: &[(&str, &str)] = &[("memory_write", "remember"), ("memory_search", "recall")];

/// The request is cut to this many characters for the router (attachments add nothing to
/// the choice and would cost prefill).
const MAX_REQUEST_CHARS: usize = 600;

/// Stands for "no tool" in [`EXAMPLES`]; shown as the wording's own name.
const NONE: &str = "";

/// Tools that read what is already in the workspace: not offered where it holds no file
/// (with the 0.5B in an empty folder, "What is the capital of France?" went to
/// `list_files`, five times, and no answer came).
const READS_WORKSPACE: &[&str] = &[
    "read_file",
    "list_files",
    "search_files",
    "edit_file",
    "git",
];

/// Whether the workspace shows no file to the read tools (its `list_files` lists
/// nothing at the top; harvey's own `agents/` is never listed).
fn workspace_is_empty(registry: &Registry) -> bool {
    registry.get("list_files").is_some()
        && registry
            .call("list_files", &serde_json::Map::new())
            .is_ok_and(|t| t.trim() == "(empty directory)")
}

/// The first steps offered for `registry`'s workspace, and whether it is empty. A tool
/// that can find nothing here (an empty memory store) is not offered either: with the
/// 0.5B in an empty folder, "What is the capital of France?" went to `memory_search` and
/// the answer came from its empty result.
fn offered(registry: &Registry) -> (Vec<(&'static str, &'static str)>, bool) {
    let empty = workspace_is_empty(registry);
    let routes = registry
        .routes()
        .into_iter()
        .filter(|(name, _)| !(empty && READS_WORKSPACE.contains(name)))
        .filter(|(name, _)| !registry.get(name).is_some_and(|t| t.finds_nothing()))
        .collect();
    (routes, empty)
}

/// The router's prompt: the choices with a few examples (none from the agent benchmark),
/// then the request.
pub fn messages(registry: &Registry, wording: Wording, request: &str) -> Vec<Message> {
    let none = wording.none;
    let mut list = format!("- {none}: {NONE_WHEN}\n");
    let (routes, empty) = offered(registry);
    for (name, when) in &routes {
        list.push_str(&format!("- {}: {when}\n", wording.label(name)));
    }
    let offered: Vec<&str> = routes.iter().map(|(n, _)| *n).collect();
    let shown = |choice: &str| {
        if choice == NONE {
            none.to_string()
        } else {
            wording.label(choice).to_string()
        }
    };
    let examples: String = EXAMPLES
        .iter()
        .filter(|(_, choice, more)| {
            (!more || wording.more_examples) && (*choice == NONE || offered.contains(choice))
        })
        .map(|(request, choice, _)| format!("{request} -> {}\n", shown(choice)))
        .collect();
    let place = if empty {
        "The project folder is empty: there are no files to read."
    } else {
        "The assistant works inside the user's software project."
    };
    let system = format!(
        "You decide how a coding assistant handles a request. {place} Use a tool only when the request is about this project (its files, \
code, version, license, git history), the user's earlier sessions, or asks to create, change, \
run or remember something; otherwise {none}.\n\nOptions:\n{list}\nExamples:\n{examples}\n\
Reply with one option name only."
    );
    let request: String = request.chars().take(MAX_REQUEST_CHARS).collect();
    vec![
        Message::new(Role::System, system),
        Message::new(Role::User, request),
    ]
}

/// Requests unlike the benchmark's, one per kind of step; the third field marks those
/// only [`Wording::STEERED`] shows.
const EXAMPLES: &[(&str, &str, bool)] = &[
    ("How many days are in a leap year?", NONE, false),
    ("Good morning! Thanks for the help yesterday.", NONE, true),
    ("What is the difference between TCP and UDP?", NONE, true),
    ("Show me the Makefile.", "read_file", false),
    (
        "Write a Python function that checks for primes.",
        NONE,
        false,
    ),
    (
        "Where is the class UserSession defined?",
        "search_files",
        false,
    ),
    ("Summarise the last three commits.", "git", false),
    ("What is in the tests folder?", "list_files", false),
    (
        "Start the dev server with npm run dev.",
        "run_command",
        false,
    ),
    (
        "Create config/dev.yaml with port 8080.",
        "write_file",
        false,
    ),
    ("Fix the typo 'recieve' in src/net.rs.", "edit_file", false),
    (
        "What did I decide about the database last week?",
        "memory_search",
        false,
    ),
    (
        "Note that the staging server is called kestrel.",
        "memory_write",
        false,
    ),
    (
        "My saved editor preference is wrong: I use vim now.",
        "memory_update",
        false,
    ),
    (
        "Forget what I told you about the staging server.",
        "memory_forget",
        false,
    ),
    ("What is in your memory?", "memory_list", false),
    (
        "Read me your whole note on the kestrel server.",
        "memory_read",
        false,
    ),
];

/// A grammar that admits exactly one of the router's names, but those of `without`
/// (where [`NONE`] stands for answering without a tool).
pub fn grammar(registry: &Registry, wording: Wording, without: &[&str]) -> String {
    let names: Vec<String> = offered(registry)
        .0
        .iter()
        .filter(|(name, _)| !without.contains(name))
        .map(|(name, _)| format!("\"{}\"", wording.label(name)))
        .chain((!without.contains(&NONE)).then(|| format!("\"{}\"", wording.none)))
        .collect();
    format!("root ::= {}", names.join(" | "))
}

/// Reads the router's reply (a name the grammar admitted) as a route.
pub fn parse(registry: &Registry, wording: Wording, reply: &str) -> Option<Route> {
    let name = reply.trim();
    if name == wording.none {
        return Some(Route::Answer);
    }
    offered(registry)
        .0
        .iter()
        .find(|(n, _)| wording.label(n) == name)
        .map(|(n, _)| Route::Tool(n.to_string()))
}

/// The skill of `menu` that the user's own `words` (no earlier exchange, no hint line)
/// ask for, asked apart from the router ([`skills`]); `None` when no skill shares a
/// topic word with them or the model names none.
pub fn skill_for(
    engine: &mut dyn Engine,
    menu: Menu<'_>,
    words: &str,
    abort: &crate::engine::AbortFlag,
) -> Result<Option<Route>, EngineError> {
    let wording = Wording::for_params(engine.info().n_params);
    Ok(skills::ask(engine, &menu, wording, words, abort)?.map(Route::Skill))
}

/// Where the router's instructions are saved between processes (`agents/cache/`), and
/// how many saved ones each model keeps there.
#[derive(Debug, Clone, Copy)]
pub struct Saved<'a> {
    pub dir: &'a Path,
    pub keep: usize,
}

/// Asks the model for the request's first step, greedy, in an aside call. `None` when
/// the registry offers no first step or the reply was no name (cut off, aborted).
/// `words` are the user's own (no earlier exchange, no hint line): the steps that cannot
/// answer what they ask are not admitted ([`asked::ruled_out`]), nor an answer without a
/// tool where they ask about files the workspace has ([`asked::names_workspace_files`]).
///
/// The instructions (everything before the request) stay in the chat context's free
/// cells for the next message; when none are kept (a new process, or the chat took the
/// cells back) they come from `saved` when a state of them is there, else they are
/// decoded and saved there.
pub fn choose(
    engine: &mut dyn Engine,
    registry: &Registry,
    request: &str,
    words: &str,
    abort: &crate::engine::AbortFlag,
    saved: Option<Saved<'_>>,
) -> Result<Option<Route>, EngineError> {
    if registry.routes().is_empty() {
        return Ok(None);
    }
    if nothing_to_read(registry) && asks_a_question(request) {
        return Ok(Some(Route::Answer));
    }
    let wording = Wording::for_params(engine.info().n_params);
    if let Some(saved) = saved {
        warm(engine, registry, saved);
    }
    let mut opts = GenerateOptions::new(SamplingParams::greedy());
    let mut without = asked::ruled_out(registry, words);
    if asked::names_workspace_files(request, words) {
        without.push(NONE);
    }
    if asked::memory_unasked_beside_files(request, words) {
        without.extend(asked::RECALLS);
    }
    without.extend(memory::held_off(registry, words));
    let open = offered(registry)
        .0
        .iter()
        .any(|(n, _)| !without.contains(n));
    if !open && without.contains(&NONE) {
        // Nothing is left to choose among: the model chooses.
        return Ok(None);
    }
    opts.grammar = Some(grammar(registry, wording, &without));
    opts.max_tokens = Some(16);
    // The instructions stay in the chat context's free cells for the next message (with
    // the 1.5B here: ~500 tokens, ~6 s of prefill a message → only the request's tokens);
    // the chat takes the cells back whenever its step may need them.
    opts.keep_prompt = true;
    opts.abort = abort.clone();
    let c = engine.generate_aside(&messages(registry, wording, request), &opts, &mut |_| {})?;
    tracing::debug!("router request: {request:?}");
    tracing::debug!(
        "router: {} prompt tokens, {} decoded, {:.0} ms to the first token, chose {:?}",
        c.stats.prompt_tokens,
        c.stats.evaluated_tokens,
        c.stats.ttft_ms,
        c.text
    );
    Ok(parse(registry, wording, &c.text))
}

/// Whether no offered step could find anything: an empty folder and no memory, session
/// or RAG store yet. Then a question can only be answered from what the model knows: in
/// such a folder the 0.5B sent "What is the capital of France? Answer in one word." to
/// `memory_search`, and with that hidden to `memory_write` and `run_command` until the
/// round cap, where it had once said "Paris".
fn nothing_to_read(registry: &Registry) -> bool {
    let (routes, _) = offered(registry);
    !routes
        .iter()
        .any(|(name, _)| READS_WORKSPACE.contains(name) || *name == "memory_search")
}

/// A question, not a request to make, change, run or keep something.
pub fn asks_a_question(request: &str) -> bool {
    request.contains('?') && !is_a_task(request)
}

/// Whether `request` opens with a verb that asks for something to be done (created,
/// run, changed, remembered) rather than answered.
pub fn is_a_task(request: &str) -> bool {
    const DOING: &[&str] = &[
        "create",
        "write",
        "make",
        "add",
        "run",
        "build",
        "delete",
        "remove",
        "save",
        "remember",
        "install",
        "edit",
        "change",
        "rename",
        "fix",
        "update",
        "forget",
        "refactor",
        "implement",
    ];
    let first = request
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_lowercase();
    DOING.contains(&first.trim_end_matches([',', ':', '.']))
}

/// Makes the router's instructions ready in the chat context's free cells, restored from
/// `saved` or decoded and saved there, unless they are kept from an earlier message. The
/// REPL calls it while the first prompt waits, so the first message pays only its own
/// tokens.
pub fn warm(
    engine: &mut dyn Engine,
    registry: &Registry,
    saved: Saved<'_>,
) -> Option<PrefixOutcome> {
    if registry.routes().is_empty() || engine.kept_aside_len() > 0 {
        return None;
    }
    let ids = instruction_ids(engine, registry);
    let outcome = restore_or_save_held(Held::Aside, engine, saved.dir, &ids, saved.keep);
    tracing::debug!("router instructions: {}", outcome.describe());
    Some(outcome)
}

/// Token ids of the router's prompt that do not depend on the request (what it keeps
/// and saves).
pub fn instruction_ids(engine: &dyn Engine, registry: &Registry) -> Vec<i32> {
    let wording = Wording::for_params(engine.info().n_params);
    let probe = |request: &str| engine.aside_prompt_ids(&messages(registry, wording, request));
    match (probe("\u{2}alpha"), probe("\u{3}omega")) {
        (Ok(a), Ok(b)) => a[..common_prefix(&a, &b)].to_vec(),
        _ => Vec::new(),
    }
}

pub mod asked;
pub mod memory;
mod rules;
mod skills;

pub use rules::{about_change, names_a_commit, purpose_of, told_to_remember};

#[cfg(test)]
mod tests;
