//! The model's git questions as named actions: each maps to the read-only invocations
//! that answer it, so a small model never has to know that `HEAD~` is not the last
//! commit or that `git diff` shows the working tree. Every invocation built here still
//! goes through [`super::argv`] and [`super::paths`] (the same screening as `/git`).
//!
//! Pure: builds argument lists, runs nothing.

/// The actions, as the `git` tool's `action` enum lists them. `first_commit` is planned
/// but not listed: with it in the enum the 1.5B's router sent "What is the capital of
/// France?" to `read_file` (a near tie the longer prompt tipped); `show_commit` with `rev`
/// "first" reaches it.
pub const ACTIONS: &[&str] = &[
    "last_commit",
    "show_commit",
    "file_history",
    "commit_count",
    "who_changed",
    "uncommitted",
    "log",
    "diff",
];

/// Phrases that name one action whatever else the request says: the call the router
/// chose is then written under a grammar that allows only that action. Asked "Is there
/// anything I have not committed yet?" in a project of 240 commits, the 1.5B chose
/// `file_history` of `.` and answered "Yes, there are 20 commits"; in the tide fixture
/// the same words got `uncommitted`.
const NAMED: &[(&[&str], usize)] = &[
    (
        &[
            "uncommitted",
            "not committed",
            "not been committed",
            "not yet committed",
            "haven't committed",
            "have not committed",
            "unstaged",
            "not staged",
            "working tree",
            "local changes",
        ],
        5,
    ),
    (
        &[
            "how many commits",
            "number of commits",
            "count the commits",
            "commit count",
            "count of commits",
        ],
        3,
    ),
];

/// The one action `request` names in so many words ([`NAMED`]), as the one-value slice of
/// [`ACTIONS`] a narrowed enum takes; `None` when it names none or more than one.
pub fn named_by(request: &str) -> Option<&'static [&'static str]> {
    let t = request.to_lowercase().replace('’', "'");
    let mut found = NAMED
        .iter()
        .filter(|(phrases, _)| phrases.iter().any(|p| t.contains(p)))
        .map(|(_, i)| &ACTIONS[*i..=*i]);
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// Phrases that ask about the repository's first commit. Asked "What did the first git
/// commit change?", the 1.5B wrote `show_commit` of `HEAD` (the newest) and described it.
const FIRST: &[&str] = &[
    "first commit",
    "first git commit",
    "initial commit",
    "earliest commit",
    "oldest commit",
    "very first commit",
];

/// Whether `request` asks about the first commit: the chosen `git` call is then
/// `show_commit` of `first` (see [`plan`]).
pub fn names_first_commit(request: &str) -> bool {
    let t = request.to_lowercase();
    FIRST.iter().any(|p| t.contains(p))
}

/// Commits `log` lists when the call gives no `n`.
pub const DEFAULT_LOG: i64 = 10;

/// Commits `file_history` lists.
const HISTORY_LIMIT: &str = "20";

/// One commit per line: short hash, date, author, subject.
const ONE_LINE: &str = "--format=%h %ad %an - %s";

/// A call of the `git` tool, its arguments as given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ask<'a> {
    pub action: &'a str,
    pub rev: Option<&'a str>,
    pub path: Option<&'a str>,
    pub line: Option<i64>,
    pub n: Option<i64>,
}

/// What an action runs: a line that says what the output is, then one or more git
/// invocations (subcommand first, as [`super::argv`] takes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub label: String,
    pub runs: Vec<Vec<String>>,
    /// The commit's patch, shown below the runs only when short ([`super::patch::shown`]).
    pub patch: Option<Vec<String>>,
}

