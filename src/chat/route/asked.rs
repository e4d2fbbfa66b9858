//! What kind of question the user's own words ask, and the first steps that cannot
//! answer it. A question that asks for information ("Who changed the line that sets the
//! default port?") is never answered by changing a file or a memory, and a question that
//! asks how to do something ("How do I deploy the site?") is answered by what the
//! workspace says, not by running a command. The router is held off those steps by its
//! grammar alone, so its instructions (kept and saved) stay the same for every request.
//!
//! Measured with the 1.5B on `harvey bench --agent --fixture project --route only`: the
//! two requests above went to `edit_file` ("changed" pulls it there) and `run_command`.
//!
//! A question is also held off `git` unless it speaks of the project's history, and off
//! running a command unless it asks what running shows: the 0.5B sent "Which environment
//! variable sets the preview server's port?", "How do I deploy the site?" and the
//! default port to `git` (the last commit), and "What did the last commit change?" to
//! `cargo build` (`harvey bench --agent --fixture project`). Held off those, it sent
//! the two port questions to `memory_search`: a question is held off the memory unless it
//! speaks of the user, of what was said or decided, or of the assistant.

use crate::text::asked::{asked, Asked};
use crate::tools::Registry;

/// Words of a question about the project's history: where none is said, `git` cannot be
/// what answers it. Generous on purpose: a word here only leaves `git` on the menu.
const HISTORY: &[&str] = &[
    "commit",
    "commits",
    "committed",
    "uncommitted",
    "change",
    "changed",
    "changes",
    "changing",
    "history",
    "author",
    "authors",
    "authored",
    "wrote",
    "written",
    "who",
    "when",
    "blame",
    "branch",
    "branches",
    "tag",
    "tags",
    "diff",
    "modified",
    "staged",
    "stash",
    "log",
    "merge",
    "merged",
    "git",
    "contributor",
    "contributors",
    "recent",
    "recently",
    "latest",
    "last",
    "ago",
    "date",
    "revert",
    "reverted",
    "push",
    "pushed",
    "pull",
    "added",
    "removed",
    "deleted",
    "introduced",
    "since",
    "working",
    "repository",
    "repo",
    "status",
];

/// Words of [`SAID`] that only say who is asking or who is asked ("What crate do we use
/// …?"): beside files the request names, they do not make it a question for the memory.
const PRONOUNS: &[&str] = &["we", "our", "us", "me", "my", "mine", "you", "your"];

/// Whether `words` (the user's own) speak of the memory only through a pronoun while
/// `request` (with its hint lines) names workspace files: then the files answer it. The
/// 0.5B sent "What crate do we use to run the language model?" to `memory_search`, with
/// `Cargo.toml` named.
pub fn memory_unasked_beside_files(request: &str, words: &str) -> bool {
    let lower = words.to_lowercase();
    let said: Vec<&str> = SAID
        .iter()
        .copied()
        .filter(|w| !PRONOUNS.contains(w))
        .collect();
    names_workspace_files(request, words) && !says_any(&lower, &said)
}

/// Words of a question that running something answers ("Do the tests pass?").
const RUNNING: &[&str] = &[
    "pass",
    "passes",
    "passing",
    "fail",
    "fails",
    "failing",
    "build",
    "builds",
    "building",
    "compile",
    "compiles",
    "compiling",
    "warning",
    "warnings",
    "error",
    "errors",
    "lint",
    "clippy",
    "output",
    "print",
    "prints",
    "installed",
    "work",
    "works",
    "broken",
    "crash",
    "crashes",
    "benchmark",
    "benchmarks",
];

/// Words of running that ask for a run only in a yes/no question ("Does it run on
/// Windows?"): in "What crate do we use to run the language model?" they are part of the
/// subject, and the 0.5B's router chose `run_command` (program "run", twice).
const RUN: &[&str] = &["run", "runs", "running"];

/// Whether `lower` (a question, lowercase) asks about running something: a word of
/// [`RUNNING`], or of [`RUN`] in a question that opens with an auxiliary.
fn asks_about_running(lower: &str) -> bool {
    const YES_NO: &[&str] = &[
        "does", "do", "did", "is", "are", "was", "can", "will", "would", "could", "should",
    ];
    let first = lower
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty());
    says_any(lower, RUNNING) || (first.is_some_and(|w| YES_NO.contains(&w)) && says_any(lower, RUN))
}

