//! Requests whose first step is known without asking the router model: what only git
//! knows, a release, one identifier, code, a conventional file, a folder, something to
//! remember. Each rule says which model chose wrong, and where, before it.

use super::{asked, offered, Route};
use crate::tools::Registry;

/// Verbs of a change someone made, in a question about who or when.
const CHANGED: &[&str] = &[
    "changed",
    "wrote",
    "written",
    "modified",
    "added",
    "introduced",
    "committed",
    "edited",
    "touched",
    "authored",
    "removed",
    "deleted",
    "renamed",
    "updated",
    "rewrote",
];

/// A question that asks who made a change or when it was made ("Who last changed the
/// markdown renderer?", "When was the sitemap added?") goes to git, which alone knows:
/// with `src/render/markdown.rs` named beside it, the 1.5B's router chose `read_file`
/// on this machine (it had chosen git on another) and the reply named "the user".
pub fn about_change(registry: &Registry, words: &str) -> Option<Route> {
    let lower = words.trim().to_lowercase();
    let mut tokens = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty());
    let first = tokens.next()?;
    let changed = lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| CHANGED.contains(&w));
    let asks = matches!(first, "who" | "when") && changed && lower.ends_with('?');
    let makes = matches!(
        first,
        "commit" | "make" | "create" | "amend" | "revert" | "push"
    );
    (((asks || names_a_commit(&lower)) && !makes)
        && offered(registry).0.iter().any(|(name, _)| *name == "git"))
    .then(|| Route::Tool("git".to_string()))
}

/// Whether lowercase `words` name one commit by its place in the history ("the first git
/// commit", "the most recent commit") or count them ("how many commits"). Asked "Show me
/// what the first git commit changed." in the agent benchmark, the 1.5B's router chose
/// `git` in one run and `read_file` in another (`.git/refs/heads/main`, refused), the
/// kept instructions' cells in another order.
pub fn names_a_commit(words: &str) -> bool {
    let tokens: Vec<&str> = words
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    tokens.iter().enumerate().any(|(i, w)| {
        let commit = matches!(*w, "commit" | "commits");
        let before = &tokens[i.saturating_sub(3)..i];
        commit
            && before.iter().any(|b| {
                matches!(
                    *b,
                    "first"
                        | "last"
                        | "latest"
                        | "newest"
                        | "oldest"
                        | "initial"
                        | "previous"
                        | "recent"
                        | "many"
                )
            })
    })
}

/// A question about a release ("What changed in the latest release?") goes to the
/// changelog the hint names (`routed` is the router's request, hint line included): the
/// 1.5B's router chose git for its "changed", and the reply listed a file's commits.
pub fn about_release(registry: &Registry, routed: &str) -> Option<Route> {
    use crate::workspace_map::named::{is_changelog, named_in};
    let asked = routed.lines().next().unwrap_or_default();
    let release = crate::text::words::name_words(asked)
        .iter()
        .any(|w| matches!(w.as_str(), "release" | "releases" | "released"));
    let changelog = named_in(routed).iter().any(|path| is_changelog(path));
    (release && changelog && offered(registry).0.iter().any(|(n, _)| *n == "read_file"))
        .then(|| Route::Tool("read_file".to_string()))
}

/// The tool a question about one identifier goes to.
const SEARCH: &str = "search_files";

/// A question about the one identifier its words name as code writes it
/// (`slugify_heading`, `renderPage`), that says nothing of history, goes to the search,
/// which finds it and shows its definition: the 0.5B's router sent "Which file defines
/// slugify_heading?" to `read_file` and the model read `docs/brindle.md`. "Who changed
/// slugify_heading?" is left to the router. An identifier that is a file's name among
/// the `named` ones is that file's to answer: asked "What does cJSON_Utils provide?", the
/// 1.5B searched "cJSON_Utils" twice and found a `.gitignore` line and a CI script.
pub fn about_identifier(registry: &Registry, words: &str, named: &[String]) -> Option<Route> {
    use crate::text::asked::{asked, code_names, Asked};
    if asked(words) != Asked::Information || asked::speaks_of_history(words) {
        return None;
    }
    let names = code_names(words);
    let [one] = names.as_slice() else {
        return None;
    };
    let offers = |tool: &str| offered(registry).0.iter().any(|(name, _)| *name == tool);
    let a_file = named.iter().any(|path| {
        let name = path.rsplit('/').next().unwrap_or(path);
        name.split('.')
            .next()
            .unwrap_or(name)
            .eq_ignore_ascii_case(one)
    });
    if a_file && offers("read_file") {
        return Some(Route::Tool("read_file".to_string()));
    }
    // The project's name as code writes it, in a question a conventional file answers,
    // is left to the router with the files named: asked "What version of cJSON is
    // this?", the 1.5B searched "cJSON" twice and answered "4.0.8".
    if !named.is_empty() && crate::workspace_map::named::asks_a_conventional_file(words) {
        return None;
    }
    offers(SEARCH).then(|| Route::Tool(SEARCH.to_string()))
}

