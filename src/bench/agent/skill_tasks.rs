//! `harvey bench --agent --skills`: the fixture gains three of the user's own skills (a
//! release checklist, a changelog entry, a code review), and the tasks are requests that
//! fit one of them without naming it, and requests that fit none (a tool or no tool).
//! Scored: whether the router chose the skill that fits (or none), and the reply, which
//! holds what following the skill's steps finds in the fixture.

use super::tasks::{git_task, task, Check, Expected, Task};

/// The skills planted in `agents/skills/<name>/SKILL.md`.
pub const SKILLS: &[(&str, &str)] = &[
    (
        "release-checklist",
        "---\nname: release-checklist\ndescription: Checks that the crate is ready for a release (the version in Cargo.toml, the files not committed yet). Use when the user wants to prepare, cut or ship a release.\nallowed-tools: read_file git\n---\nGet the project ready for a release.\n\n1. Read Cargo.toml and note the package version.\n2. Ask git which files are not committed yet.\n3. Reply with the version and the files that are not committed (or say that everything is committed).\n",
    ),
    (
        "changelog-entry",
        "---\nname: changelog-entry\ndescription: Drafts a changelog entry from the latest commits. Use when the user asks for release notes or a changelog entry.\nallowed-tools: git\n---\nDraft a changelog entry.\n\n1. Ask git for the latest commits.\n2. Write the entry: one bullet per commit, in the commit message's own words.\n",
    ),
    (
        "code-review",
        "---\nname: code-review\ndescription: Reviews a Rust source file against the team's checklist (doc comments, no unwrap, no TODO left). Use when the user asks for a review of code.\nallowed-tools: read_file search_files\n---\nReview the file the request names (src/lib.rs when it names none).\n\n1. Read the file.\n2. Check it against the list: every `pub fn` has a `///` comment; no `.unwrap()`; no `TODO` left in it.\n3. Reply with one line per finding.\n",
    ),
];

/// A task and the skill its request fits (`None`: none does).
#[derive(Debug, Clone, Copy)]
pub struct SkillTask {
    pub task: Task,
    pub skill: Option<&'static str>,
}

const fn fits(skill: &'static str, task: Task) -> SkillTask {
    SkillTask {
        task,
        skill: Some(skill),
    }
}

const fn fits_none(task: Task) -> SkillTask {
    SkillTask { task, skill: None }
}

const fn with_git(task: Task) -> Task {
    Task {
        needs_git: true,
        ..task
    }
}

pub const SKILL_TASKS: &[SkillTask] = &[
    fits(
        "release-checklist",
        task(
            "release_ready",
            "Can you get things ready so I can cut a new release?",
            Expected::Tool(&["read_file", "git"]),
            Check::All(&["0.3.1", "todo"]),
        ),
    ),
    fits(
        "release-checklist",
        with_git(task(
            "ship_it",
            "Is the crate ready to ship?",
            Expected::Tool(&["read_file", "git"]),
            Check::Any(&["0.3.1", "todo"]),
        )),
    ),
    fits(
        "changelog-entry",
        git_task(
            "release_notes",
            "Write the release notes for what changed recently.",
            Check::Any(&["default harbour"]),
        ),
    ),
    fits(
        "code-review",
        task(
            "review_lib",
            "Please review src/lib.rs for me.",
            Expected::Tool(&["read_file"]),
            Check::Any(&["todo", "leap"]),
        ),
    ),
    fits(
        "code-review",
        task(
            "look_over",
            "Could you look over the library code and tell me what needs fixing?",
            Expected::Tool(&["read_file", "search_files"]),
            Check::Any(&["todo", "leap"]),
        ),
    ),
    fits_none(task(
        "version",
        "What version is this package?",
        Expected::Tool(&["read_file"]),
        Check::Any(&["0.3.1"]),
    )),
    fits_none(task(
        "arithmetic",
        "What is 17 times 3?",
        Expected::NoTool,
        Check::Any(&["51"]),
    )),
    fits_none(git_task(
        "latest_author",
        "Who made the latest commit?",
        Check::Any(&["bench"]),
    )),
    fits_none(task(
        "find_function",
        "Which file defines the function high_water_mark?",
        Expected::Tool(&["search_files"]),
        Check::Any(&["lib.rs"]),
    )),
];

/// The skill the task `id` fits, when it is one of [`SKILL_TASKS`].
pub fn expected(id: &str) -> Option<Option<&'static str>> {
    SKILL_TASKS
        .iter()
        .find(|t| t.task.id == id)
        .map(|t| t.skill)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every planted skill parses, has no script (so the router may offer it) and is
    /// fitted by a task; ids are unique; some tasks fit no skill.
    #[test]
    fn the_skills_parse_and_every_one_has_a_task() {
        for (name, text) in SKILLS {
            let skill =
                crate::skills::parse::parse(text, name).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(skill.name, *name);
            assert!(SKILL_TASKS.iter().any(|t| t.skill == Some(name)), "{name}");
        }
        let mut ids: Vec<&str> = SKILL_TASKS.iter().map(|t| t.task.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), SKILL_TASKS.len());
        assert!(SKILL_TASKS.iter().filter(|t| t.skill.is_none()).count() >= 3);
        assert_eq!(expected("ship_it"), Some(Some("release-checklist")));
        assert_eq!(expected("arithmetic"), Some(None));
        assert_eq!(expected("nope"), None);
    }
}
