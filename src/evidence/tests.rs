//! The pipeline over real files in a temporary workspace.

use super::*;

use crate::tokens::WordCounter as Words;

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A workspace named `tidepool` whose files name the project everywhere.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("tidepool");
    write(&root, "README.md", "# tidepool\n\ntidepool reads tide tables.\n\n## Running\n\ntidepool serve starts the tidepool server.\n");
    write(&root, "src/server.rs", "//! The tidepool server.\n\n/// Where tidepool listens unless TIDEPOOL_PORT is set.\npub const DEFAULT_PORT: u16 = 8080;\n\npub fn listen_port() -> u16 {\n    std::env::var(\"TIDEPOOL_PORT\").ok().and_then(|p| p.parse().ok()).unwrap_or(DEFAULT_PORT)\n}\n");
    write(&root, "src/retry.rs", "/// How tidepool retries a station.\npub struct RetryPolicy {\n    pub max_retries: u32,\n}\n\npub fn fetch_station() -> Result<(), String> {\n    Err(\"station not found: check the station id\".into())\n}\n");
    write(
        &root,
        "Cargo.toml",
        "[package]\nname = \"tidepool\"\nversion = \"0.3.1\"\n\n[dependencies]\nserde = \"1\"\n",
    );
    write(
        &root,
        "docs/logo.svg",
        "<svg><text>tidepool port station</text></svg>\n",
    );
    write(
        &root,
        "Cargo.lock",
        "[[package]]\nname = \"tidepool port\"\n",
    );
    write(
        &root,
        "web/app.min.js",
        &format!("var port=1;{}\n", "a=1,".repeat(2000)),
    );
    write(&root, ".env", "TIDEPOOL_PORT=9999\n");
    write(
        &root,
        "agents/memories/project_fact/x.spmd",
        "tidepool port is 7777\n",
    );
    (outer, root)
}

/// 09:00 UTC of the day, in unix seconds: the "now" a dated question is read from.
fn morning_of(year: i32, month: u32, day: u32) -> i64 {
    chrono::NaiveDate::from_ymd_opt(year, month, day)
        .unwrap()
        .and_hms_opt(9, 0, 0)
        .unwrap()
        .and_utc()
        .timestamp()
}

fn sources(index: &Index) -> Vec<String> {
    index.sources().unwrap()
}

#[test]
fn only_text_for_a_reader_inside_the_workspace_is_indexed() {
    let (_t, root) = workspace();
    let mut index = Index::open(&root).unwrap();
    let r = index.refresh(&mut |_, _| {}).unwrap();
    let files = sources(&index);
    assert_eq!(
        files,
        [
            "file:Cargo.toml",
            "file:README.md",
            "file:src/retry.rs",
            "file:src/server.rs"
        ],
        "{r:?}"
    );
    // Nothing of what was left out is ever shown, whatever is asked.
    for q in ["tidepool port station", "TIDEPOOL_PORT 9999", "7777"] {
        let b = index.gather(q, 500, &Words).unwrap();
        assert!(
            !b.text.contains("9999") && !b.text.contains("7777") && !b.text.contains("<svg>"),
            "{q}: {}",
            b.text
        );
        assert!(b.snippets.iter().all(|s| !s.source.starts_with("agents/")));
    }
}

#[test]
fn a_question_in_plain_words_finds_the_named_code_with_its_source() {
    let (_t, root) = workspace();
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    let b = index
        .gather("What port is used if I never set one?", 300, &Words)
        .unwrap();
    // The definitions that hold the port, the constant with its doc comment as one unit.
    assert!(
        b.snippets[0].source.starts_with("src/server.rs:"),
        "{}",
        b.text
    );
    assert!(
        b.text
            .contains("--- src/server.rs:3-5 (pub const DEFAULT_PORT: u16 = 8080;)\n/// Where"),
        "{}",
        b.text
    );
    let b = index
        .gather("What does the retry policy hold?", 300, &Words)
        .unwrap();
    assert!(
        b.snippets[0].source.starts_with("src/retry.rs"),
        "{}",
        b.text
    );
    let b = index
        .gather("what is the error when the station is missing", 300, &Words)
        .unwrap();
    assert!(b.text.contains("station not found"), "{}", b.text);
}

