//! `harvey memory export` → `harvey memory import`: a workspace's memories move to
//! another one with their ids, dates, tags, supersedes and unknown keys, and importing
//! the same export again changes nothing.

use std::path::Path;

use crate::support::process::{run, text, workspace};

fn ok(ws: &Path, args: &[&str]) -> String {
    let out = run(ws, args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// Memories of every shape: tags, kind, action, body, confidence, an expiry, a session,
/// one superseding another (archived, so not exported), and a Go-tool file with a key
/// harvey does not know.
fn fill(ws: &Path) {
    ok(
        ws,
        &[
            "memory",
            "add",
            "--type",
            "tool_use",
            "--description",
            "cargo build is slow on the pi",
            "--tags",
            "build,pi",
            "--kind",
            "pitfall",
            "--action",
            "use --jobs 2",
            "--confidence",
            "0.8",
            "--body",
            "INT. TERMINAL - NIGHT\n\nThe build crawls.",
        ],
    );
    let old = ok(
        ws,
        &[
            "memory",
            "add",
            "--type",
            "project_fact",
            "--description",
            "the server listens on 8080",
            "--json",
        ],
    );
    let old: serde_json::Value = serde_json::from_str(&old).unwrap();
    let old = old["id"].as_str().unwrap().to_string();
    ok(
        ws,
        &[
            "memory",
            "add",
            "--type",
            "project_fact",
            "--description",
            "the server listens on 9090 since the move",
            "--supersedes",
            &old,
        ],
    );
    let lines = ws.join("more.jsonl");
    std::fs::write(
        &lines,
        r#"{"type":"user_preference","description":"answers in British English","expires_at":"2099-01-01T00:00:00Z","source_session":"s1.spmd"}"#,
    )
    .unwrap();
    ok(ws, &["memory", "import", lines.to_str().unwrap()]);
    let go = "---\nid: workflow_a1b2c3\ntype: workflow\ncreated_at: \"2025-05-25T12:00:00Z\"\nupdated_at: \"2025-05-26T08:30:00Z\"\nsupersedes: []\ntags:\n    - release\ndescription: Tag the release before publishing\nsummary: The publish script reads the tag.\nconfidence: 0.6\nsource_session: \"\"\nreviewer: alice\n---\nINT. TERMINAL - DAY\n";
    std::fs::create_dir_all(ws.join("agents/memories/workflow")).unwrap();
    std::fs::write(ws.join("agents/memories/workflow/workflow_a1b2c3.spmd"), go).unwrap();
}

#[test]
fn export_then_import_into_an_empty_workspace_gives_the_same_memories() {
    let (a, b) = (workspace(), workspace());
    fill(a.path());
    let file = a.path().join("export.jsonl");
    let out = run(a.path(), &["memory", "export", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("exported 4 memories"),
        "{}",
        text(&out.stderr)
    );
    let exported = std::fs::read_to_string(&file).unwrap();
    assert!(exported.contains("\"reviewer\":\"alice\""), "{exported}");
    assert!(exported.contains("\"supersedes\":["), "{exported}");

    let again = run(a.path(), &["memory", "export", file.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("--force"),
        "{}",
        text(&again.stderr)
    );

    let imported = ok(b.path(), &["memory", "import", file.to_str().unwrap()]);
    assert_eq!(imported.matches("added").count(), 4, "{imported}");
    let list = |ws: &Path| ok(ws, &["memory", "list", "--json"]);
    assert_eq!(list(a.path()), list(b.path()));
    assert_eq!(
        ok(b.path(), &["memory", "export"]),
        exported,
        "the same lines back"
    );
    let go_file = "agents/memories/workflow/workflow_a1b2c3.spmd";
    let (fa, fb) = (
        std::fs::read_to_string(a.path().join(go_file)).unwrap(),
        std::fs::read_to_string(b.path().join(go_file)).unwrap(),
    );
    assert!(
        fb.contains("reviewer: alice") && fb.contains("2025-05-26T08:30:00Z"),
        "{fb}"
    );
    assert_eq!(
        harvey::memory::file::parse(fa.as_bytes(), None).unwrap(),
        harvey::memory::file::parse(fb.as_bytes(), None).unwrap()
    );

    // Twice: nothing changes, every line says so.
    let twice = ok(b.path(), &["memory", "import", file.to_str().unwrap()]);
    assert_eq!(twice.matches("unchanged").count(), 4, "{twice}");
    assert_eq!(list(a.path()), list(b.path()));
}

#[test]
fn a_bad_export_line_names_its_line_and_field_and_the_rest_go_on() {
    let ws = workspace();
    let file = ws.path().join("bad.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"id":"tool_use_1","type":"tool_use","created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-01T00:00:00Z","description":"fine","confidence":0.5}"#,
            "\n",
            r#"{"id":"../escape","type":"tool_use","created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-01T00:00:00Z","description":"bad id","confidence":0.5}"#,
            "\n",
            r#"{"id":"tool_use_3","type":"tool_use","created_at":"last week","updated_at":"2025-01-01T00:00:00Z","description":"bad date","confidence":0.5}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = run(ws.path(), &["memory", "import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("bad.jsonl:2: error: id:"), "{err}");
    assert!(err.contains("bad.jsonl:3: error: created_at:"), "{err}");
    assert!(err.contains("1 saved, 2 failed"), "{err}");
    assert!(!ws.path().join("agents/escape.spmd").exists());
}

/// Notes migrated from elsewhere come in with their dates: a plain line's `created_at`
/// (a plain day too) is in the memory's file and in the export; a bad date names the
/// file, the line and the field, and the other lines go on.
#[test]
fn plain_lines_keep_their_dates_and_a_bad_date_names_its_line() {
    let ws = workspace();
    let file = ws.path().join("notes.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"project_fact","description":"the pump was serviced","created_at":"2024-03-01"}"#,
            "\n\n",
            r#"{"type":"workflow","description":"prime before the first run","created_at":"2024-03-05T09:00:00Z","updated_at":"2024-04-01T10:00:00Z"}"#,
            "\n",
            r#"{"type":"workflow","description":"bad day","created_at":"1 March"}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = run(ws.path(), &["memory", "import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(r#"notes.jsonl:4: error: created_at: "1 March" is not a date"#),
        "{err}"
    );
    assert!(
        err.contains("e.g. 2026-05-25T12:00:00Z or 2026-05-25"),
        "{err}"
    );
    assert!(err.contains("2 saved, 1 failed"), "{err}");

    let exported = ok(ws.path(), &["memory", "export"]);
    let lines: Vec<serde_json::Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{exported}");
    assert_eq!(lines[0]["created_at"], "2024-03-01T00:00:00Z");
    assert_eq!(lines[0]["updated_at"], "2024-03-01T00:00:00Z");
    assert_eq!(lines[1]["created_at"], "2024-03-05T09:00:00Z");
    assert_eq!(lines[1]["updated_at"], "2024-04-01T10:00:00Z");
    let id = lines[0]["id"].as_str().unwrap();
    let on_disk = std::fs::read_to_string(
        ws.path()
            .join(format!("agents/memories/project_fact/{id}.spmd")),
    )
    .unwrap();
    assert!(
        on_disk
            .lines()
            .any(|l| l.starts_with("created_at:") && l.contains("2024-03-01T00:00:00Z")),
        "{on_disk}"
    );
}
