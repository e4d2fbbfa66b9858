//! The agent benchmark's tasks: what the user asks, which tool a good agent reaches for
//! first, and what the reply must mention. Every fact a task checks is planted by
//! [`super::fixture`]; the two must change together.
//!
//! The order matters: `--tasks N` runs the first N (the first three cover a file read, a
//! no-tool question and a listing), and the tasks that change the memory (an update, a
//! forget, a new note: [`super::memory_tasks`] and [`LAST`]) come last because a changed
//! memory changes what later sessions recall. [`tide`] is the whole run, in order.

/// What the first tool call of a task should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// One of these tools (two are listed where both are a right first step).
    Tool(&'static [&'static str]),
    /// No tool call at all: the model knows the answer.
    NoTool,
    /// No tool, or one of these: what the request needs is already in view (a memory
    /// shown with it), and looking it up again is right too.
    NoToolOr(&'static [&'static str]),
}

/// How the final reply is checked (case-insensitive substrings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Not checkable (e.g. a write that is refused in an unattended run).
    None,
    /// At least one of these appears.
    Any(&'static [&'static str]),
    /// All of these appear.
    All(&'static [&'static str]),
    /// One of these appears as a whole word (a count: `3`, not the `03` of a date).
    Word(&'static [&'static str]),
    /// At least one of the first list appears and none of the second: the fact, and not
    /// what a memory that should not answer says.
    AnyNot(&'static [&'static str], &'static [&'static str]),
}