#[test]
fn a_one_file_change_reads_only_that_file() {
    let (_t, root) = workspace();
    let mut index = Index::open(&root).unwrap();
    let first = index.refresh(&mut |_, _| {}).unwrap();
    assert_eq!(first.files_read, 4);
    let again = index.refresh(&mut |_, _| {}).unwrap();
    assert_eq!((again.files_read, again.files_removed), (0, 0));
    write(&root, "src/retry.rs", "pub struct BackoffPolicy;\n");
    std::fs::remove_file(root.join("README.md")).unwrap();
    let changed = index.refresh(&mut |_, _| {}).unwrap();
    assert_eq!((changed.files_read, changed.files_removed), (1, 1));
    let b = index.gather("backoff policy", 300, &Words).unwrap();
    assert!(b.text.contains("BackoffPolicy"));
    assert!(!index
        .gather("RetryPolicy", 300, &Words)
        .unwrap()
        .text
        .contains("RetryPolicy"));
}

#[test]
fn a_memory_sharing_only_the_project_name_is_not_used() {
    let (_t, root) = workspace();
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    let memories = [
        MemoryUnit {
            id: "project_fact_a1".into(),
            updated: 1,
            text: "- tidepool releases are tagged on Fridays".into(),
        },
        MemoryUnit {
            id: "project_fact_b2".into(),
            updated: 1,
            text: "- We deploy tidepool with ./deploy.sh; it refuses a dirty git tree".into(),
        },
    ];
    index.sync_memories(&memories).unwrap();
    let b = index
        .gather("What port does tidepool listen on?", 400, &Words)
        .unwrap();
    assert!(!b.snippets.is_empty());
    assert!(b.snippets.iter().all(|s| s.kind != "memory"), "{}", b.text);
    // The memory that speaks to the question is used.
    let b = index
        .gather("How do I deploy tidepool?", 400, &Words)
        .unwrap();
    assert_eq!(b.snippets[0].source, "memory project_fact_b2", "{}", b.text);
    // A forgotten memory leaves the index.
    index.sync_memories(&memories[..1]).unwrap();
    let b = index
        .gather("How do I deploy tidepool?", 400, &Words)
        .unwrap();
    assert!(b
        .snippets
        .iter()
        .all(|s| s.source != "memory project_fact_b2"));
}

#[test]
fn an_edited_session_summary_is_found_by_its_new_words() {
    let (_t, root) = workspace();
    let mut index = Index::open(&root).unwrap();
    let mut sessions: Vec<SessionUnit> = (0..6)
        .map(|i| SessionUnit {
            file: format!("harvey-session-2026110{i}-100000.spmd"),
            started: format!("2026-11-0{i}"),
            text: format!("Worked on tide table parsing, part {i}."),
        })
        .collect();
    sessions[0].text = "Discussed the compaction of old turns and its threshold.".into();
    index.sync_sessions(&sessions).unwrap();
    let b = index
        .gather("what did we decide about compaction?", 300, &Words)
        .unwrap();
    assert_eq!(
        b.snippets[0].source, "session harvey-session-20261100-100000.spmd",
        "{}",
        b.text
    );
    sessions[1].text = "Chose sqlite for the station cache.".into();
    index.sync_sessions(&sessions).unwrap();
    let b = index.gather("station cache", 300, &Words).unwrap();
    assert!(
        b.text.contains("sqlite for the station cache"),
        "{}",
        b.text
    );
}

#[test]
fn commits_are_found_by_their_message_author_and_files() {
    let (_t, root) = workspace();
    let git = super::history::git_in(&root);
    git(&["init", "-q"]);
    git(&["add", "src/retry.rs"]);
    git(&[
        "commit",
        "-q",
        "-m",
        "Replace the md5 checksum with sha256 in station fetches",
    ]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "Add the readme"]);
    let mut index = Index::open(&root).unwrap();
    let r = index.refresh(&mut |_, _| {}).unwrap();
    assert_eq!(r.commits_added, 2);
    let b = index
        .gather(
            "Which file did the commit that replaced md5 change?",
            300,
            &Words,
        )
        .unwrap();
    let first = &b.snippets[0];
    assert_eq!(first.kind, "commit", "{}", b.text);
    assert!(
        b.text.contains("files: src/retry.rs") && b.text.contains("Ann Lee"),
        "{}",
        b.text
    );
    // Read on from the last commit: nothing new, nothing added.
    assert_eq!(index.refresh(&mut |_, _| {}).unwrap().commits_added, 0);
}

