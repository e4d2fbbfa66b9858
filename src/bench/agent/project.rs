//! The agent benchmark's second workspace (`harvey bench --agent --fixture project`):
//! brindle, a static-site generator shaped like a real repository — a CLI and library
//! crate with nested modules, docs/, tests/, examples/, two licence files, a changelog
//! and a history of [`COMMIT_COUNT`] commits by six people — plus one changed and one
//! new file not committed, and two memories. [`super::project_tasks`] asks about it as
//! a new user would.
//!
//! The history ([`history`]) is data; git only stores it, in one `git fast-import` run
//! (the commits are dated and signed by their authors in the stream, so every run
//! makes the same hashes). Without git the files are written as they stand at the last
//! commit and the git tasks are skipped.

pub mod code;
pub mod docs;
pub mod history;
pub mod render;
pub mod suite;

use crate::memory::Draft;

use super::fixture::Fixture;
use super::git;
use super::AgentBenchError;

/// Commits on `main` (the commit-count task's answer).
pub const COMMIT_COUNT: usize = 240;

/// The tracked file changed and not committed.
pub const MODIFIED: &str = "src/cli/serve.rs";

/// The file never added.
pub const UNTRACKED: &str = "docs/release-notes-draft.md";

/// Fills `fixture`'s empty directory: the repository, the uncommitted edits, the
/// memories.
pub fn populate(fixture: &mut Fixture) -> Result<(), AgentBenchError> {
    fixture.has_git = git::available();
    if fixture.has_git {
        fixture.git(&["init", "--quiet"])?;
        let stream = fast_import_stream(&history::commits());
        let args = ["fast-import", "--quiet", "--date-format=raw"];
        git::run_with_input(&fixture.dir, &args, &stream)?;
        fixture.git(&["reset", "--hard", "--quiet"])?;
    } else {
        for (path, text) in history::final_files() {
            fixture.write(path, &text)?;
        }
    }
    let (from, to) = code::SERVE_EDIT;
    fixture.write(MODIFIED, &code::CLI_SERVE.replace(from, to))?;
    fixture.write(UNTRACKED, docs::RELEASE_NOTES_DRAFT)?;
    fixture.plant_memories(&memories())
}

/// The commits as a `git fast-import` stream onto `refs/heads/main` (raw dates).
fn fast_import_stream(commits: &[history::Commit]) -> Vec<u8> {
    let mut out = String::new();
    for c in commits {
        let who = format!(
            "{} <{}> {} {}",
            c.author.name, c.author.email, c.at, c.author.tz
        );
        out.push_str("commit refs/heads/main\n");
        out.push_str(&format!("author {who}\ncommitter {who}\n"));
        push_data(&mut out, &c.message);
        for (path, text) in &c.changes {
            let mode = if path.ends_with(".sh") {
                "100755"
            } else {
                "100644"
            };
            out.push_str(&format!("M {mode} inline {path}\n"));
            push_data(&mut out, text);
        }
        out.push('\n');
    }
    out.into_bytes()
}

/// A `data` command: the byte length, then the bytes.
fn push_data(out: &mut String, text: &str) {
    out.push_str(&format!("data {}\n{text}\n", text.len()));
}

