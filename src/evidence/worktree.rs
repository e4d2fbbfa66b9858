//! The working tree as evidence: what `git status` says now (staged, changed, untracked),
//! one unit kept beside the commits. "Are there any uncommitted changes?" and "Is there
//! anything I have not committed yet?" are about the tree as it is, which no file and no
//! commit holds; with the unit in the block the answer names the files, where before the
//! model answered from whatever file the words found.
//!
//! Read at every refresh (one `git status` listing each untracked file, a few milliseconds
//! in a small repository). Paths under `agents/` and `.git/`, and secret-looking names,
//! are never named: the unit says only what the read tools may show.

use std::path::Path;
use std::time::Duration;

/// How long one `git status` may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Most paths named per state (a tree with thousands of untracked files names the first).
const MAX_NAMED: usize = 20;

/// The states the unit speaks of: a question that names none of them is not about the
/// working tree, whatever else of the unit its words find (a path's folder).
pub const STATES: &[&str] = &[
    "uncommitted",
    "committed",
    "staged",
    "unstaged",
    "untracked",
    "modified",
    "dirty",
    "clean",
];

/// One path `git status` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    /// The index's state against `HEAD` (`M`, `A`, `D`, `R`, …); `None` when unchanged.
    pub staged: Option<char>,
    /// The working file's state against the index; `None` when unchanged.
    pub unstaged: Option<char>,
    /// Not known to git at all.
    pub untracked: bool,
}

/// The working tree's entries, or `None` outside git (or when git fails).
pub fn status(root: &Path) -> Option<Vec<Entry>> {
    let args = [
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=dirty",
    ];
    let out = crate::command::git::quiet(root, &args, TIMEOUT)?;
    Some(parse(&String::from_utf8_lossy(&out)))
}

/// Entries from `git status --porcelain=v1 -z` output, less what is never shown.
pub fn parse(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut fields = text.split('\0');
    while let Some(field) = fields.next() {
        let (Some(code), Some(path)) = (field.get(..2), field.get(3..)) else {
            continue;
        };
        let mut chars = code.chars();
        let (x, y) = (chars.next().unwrap_or(' '), chars.next().unwrap_or(' '));
        if matches!(x, 'R' | 'C') {
            // A rename or copy is followed by the path it came from.
            fields.next();
        }
        if x == '!' || !is_shown(path) {
            continue;
        }
        let state = |c: char| (c != ' ' && c != '?').then_some(c);
        out.push(Entry {
            path: path.to_string(),
            staged: state(x),
            unstaged: state(y),
            untracked: x == '?',
        });
    }
    out
}

/// Whether a path may be named: not under `agents/` or `.git/`, no secret-looking name.
fn is_shown(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    let mut parts = path.split('/');
    let first = parts.next().unwrap_or("");
    if matches!(first, "agents" | ".git") || path.is_empty() {
        return false;
    }
    let names: Vec<&str> = path.split('/').collect();
    let secret = names.iter().any(|n| crate::sandbox::is_secret_name(n))
        || names
            .windows(2)
            .any(|w| crate::sandbox::is_secret_pair(w[0], w[1]));
    !secret
}

/// What a state letter says of a file.
fn said(state: char) -> &'static str {
    match state {
        'M' | 'T' => "modified",
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'U' => "unmerged, in conflict",
        _ => "changed",
    }
}