#[test]
fn who_first_added_a_described_feature_finds_the_commit_that_defined_its_code() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("shore");
    let git = super::history::git_in(&root);
    write(&root, "src/lib.rs", "pub fn main() {}\n");
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "Start the project"]);
    write(&root, "src/walk.rs", "/// Decides, for each node a walk reaches, whether to skip its children or stop.\npub trait NodeJudge {\n    fn judge(&self) -> u8;\n}\n");
    git(&["add", "-A"]);
    git(&[
        "commit",
        "-q",
        "--author",
        "Bo Park <bo@x>",
        "-m",
        "Introduce NodeJudge",
    ]);
    // Later commits whose subjects share the question's words.
    write(&root, "src/walk.rs", "/// Decides, for each node a walk reaches, whether to skip its children or stop.\n/// A walk stops at the first node judged so.\npub trait NodeJudge {\n    fn judge(&self) -> u8;\n}\n");
    git(&["add", "-A"]);
    git(&[
        "commit",
        "-q",
        "-m",
        "Say when a walk stops and skips children",
    ]);
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    let b = index
        .gather(
            "Who first added the way a walk can skip a node's children or stop?",
            300,
            &Words,
        )
        .unwrap();
    assert!(
        b.text.contains("by Bo Park"),
        "the commit that defined NodeJudge: {}",
        b.text
    );
    let by_bo = b.text.find("by Bo Park").unwrap();
    assert!(
        b.text
            .find("Say when a walk stops")
            .is_none_or(|later| by_bo < later),
        "{}",
        b.text
    );
}

#[test]
fn a_procedure_remembered_in_other_words_answers_how_to_do_that_step() {
    let (_t, root) = workspace();
    write(
        &root,
        "CHANGELOG.md",
        "# Changelog\n\n## 0.3.1 (2026-10-02)\n\n- The server retries a station.\n",
    );
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    index
        .sync_memories(&[MemoryUnit {
            id: "project_fact_c3".into(),
            updated: 1,
            text: "- we deploy this project with ./deploy.sh, and it refuses to run with a dirty git tree".into(),
        }])
        .unwrap();
    let b = index
        .gather("How do I cut a release here?", 400, &Words)
        .unwrap();
    assert!(
        b.snippets
            .iter()
            .any(|s| s.source == "memory project_fact_c3"),
        "{}",
        b.text
    );
    // A question about another step does not bring it.
    let b = index
        .gather("Which port does the server listen on?", 400, &Words)
        .unwrap();
    assert!(b.snippets.iter().all(|s| s.kind != "memory"), "{}", b.text);
}

#[test]
fn a_request_about_the_memory_is_answered_from_memories_and_sessions_only() {
    let (_t, root) = workspace();
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    index
        .sync_memories(&[MemoryUnit {
            id: "user_preference_d4".into(),
            updated: 1,
            text: "- I prefer the tidepool server on port 9090 in development".into(),
        }])
        .unwrap();
    let ask = Ask {
        question: "What do you remember about the tidepool server port?",
        scope: Scope::Memory,
        ..Ask::workspace("")
    };
    let b = index.gather_for(&ask, 400, &Words).unwrap();
    assert!(!b.snippets.is_empty());
    assert!(
        b.snippets
            .iter()
            .all(|s| s.kind == "memory" || s.kind == "session"),
        "{}",
        b.text
    );
    assert!(b.text.starts_with(block::MEMORY_HEADER), "{}", b.text);
    assert_eq!(b.note(), block::MEMORY_NOTE);
    assert_eq!(
        block::words_of(&format!("{}\n\nthe words\n{}", b.text, b.note())),
        "the words"
    );
}

#[test]
fn sessions_of_the_week_a_question_names_rank_above_older_ones_on_the_same_topic() {
    let (_t, root) = workspace();
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    let session = |file: &str, started: &str| SessionUnit {
        file: file.into(),
        started: started.into(),
        text: "We reworked the compaction of the tide tables.".into(),
    };
    index
        .sync_sessions(&[
            session("old.spmd", "2026-09-01"),
            session("recent.spmd", "2026-11-26"),
        ])
        .unwrap();
    let now = morning_of(2026, 12, 2);
    let ask = Ask {
        question: "What did we work on last week about compaction?",
        now,
        ..Ask::workspace("")
    };
    let b = index.gather_for(&ask, 400, &Words).unwrap();
    assert_eq!(b.snippets[0].source, "session recent.spmd", "{}", b.text);
}

