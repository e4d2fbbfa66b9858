//! The tasks of `harvey bench --agent --fixture project`: what a new user of the
//! brindle repository ([`super::project`]) asks, naming no tool and (but for one test
//! and one function) no file. The reply is what is scored, so each check accepts every
//! right phrasing of the fact and fails the likely wrong ones (counts as whole words).
//! Every fact is planted by [`super::project`]; the two must change together (the
//! tests below check that).

use super::tasks::{git_task, task, Check, Expected, Task};

/// Any read tool: a request that names no file may start with any of them.
const FIND: Expected = Expected::Tool(&["search_files", "list_files", "read_file"]);

/// Finding a file first, or asking git about a file whose path the map shows.
const FIND_OR_GIT: Expected = Expected::Tool(&["git", "search_files", "list_files", "read_file"]);

const fn with_git(task: Task) -> Task {
    Task {
        needs_git: true,
        ..task
    }
}

/// Every task, in run order.
pub const PROJECT_TASKS: &[Task] = &[
    git_task(
        "latest_author",
        "Who made the latest commit?",
        Check::Any(&["Priya", "Raman"]),
    ),
    git_task(
        "last_change",
        "What did the last commit change?",
        Check::Any(&["ampersand", "&amp", "escape", "tests/feed.rs"]),
    ),
    git_task(
        "commit_count",
        "How many commits does this project have?",
        Check::Word(&["240"]),
    ),
    task(
        "port_env",
        "Which environment variable sets the preview server's port?",
        FIND,
        Check::Any(&["BRINDLE_PORT"]),
    ),
    task(
        "port_default",
        "What port does the preview server use if I don't set one?",
        FIND,
        Check::Word(&["4717"]),
    ),
    task(
        "deploy",
        "How do I deploy the site?",
        FIND,
        Check::Any(&["rsync", "deploy.sh", "static.example.org"]),
    ),
    task(
        "find_function",
        "Which file defines slugify_heading?",
        FIND,
        Check::Any(&["anchors.rs"]),
    ),
    task(
        "test_checks",
        "What does the test regression_issue_212 check?",
        FIND,
        Check::Any(&["colon", "good parts", "':'", "\":\"", "`:`"]),
    ),
    task(
        "license",
        "Which license is this project under?",
        FIND,
        Check::All(&["MIT", "Apache"]),
    ),
    git_task(
        "uncommitted",
        "Is there anything I have not committed yet?",
        Check::All(&["serve.rs", "release-notes-draft"]),
    ),
    with_git(task(
        "renderer_author",
        "Who last changed the markdown renderer?",
        FIND_OR_GIT,
        Check::Any(&["Tomasz", "Wolny"]),
    )),
    with_git(task(
        "port_line_author",
        "Who changed the line that sets the default port?",
        FIND_OR_GIT,
        Check::Any(&["Jonas"]),
    )),
    Task {
        answers_from_memory: true,
        ..task(
            "windows",
            "Are we going to keep supporting Windows?",
            Expected::NoToolOr(&["memory_search", "memory_read"]),
            Check::Any(&["drop", "2.0"]),
        )
    },
    // Two steps: find the file, then read the number in it.
    task(
        "feed_limit",
        "How many posts does the RSS feed hold at most?",
        FIND,
        Check::Word(&["25"]),
    ),
    task(
        "before_pr",
        "What should I do before opening a pull request?",
        FIND,
        Check::Any(&[
            "sign off",
            "sign-off",
            "signed-off",
            "commit -s",
            "Certificate of Origin",
            "CHANGELOG",
        ]),
    ),
    // A follow-up that points back at the previous answer.
    Task {
        then: Some("Show me the first lines of it."),
        ..task(
            "defaults_file",
            "Which file holds the default settings?",
            FIND,
            Check::Any(&[
                "the defaults below",
                "use std::path::{Path, PathBuf}",
                "DEFAULT_PORT",
            ]),
        )
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::agent::project::{history, COMMIT_COUNT, MODIFIED, UNTRACKED};

    fn task(id: &str) -> &'static Task {
        PROJECT_TASKS.iter().find(|t| t.id == id).unwrap()
    }

    fn needles(id: &str) -> &'static [&'static str] {
        match task(id).check {
            Check::Any(n) | Check::All(n) | Check::Word(n) | Check::AnyNot(n, _) => n,
            Check::None => &[],
        }
    }

    #[test]
    fn ids_are_unique_and_the_kinds_are_there() {
        let mut ids: Vec<&str> = PROJECT_TASKS.iter().map(|t| t.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), PROJECT_TASKS.len());
        assert!((12..=16).contains(&PROJECT_TASKS.len()));
        assert!(PROJECT_TASKS.iter().any(|t| t.then.is_some()));
        assert!(PROJECT_TASKS.iter().any(|t| t.answers_from_memory));
        assert!(PROJECT_TASKS.iter().all(|t| t.check != Check::None));
    }

    /// Each file fact a check looks for is in the file that holds it, and the check
    /// lists it.
    #[test]
    fn every_checked_fact_is_planted_in_its_file() {
        let files: std::collections::BTreeMap<&str, String> =
            history::final_files().into_iter().collect();
        let facts: &[(&str, &str, &str)] = &[
            ("port_env", "src/config.rs", "BRINDLE_PORT"),
            ("port_env", "docs/configuration.md", "BRINDLE_PORT"),
            ("port_default", "src/config.rs", "4717"),
            ("port_default", "docs/configuration.md", "4717"),
            ("deploy", "docs/deploying.md", "rsync"),
            ("deploy", "docs/deploying.md", "deploy.sh"),
            ("deploy", "scripts/deploy.sh", "static.example.org"),
            ("test_checks", "tests/front_matter.rs", "good parts"),
            ("test_checks", "tests/front_matter.rs", "colon"),
            ("license", "Cargo.toml", "MIT"),
            ("license", "Cargo.toml", "Apache"),
            ("license", "README.md", "MIT"),
            ("feed_limit", "src/render/feed.rs", "25"),
            ("before_pr", "CONTRIBUTING.md", "commit -s"),
            ("before_pr", "CONTRIBUTING.md", "Certificate of Origin"),
            ("last_change", "tests/feed.rs", "&amp"),
        ];
        for (id, path, fact) in facts {
            let text = files.get(path).unwrap_or_else(|| panic!("{path}"));
            assert!(text.contains(fact), "{path} lacks {fact:?}");
            assert!(needles(id).contains(fact), "{id} does not check {fact:?}");
        }
        let defines = |needle: &str| files.iter().filter(|(_, t)| t.contains(needle)).count();
        assert_eq!(defines("fn slugify_heading"), 1);
        assert!(files["src/render/anchors.rs"].contains("pub fn slugify_heading"));
        assert!(needles("find_function").contains(&"anchors.rs"));
        assert_eq!(defines("fn regression_issue_212"), 1);
        assert_eq!(defines("FEED_LIMIT: usize = 25"), 1);
        assert!(!files.values().any(|t| t.contains("LICENSE.md")));
        let first_lines: String = files["src/config.rs"].lines().take(8).collect();
        assert!(needles("defaults_file")
            .iter()
            .all(|n| first_lines.contains(n)));
        assert!(files["docs/configuration.md"].contains("src/config.rs"));
    }

    #[test]
    fn the_git_and_memory_answers_match_the_fixture() {
        assert_eq!(needles("commit_count"), [COMMIT_COUNT.to_string().as_str()]);
        assert!(needles("latest_author").contains(&history::PRIYA.name.split(' ').next().unwrap()));
        assert!(needles("renderer_author").contains(&"Tomasz"));
        assert!(history::JONAS
            .name
            .starts_with(needles("port_line_author")[0]));
        let uncommitted = needles("uncommitted");
        assert!(MODIFIED.ends_with(uncommitted[0]) && UNTRACKED.contains(uncommitted[1]));
        let memory = format!("{:?}", crate::bench::agent::project::memories());
        assert!(needles("windows").iter().all(|n| memory.contains(n)));
        let git_tasks = PROJECT_TASKS.iter().filter(|t| t.needs_git).count();
        assert_eq!(git_tasks, 6);
    }
}