/// How the workspace is checked after a task (memories by their planted description,
/// which the task may rewrite: the memory is found by the id it had before). Every kind
/// also asks that nothing else changed: no other memory written, changed, archived or
/// lost, and no file outside `agents/` (and `.git/`, which `git status` may refresh)
/// changed. Scored by [`super::score::state_problems`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateCheck {
    /// Nothing changed at all (a question about the memory reads it, never writes it).
    Unchanged,
    /// The memory planted with this description is archived.
    Archived(&'static str),
    /// The memory planted with this description is active and its text (description,
    /// summary, body, tags) now holds the second string.
    Updated(&'static str, &'static str),
    /// One new memory was written, and its text holds this string.
    Written(&'static str),
}

/// One benchmark task, run in a fresh conversation.
#[derive(Debug, Clone, Copy)]
pub struct Task {
    pub id: &'static str,
    pub prompt: &'static str,
    pub expected: Expected,
    pub check: Check,
    /// Needs the fixture's git history (skipped when git is missing).
    pub needs_git: bool,
    /// The answer is a planted memory: quoting one memory line is not parroting.
    pub answers_from_memory: bool,
    /// A follow-up sent in the same conversation after `prompt`'s reply; the check
    /// applies to the follow-up's reply.
    pub then: Option<&'static str>,
    /// What the workspace must look like after the task (`None`: not checked).
    pub state: Option<StateCheck>,
}

pub(super) const fn task(
    id: &'static str,
    prompt: &'static str,
    expected: Expected,
    check: Check,
) -> Task {
    Task {
        id,
        prompt,
        expected,
        check,
        needs_git: false,
        answers_from_memory: false,
        then: None,
        state: None,
    }
}

pub(super) const fn git_task(id: &'static str, prompt: &'static str, check: Check) -> Task {
    Task {
        id,
        prompt,
        expected: Expected::Tool(&["git"]),
        check,
        needs_git: true,
        answers_from_memory: false,
        then: None,
        state: None,
    }
}

/// Any of the read tools: a request that names no file may start with any of them.
const FIND: Expected = Expected::Tool(&["search_files", "list_files", "read_file"]);

const READ: Expected = Expected::Tool(&["read_file"]);
const READ_OR_SEARCH: Expected = Expected::Tool(&["read_file", "search_files"]);
const LIST: Expected = Expected::Tool(&["list_files"]);
const SEARCH: Expected = Expected::Tool(&["search_files"]);
const FROM_MEMORY: Expected = Expected::NoToolOr(&["memory_search", "memory_read"]);

/// Every task, in run order.
pub const TASKS: &[Task] = &[
    task(
        "version",
        "What version is this package?",
        READ,
        Check::Any(&["0.3.1"]),
    ),
    task(
        "arithmetic",
        "What is 17 times 3?",
        Expected::NoTool,
        Check::Any(&["51"]),
    ),
    task(
        "list_notes",
        "List the files in the notes folder.",
        LIST,
        Check::All(&["ideas", "meeting"]),
    ),
    task(
        "find_function",
        "Which file defines the function high_water_mark?",
        SEARCH,
        Check::Any(&["lib.rs"]),
    ),
    git_task(
        "last_commit",
        "What is the message of the most recent git commit?",
        Check::Any(&["default harbour"]),
    ),
    task(
        "mutex",
        "Explain what a mutex is in one sentence.",
        Expected::NoTool,
        Check::Any(&[
            "lock",
            "synchroniz",
            "mutual exclusion",
            "exclusive",
            "one thread",
            "at a time",
        ]),
    ),
    Task {
        answers_from_memory: true,
        ..task(
            "memory_releases",
            "What did I say about releases?",
            FROM_MEMORY,
            Check::Any(&["publish", "vX.Y.Z"]),
        )
    },
    task(
        "readme_harbour",
        "According to the README, what is the default harbour?",
        READ_OR_SEARCH,
        Check::Any(&["Port Isaac"]),
    ),
    git_task(
        "git_status",
        "Are there any uncommitted changes in the git repository?",
        Check::Any(&["todo"]),
    ),
    task(
        "capital",
        "What is the capital of France?",
        Expected::NoTool,
        Check::Any(&["Paris"]),
    ),
    task(
        "list_src",
        "What files are in the src folder?",
        LIST,
        Check::All(&["main.rs", "lib.rs"]),
    ),
    git_task(
        "first_commit",
        "Show me what the first git commit changed.",
        Check::Any(&["parse_tide_table", "Cargo.toml", "tide table"]),
    ),
    task(
        "main_calls",
        "What function does main call in src/main.rs?",
        READ_OR_SEARCH,
        Check::Any(&["print_forecast"]),
    ),
    task(
        "translate",
        "Translate 'good morning' into French.",
        Expected::NoTool,
        Check::Any(&["bonjour"]),
    ),
    task(
        "search_todo",
        "Search the project for TODO comments and tell me which file has one.",
        SEARCH,
        Check::Any(&["lib.rs"]),
    ),
    git_task(
        "git_author",
        "Who made the commits in this git repository?",
        Check::Any(&["bench"]),
    ),
    task(
        "license",
        "Which license is this project under?",
        READ_OR_SEARCH,
        Check::Any(&["Apache"]),
    ),
    task(
        "reverse_fn",
        "Write a Rust function that reverses a string.",
        Expected::NoTool,
        Check::Any(&["fn "]),
    ),
    // Natural requests: they name no tool and no file, as a new user asks.
    git_task(
        "latest_author",
        "Who made the latest commit?",
        Check::Any(&["bench"]),
    ),
    git_task(
        "last_change",
        "What did the last commit change?",
        Check::Any(&["README", "ideas.md", "meeting-2024"]),
    ),
    git_task(
        "commit_count",
        "How many commits does this project have?",
        Check::Word(&["3", "three"]),
    ),
    git_task(
        "last_date",
        "When was the last commit made?",
        Check::Any(&["2024-05-03", "May 3", "3 May", "05-03"]),
    ),
    git_task(
        "not_committed",
        "Is there anything I have not committed yet?",
        Check::Any(&["todo"]),
    ),
    task(
        "tide_source",
        "Where does the program get its tide data from?",
        FIND,
        Check::Any(&["tides.csv"]),
    ),
    task(
        "highest_fn",
        "Which file holds the function that finds the highest tide?",
        FIND,
        Check::Any(&["lib.rs"]),
    ),
    task(
        "meeting",
        "What did we agree in the meeting?",
        FIND,
        Check::Any(&["dependencies", "dependency"]),
    ),
    task(
        "project_does",
        "What does this project do?",
        FIND,
        Check::Any(&["tide height", "predicts tide", "tide heights"]),
    ),
    task(
        "one_word",
        "What is the capital of France? Answer in one word.",
        Expected::NoTool,
        Check::Any(&["Paris"]),
    ),
    // Two steps: find, then read.
    task(
        "ideas",
        "What ideas have I written down?",
        FIND,
        Check::Any(&["second harbour", "chart"]),
    ),
    task(
        "moon_returns",
        "What does moon_phase_factor return?",
        FIND,
        Check::Any(&["0.5 to 1.5", "f64", "between 0.5"]),
    ),
    // A follow-up in the same conversation.
    Task {
        then: Some("Show me its first three lines."),
        ..task(
            "follow_up",
            "What does src/main.rs do?",
            READ_OR_SEARCH,
            Check::Any(&["fn main", "read_to_string"]),
        )
    },
    // Memory first: a planted memory answers; the request does not say it was said.
    Task {
        answers_from_memory: true,
        ..task(
            "release_how",
            "How do we cut a new release?",
            FROM_MEMORY,
            Check::Any(&["publish", "vX.Y.Z"]),
        )
    },
    Task {
        answers_from_memory: true,
        ..task(
            "spelling",
            "Which spelling should your answers use?",
            FROM_MEMORY,
            Check::Any(&["British"]),
        )
    },
    task(
        "write_file",
        "Create a file notes/shopping.md containing the line 'buy rope'.",
        Expected::Tool(&["write_file"]),
        Check::None,
    ),
    task(
        "edit_file",
        "In README.md, change the default harbour from Port Isaac to Padstow.",
        Expected::Tool(&["edit_file", "read_file"]),
        Check::None,
    ),
    task(
        "run_tests",
        "Run cargo test and tell me whether the tests pass.",
        Expected::Tool(&["run_command"]),
        Check::None,
    ),
];

/// The tasks that write a memory, run after every other: the note kept, then the next
/// session asked about it.
pub const LAST: &[Task] = &[
    Task {
        state: Some(StateCheck::Written("tabs")),
        ..task(
            "memory_write",
            "Remember that I prefer tabs over spaces.",
            Expected::Tool(&["memory_write"]),
            Check::None,
        )
    },
    // The next session: what the task before kept.
    Task {
        answers_from_memory: true,
        ..task(
            "tabs_next_session",
            "Do I like tabs or spaces better?",
            FROM_MEMORY,
            Check::Any(&["tabs"]),
        )
    },
];

/// The tide fixture's whole run, in order: [`TASKS`], the memory's and the past
/// sessions' tasks ([`super::memory_tasks`]: questions first, then the changes), [`LAST`].
pub fn tide() -> Vec<Task> {
    use super::memory_tasks::{MEMORY_CHANGES, MEMORY_QUESTIONS};
    [TASKS, MEMORY_QUESTIONS, MEMORY_CHANGES, LAST].concat()
}

/// Tasks read from a file (`harvey bench --agent --task-file`), for trying the agent on
/// requests of one's own: one per line, the acceptable first tools (comma-separated, or
/// `none` for no tool), a tab, the request; blank lines and `#` lines are skipped. The
/// reply is not checked. The strings are leaked: a benchmark reads one file and exits.
pub fn parse_file(text: &str) -> Result<Vec<Task>, String> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim_end()))
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|(n, line)| parse_line(n, line).map_err(|e| format!("line {n}: {e}")))
        .collect()
}

