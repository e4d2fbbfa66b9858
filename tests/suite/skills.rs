//! Skills (issue 46): a Go-style workspace's skills found and listed, each bad input a
//! clear message beside the good skills, a run's variables, `allowed-tools` narrowing
//! the turn's tools, the script through the command policy with the Go tool's
//! environment, and the `INT. SKILL` scene in the record.

use std::path::Path;
use std::rc::Rc;

use harvey::app::App;
use harvey::command::{AuditLog, Decision};
use harvey::engine::scripted::ScriptedEngine;
use harvey::repl::handle_line;

const FIXTURES: &str = "tests/fixtures/skills";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A workspace holding the fixture skills, memory off, safe mode on.
pub(super) fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  enabled: false\nsampling:\n  max_tokens: 8\nsecurity:\n  run_timeout: 5s\n",
    )
    .unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES);
    copy_dir(&root, &ws.path().join("agents/skills"));
    std::fs::write(
        ws.path().join("notes.txt"),
        "the secret plan is in notes.txt",
    )
    .unwrap();
    ws
}

pub(super) fn app(ws: &Path, replies: &[&str]) -> App {
    let config = harvey::config::load(ws).unwrap();
    let engine = ScriptedEngine::new(8192, replies.iter().copied());
    App::with_engine(ws.canonicalize().unwrap(), config, Box::new(engine))
}