/// A question about code (a default, a class, a function) that names no file and no
/// identifier goes to the search, which finds the lines holding its words: asked "What is
/// the default nesting limit when parsing?" in cJSON, the 1.5B read a guessed
/// `tests/CMakeLists.txt` and answered "255" (it is 1000, `CJSON_NESTING_LIMIT` in
/// `cJSON.h`). Who or when changed it went to git before ([`about_change`]); "when"
/// here is no history ("when parsing"). A question about the language ("What is a
/// trait?") is left to the router.
pub fn about_code(registry: &Registry, words: &str, named: &[String]) -> Option<Route> {
    use crate::text::asked::{asked, Asked};
    let code = crate::workspace_map::named::points_at_code(words);
    (code
        && named.is_empty()
        && asked(words) == Asked::Information
        && offered(registry).0.iter().any(|(name, _)| *name == SEARCH))
    .then(|| Route::Tool(SEARCH.to_string()))
}

/// A question about what one of the workspace's own things is for ("What is the salt
/// for?", "What does the watcher do?", "What is the purpose of the cache?"; the definite
/// article says it is theirs, not a concept's) that names no file and no identifier goes
/// to the search, which finds the lines that explain it: asked "What is the salt for?" in
/// itsdangerous, the 1.5B read a guessed `docs/conf.py` and answered that no salt is
/// defined, and the 0.5B read `salt` as a file. "What is a salt for?" is left to the router.
pub fn about_purpose(registry: &Registry, words: &str, named: &[String]) -> Option<Route> {
    use crate::text::asked::{asked, code_names, Asked};
    let lower = words.trim().to_lowercase().replace('’', "'");
    let thing = purpose_of(&lower)?;
    let few = (1..=3).contains(&thing.split_whitespace().count());
    (few && named.is_empty()
        && code_names(words).is_empty()
        && asked(words) == Asked::Information
        && !asked::speaks_of_history(words)
        && offered(registry).0.iter().any(|(name, _)| *name == SEARCH))
    .then(|| Route::Tool(SEARCH.to_string()))
}

/// The thing lowercase `q` asks the purpose of, after "the": "What is the salt for?",
/// "What's the X for?", "What are the X used for?", "What does the X do?", "What is the
/// purpose of the X?"; `None` for another question.
pub fn purpose_of(q: &str) -> Option<&str> {
    fn after_the(rest: &str) -> Option<&str> {
        rest.strip_prefix("the ").map(str::trim)
    }
    let q = q.trim_end_matches(['?', '.', '!', ' ']);
    for lead in ["what is the purpose of ", "what's the purpose of "] {
        if let Some(rest) = q.strip_prefix(lead) {
            return after_the(rest);
        }
    }
    for (lead, tail) in [
        ("what is ", " for"),
        ("what's ", " for"),
        ("what are ", " for"),
        ("what is ", " used for"),
        ("what are ", " used for"),
        ("what does ", " do"),
        ("what do ", " do"),
    ] {
        if let Some(rest) = q.strip_prefix(lead).and_then(|r| r.strip_suffix(tail)) {
            return after_the(rest.trim_end_matches(" used"));
        }
    }
    None
}

/// A question a conventional file answers (a version, a license, what the project
/// depends on), whose hint names that file, reads it without asking the router model:
/// both Qwen models chose `read_file` for such questions in every benchmark run, and the
/// 1.5B's router took 0.4–0.7 s of the 5.7 s that "What version is this package?" took
/// in a used workspace (issue 45). History ("Who changed the version?") and a file's
/// folder are left to the other rules and the router.
pub fn about_conventional_file(
    registry: &Registry,
    words: &str,
    named: &[String],
) -> Option<Route> {
    use crate::text::asked::{asked, Asked};
    const READ: &str = "read_file";
    let a_file = named.first().is_some_and(|p| !p.ends_with('/'));
    (a_file
        && asked(words) == Asked::Information
        && !asked::speaks_of_history(words)
        && crate::workspace_map::named::asks_a_conventional_file(words)
        && offered(registry).0.iter().any(|(name, _)| *name == READ))
    .then(|| Route::Tool(READ.to_string()))
}

/// A question about where a kind of file is kept, whose hint names folders only
/// ([`crate::workspace_map::named::asks_where`]), goes to the listing: asked "Where are
/// the unit tests kept?" in cJSON, both Qwen models searched "unit tests" and answered
/// with the vendored test framework's folder.
pub fn about_place(registry: &Registry, words: &str, named: &[String]) -> Option<Route> {
    const LIST: &str = "list_files";
    let folders = !named.is_empty() && named.iter().all(|p| p.ends_with('/'));
    (folders
        && crate::workspace_map::named::asks_where(words)
        && offered(registry).0.iter().any(|(name, _)| *name == LIST))
    .then(|| Route::Tool(LIST.to_string()))
}

/// A request that tells harvey to keep something ("Remember that I prefer tabs") goes to
/// the tool that remembers without asking the model: the 0.5B chose `write_file` for it
/// and wrote a file until the round cap. A question ("Do you remember what I said?") is
/// left to the router.
pub fn told_to_remember(registry: &Registry, request: &str) -> Option<Route> {
    let t = request.trim().to_lowercase();
    let question = t.ends_with('?')
        || [
            "do you", "did i", "did you", "what ", "when ", "where ", "who ", "how ",
        ]
        .iter()
        .any(|q| t.starts_with(q));
    if question || !crate::chat::memory_guard::is_asked(request) {
        return None;
    }
    let name = registry.list().into_iter().map(|t| t.name).find(|n| {
        registry
            .get(n)
            .is_some_and(|t| t.remembers() && t.route().is_some())
    })?;
    Some(Route::Tool(name.to_string()))
}
