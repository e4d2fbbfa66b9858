//! The memory store: Go-format files, reconcile, dedupe, archive, MEMORY.md.
//! Recall against the dev set and injection into sessions are in `memory_recall.rs`.

use std::path::Path;

use harvey::memory::file::render;
use harvey::memory::recall::MemorySilo;
use harvey::memory::{Draft, MemoryStore, MemoryType, Silo, WriteOutcome};

pub fn open(ws: &Path) -> (MemoryStore, harvey::memory::Reconciled) {
    MemoryStore::open(&ws.join("agents"), ws).unwrap()
}

fn draft(t: &str, description: &str, summary: &str) -> Draft {
    Draft {
        mtype: t.into(),
        description: description.into(),
        summary: summary.into(),
        ..Draft::default()
    }
}

fn ids(store: &MemoryStore, query: &str) -> Vec<String> {
    store
        .search(query, &[], 10)
        .unwrap()
        .into_iter()
        .map(|h| h.row.id)
        .collect()
}

const GO_FOUNTAIN: &str = "---\nid: tool_use_a3f891\ntype: tool_use\nkind: pitfall\ncreated_at: \"2026-05-25T12:00:00Z\"\nupdated_at: \"2026-05-25T12:00:00Z\"\nsupersedes: []\ntags:\n    - git\ndescription: Run git init when git reports not a repository\nsummary: Running git init in the project root resolved the error immediately.\naction: Run `git init` in the project root, then retry.\nconfidence: 0.5\nsource_session: \"\"\nupstream_score: 3\n---\nEXT. TERMINAL - NIGHT\n\ngit status fails.\n\nThe agent runs git init.\n";

pub fn put(ws: &Path, rel: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = ws.join("agents/memories").join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn go_tool_files_load_and_keep_unknown_keys_on_rewrite() {
    let ws = tempfile::tempdir().unwrap();
    put(
        ws.path(),
        "tool_use/tool_use_a3f891.fountain",
        GO_FOUNTAIN.as_bytes(),
    );
    put(
        ws.path(),
        "project_fact/project_fact_00aa11.spmd",
        b"---\nid: project_fact_00aa11\ntype: project_fact\ndescription: The web server listens on port 8080\n---\n",
    );
    put(
        ws.path(),
        "workflow/workflow_77.md",
        b"---\nid: workflow_77\ndescription: Release by tagging vX.Y.Z\ntags: release, git\n---\nbody\n",
    );
    let (mut store, report) = open(ws.path());
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.indexed, 3);
    let m = store.get("tool_use_a3f891").unwrap();
    assert_eq!(m.kind.as_deref(), Some("pitfall"));
    assert!(
        m.body.contains("\n\nThe agent runs git init."),
        "{}",
        m.body
    );
    assert_eq!(
        store.get("workflow_77").unwrap().tags,
        vec!["release", "git"]
    );
    assert_eq!(ids(&store, "How do I fix git?")[0], "tool_use_a3f891");
    // A rewrite (flag) keeps the key harvey does not know.
    store.flag("tool_use_a3f891").unwrap();
    let text = std::fs::read_to_string(store.path_of("tool_use_a3f891").unwrap()).unwrap();
    assert!(text.contains("upstream_score: 3"), "{text}");
    assert!(text.contains("confidence: 0.4"), "{text}");
}

#[test]
fn hand_edited_files_are_reindexed_on_the_next_start() {
    let ws = tempfile::tempdir().unwrap();
    let (mut store, _) = open(ws.path());
    let id = store
        .write(&draft(
            "project_fact",
            "Deploys go to the staging host",
            "via rsync",
        ))
        .unwrap()
        .id()
        .to_string();
    let path = store.path_of(&id).unwrap();
    drop(store);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("staging", "production")).unwrap();
    let (store, report) = open(ws.path());
    assert_eq!(report.indexed, 1, "{report:?}");
    assert_eq!(ids(&store, "production host"), vec![id]);
    assert!(ids(&store, "staging").is_empty());
    // A deleted file leaves the index too.
    drop(store);
    std::fs::remove_file(&path).unwrap();
    let (store, report) = open(ws.path());
    assert_eq!(report.removed, 1);
    assert!(ids(&store, "production").is_empty());
}