pub(super) fn line(app: &mut App, text: &str) -> String {
    let mut out = Vec::new();
    handle_line(app, text, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

pub(super) fn write_skill(ws: &Path, folder: &str, text: &str) {
    let dir = ws.join("agents/skills").join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

#[test]
fn a_go_style_workspace_lists_and_shows_its_skills() {
    let ws = workspace();
    let catalog = harvey::skills::load(ws.path());
    assert!(catalog.broken.is_empty(), "{:?}", catalog.broken);
    let names: Vec<&str> = catalog.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["changelog-entry", "release-checklist", "review-code"]
    );
    let mut app = app(ws.path(), &[]);
    let list = line(&mut app, "/skill list");
    assert!(
        list.contains("  changelog-entry    Writes one CHANGELOG.md entry for a version from the recent commits.\n"),
        "{list}"
    );
    assert!(
        list.lines()
            .any(|l| l.contains("release-checklist") && l.ends_with("[script]")),
        "{list}"
    );
    assert!(
        !list
            .lines()
            .any(|l| l.contains("review-code") && l.contains("[script]")),
        "{list}"
    );
    let show = line(&mut app, "/skill show review-code");
    assert!(
        show.contains(
            "allowed-tools: read_file, search_files, list_files (written: Read Grep Glob)"
        ),
        "{show}"
    );
    assert!(show.contains("other keys:    x-harvey-note"), "{show}");
    assert!(show.contains("Check names say what things are."), "{show}");
    let show = line(&mut app, "/skill show release-checklist");
    assert!(
        show.contains("scripts:       scripts/compiled.bash"),
        "{show}"
    );
    assert!(
        show.contains("metadata:      author: harvey tests"),
        "{show}"
    );
    assert!(
        show.contains(
            "variable:      VERSION (string) — The version about to be tagged; e.g. 1.4.0"
        ),
        "{show}"
    );
    assert!(line(&mut app, "/skill show nope").contains("no skill \"nope\""));
    assert!(line(&mut app, "/nope").contains("unknown command /nope"));
}

#[test]
fn each_bad_skill_says_what_to_fix_and_hides_no_good_one() {
    let ws = workspace();
    let p = ws.path();
    write_skill(
        p,
        "broken-yaml",
        "---\nname: broken-yaml\ndescription: [a, b\n---\nx\n",
    );
    write_skill(p, "no-name", "---\ndescription: d\n---\nx\n");
    write_skill(p, "mismatch", "---\nname: other\ndescription: d\n---\nx\n");
    write_skill(
        p,
        "bad-tool",
        "---\nname: bad-tool\ndescription: d\nallowed-tools: read_file fetch_url\n---\nx\n",
    );
    // A script that is a symlink to a file elsewhere in the workspace.
    write_skill(
        p,
        "outside-script",
        "---\nname: outside-script\ndescription: d\n---\nx\n",
    );
    let scripts = p.join("agents/skills/outside-script/scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::write(p.join("evil.bash"), "echo pwned\n").unwrap();
    std::os::unix::fs::symlink(p.join("evil.bash"), scripts.join("compiled.bash")).unwrap();
    // A skill folder that is a symlink out of the workspace.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(
        elsewhere.path().join("SKILL.md"),
        "---\nname: escaped\ndescription: d\n---\nx\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), p.join("agents/skills/escaped")).unwrap();

    let catalog = harvey::skills::load(p);
    assert_eq!(
        catalog.skills.len(),
        3,
        "the good skills stay: {:?}",
        catalog.skills
    );
    let says = |folder: &str| {
        catalog
            .problem(folder)
            .unwrap_or_else(|| panic!("{folder} must be an error"))
            .to_string()
    };
    let cases = [
        (
            "broken-yaml",
            "agents/skills/broken-yaml/SKILL.md:4: broken YAML",
        ),
        (
            "no-name",
            "agents/skills/no-name/SKILL.md:2: no `name`: add `name: no-name`",
        ),
        (
            "mismatch",
            "SKILL.md:2: name \"other\" does not match its folder \"mismatch\"",
        ),
        (
            "bad-tool",
            "SKILL.md:4: allowed-tools names \"fetch_url\", which is no harvey tool",
        ),
        ("outside-script", "leads outside the skill folder"),
        ("escaped", "is a symlink out of the workspace"),
    ];
    for (folder, expected) in cases {
        let message = says(folder);
        assert!(message.contains(expected), "{folder}: {message}");
    }
    let mut app = app(p, &["must not be asked"]);
    let list = line(&mut app, "/skill list");
    for (folder, _) in cases {
        assert!(
            list.lines()
                .any(|l| l.trim_start().starts_with(folder) && l.contains("error: ")),
            "{list}"
        );
    }
    // Nothing of a bad skill runs.
    let out = line(&mut app, "/outside-script");
    assert!(
        out.contains("nothing ran") && out.contains("outside the skill folder"),
        "{out}"
    );
    assert!(app.conversation().turns().is_empty());
    assert!(AuditLog::new(&p.join("agents"))
        .last(10)
        .unwrap()
        .0
        .is_empty());
}

#[test]
fn a_prompt_skill_fills_its_variables_or_refuses_by_name() {
    let ws = workspace();
    let mut app = app(ws.path(), &["## 1.2.0\n- Fixed"]);
    let out = line(&mut app, "/changelog-entry");
    assert!(
        out.contains("needs VERSION (the version the entry is for)") && out.contains("nothing ran"),
        "{out}"
    );
    assert!(app.conversation().turns().is_empty());
    let out = line(&mut app, "/skill run changelog-entry 1.2.0");
    assert!(out.contains("## 1.2.0"), "{out}");
    let sent = &app.conversation().turns()[0].content;
    assert!(sent.starts_with("[skill: changelog-entry]\nVariables: VERSION=1.2.0, STYLE=short\nTools for this task: git, read_file\n\n"), "{sent}");
    assert!(
        sent.contains("Write the CHANGELOG.md entry for version 1.2.0 (short style)."),
        "{sent}"
    );
}

#[test]
fn allowed_tools_narrow_the_turn_and_come_back_after_it() {
    let ws = workspace();
    let read =
        r#"<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>"#;
    let list = r#"<tool_call>{"name": "list_files", "arguments": {}}</tool_call>"#;
    write_skill(
        ws.path(),
        "lister",
        "---\nname: lister\ndescription: d\nallowed-tools: list_files\n---\nList {{ARGS}}\n",
    );
    let mut app = app(ws.path(), &[read, "refused", list, "listed", read, "read"]);
    let before = app.tools().names();
    let catalog = app.skills();
    let skill = catalog.get("lister").unwrap();
    let filled = harvey::skills::vars::fill(skill, "the files", None).unwrap();
    let turn = app.skill_turn(skill, &filled, &mut |_| {}).unwrap();
    assert_eq!(turn.calls.len(), 1);
    assert!(
        turn.calls[0].result.is_err(),
        "read_file is not this skill's: {:?}",
        turn.calls[0]
    );
    let turn = app.skill_turn(skill, &filled, &mut |_| {}).unwrap();
    assert!(
        turn.calls[0]
            .result
            .as_ref()
            .is_ok_and(|r| r.contains("notes.txt")),
        "{:?}",
        turn.calls
    );
    // The session's tools are back, in their order: a plain turn reads the file.
    assert_eq!(app.tools().names(), before);
    let turn = app.agent_turn("read notes", &mut |_| {}).unwrap();
    assert!(
        turn.calls[0]
            .result
            .as_ref()
            .is_ok_and(|r| r.contains("secret plan")),
        "{:?}",
        turn.calls
    );
}

#[test]
fn a_skill_script_goes_through_the_command_policy() {
    let ws = workspace();
    let p = ws.path();
    let marker = p.join("release-checked.txt");
    let audit = || AuditLog::new(&p.join("agents")).last(100).unwrap().0;
    // Nobody to ask (no terminal): bash is not on the allowlist, so it is refused.
    let mut app = app(p, &[]);
    let out = line(&mut app, "/release-checklist 1.4.0");
    assert!(
        out.contains("refused: bash is not on the allowlist"),
        "{out}"
    );
    assert!(!marker.exists());
    assert_eq!(audit().last().unwrap().decision, Decision::Refused);
    // Asked, and the user says no.
    app.install_asker(Rc::new(|q: &str| {
        assert!(
            q.contains("Run `bash agents/skills/release-checklist/scripts/compiled.bash`?"),
            "{q}"
        );
        Some("n".into())
    }));
    let out = line(&mut app, "/skill run release-checklist 1.4.0");
    assert!(out.contains("not run: the user said no"), "{out}");
    assert!(!marker.exists());
    assert_eq!(audit().last().unwrap().decision, Decision::Declined);
    // Yes: it runs with the Go tool's environment; the output waits for the next message.
    app.install_asker(Rc::new(|_q: &str| Some("y".into())));
    let out = line(&mut app, "/release-checklist 1.4.0");
    assert!(out.contains("checking release 1.4.0"), "{out}");
    let ws_real = p.canonicalize().unwrap();
    assert!(
        out.contains(&format!(
            "workdir={} model=scripted session=",
            ws_real.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("exit 0") && out.contains("attached to your next message"),
        "{out}"
    );
    assert!(marker.exists());
    let last = audit().last().cloned().unwrap();
    assert_eq!(last.decision, Decision::Confirmed);
    assert_eq!(last.program, "bash");
    // On the allowlist it runs without a question.
    app.install_asker(Rc::new(|q: &str| panic!("asked: {q}")));
    app.allow_program("bash");
    std::fs::remove_file(&marker).unwrap();
    line(&mut app, "/release-checklist 1.5.0");
    assert!(marker.exists());
    assert_eq!(audit().last().unwrap().decision, Decision::Allowlisted);
}

#[test]
fn a_skill_run_is_a_scene_in_the_record() {
    let ws = workspace();
    let mut app = app(ws.path(), &["## 2.0.0", "thanks noted"]);
    line(&mut app, "/changelog-entry 2.0.0");
    line(&mut app, "thanks");
    let text = std::fs::read_to_string(app.recorder().path().unwrap()).unwrap();
    let scene = text
        .find("INT. SKILL CHANGELOG-ENTRY ")
        .expect("the skill's scene");
    let talk = text.find("INT. HARVEY AND ").unwrap();
    assert!(scene < talk, "{text}");
    assert!(
        text.contains(
            "\n\nHarvey executes the changelog-entry skill.\n\nWrites one CHANGELOG.md entry"
        ),
        "{text}"
    );
    assert!(
        text.contains("CHANGELOG-ENTRY\nVERSION=2.0.0, STYLE=short\n"),
        "{text}"
    );
    let record = harvey::session::fountain::parse(&text);
    assert_eq!(record.exchanges.len(), 2, "{text}");
    assert!(record.exchanges[0]
        .user
        .starts_with("[skill: changelog-entry]"));
    assert_eq!(record.exchanges[0].reply, "## 2.0.0");
    assert_eq!(record.exchanges[1].user, "thanks");
}

#[test]
fn a_trigger_runs_its_skill_without_asking_the_model_first() {
    let ws = workspace();
    let mut app = app(ws.path(), &["Reviewed.", "entry written"]);
    let out = line(&mut app, "please review src/lib.rs");
    assert!(
        out.contains("[skill review-code (its trigger matched)]"),
        "{out}"
    );
    let sent = &app.conversation().turns()[0].content;
    assert!(
        sent.starts_with("[skill: review-code]\nRequest: please review src/lib.rs\nTools for this task: read_file, search_files, list_files\n\nReview please review src/lib.rs:"),
        "{sent}"
    );
    // changelog-entry's trigger matches, but it needs a VERSION nobody gave: the
    // message goes to the model as it is.
    let out = line(&mut app, "write the changelog");
    assert!(!out.contains("trigger matched"), "{out}");
    assert_eq!(app.conversation().turns()[2].content, "write the changelog");
}

#[test]
fn skill_new_writes_a_skill_that_loads_and_runs() {
    let ws = workspace();
    let mut app = app(ws.path(), &["tested and tagged"]);
    let answers = std::cell::RefCell::new(std::collections::VecDeque::from([
        "ship-it",
        "Ships a release: tests, then the tag. Use when the user says ship it.",
        "Run the tests",
        "Tag the version",
        "",
        "y",
    ]));
    app.install_asker(Rc::new(move |_q: &str| {
        answers.borrow_mut().pop_front().map(String::from)
    }));
    let out = line(&mut app, "/skill new");
    assert!(
        out.contains("[wrote agents/skills/ship-it/SKILL.md"),
        "{out}"
    );
    let catalog = harvey::skills::load(ws.path());
    let skill = catalog.get("ship-it").expect("the new skill loads");
    assert!(
        skill.body.contains("1. Run the tests\n2. Tag the version"),
        "{}",
        skill.body
    );
    line(&mut app, "/ship-it");
    assert!(app.conversation().turns()[0]
        .content
        .starts_with("[skill: ship-it]\n\n# ship-it"));
    // Without a terminal nothing is asked and nothing written.
    let mut quiet = self::app(ws.path(), &[]);
    assert!(line(&mut quiet, "/skill new").contains("run it in a terminal"));
}