fn parse_line(n: usize, line: &str) -> Result<Task, &'static str> {
    let (tools, prompt) = line
        .split_once('\t')
        .ok_or("no tab between the tools and the request")?;
    let names: Vec<&'static str> = tools
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| &*Box::leak(n.to_string().into_boxed_str()))
        .collect();
    let expected = match names.as_slice() {
        [] => return Err("no tool named (`none` for no tool)"),
        ["none"] => Expected::NoTool,
        _ => Expected::Tool(Box::leak(names.clone().into_boxed_slice())),
    };
    Ok(Task {
        id: Box::leak(format!("line{n}").into_boxed_str()),
        prompt: Box::leak(prompt.trim().to_string().into_boxed_str()),
        expected,
        check: Check::None,
        needs_git: names.contains(&"git"),
        answers_from_memory: false,
        then: None,
        state: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_there_are_enough_of_each_kind() {
        let all = tide();
        let mut ids: Vec<&str> = all.iter().map(|t| t.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
        assert!(TASKS.len() >= 30);
        assert!(TASKS.iter().any(|t| t.then.is_some()));
        let no_tool = TASKS
            .iter()
            .filter(|t| t.expected == Expected::NoTool)
            .count();
        assert!(no_tool >= 4);
    }

    #[test]
    fn a_task_file_gives_one_task_per_request_line() {
        let text =
            "# mine\n\nread_file,search_files\tWhat is in the README?\nnone\tHi!\ngit\tLog?\n";
        let tasks = parse_file(text).unwrap();
        assert_eq!(tasks.len(), 3);
        assert_eq!(tasks[0].prompt, "What is in the README?");
        assert_eq!(
            tasks[0].expected,
            Expected::Tool(&["read_file", "search_files"])
        );
        assert_eq!(tasks[1].expected, Expected::NoTool);
        assert!(tasks[2].needs_git && !tasks[0].needs_git);
        assert_eq!(tasks[2].id, "line5");
        assert!(parse_file("read_file What?").is_err(), "no tab");
        assert!(parse_file(" \tWhat?").is_err(), "no tool");
    }

    #[test]
    fn the_held_out_router_battery_parses() {
        let text = include_str!("../../../tests/fixtures/route/heldout.tsv");
        let tasks = parse_file(text).unwrap();
        assert_eq!(tasks.len(), 12);
    }

    #[test]
    fn memory_changes_come_last_and_only_recall_follows_them() {
        let all = tide();
        let changes = |t: &Task| {
            matches!(
                t.state,
                Some(StateCheck::Archived(_) | StateCheck::Updated(..) | StateCheck::Written(_))
            )
        };
        let first = all.iter().position(changes).unwrap();
        assert!(all[first..]
            .iter()
            .all(|t| changes(t) || t.answers_from_memory));
        assert!(all.iter().any(|t| t.id == "memory_write"));
    }
}
