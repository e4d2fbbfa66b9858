//! What kind of question the user's own words ask, and the first steps that cannot
//! answer it. A question that asks for information ("Who changed the line that sets the
//! default port?") is never answered by changing a file or a memory, and a question that
//! asks how to do something ("How do I deploy the site?") is answered by what the
//! workspace says, not by running a command. The router is held off those steps by its
//! grammar alone, so its instructions (kept and saved) stay the same for every request.
//!
//! Measured with the 1.5B on `harvey bench --agent --fixture project --route only`: the
//! two requests above went to `edit_file` ("changed" pulls it there) and `run_command`.

use crate::tools::Registry;

/// Words that open a question asking for information.
const ASKING: &[&str] = &[
    "who", "whom", "whose", "what", "which", "where", "when", "why", "how", "is", "are", "was",
    "were", "does", "do", "did", "has", "have", "had",
];

/// Openings of a question asking how the user would do something themselves.
const HOW_TO: &[&str] = &[
    "how do i ",
    "how do we ",
    "how can i ",
    "how can we ",
    "how should i ",
    "how should we ",
    "how would i ",
    "how would we ",
    "how to ",
];

/// The kind of request `words` (the user's own, no hint line) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Asks how the user would do something.
    HowTo,
    /// Asks for some other information.
    Information,
    /// Anything else: an instruction, a request ("Can you fix …?"), a statement.
    Other,
}

/// What `words` ask: only a question that opens with a question word and has a question
/// mark counts; "Can you run the tests?" asks for an action and is [`Asked::Other`].
pub fn asked(words: &str) -> Asked {
    let t = words.trim().to_lowercase();
    if !t.contains('?') {
        return Asked::Other;
    }
    let first = t
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .next()
        .unwrap_or("");
    if HOW_TO.iter().any(|h| t.starts_with(h)) {
        Asked::HowTo
    } else if ASKING.contains(&first) {
        Asked::Information
    } else {
        Asked::Other
    }
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
    registry
        .list()
        .into_iter()
        .filter_map(|info| {
            let tool = registry.get(info.name)?;
            // Writing files asks first too; running a command is the other tool that asks.
            let changes = tool.writes_files() || (tool.writes() && !tool.asks());
            let runs = tool.asks() && !tool.writes_files();
            (changes || (runs && kind == Asked::HowTo)).then_some(info.name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_told_from_requests() {
        assert_eq!(asked("How do I deploy the site?"), Asked::HowTo);
        assert_eq!(asked("how to build it?"), Asked::HowTo);
        assert_eq!(
            asked("Who changed the line that sets the default port?"),
            Asked::Information
        );
        assert_eq!(asked("Do the tests pass?"), Asked::Information);
        assert_eq!(asked("How many commits are there?"), Asked::Information);
        assert_eq!(asked("Can you run the tests?"), Asked::Other);
        assert_eq!(asked("Fix the typo in src/net.rs?"), Asked::Other);
        assert_eq!(
            asked("Who made the last commit"),
            Asked::Other,
            "no question mark"
        );
        assert_eq!(asked("Whoever wrote this, fix it?"), Asked::Other);
    }

    #[test]
    fn a_question_rules_out_changes_and_a_how_to_question_running_too() {
        let ws = tempfile::tempdir().unwrap();
        let (registry, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
        let names = |w: &str| ruled_out(&registry, w);
        let info = names("Who changed the default port?");
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
    }
}