/// Words of a question about what the user said, decided or prefers, or about the
/// assistant: where none is said, the memory cannot be what answers it. "I" is not one
/// ("How do I deploy the site?").
const SAID: &[&str] = &[
    "we",
    "our",
    "us",
    "me",
    "my",
    "mine",
    "you",
    "your",
    "said",
    "say",
    "says",
    "tell",
    "told",
    "decide",
    "decided",
    "decision",
    "agree",
    "agreed",
    "remember",
    "remembered",
    "note",
    "noted",
    "prefer",
    "preferred",
    "preference",
    "preferences",
    "plan",
    "plans",
    "planned",
    "mentioned",
    "earlier",
    "session",
    "sessions",
    "like",
    "likes",
    "favourite",
    "favorite",
    "know",
    "meeting",
    "idea",
    "ideas",
];

/// Tools that answer from what was said before, held off a question that speaks of none.
pub const RECALLS: &[&str] = &["memory_search"];

/// Whether `words` ask for information about files the workspace has: `request` carries
/// the named-files hint ([`crate::workspace_map::named`]) and the question opens with a
/// question word. Then the answer is in the workspace, not in the model: the 0.5B
/// answered "How many posts does the RSS feed hold at most?" with "1", without a tool,
/// beside the hint naming `src/render/feed.rs`. An instruction ("Write a Rust function
/// …", which names `rustfmt.toml`) keeps the answer on the menu.
pub fn names_workspace_files(request: &str, words: &str) -> bool {
    asked(words) == Asked::Information && !crate::workspace_map::named::named_in(request).is_empty()
}

/// Words of a question a listing answers: which files or folders there are.
const LISTING: &[&str] = &[
    "file",
    "files",
    "folder",
    "folders",
    "directory",
    "directories",
    "dir",
    "list",
    "tree",
    "layout",
    "structure",
    "contain",
    "contains",
    "inside",
    "exist",
    "exists",
    "there",
];

/// The tool that lists a folder, held off a question that asks for no listing: the
/// 0.5B listed `docs/` twice for "What is the capital of France? Answer in one word.",
/// and listed `notes/ideas.md` for "What ideas have I written down?".
const LIST: &str = "list_files";

/// Whether `words` speak of the project's history (a commit, a change, who or when). A
/// "when" inside the question is a condition, not a date asked for: "What error message
/// does hexyl print when I give it a directory?" is about the code as it is.
pub fn speaks_of_history(words: &str) -> bool {
    let lower = words.to_lowercase();
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .enumerate()
        .any(|(i, w)| HISTORY.contains(&w) && (w != "when" || i == 0))
}

/// Whether `words` (lowercase) say one of `list` as a whole word.
fn says_any(words: &str, list: &[&str]) -> bool {
    words
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| list.contains(&w))
}

