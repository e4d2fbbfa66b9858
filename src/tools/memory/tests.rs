//! The memory tools on a temporary store.

use super::*;

fn place(dir: &std::path::Path) -> MemoryPlace {
    MemoryPlace {
        agents_dir: dir.join("agents"),
        workspace: dir.to_path_buf(),
        embedder: None,
        config: crate::config::Config::default().memory,
    }
}

fn args(json: String) -> Map<String, Value> {
    serde_json::from_str(&json).unwrap()
}

/// A store with one memory; its id, and every file under the memories directory
/// with its bytes (to show a preview changed nothing).
fn one_memory(dir: &std::path::Path) -> String {
    let (mut store, _) = MemoryStore::open(&dir.join("agents"), dir).unwrap();
    let draft = Draft {
        mtype: "user_preference".into(),
        description: "answers in British English".into(),
        summary: "colour, not color".into(),
        tags: vec!["spelling".into()],
        ..Draft::default()
    };
    store.write(&draft).unwrap().id().to_string()
}

fn files(dir: &std::path::Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.join("agents/memories")];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn an_update_preview_shows_old_and_new_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let id = one_memory(dir.path());
    let tool = MemoryUpdate(place(dir.path()));
    let before = files(dir.path());
    let call = args(format!(
        r#"{{"id": "{id}", "description": "British spelling", "summary": "colour and organise"}}"#
    ));
    let p = tool.preview(&call).unwrap().unwrap();
    assert_eq!(p.question, format!("memory_update {id} (user_preference)"));
    for line in [
        "- summary: colour, not color",
        "+ summary: colour and organise",
        "+ description: British spelling",
    ] {
        assert!(p.diff.lines().any(|l| l == line), "{line:?} in\n{}", p.diff);
    }
    assert!(!p.diff.contains("tags:"), "unchanged: {}", p.diff);
    assert_eq!(files(dir.path()), before, "nothing changes before the call");
    tool.call_approved(&call, crate::tools::Approval::Allowed)
        .unwrap();
    let read = MemoryRead(place(dir.path()))
        .call(&args(format!(r#"{{"id": "{id}"}}"#)))
        .unwrap();
    assert!(read.contains("summary: colour and organise"), "{read}");
}

#[test]
fn a_forget_preview_names_the_memory_and_its_archive_and_moves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let id = one_memory(dir.path());
    let tool = MemoryForget(place(dir.path()));
    let before = files(dir.path());
    let call = args(format!(r#"{{"id": "{id}"}}"#));
    let p = tool.preview(&call).unwrap().unwrap();
    assert_eq!(p.question, format!("memory_forget {id} (user_preference)"));
    let today = crate::memory::store::day_of(&crate::memory::store::now_rfc3339());
    let kept = format!("agents/memories/archive/user_preference/{id}.spmd");
    for part in [
        format!("- memory {id} (user_preference), updated {today}"),
        "- description: answers in British English".to_string(),
        "- summary: colour, not color".to_string(),
        format!("archived, not deleted: it moves to {kept}"),
    ] {
        assert!(p.diff.contains(&part), "{part:?} in\n{}", p.diff);
    }
    assert_eq!(files(dir.path()), before, "nothing moves before the call");
    tool.call_approved(&call, crate::tools::Approval::Allowed)
        .unwrap();
    assert!(
        dir.path().join(&kept).exists(),
        "kept where the preview said"
    );
    let again = tool.preview(&call).unwrap_err();
    assert!(again.to_string().contains("archived"), "{again}");
}

#[test]
fn an_unknown_id_is_refused_by_the_preview_as_by_the_call() {
    let dir = tempfile::tempdir().unwrap();
    one_memory(dir.path());
    let p = place(dir.path());
    let update = args(r#"{"id": "user_preference_000000", "summary": "x"}"#.into());
    let forget = args(r#"{"id": "user_preference_000000"}"#.into());
    let allowed = crate::tools::Approval::Allowed;
    let cases: [(&dyn Tool, &Map<String, Value>); 2] = [
        (&MemoryUpdate(p.clone()), &update),
        (&MemoryForget(p), &forget),
    ];
    for (tool, call) in cases {
        let refused = tool.preview(call).unwrap_err();
        assert!(matches!(refused, ToolError::NotFound(_)), "{refused}");
        assert!(
            refused
                .to_string()
                .contains("no memory with id \"user_preference_000000\""),
            "{refused}"
        );
        assert_eq!(tool.call_approved(call, allowed).unwrap_err(), refused);
    }
    let nothing = args(r#"{"id": "user_preference_000000"}"#.into());
    let empty = MemoryUpdate(place(dir.path()))
        .preview(&nothing)
        .unwrap_err();
    assert!(matches!(empty, ToolError::BadArguments(_)), "{empty}");
}

#[test]
fn a_file_label_given_as_an_id_points_to_read_file() {
    let dir = tempfile::tempdir().unwrap();
    one_memory(dir.path());
    let read = MemoryRead(place(dir.path()));
    for (label, path) in [
        ("/workspace/Cargo.toml@1-14", "Cargo.toml"),
        ("src/lib.rs:10-24", "src/lib.rs"),
        ("README.md", "README.md"),
    ] {
        let call = args(format!(r#"{{"id": {label:?}}}"#));
        let refused = read.call(&call).unwrap_err();
        assert!(matches!(refused, ToolError::BadArguments(_)), "{refused}");
        let shown = refused.to_string();
        assert!(shown.contains("read_file"), "{shown}");
        assert!(shown.contains(&format!("\"path\": \"{path}\"")), "{shown}");
    }
    // Nothing outside the workspace is offered to read_file.
    for odd in [
        "not an id!",
        "../../etc/passwd",
        "/etc/passwd",
        "src/../../x.rs",
    ] {
        let refused = read
            .call(&args(format!(r#"{{"id": {odd:?}}}"#)))
            .unwrap_err();
        assert!(
            refused.to_string().contains("is not a memory id"),
            "{refused}"
        );
        assert!(!refused.to_string().contains("read_file"), "{refused}");
    }
}