#[test]
fn malformed_files_are_skipped_with_a_warning_naming_file_and_problem() {
    let ws = tempfile::tempdir().unwrap();
    put(
        ws.path(),
        "workflow/good.spmd",
        b"---\nid: good\ntype: workflow\ndescription: Backups run nightly\n---\n",
    );
    put(
        ws.path(),
        "workflow/broken.spmd",
        b"---\nid: broken\ntags: [a, b\n---\n",
    );
    put(
        ws.path(),
        "workflow/noid.spmd",
        b"---\ntype: workflow\ndescription: x\n---\n",
    );
    put(
        ws.path(),
        "workflow/latin1.spmd",
        b"---\nid: l\ndescription: caf\xe9\n---\n",
    );
    put(ws.path(), "workflow/nofront.md", b"just some notes\n");
    put(
        ws.path(),
        "workflow/zz_dup.spmd",
        b"---\nid: good\ndescription: another\n---\n",
    );
    let (store, report) = open(ws.path());
    let warned: Vec<String> = report.warnings.iter().map(|w| w.to_string()).collect();
    let expect = [
        ("broken.spmd", "front matter line"),
        ("noid.spmd", "missing `id`"),
        ("latin1.spmd", "not valid UTF-8"),
        ("nofront.md", "no front matter"),
        ("zz_dup.spmd", "duplicate id good"),
    ];
    assert_eq!(warned.len(), expect.len(), "{warned:#?}");
    for (file, problem) in expect {
        assert!(
            warned
                .iter()
                .any(|w| w.contains(file) && w.contains(problem)),
            "{file}: {warned:#?}"
        );
    }
    assert_eq!(ids(&store, "backups nightly"), vec!["good"]);
}

#[test]
fn superseded_archived_and_expired_memories_are_never_recalled() {
    let ws = tempfile::tempdir().unwrap();
    let (mut store, _) = open(ws.path());
    let old = store
        .write(&draft(
            "tool_use",
            "Build the docs with mkdocs serve",
            "old way",
        ))
        .unwrap()
        .id()
        .to_string();
    let new = Draft {
        supersedes: vec![old.clone()],
        ..draft(
            "tool_use",
            "Build the docs with mdbook build",
            "new way, replaces mkdocs",
        )
    };
    let outcome = store.write(&new).unwrap();
    assert!(
        matches!(&outcome, WriteOutcome::Added { archived, .. } if archived == &vec![old.clone()])
    );
    let forgotten = store
        .write(&draft("workflow", "Docs are published by a cron job", ""))
        .unwrap()
        .id()
        .to_string();
    store.forget(&forgotten).unwrap();
    let expired = Draft {
        expires_at: Some("2001-01-01T00:00:00Z".into()),
        ..draft("project_fact", "The docs server is docs.example.org", "")
    };
    let expired = store.write(&expired).unwrap().id().to_string();
    for id in [&old, &forgotten] {
        let path = store.path_of(id).unwrap();
        assert!(
            path.to_string_lossy().contains("/archive/"),
            "{}",
            path.display()
        );
    }
    let found = ids(&store, "docs mkdocs cron published server build");
    assert_eq!(found, vec![outcome.id().to_string()]);
    let silo = MemorySilo(&store);
    let cands = silo.candidates("docs mkdocs cron server", 10).unwrap();
    for id in [&old, &forgotten, &expired] {
        assert!(cands.iter().all(|c| &c.id != id), "{id} recalled");
    }
    // Archived memories survive a rebuild as archived.
    store.rebuild().unwrap();
    assert_eq!(
        ids(&store, "mkdocs cron docs"),
        vec![outcome.id().to_string()]
    );
    let overview = std::fs::read_to_string(ws.path().join("agents/memories/MEMORY.md")).unwrap();
    assert!(
        overview.contains("mdbook") && !overview.contains("mkdocs serve"),
        "{overview}"
    );
}

#[test]
fn duplicate_descriptions_update_instead_of_adding() {
    let ws = tempfile::tempdir().unwrap();
    let (mut store, _) = open(ws.path());
    let first = store
        .write(&draft(
            "user_preference",
            "Prefer short answers",
            "no preamble",
        ))
        .unwrap();
    let second = store
        .write(&draft(
            "user_preference",
            "  prefer SHORT answers! ",
            "get to the point",
        ))
        .unwrap();
    assert!(matches!(first, WriteOutcome::Added { .. }));
    assert!(matches!(second, WriteOutcome::Updated { .. }), "{second:?}");
    assert_eq!(first.id(), second.id());
    assert!(second.describe().contains("updated"));
    let all = store.list(None, None).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(store.get(first.id()).unwrap().summary, "get to the point");
    let files = std::fs::read_dir(ws.path().join("agents/memories/user_preference"))
        .unwrap()
        .count();
    assert_eq!(files, 1);
}