/// The registry's tools that cannot be the first step for `words`: for a question, the
/// tools that change the workspace or the memory without asking; for a how-to question,
/// the tools that ask first (running a command) as well. "Do the tests pass?" may still
/// run them.
pub fn ruled_out(registry: &Registry, words: &str) -> Vec<&'static str> {
    let kind = asked(words);
    if kind == Asked::Other {
        return Vec::new();
    }
    let lower = words.to_lowercase();
    registry
        .list()
        .into_iter()
        .filter_map(|info| {
            let tool = registry.get(info.name)?;
            // Writing files asks first too; running a command is the other tool that asks.
            let changes = tool.writes_files() || (tool.writes() && !tool.asks());
            let runs = tool.asks() && !tool.writes_files();
            let runs_unasked = runs && (kind == Asked::HowTo || !asks_about_running(&lower));
            let history_unasked = info.name == "git" && !says_any(&lower, HISTORY);
            let said_unasked = RECALLS.contains(&info.name) && !says_any(&lower, SAID);
            let listing_unasked = info.name == LIST && !says_any(&lower, LISTING);
            (changes || runs_unasked || history_unasked || said_unasked || listing_unasked)
                .then_some(info.name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_rules_out_changes_and_a_how_to_question_running_too() {
        let ws = tempfile::tempdir().unwrap();
        let (registry, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
        let names = |w: &str| ruled_out(&registry, w);
        let info = names("Who changed the default port? Does it build?");
        for writer in ["write_file", "edit_file", "memory_write"] {
            assert!(info.contains(&writer), "{writer} in {info:?}");
        }
        for reader in ["read_file", "git", "search_files", "run_command"] {
            assert!(!info.contains(&reader), "{reader} in {info:?}");
        }
        let how = names("How do I deploy the site?");
        assert!(how.contains(&"run_command") && how.contains(&"edit_file"));
        assert!(!how.contains(&"read_file"));
        assert!(names("Deploy the site.").is_empty());
        assert!(names("Can you run the tests?").is_empty());
        let subject = names("What crate do we use to run the language model?");
        assert!(subject.contains(&"run_command"), "{subject:?}");
        assert!(!names("Does it run on Windows?").contains(&"run_command"));
    }

    #[test]
    fn a_when_inside_a_question_is_a_condition_not_history() {
        for history in [
            "When was version 1.7.18 released?",
            "Who added cJSON_SetBoolValue?",
            "Which file did the commit that fixed the parser change?",
        ] {
            assert!(speaks_of_history(history), "{history}");
        }
        for now in [
            "What error message does hexyl print when I give it a directory?",
            "Which variable forces colour even when it is not a terminal?",
        ] {
            assert!(!speaks_of_history(now), "{now}");
        }
    }

    #[test]
    fn a_question_not_about_history_or_running_is_held_off_git_and_commands() {
        let ws = tempfile::tempdir().unwrap();
        let (registry, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
        let names = |w: &str| ruled_out(&registry, w);
        let port = names("Which environment variable sets the preview server's port?");
        assert!(
            port.contains(&"git") && port.contains(&"run_command"),
            "{port:?}"
        );
        assert!(port.contains(&"memory_search"), "{port:?}");
        for said in [
            "What did we agree?",
            "Which spelling should your answers use?",
        ] {
            assert!(!names(said).contains(&"memory_search"), "{said}");
        }
        assert!(!port.contains(&"read_file") && !port.contains(&"search_files"));
        let last = names("What did the last commit change?");
        assert!(
            !last.contains(&"git") && last.contains(&"run_command"),
            "{last:?}"
        );
        for history in [
            "Who made the latest commit?",
            "Is there anything I have not committed yet?",
            "When was the parser added?",
        ] {
            assert!(!names(history).contains(&"git"), "{history}");
        }
        let tests = names("Do the tests pass?");
        assert!(
            !tests.contains(&"run_command") && tests.contains(&"git"),
            "{tests:?}"
        );
        // "commitment" is not "commit": whole words only.
        assert!(names("What is our commitment to Windows?").contains(&"git"));
    }

    #[test]
    fn an_answer_without_a_tool_is_held_off_a_question_about_named_files() {
        let hinted = |words: &str| {
            let hint = crate::workspace_map::named::hint(&["src/render/feed.rs".to_string()]);
            format!("{words}\n{}", hint.unwrap())
        };
        let feed = "How many posts does the RSS feed hold at most?";
        assert!(names_workspace_files(&hinted(feed), feed));
        assert!(
            !names_workspace_files(feed, feed),
            "no hint, no files named"
        );
        let write = "Write a Rust function that reverses a string.";
        assert!(!names_workspace_files(&hinted(write), write)); // A pronoun beside named files is no question for the memory; a decision is.
        let crate_q = "What crate do we use to run the language model?";
        assert!(memory_unasked_beside_files(&hinted(crate_q), crate_q));
        assert!(!memory_unasked_beside_files(crate_q, crate_q));
        let decided = "What did we decide about the feed?";
        assert!(!memory_unasked_beside_files(&hinted(decided), decided));
    }

    #[test]
    fn a_listing_is_held_off_a_question_that_asks_for_none() {
        let ws = tempfile::tempdir().unwrap();
        let (registry, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
        let names = |w: &str| ruled_out(&registry, w);
        for listing in [
            "What files are in the src folder?",
            "Is there a config file?",
        ] {
            assert!(!names(listing).contains(&"list_files"), "{listing}");
        }
        for other in [
            "What port does the preview server use?",
            "What is the capital of France? Answer in one word.",
        ] {
            assert!(names(other).contains(&"list_files"), "{other}");
        }
        assert!(names("List the notes.").is_empty(), "an instruction");
    }
}