/// A decision the files do not record (the answer of one task) and a preference.
pub(super) fn memories() -> Vec<Draft> {
    vec![
        Draft {
            mtype: "project_fact".into(),
            description: "Windows support decision".into(),
            summary: "We decided to drop Windows support in brindle 2.0; the 1.x releases keep building on Windows.".into(),
            tags: vec!["platforms".into(), "roadmap".into()],
            ..Draft::default()
        },
        Draft {
            mtype: "user_preference".into(),
            description: "short answers".into(),
            summary: "The user wants short answers, with shell commands in code blocks.".into(),
            tags: vec!["style".into()],
            ..Draft::default()
        },
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::process::Command;

    use super::history::{commits, final_files, PRIYA, TOMASZ};
    use super::*;
    use crate::bench::agent::fixture::FixtureKind;

    /// Each path's text after replaying every commit.
    fn replayed() -> BTreeMap<&'static str, String> {
        let mut tree = BTreeMap::new();
        for commit in commits() {
            tree.extend(commit.changes);
        }
        tree
    }

    #[test]
    fn the_history_has_the_known_count_and_ends_at_the_final_files() {
        let all = commits();
        assert_eq!(all.len(), COMMIT_COUNT);
        let expected: BTreeMap<&str, String> = final_files().into_iter().collect();
        assert_eq!(replayed(), expected);
        assert!((35..=60).contains(&expected.len()), "{}", expected.len());
        assert!(all.windows(2).all(|w| w[0].at < w[1].at), "dates rise");
        assert!(expected.contains_key("LICENSE-MIT") && expected.contains_key("LICENSE-APACHE"));
        assert!(!expected.contains_key("LICENSE.md"));
    }

    #[test]
    fn the_last_commits_carry_the_facts_the_tasks_ask_about() {
        let all = commits();
        let last = all.last().unwrap();
        assert_eq!(last.author, &PRIYA);
        let paths: Vec<&str> = last.changes.iter().map(|(p, _)| *p).collect();
        assert_eq!(paths, ["src/render/feed.rs", "tests/feed.rs"]);
        assert_eq!(all.iter().filter(|c| c.author == &PRIYA).count(), 1);
        let by_mara = all.iter().filter(|c| c.author.name == "Mara Lindqvist");
        assert!(by_mara.count() > COMMIT_COUNT / 3);
        let touches = |path: &str| -> Vec<&str> {
            let hit = |c: &&history::Commit| c.changes.iter().any(|(p, _)| *p == path);
            all.iter().filter(hit).map(|c| c.author.name).collect()
        };
        let markdown = touches("src/render/markdown.rs");
        assert!(markdown.len() > 4, "{markdown:?}");
        assert!(markdown.ends_with(&[TOMASZ.name; 3]), "{markdown:?}");
        assert_eq!(touches("src/config.rs").last(), Some(&"Jonas Berg"));
        let messages: Vec<&str> = all.iter().map(|c| c.message.as_str()).collect();
        let mentions = |word: &str| messages.iter().filter(|m| m.contains(word)).count();
        assert_eq!(mentions("scape"), 1, "only the last commit escapes");
        assert_eq!(mentions("mpersand"), 1);
    }

    fn git_out(dir: &std::path::Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn the_fixture_repository_answers_as_the_tasks_expect() {
        let started = std::time::Instant::now();
        let f = Fixture::create_kind(FixtureKind::Project).unwrap();
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
        let read = |rel: &str| std::fs::read_to_string(f.dir.join(rel)).unwrap();
        for (path, text) in final_files() {
            if path != MODIFIED {
                assert_eq!(read(path), text, "{path}");
            }
        }
        assert_ne!(read(MODIFIED), code::CLI_SERVE);
        assert!(f.dir.join(UNTRACKED).is_file());
        assert!(f.dir.join("agents/memories").is_dir());
        if !f.has_git {
            return;
        }
        let git = |args: &[&str]| git_out(&f.dir, args);
        assert_eq!(
            git(&["rev-list", "--count", "HEAD"]).trim(),
            COMMIT_COUNT.to_string()
        );
        assert_eq!(git(&["log", "-1", "--format=%an"]).trim(), "Priya Raman");
        let last = git(&["show", "--name-only", "--format=", "HEAD"]);
        assert_eq!(last.trim(), "src/render/feed.rs\ntests/feed.rs");
        let history = git(&["log", "--format=%an", "--", "src/render/markdown.rs"]);
        assert!(history.starts_with("Tomasz Wolny\nTomasz Wolny\nTomasz Wolny\n"));
        let line = code::CONFIG
            .lines()
            .position(|l| l == code::PORT_LINE)
            .unwrap()
            + 1;
        let range = format!("{line},{line}");
        let blame = git(&["blame", "-L", &range, "--", "src/config.rs"]);
        assert!(
            blame.contains("Jonas Berg") && blame.contains("4717"),
            "{blame}"
        );
        let status = git(&["status", "--porcelain"]);
        assert_eq!(status, format!(" M {MODIFIED}\n?? {UNTRACKED}\n"));
        assert!(git(&["ls-files", "-s", "scripts/deploy.sh"]).starts_with("100755"));
    }

    #[test]
    fn the_stream_gives_each_text_its_byte_length() {
        let mut out = String::new();
        push_data(&mut out, "é\n");
        assert_eq!(out, "data 3\né\n\n");
    }
}