#[test]
fn secrets_oversized_bodies_and_workspace_paths_are_handled_before_writing() {
    let ws = tempfile::tempdir().unwrap();
    let (mut store, _) = open(ws.path());
    let secret = Draft {
        body: "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789".into(),
        ..draft("tool_use", "Set the token for the API", "")
    };
    let err = store.write(&secret).unwrap_err().to_string();
    assert!(
        err.contains("body") && err.contains("GitHub token"),
        "{err}"
    );
    let big = Draft {
        body: "x".repeat(5000),
        ..draft("tool_use", "A transcript", "")
    };
    assert!(store
        .write(&big)
        .unwrap_err()
        .to_string()
        .contains("5000 bytes"));
    assert!(store
        .write(&draft("nonsense", "d", ""))
        .unwrap_err()
        .to_string()
        .contains("project_fact"));
    let root = ws.path().to_str().unwrap();
    let with_path = draft(
        "project_fact",
        "Config lives in the repo",
        &format!("see {root}/conf/app.toml"),
    );
    let id = store.write(&with_path).unwrap().id().to_string();
    assert_eq!(
        store.get(&id).unwrap().summary,
        "see <workspace>/conf/app.toml"
    );
    assert!(
        store.list(None, None).unwrap().len() == 1,
        "refused writes left no file"
    );
}

#[test]
fn flag_lowers_confidence_and_archives_at_point_two() {
    let ws = tempfile::tempdir().unwrap();
    let (mut store, _) = open(ws.path());
    let d = Draft {
        confidence: Some(0.4),
        ..draft("workflow", "Restart the router weekly", "")
    };
    let id = store.write(&d).unwrap().id().to_string();
    let once = store.flag(&id).unwrap();
    assert!((once.confidence - 0.3).abs() < 1e-9 && !once.archived);
    let twice = store.flag(&id).unwrap();
    assert!(twice.archived);
    assert!(ids(&store, "router").is_empty());
    assert!(store.flag(&id).is_err());
}

#[test]
fn a_type_change_writes_the_new_file_before_removing_the_old_one() {
    let ws = tempfile::tempdir().unwrap();
    let (mut store, _) = open(ws.path());
    let id = store
        .write(&draft("tool_use", "Run the linter before pushing", "v1"))
        .unwrap()
        .id()
        .to_string();
    let old = store.path_of(&id).unwrap();
    // The new type directory cannot be created: the write fails, the memory is not lost.
    let blocker = ws.path().join("agents/memories/workflow");
    std::fs::write(&blocker, "not a directory").unwrap();
    let moved = draft("workflow", "Run the linter before pushing", "v2");
    assert!(store.write(&moved).is_err());
    assert!(
        old.exists(),
        "the old file went before the new one was written"
    );
    assert_eq!(store.get(&id).unwrap().summary, "v1");
    std::fs::remove_file(&blocker).unwrap();
    store.write(&moved).unwrap();
    assert!(!old.exists());
    let m = store.get(&id).unwrap();
    assert_eq!((m.mtype, m.summary.as_str()), (MemoryType::Workflow, "v2"));
    assert_eq!(store.list(None, None).unwrap().len(), 1);
}

/// The state a crash between writing the new copy and removing the old one leaves.
fn copy_with(from: &Path, to: &Path, mtype: &str, updated: &str) {
    let text = std::fs::read_to_string(from).unwrap();
    let mut m = harvey::memory::file::parse(text.as_bytes(), None).unwrap();
    m.mtype = MemoryType::parse(mtype).unwrap();
    m.updated_at = updated.into();
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(to, render(&m)).unwrap();
}

#[test]
fn reconcile_keeps_the_newer_copy_of_an_interrupted_type_change() {
    let ws = tempfile::tempdir().unwrap();
    let mem = ws.path().join("agents/memories");
    let (mut store, _) = open(ws.path());
    let a = store
        .write(&draft("tool_use", "Cache the cargo registry", ""))
        .unwrap()
        .id()
        .to_string();
    let b = store
        .write(&draft("workflow", "Tag releases after CI is green", ""))
        .unwrap()
        .id()
        .to_string();
    drop(store);
    // a: the index still knows the old copy; the newer one appeared in workflow/.
    let a_old = mem.join(format!("tool_use/{a}.spmd"));
    let a_new = mem.join(format!("workflow/{a}.spmd"));
    copy_with(&a_old, &a_new, "workflow", "2999-01-01T00:00:00Z");
    // b: the index knows the new copy; the older one was left in tool_use/.
    let b_new = mem.join(format!("workflow/{b}.spmd"));
    let b_old = mem.join(format!("tool_use/{b}.spmd"));
    copy_with(&b_new, &b_old, "tool_use", "2001-01-01T00:00:00Z");
    let (store, report) = open(ws.path());
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let mut stale = report.stale_copies.clone();
    stale.sort();
    let mut expect = vec![a_old.clone(), b_old.clone()];
    expect.sort();
    assert_eq!(stale, expect);
    assert!(!a_old.exists() && !b_old.exists() && a_new.exists() && b_new.exists());
    for id in [&a, &b] {
        assert_eq!(store.get(id).unwrap().mtype, MemoryType::Workflow);
    }
    assert_eq!(store.list(None, None).unwrap().len(), 2);
    assert_eq!(ids(&store, "cargo registry cache"), vec![a.clone()]);
}

