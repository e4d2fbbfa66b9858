//! What kind of question the user's own words ask, and the first steps that cannot
//! answer it. A question that asks for information ("Who changed the line that sets the
//! default port?") is never answered by changing a file or a memory, and a question that
//! asks how to do something ("How do I deploy the site?") is answered by what the
//! workspace says, not by running a command. The router is held off those steps by its
//! grammar alone, so its instructions (kept and saved) stay the same for every request.
//!
//! Measured with the 1.5B on `harvey bench --agent --fixture project --route only`: the
//! two requests above went to `edit_file` ("changed" pulls it there) and `run_command`.

use crate::text::asked::{asked, Asked};
use crate::tools::Registry;

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
