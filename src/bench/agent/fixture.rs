//! The agent benchmark's workspace: a small Rust crate with a README, a notes folder, a
//! git history of three commits (fixed authors and dates, so every run sees the same
//! hashes) and one untracked file, plus six memories written through the memory store
//! as `harvey memory add` writes them and six summarized past sessions, dated back from
//! the run's own clock, written as a closed session's record is. The facts here are what
//! [`super::tasks`] and [`super::memory_tasks`] check.
//!
//! Lives in a temporary directory that is removed when the [`Fixture`] is dropped.
//! [`FixtureKind::Project`] fills the same kind of directory with the larger project of
//! [`super::project`] instead.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::memory::{Draft, MemoryStore};
use crate::session::fountain::{self, Exchange, TitlePage};

use super::memory_tasks::PastSession;

use super::git::{self, io};
use super::AgentBenchError;

/// Which workspace the tasks run in (`harvey bench --agent --fixture NAME`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FixtureKind {
    /// This module's five-file crate with three commits.
    #[default]
    Tide,
    /// [`super::project`]: a static-site generator's repository, docs, tests and history.
    Project,
}

impl FixtureKind {
    /// Every kind, by the name `--fixture` takes.
    pub const ALL: [(&'static str, Self); 2] = [("tide", Self::Tide), ("project", Self::Project)];

    /// The kind `--fixture` names.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }

    /// The name `--fixture` takes.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("tide", |(n, _)| n)
    }
}

/// The package the fixture crate declares (tasks check the version).
pub const PACKAGE_VERSION: &str = "0.3.1";

const CARGO_TOML: &str = "[package]\nname = \"tidepool\"\nversion = \"0.3.1\"\nedition = \"2021\"\nlicense = \"Apache-2.0\"\n\n[dependencies]\n";

const GITIGNORE: &str = "/target\n/agents\n";

const README_FIRST: &str = "# tidepool\n\ntidepool predicts tide heights for small harbours.\n\n- Tide tables are read from data/tides.csv.\n- Licensed under the Apache License 2.0.\n";

const README: &str = "# tidepool\n\ntidepool predicts tide heights for small harbours.\n\n- The default harbour is Port Isaac.\n- Tide tables are read from data/tides.csv.\n- Licensed under the Apache License 2.0.\n";

const LIB_FIRST: &str = r#"//! Tide tables and what is derived from them.

/// One reading: the hour of the day and the height in metres.
pub struct Reading {
    pub hour: u32,
    pub height_m: f64,
}

/// Parses "hour,height" lines; bad lines are skipped.
pub fn parse_tide_table(text: &str) -> Vec<Reading> {
    text.lines()
        .filter_map(|line| {
            let (hour, height) = line.split_once(',')?;
            Some(Reading {
                hour: hour.trim().parse().ok()?,
                height_m: height.trim().parse().ok()?,
            })
        })
        .collect()
}
"#;

const LIB_MORE: &str = r#"
/// The highest reading's height.
pub fn high_water_mark(readings: &[Reading]) -> Option<f64> {
    readings.iter().map(|r| r.height_m).reduce(f64::max)
}

// TODO: handle leap years.
/// How strongly the moon pulls on a given day (0.5 to 1.5).
pub fn moon_phase_factor(day_of_year: u32) -> f64 {
    1.0 + 0.5 * (f64::from(day_of_year) / 29.5 * std::f64::consts::TAU).cos()
}
"#;

const MAIN: &str = r#"fn main() {
    let text = std::fs::read_to_string("data/tides.csv").unwrap_or_default();
    print_forecast(&text);
}

fn print_forecast(text: &str) {
    let readings = tidepool::parse_tide_table(text);
    match tidepool::high_water_mark(&readings) {
        Some(h) => println!("high water: {h:.2} m"),
        None => println!("no readings"),
    }
}
"#;

const NOTES_IDEAS: &str =
    "# Ideas\n\n- Add a second harbour.\n- Plot a week of tides as a chart.\n";

const NOTES_MEETING: &str =
    "# Meeting, 2 May 2024\n\nAgreed to keep the crate free of dependencies.\n";

const NOTES_TODO: &str = "- check the harbour list against the admiralty tables\n";