#[test]
fn expired_and_hand_superseded_memories_are_archived_at_start() {
    let ws = tempfile::tempdir().unwrap();
    put(
        ws.path(),
        "project_fact/pf_old.spmd",
        b"---\nid: pf_old\ntype: project_fact\ndescription: The API listens on port 8080\n---\n",
    );
    // Written by the Go tool (YAML list) and by hand (comma text).
    put(
        ws.path(),
        "project_fact/pf_new.fountain",
        b"---\nid: pf_new\ntype: project_fact\nsupersedes:\n    - pf_old\n    - no_such_id\ndescription: The API listens on port 9090\n---\n",
    );
    put(
        ws.path(),
        "workflow/wf_b.md",
        b"---\nid: wf_b\nsupersedes: wf_a\ndescription: Deploy with the new script\n---\n",
    );
    put(
        ws.path(),
        "workflow/wf_a.md",
        b"---\nid: wf_a\ndescription: Deploy with the old script\n---\n",
    );
    put(
        ws.path(),
        "tool_use/tu_gone.spmd",
        b"---\nid: tu_gone\ndescription: Use the beta compiler\nexpires_at: \"2001-01-01T00:00:00Z\"\n---\n",
    );
    put(
        ws.path(),
        "tool_use/tu_later.spmd",
        b"---\nid: tu_later\ndescription: Use the stable compiler\nexpires_at: \"2999-01-01\"\n---\n",
    );
    let (store, report) = open(ws.path());
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let mut archived = report.archived.clone();
    archived.sort();
    assert_eq!(
        archived,
        vec![
            ("pf_old".to_string(), "superseded"),
            ("tu_gone".to_string(), "expired"),
            ("wf_a".to_string(), "superseded"),
        ]
    );
    for (id, t) in [
        ("pf_old", "project_fact"),
        ("tu_gone", "tool_use"),
        ("wf_a", "workflow"),
    ] {
        let path = store.path_of(id).unwrap();
        assert!(
            path.starts_with(ws.path().join("agents/memories/archive").join(t)) && path.exists(),
            "{}",
            path.display()
        );
        assert!(store.row(id).unwrap().archived);
    }
    let active: Vec<String> = store
        .list(None, None)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(active.len(), 3, "{active:?}");
    let overview = std::fs::read_to_string(ws.path().join("agents/memories/MEMORY.md")).unwrap();
    for id in ["pf_new", "wf_b", "tu_later"] {
        assert!(overview.contains(&format!("`{id}`")), "{overview}");
    }
    for id in ["pf_old", "wf_a", "tu_gone"] {
        assert!(!overview.contains(id), "{overview}");
    }
    // Facts first: the project fact is the first memory line.
    let first = overview.lines().find(|l| l.starts_with("- ")).unwrap();
    assert!(first.contains("pf_new"), "{overview}");
    drop(store);
    let (_, again) = open(ws.path());
    assert!(again.archived.is_empty() && again.indexed == 0, "{again:?}");
}

#[test]
fn memory_md_is_capped_with_a_line_counting_the_rest() {
    let ws = tempfile::tempdir().unwrap();
    let (mut store, _) = open(ws.path());
    let n = harvey::memory::overview::MAX_LINES + 15;
    let drafts: Vec<Draft> = (0..n)
        .map(|i| draft("workflow", &format!("Step number {i} of the release"), ""))
        .collect();
    assert!(store.write_many(&drafts).iter().all(Result::is_ok));
    let text = std::fs::read_to_string(ws.path().join("agents/memories/MEMORY.md")).unwrap();
    assert_eq!(text, store.overview().unwrap());
    let shown = text.lines().filter(|l| l.starts_with("- `")).count();
    assert!(text.lines().count() <= harvey::memory::overview::MAX_LINES);
    assert!(shown < n);
    let last = text.lines().last().unwrap();
    assert!(last.contains(&format!("{} more", n - shown)), "{last}");
}