/// The unit's text: the tree's state in the words a question about it uses. The word
/// "commit" is said once: every commit unit says it too, and a unit that said it thrice
/// rose above the commits for "Who made the latest commit?".
pub fn text(entries: &[Entry]) -> String {
    if entries.is_empty() {
        return "the working tree is clean: nothing uncommitted, nothing staged, nothing untracked"
            .to_string();
    }
    let line = |pick: &dyn Fn(&Entry) -> Option<String>| -> Option<String> {
        let named: Vec<String> = entries.iter().filter_map(pick).collect();
        if named.is_empty() {
            return None;
        }
        let more = named.len().saturating_sub(MAX_NAMED);
        let mut s = named
            .into_iter()
            .take(MAX_NAMED)
            .collect::<Vec<_>>()
            .join(", ");
        if more > 0 {
            s.push_str(&format!(" and {more} more"));
        }
        Some(s)
    };
    let staged = line(&|e| e.staged.map(|c| format!("{} ({})", e.path, said(c))));
    let unstaged = line(&|e| e.unstaged.map(|c| format!("{} ({})", e.path, said(c))));
    let untracked = line(&|e| e.untracked.then(|| e.path.clone()));
    let mut out = String::from("uncommitted in the working tree (not committed yet):");
    for (head, names) in [
        ("staged", staged),
        ("changed, not staged", unstaged),
        ("untracked, new files git does not know", untracked),
    ] {
        if let Some(names) = names {
            out.push_str(&format!("\n{head}: {names}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_entries_are_read_with_renames_and_without_private_or_secret_paths() {
        let raw = " M src/lib.rs\0M  README.md\0R  new.rs\0old.rs\0?? notes/todo.md\0\
                   ?? agents/\0?? .env\0?? deploy/.docker/config.json\0!! target/\0AM x.py\0";
        let got = parse(raw);
        let paths: Vec<&str> = got.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            ["src/lib.rs", "README.md", "new.rs", "notes/todo.md", "x.py"]
        );
        assert_eq!(got[0].staged, None);
        assert_eq!(got[0].unstaged, Some('M'));
        assert_eq!(got[2].staged, Some('R'));
        assert!(got[3].untracked && got[3].staged.is_none() && got[3].unstaged.is_none());
        assert_eq!((got[4].staged, got[4].unstaged), (Some('A'), Some('M')));
    }

    #[test]
    fn the_text_names_each_file_under_its_state_and_a_clean_tree_says_so() {
        let dirty = text(&parse(" M src/lib.rs\0A  src/new.rs\0?? notes/todo.md\0"));
        assert!(
            dirty.starts_with("uncommitted in the working tree"),
            "{dirty}"
        );
        assert!(dirty.contains("\nstaged: src/new.rs (added)"), "{dirty}");
        assert!(
            dirty.contains("\nchanged, not staged: src/lib.rs (modified)"),
            "{dirty}"
        );
        assert!(dirty.contains("\nuntracked, new files git does not know: notes/todo.md"));
        assert_eq!(
            dirty.matches("commit").count() - dirty.matches("uncommit").count(),
            1
        );
        let clean = text(&[]);
        assert!(
            clean.contains("clean") && !clean.contains(" commit"),
            "{clean}"
        );
    }

    #[test]
    fn a_long_list_is_cut_with_a_count() {
        let raw: String = (0..25).map(|i| format!("?? f{i}.txt\0")).collect();
        let said = text(&parse(&raw));
        assert!(said.contains("f19.txt and 5 more"), "{said}");
        assert!(!said.contains("f20.txt"), "{said}");
    }

    /// A repository with two commits and a file left untracked, indexed.
    fn repository() -> (tempfile::TempDir, crate::evidence::Index) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let root = root.as_path();
        let git = crate::evidence::history::git_in(root);
        let write = |p: &str, t: &str| {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), t).unwrap();
        };
        git(&["init", "-q"]);
        write(
            "src/lib.rs",
            "/// Reads a tide table.\npub fn parse_table() {}\n",
        );
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "Add the tide table parser"]);
        write("README.md", "# tides\n\nReads tide tables.\n");
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "Document the parser"]);
        write("notes/todo.md", "- check the harbour\n");
        write(".env", "TOKEN=1\n");
        let mut index = crate::evidence::Index::open(root).unwrap();
        index.refresh(&mut |_, _| {}).unwrap();
        drop(git);
        (dir, index)
    }

    #[test]
    fn a_question_about_uncommitted_work_gets_the_status_and_a_commit_question_its_commit() {
        use crate::tokens::WordCounter as Words;
        let (dir, mut index) = repository();
        let b = index
            .gather(
                "Are there any uncommitted changes in the repository?",
                300,
                &Words,
            )
            .unwrap();
        let status = b.snippets.iter().find(|s| s.kind == "worktree");
        assert!(
            status.is_some_and(|s| s.source == "git status, now"),
            "{}",
            b.text
        );
        assert!(b.text.contains("notes/todo.md"), "{}", b.text);
        assert!(
            !b.text.contains(".env") && !b.text.contains("agents"),
            "{}",
            b.text
        );
        let latest = index
            .gather("Who made the latest commit?", 300, &Words)
            .unwrap();
        assert_eq!(latest.snippets[0].kind, "commit", "{}", latest.text);
        // Found by its path's words alone, the state is no evidence.
        for question in [
            "List the files in the notes folder.",
            "What is in notes/todo.md?",
        ] {
            let b = index.gather(question, 300, &Words).unwrap();
            assert!(
                !b.snippets.iter().any(|s| s.kind == "worktree"),
                "{}",
                b.text
            );
        }
        let yet = index
            .gather("Is there anything I have not committed yet?", 300, &Words)
            .unwrap();
        assert!(
            yet.snippets.iter().any(|s| s.kind == "worktree"),
            "{}",
            yet.text
        );
        // Committed, the tree is clean, and the unit says so at the next refresh.
        let git = crate::evidence::history::git_in(dir.path());
        git(&["add", "notes"]);
        git(&["commit", "-q", "-m", "Add notes"]);
        index.refresh(&mut |_, _| {}).unwrap();
        let b = index
            .gather("Are there any uncommitted changes?", 300, &Words)
            .unwrap();
        assert!(b.text.contains("the working tree is clean"), "{}", b.text);
        assert!(
            !b.text.contains("todo.md (") && !b.text.contains("untracked, new"),
            "{}",
            b.text
        );
    }
}