/// The memories planted before the first session: a preference and a project fact, then
/// [`super::memory_tasks::memories`].
fn memories() -> Vec<Draft> {
    let mut planted = vec![
        Draft {
            mtype: "user_preference".into(),
            description: "answers in British English".into(),
            summary: "The user wants answers in British English spelling.".into(),
            tags: vec!["style".into()],
            ..Draft::default()
        },
        Draft {
            mtype: "project_fact".into(),
            description: "release procedure".into(),
            summary: "Bump the version, tag vX.Y.Z, then cargo publish.".into(),
            tags: vec!["release".into()],
            ..Draft::default()
        },
    ];
    planted.extend(super::memory_tasks::memories());
    planted
}

/// The fixture workspace; removed on drop.
#[derive(Debug)]
pub struct Fixture {
    pub dir: PathBuf,
    /// Whether git was found and the history made (git tasks are skipped otherwise).
    pub has_git: bool,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Fixture {
    /// Creates the tide workspace under the system's temporary directory.
    pub fn create() -> Result<Self, AgentBenchError> {
        Self::create_kind(FixtureKind::Tide)
    }

    /// Creates the workspace of `kind` under the system's temporary directory.
    pub fn create_kind(kind: FixtureKind) -> Result<Self, AgentBenchError> {
        let mut fixture = Self::empty()?;
        match kind {
            FixtureKind::Tide => fixture.populate()?,
            FixtureKind::Project => super::project::populate(&mut fixture)?,
        }
        Ok(fixture)
    }

    /// An empty directory of its own, with git not yet looked for.
    fn empty() -> Result<Self, AgentBenchError> {
        static CREATED: AtomicUsize = AtomicUsize::new(0);
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let name = format!("harvey-agentbench-{}-{n}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        // The app sees the workspace by its canonical path (a temp dir may be a link).
        let dir = dir.canonicalize().map_err(|e| io(&dir, e))?;
        Ok(Self {
            dir,
            has_git: false,
        })
    }

    fn populate(&mut self) -> Result<(), AgentBenchError> {
        self.has_git = git::available();
        if self.has_git {
            self.git(&["init", "--quiet"])?;
        }
        self.commit(
            &[
                ("Cargo.toml", CARGO_TOML),
                (".gitignore", GITIGNORE),
                ("README.md", README_FIRST),
                ("src/lib.rs", LIB_FIRST),
            ],
            "Initial commit: tide table parser",
            "2024-05-01T10:00:00+00:00",
        )?;
        let lib = format!("{LIB_FIRST}{LIB_MORE}");
        self.commit(
            &[("src/lib.rs", &lib), ("src/main.rs", MAIN)],
            "Add high water mark calculation",
            "2024-05-02T11:00:00+00:00",
        )?;
        self.commit(
            &[
                ("README.md", README),
                ("notes/ideas.md", NOTES_IDEAS),
                ("notes/meeting-2024-05-02.md", NOTES_MEETING),
            ],
            "Document the default harbour in the README",
            "2024-05-03T12:00:00+00:00",
        )?;
        // Untracked: what `git status` should report.
        self.write("notes/todo.md", NOTES_TODO)?;
        self.plant_memories(&memories())?;
        self.plant_sessions(super::memory_tasks::SESSIONS, chrono::Local::now())
    }

    /// The past sessions as `agents/sessions/harvey-session-<start>.spmd`, each dated
    /// its `days_ago` before `now` and closed with its summary and tags as the session
    /// close writes them; the app's start indexes them (`SessionIndex::reconcile` reads
    /// a record it has no row for, its summary from the closing notes).
    pub(super) fn plant_sessions(
        &self,
        sessions: &[PastSession],
        now: chrono::DateTime<chrono::Local>,
    ) -> Result<(), AgentBenchError> {
        for s in sessions {
            let started = now - chrono::Duration::days(s.days_ago);
            let at = |minutes: i64| {
                (started + chrono::Duration::minutes(minutes))
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string()
            };
            let mut text = fountain::header(&TitlePage {
                title: "Harvey Session".into(),
                credit: format!("Written by harvey {}", env!("CARGO_PKG_VERSION")),
                author: "harvey and bench".into(),
                date: at(0),
                model: "planted".into(),
            });
            for (i, (user, reply)) in s.exchanges.iter().enumerate() {
                let exchange = Exchange {
                    when: at(i as i64),
                    user: user.to_string(),
                    reply: reply.to_string(),
                    notes: Vec::new(),
                };
                text.push_str(&fountain::scene("bench", &exchange));
            }
            text.push_str(&fountain::note(&format!("Summary: {}", s.summary)));
            text.push_str(&fountain::note(&format!("Tags: {}", s.tags.join(", "))));
            text.push_str(fountain::THE_END);
            let name = started.format("harvey-session-%Y%m%d-%H%M%S.spmd");
            self.write(&format!("agents/sessions/{name}"), &text)?;
        }
        Ok(())
    }

    /// Plants the skills of `harvey bench --agent --skills` (outside git: `agents/` is
    /// ignored).
    pub fn plant_skills(&self) -> Result<(), AgentBenchError> {
        for (name, text) in super::skill_tasks::SKILLS {
            self.write(
                &format!("{}/{name}/SKILL.md", crate::skills::SKILLS_DIR),
                text,
            )?;
        }
        Ok(())
    }

    /// Writes `text` to `rel` under the workspace, making its folders.
    pub(super) fn write(&self, rel: &str, text: &str) -> Result<(), AgentBenchError> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(&path, text).map_err(|e| io(&path, e))
    }

    /// Writes the files and, with git, commits them under a fixed author and date.
    fn commit(
        &self,
        files: &[(&str, &str)],
        message: &str,
        at: &str,
    ) -> Result<(), AgentBenchError> {
        for (rel, text) in files {
            self.write(rel, text)?;
        }
        if !self.has_git {
            return Ok(());
        }
        let paths: Vec<&str> = files.iter().map(|(rel, _)| *rel).collect();
        self.git(&[&["add", "--"][..], &paths].concat())?;
        let mut cmd = git::command(&self.dir, &["commit", "--quiet", "-m", message]);
        cmd.env("GIT_AUTHOR_DATE", at).env("GIT_COMMITTER_DATE", at);
        git::run(cmd, &self.dir)
    }

    /// Runs `git args` in the workspace.
    pub(super) fn git(&self, args: &[&str]) -> Result<(), AgentBenchError> {
        git::run(git::command(&self.dir, args), &self.dir)
    }

    /// The memories, written as `harvey memory add` writes them.
    pub(super) fn plant_memories(&self, drafts: &[Draft]) -> Result<(), AgentBenchError> {
        let (mut store, _) = MemoryStore::open(&self.dir.join("agents"), &self.dir)?;
        for draft in drafts {
            store.write(draft)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn the_fixture_holds_what_the_tasks_check() {
        let f = Fixture::create().unwrap();
        let read = |rel: &str| std::fs::read_to_string(f.dir.join(rel)).unwrap();
        assert!(read("Cargo.toml").contains(PACKAGE_VERSION));
        assert!(read("README.md").contains("Port Isaac"));
        assert!(read("src/lib.rs").contains("pub fn high_water_mark"));
        assert!(read("src/main.rs").contains("print_forecast"));
        assert!(f.dir.join("agents/memories").is_dir());
        if f.has_git {
            let log = Command::new("git")
                .args(["log", "--format=%an %s"])
                .current_dir(&f.dir)
                .output()
                .unwrap();
            let log = String::from_utf8_lossy(&log.stdout);
            assert_eq!(log.lines().count(), 3, "{log}");
            assert!(
                log.starts_with("bench Document the default harbour"),
                "{log}"
            );
        }
        let dir = f.dir.clone();
        drop(f);
        assert!(!dir.exists());
    }

    /// The sessions index sees the planted sessions as summarized ones, newest first:
    /// the compaction session is not among the three a session start shows, and a
    /// search by its topic finds it.
    #[test]
    fn the_planted_sessions_are_indexed_with_their_summaries() {
        let f = Fixture::create().unwrap();
        let index = crate::session::SessionIndex::open(&f.dir.join("agents")).unwrap();
        index.reconcile().unwrap();
        let recent = index.recent_summarized(10).unwrap();
        assert_eq!(recent.len(), super::super::memory_tasks::SESSIONS.len());
        let compaction = |e: &crate::session::SessionEntry| e.summary.contains("compaction");
        assert!(!recent[..3].iter().any(compaction));
        assert!(compaction(recent.last().unwrap()));
        let today = chrono::Local::now().date_naive();
        let started = chrono::NaiveDate::parse_from_str(&recent[3].started[..10], "%Y-%m-%d");
        assert_eq!((today - started.unwrap()).num_days(), 5);
        let found = index.search("compaction of the tide tables", 1).unwrap();
        assert!(compaction(&found[0].0), "{found:?}");
    }
}