/// The invocations for `ask`, or what the call must change (said to the model).
pub fn plan(ask: &Ask<'_>) -> Result<Plan, String> {
    let w = |words: &[&str]| words.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let with = |mut words: Vec<String>, more: Vec<String>| {
        words.extend(more);
        words
    };
    let mut patch = None;
    let (label, runs) = match ask.action {
        "last_commit" => {
            // One line of context, and a merge as its first parent saw it (the default
            // combined diff of a merge is mostly empty).
            patch = Some(w(&[
                "show",
                "--format=",
                "--patch",
                "--unified=1",
                "--first-parent",
                "HEAD",
            ]));
            (
                "the newest commit (HEAD): author, date, message, files changed".to_string(),
                vec![w(&["show", "--stat", "--date=iso", "HEAD"])],
            )
        }
        "first_commit" => first_commit(),
        "show_commit" if ask.rev.is_some_and(names_the_first) => first_commit(),
        "show_commit" => {
            let revs = revs(ask.rev.unwrap_or("HEAD"))?;
            (
                format!("commit {}: author, date, message, what it changed", revs.join(" ")),
                vec![with(w(&["show", "--stat", "--patch", "--date=iso"]), revs)],
            )
        }
        "file_history" => {
            let path = path(ask, "file_history")?;
            (
                format!("commits that changed {path}, newest first"),
                vec![w(&[
                    "log", "--follow", "-n", HISTORY_LIMIT, "--date=short", ONE_LINE, "--", path,
                ])],
            )
        }
        "commit_count" => (
            "the number of commits on the current branch (HEAD)".to_string(),
            vec![w(&["rev-list", "--count", "HEAD"])],
        ),
        // Without a file the question is who made the commits: their authors, newest
        // first (asked "who made the commits", the 1.5B chose this action and no path).
        "who_changed" if ask.path.is_none_or(|p| p.trim().is_empty()) => (
            "who made the latest commits, newest first (author - date - message)".to_string(),
            vec![w(&["log", "-n", "20", "--date=short", "--format=%an - %ad - %s"])],
        ),
        "who_changed" => {
            let path = path(ask, "who_changed")?;
            match ask.line {
                Some(line) => (
                    format!("who last changed line {line} of {path} (commit, author, date)"),
                    vec![with(
                        w(&["blame", "--date=short", "-L", &format!("{line},{line}")]),
                        w(&["--", path]),
                    )],
                ),
                // The file as a whole: its latest commits, not a blame of every line (asked
                // who last changed the markdown renderer, the 1.5B named the author of
                // most of its lines, not the last one).
                None => (
                    format!(
                        "who changed {path}, newest first: the first line is the last change \
(author - date - message)"
                    ),
                    vec![w(&[
                        "log", "--follow", "-n", "10", "--date=short", "--format=%an - %ad - %s",
                        "--", path,
                    ])],
                ),
            }
        }
        "uncommitted" => (
            "what is not committed: new and changed files, then the changed lines of committed files"
                .to_string(),
            vec![
                w(&["status", "--short", "--branch"]),
                w(&["diff", "--stat", "HEAD"]),
            ],
        ),
        "log" => {
            let n = ask.n.unwrap_or(DEFAULT_LOG).max(1).to_string();
            (
                format!("the latest {n} commits, newest first (hash, date, author, message)"),
                vec![w(&["log", "-n", &n, "--date=short", ONE_LINE])],
            )
        }
        "diff" => {
            let mut words = w(&["diff", "--stat", "--patch"]);
            let label = match ask.rev {
                Some(rev) => {
                    let revs = revs(rev)?;
                    let label = format!("changes of {}", revs.join(" "));
                    words.extend(revs);
                    label
                }
                None => "changes in the working tree not committed yet".to_string(),
            };
            (label, vec![words])
        }
        other => {
            return Err(format!(
                "unknown action {other:?}: one of {}",
                ACTIONS.join(", ")
            ))
        }
    };
    Ok(Plan { label, runs, patch })
}

