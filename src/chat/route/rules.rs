//! Requests whose first step is known without asking the router model: a commit named
//! by its place or counted, and something to remember. Each rule says which model chose
//! wrong, and where, before it. Questions about what the workspace holds (a release, an
//! identifier, a default, a conventional file, a folder, what a thing is for) are
//! answered from the evidence block ([`crate::evidence`]); the rules that once sent each
//! of those kinds to a tool are gone with it.

use super::{offered, Route};
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
    // "Update my preferences: I also prefer dark theme" asks for a change, not a new note.
    let changes = super::memory::asks_to_change(request).is_some();
    if question || changes || !crate::chat::memory_guard::is_asked(request) {
        return None;
    }
    let name = registry.list().into_iter().map(|t| t.name).find(|n| {
        registry
            .get(n)
            .is_some_and(|t| t.remembers() && t.route().is_some())
    })?;
    Some(Route::Tool(name.to_string()))
}