#[test]
fn a_question_of_a_date_alone_gets_the_sessions_of_that_day() {
    let (_t, root) = workspace();
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    let session = |file: &str, started: &str, text: &str| SessionUnit {
        file: file.into(),
        started: started.into(),
        text: text.into(),
    };
    index
        .sync_sessions(&[
            session("a.spmd", "2026-11-20", "Set up clippy in CI."),
            session("b.spmd", "2026-12-01", "Moved the build to GitHub Actions."),
            session("c.spmd", "2026-12-02", "Read the README."),
        ])
        .unwrap();
    let now = morning_of(2026, 12, 2);
    let ask = |question| Ask {
        question,
        now,
        ..Ask::workspace("")
    };
    // No word of the question but its date finds anything.
    let b = index
        .gather_for(&ask("What were we working on yesterday?"), 400, &Words)
        .unwrap();
    assert_eq!(
        b.snippets.first().map(|s| s.source.as_str()),
        Some("session b.spmd"),
        "{}",
        b.text
    );
    assert!(
        !b.snippets.iter().any(|s| s.source == "session a.spmd"),
        "a session twelve days before is outside the window: {}",
        b.text
    );
    // Without a date nothing is pulled in for the words "what did we do".
    let b = index
        .gather_for(&ask("What were we working on?"), 400, &Words)
        .unwrap();
    assert!(
        !b.snippets.iter().any(|s| s.kind == "session"),
        "{}",
        b.text
    );
}

/// Tags `name` on HEAD as if made on `date` (`YYYY-MM-DD`), annotated when `message` is.
fn tag_on(root: &Path, name: &str, date: &str, message: Option<&str>) {
    let mut cmd = std::process::Command::new("git");
    cmd.args([
        "-c",
        "user.name=Ann Lee",
        "-c",
        "user.email=a@x",
        "-c",
        "tag.gpgsign=false",
        "tag",
    ])
    .current_dir(root)
    .env("GIT_COMMITTER_DATE", format!("{date}T12:00:00Z"));
    match message {
        Some(m) => cmd.args(["-a", name, "-m", m]),
        None => cmd.arg(name),
    };
    assert!(
        cmd.output().is_ok_and(|o| o.status.success()),
        "git tag {name}"
    );
}

#[test]
fn a_release_is_found_by_its_tag_with_its_date_and_the_newest_is_the_latest() {
    let (_t, root) = workspace();
    let git = super::history::git_in(&root);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "Serve tide tables"]);
    tag_on(&root, "v0.2.0", "2024-05-13", Some("Release 0.2.0"));
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    let b = index
        .gather("When was version 0.2.0 released?", 300, &Words)
        .unwrap();
    let tag = b.snippets.iter().find(|s| s.kind == "tag");
    assert_eq!(
        tag.map(|s| s.source.as_str()),
        Some("tag v0.2.0"),
        "{}",
        b.text
    );
    assert!(
        b.text.contains("tag v0.2.0 (tagged 2024-05-13)"),
        "{}",
        b.text
    );

    // A newer tag, lightweight (dated by its commit, today), made without a new commit:
    // the next refresh finds it, and the latest release moves to it.
    tag_on(&root, "v0.3.1", "2024-09-02", None);
    index.refresh(&mut |_, _| {}).unwrap();
    let b = index
        .gather("What is the latest release of tidepool?", 300, &Words)
        .unwrap();
    let tags: Vec<&str> = b
        .snippets
        .iter()
        .filter(|s| s.kind == "tag")
        .map(|s| s.source.as_str())
        .collect();
    assert_eq!(tags.first(), Some(&"tag v0.3.1"), "{}", b.text);
    assert!(b.text.contains("the latest release"), "{}", b.text);
    assert_eq!(
        b.text.matches("the latest release").count(),
        1,
        "{}",
        b.text
    );
}

#[test]
fn a_library_question_finds_the_dependencies_a_test_question_the_test_target() {
    let (_t, root) = workspace();
    write(
        &root,
        "Makefile",
        "CC = cc\n\nall: tidepool\n\n# The whole suite.\ntest: all\n\t./run-suite\n",
    );
    write(&root, "src/tide.rs", "/// Reads one tide table.\npub fn parse_table(s: &str) -> Table {\n    todo!()\n}\n\npub fn parse_station(s: &str) -> Station {\n    // a table of stations\n    todo!()\n}\n");
    let mut index = Index::open(&root).unwrap();
    index.refresh(&mut |_, _| {}).unwrap();
    // No word of the question is in the manifest: "library" stands for its dependencies.
    let b = index
        .gather(
            "Which library does tidepool use to serialize its records?",
            300,
            &Words,
        )
        .unwrap();
    assert!(b.text.contains("[dependencies]\nserde"), "{}", b.text);
    // A task file by target: the `test:` target with its comment.
    let b = index
        .gather("How do I run the tests?", 300, &Words)
        .unwrap();
    assert!(
        b.text
            .contains("--- Makefile:5-7 (test: all)\n# The whole suite."),
        "{}",
        b.text
    );
    // Both functions parse and name a table; the one whose name the question spells out
    // in words comes first.
    let b = index
        .gather("Which function parses a tide table?", 300, &Words)
        .unwrap();
    assert!(
        b.snippets[0].source.starts_with("src/tide.rs:1-"),
        "{}",
        b.text
    );
}