/// The root commit with what it added (`log --max-parents=0` shows the commit that has
/// no parent, patch included).
fn first_commit() -> (String, Vec<Vec<String>>) {
    (
        "the first commit (the root): author, date, message, what it added".to_string(),
        vec![[
            "log",
            "--max-parents=0",
            "--stat",
            "--patch",
            "--date=iso",
            "HEAD",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()],
    )
}

/// A rev a small model writes for the first commit ("first", "root", "initial").
fn names_the_first(rev: &str) -> bool {
    let r = rev.trim().to_ascii_lowercase();
    ["first", "root", "initial", "first commit", "initial commit"].contains(&r.as_str())
}

/// Uncommitted files named in the status headline at most.
const NAMED_IN_HEADLINE: usize = 6;

/// `git status --short --branch` in words, the count first: a small model read `??
/// notes/todo.md` (and then "new file, never committed: notes/todo.md" under a label
/// that began "changes not committed yet") and answered that nothing was uncommitted.
/// Lines it does not know are kept as they are.
pub fn describe_status(text: &str) -> String {
    let mut branch = None;
    let mut header = Vec::new();
    let mut files = Vec::new();
    for line in text.lines() {
        // The runner's own line (`[command: git status … → exit 0]`) stays on top.
        if line.starts_with("[command: ") {
            header.push(line.to_string());
            continue;
        }
        if let Some(b) = line.strip_prefix("## ") {
            branch = Some(b.to_string());
            continue;
        }
        if line.len() < 4 {
            continue;
        }
        let (code, path) = line.split_at(3);
        // harvey's own folder, never committed, is not the user's uncommitted work.
        if code.trim() == "??" && path.trim_end_matches('/') == "agents" {
            continue;
        }
        let what = match code.trim() {
            "??" => "new file, never committed",
            "M" | "MM" | "AM" => "modified since the last commit",
            "A" => "added to the index, not committed",
            "D" => "deleted, not committed",
            "R" => "renamed, not committed",
            _ => {
                files.push((line.trim().to_string(), format!("- {line}")));
                continue;
            }
        };
        files.push((path.to_string(), format!("- {path}: {what}")));
    }
    // The headline names the files when they are few: the 0.5B answered "Is there
    // anything I have not committed yet?" with the count line alone, "Yes: 2 files are
    // not committed."
    let names = files
        .iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = header;
    out.push(match files.len() {
        // "No" first, as "Yes" below: the 0.5B answered a clean tree with "Yes, everything is
        // uncommitted."
        0 => "No: nothing is uncommitted; every file matches the last commit.".to_string(),
        1 => format!("Yes: 1 file is not committed ({names}):"),
        n if n <= NAMED_IN_HEADLINE => format!("Yes: {n} files are not committed ({names}):"),
        n => format!("Yes: {n} files are not committed:"),
    });
    let files: Vec<String> = files.into_iter().map(|(_, line)| line).collect();
    out.extend(files);
    if let Some(b) = branch {
        out.push(format!("(branch: {b})"));
    }
    out.join("\n")
}

/// A `rev` as revision words: one or two (a range may be written `A B`), none an option.
fn revs(rev: &str) -> Result<Vec<String>, String> {
    let words: Vec<String> = rev.split_whitespace().map(str::to_string).collect();
    if let Some(bad) = words.iter().find(|w| w.starts_with('-')) {
        return Err(format!(
            "rev {bad:?} is an option, not a revision: give a commit such as HEAD~1 or a1b2c3d"
        ));
    }
    if words.is_empty() || words.len() > 2 {
        return Err(format!(
            "rev {rev:?}: give one commit (HEAD, HEAD~1, a1b2c3d) or a range (HEAD~3..HEAD)"
        ));
    }
    Ok(words)
}

fn path<'a>(ask: &Ask<'a>, action: &str) -> Result<&'a str, String> {
    match ask.path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => Ok(p),
        None => Err(format!(
            "{action} needs \"path\": the file to look at, e.g. src/main.rs"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(ask: Ask<'_>) -> Vec<String> {
        plan(&ask)
            .unwrap()
            .runs
            .iter()
            .map(|r| r.join(" "))
            .collect()
    }

    fn ask(action: &str) -> Ask<'_> {
        Ask {
            action,
            ..Ask::default()
        }
    }

    #[test]
    fn each_action_maps_to_the_invocation_that_answers_it() {
        assert_eq!(
            runs(ask("last_commit")),
            ["show --stat --date=iso HEAD"],
            "the newest commit is HEAD, not HEAD~"
        );
        assert_eq!(
            runs(Ask {
                rev: Some("a1b2c3d"),
                ..ask("show_commit")
            }),
            ["show --stat --patch --date=iso a1b2c3d"]
        );
        assert_eq!(
            runs(ask("show_commit")),
            ["show --stat --patch --date=iso HEAD"]
        );
        assert_eq!(
            runs(Ask {
                path: Some("src/lib.rs"),
                ..ask("file_history")
            }),
            ["log --follow -n 20 --date=short --format=%h %ad %an - %s -- src/lib.rs"]
        );
        assert_eq!(runs(ask("commit_count")), ["rev-list --count HEAD"]);
        assert_eq!(
            named_by("Is there anything I haven’t committed yet?"),
            Some(&["uncommitted"][..])
        );
        assert_eq!(
            named_by("How many commits does it have?"),
            Some(&["commit_count"][..])
        );
        assert_eq!(named_by("Who made the latest commit?"), None);
        assert_eq!(
            named_by("How many commits are not committed?"),
            None,
            "two named: the model chooses"
        );
        assert_eq!(
            runs(Ask {
                path: Some("src/lib.rs"),
                line: Some(7),
                ..ask("who_changed")
            }),
            ["blame --date=short -L 7,7 -- src/lib.rs"]
        );
        assert_eq!(
            runs(Ask {
                path: Some("README.md"),
                ..ask("who_changed")
            }),
            ["log --follow -n 10 --date=short --format=%an - %ad - %s -- README.md"],
            "a whole file: its latest commits, newest first"
        );
        assert_eq!(
            runs(ask("first_commit")),
            ["log --max-parents=0 --stat --patch --date=iso HEAD"]
        );
        assert_eq!(
            runs(Ask {
                rev: Some("first"),
                ..ask("show_commit")
            }),
            runs(ask("first_commit")),
            "a rev that names the first commit"
        );
        assert_eq!(
            runs(ask("who_changed")),
            ["log -n 20 --date=short --format=%an - %ad - %s"],
            "no file: who made the commits"
        );
        assert_eq!(
            runs(ask("uncommitted")),
            ["status --short --branch", "diff --stat HEAD"]
        );
        assert_eq!(
            runs(ask("log")),
            ["log -n 10 --date=short --format=%h %ad %an - %s"]
        );
        assert_eq!(
            runs(Ask {
                n: Some(3),
                ..ask("log")
            })[0],
            "log -n 3 --date=short --format=%h %ad %an - %s"
        );
        assert_eq!(
            runs(Ask {
                rev: Some("HEAD~2..HEAD"),
                ..ask("diff")
            }),
            ["diff --stat --patch HEAD~2..HEAD"]
        );
        assert_eq!(runs(ask("diff")), ["diff --stat --patch"]);
    }

    #[test]
    fn status_lines_are_said_in_words() {
        let said = describe_status(
            "[command: git status --short --branch → exit 0]\n## main\n?? notes/todo.md\n M src/lib.rs\nD  old.rs\n",
        );
        assert_eq!(
            said,
            "[command: git status --short --branch → exit 0]\nYes: 3 files are not committed (notes/todo.md, src/lib.rs, old.rs):\n- notes/todo.md: new file, never committed\n\
- src/lib.rs: modified since the last commit\n- old.rs: deleted, not committed\n(branch: main)"
        );
        assert_eq!(
            describe_status("## main\n"),
            "No: nothing is uncommitted; every file matches the last commit.\n(branch: main)"
        );
        assert_eq!(
            describe_status("## main\n?? agents/\n"),
            "No: nothing is uncommitted; every file matches the last commit.\n(branch: main)",
            "harvey's own folder, never committed, is left out"
        );
        assert!(describe_status("## main\n M agents/notes.md\n").contains("agents/notes.md"));
    }

    #[test]
    fn every_action_has_a_plan_that_the_screening_lets_through() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".git")).unwrap();
        for action in ACTIONS {
            let a = Ask {
                action,
                path: Some("src/lib.rs"),
                line: Some(1),
                ..Ask::default()
            };
            for run in plan(&a).unwrap().runs {
                super::super::argv(&run, &[]).unwrap();
                super::super::paths::check(ws.path(), &run[1..]).unwrap();
            }
        }
    }

    #[test]
    fn options_in_rev_and_missing_paths_are_refused_with_what_to_do() {
        for (a, why) in [
            (
                Ask {
                    rev: Some("--output=/tmp/x"),
                    ..ask("show_commit")
                },
                "is an option",
            ),
            (
                Ask {
                    rev: Some("HEAD --no-index"),
                    ..ask("diff")
                },
                "is an option",
            ),
            (
                Ask {
                    rev: Some("a b c"),
                    ..ask("diff")
                },
                "a range",
            ),
            (ask("file_history"), "needs \"path\""),
            (ask("push"), "unknown action"),
        ] {
            let e = plan(&a).unwrap_err();
            assert!(e.contains(why), "{a:?}: {e}");
        }
    }

    #[test]
    fn a_secret_named_through_an_action_is_still_refused_by_the_screening() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".git")).unwrap();
        std::fs::write(ws.path().join(".env"), "SECRET=1").unwrap();
        for a in [
            Ask {
                rev: Some("HEAD:.env"),
                ..ask("show_commit")
            },
            Ask {
                path: Some(".env"),
                ..ask("file_history")
            },
            Ask {
                path: Some(".env"),
                ..ask("who_changed")
            },
            Ask {
                rev: Some("/dev/null .env"),
                ..ask("diff")
            },
        ] {
            let refused = plan(&a)
                .unwrap()
                .runs
                .iter()
                .any(|run| super::super::paths::check(ws.path(), &run[1..]).is_err());
            assert!(refused, "{a:?}");
        }
    }
}
