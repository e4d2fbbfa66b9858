//! Skills used without being named (issue 46): the router's skill question picks a
//! prompt skill for an ordinary message, a trigger runs one in the app's own turn, and
//! `/skill suggest` drafts a skill from steps a recorded session repeated.

use std::path::Path;
use std::rc::Rc;

use harvey::app::App;
use harvey::engine::scripted::ScriptedEngine;

use super::skills::{app, line, workspace, write_skill};

/// The router may choose a prompt skill for an ordinary message: the skill's turn runs
/// (its body, the message as the request, its scene in the record); a skill with a
/// script is never offered; a chosen skill that needs a value nobody gave leaves the
/// message to an ordinary turn, said in a notice; and a message that fits no skill is
/// answered as before.
#[test]
fn the_router_chooses_a_skill_and_the_skill_runs() {
    let ws = workspace();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  enabled: false\nsampling:\n  max_tokens: 8\ntools:\n  route: on\n",
    )
    .unwrap();
    write_skill(
        ws.path(),
        "notes-gist",
        "---\nname: notes-gist\ndescription: Sums up notes.txt in three bullets. Use for the gist of the notes.\n---\nRead notes.txt, then write three bullets about: {{ARGS}}\n",
    );
    let config = harvey::config::load(ws.path()).unwrap();
    // The router picks the skill; inside the skill's turn it picks no tool; the
    // answer (its first token apart, then the rest: here nothing).
    let engine = ScriptedEngine::new(
        8192,
        [
            "notes-gist",
            "answer",
            "Plans.",
            "",
            "changelog-entry",
            "answer",
            "None.",
            "",
            "answer",
            "4",
            "",
        ],
    );
    let log = engine.log();
    let mut app = App::with_engine(ws.path().canonicalize().unwrap(), config, Box::new(engine));
    let mut notices = Vec::new();
    let turn = app
        .agent_turn("What is the gist of my notes?", &mut |e| {
            if let harvey::chat::agent::TurnEvent::Notice(n) = e {
                notices.push(n);
            }
        })
        .unwrap();
    assert_eq!(turn.completion.text, "Plans.");
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with("skill notes-gist: Sums up notes.txt")),
        "{notices:?}"
    );
    let asked = log.lock().unwrap()[0].clone();
    assert!(asked.aside);
    assert!(
        asked.messages[0]
            .content
            .contains("Skills:\n- notes-gist: Sums up notes.txt in three bullets.\n"),
        "the skill that shares a word is asked about: {}",
        asked.messages[0].content
    );
    let turns = app.conversation().turns();
    assert_eq!(
        turns.len(),
        2,
        "the message went once, as the skill's: {turns:?}"
    );
    assert!(
        turns[0].content.starts_with(
            "[skill: notes-gist]\nRequest: What is the gist of my notes?\n\nRead notes.txt, then write three bullets about: What is the gist of my notes?"
        ),
        "{}",
        turns[0].content
    );
    use harvey::chat::agent::StepKind;
    // The question's evidence is gathered before the router picks the skill (its step is
    // timed too, and told apart here: this test is about the skill's steps).
    let steps: Vec<(StepKind, &str)> = turn
        .steps
        .iter()
        .filter(|s| s.kind != StepKind::Evidence)
        .map(|s| (s.kind, s.what.as_str()))
        .collect();
    assert_eq!(
        steps,
        [
            (StepKind::Recall, ""),
            (StepKind::Router, "notes-gist"),
            (StepKind::Router, "answer"),
            (StepKind::Answer, ""),
        ]
    );
    let text = std::fs::read_to_string(app.recorder().path().unwrap()).unwrap();
    assert!(text.contains("INT. SKILL NOTES-GIST "), "{text}");

    // changelog-entry needs a VERSION nobody gave: the message goes as it is.
    notices.clear();
    let turn = app
        .agent_turn("Put together a changelog entry.", &mut |e| {
            if let harvey::chat::agent::TurnEvent::Notice(n) = e {
                notices.push(n);
            }
        })
        .unwrap();
    assert_eq!(turn.completion.text, "None.");
    assert!(
        notices.iter().any(
            |n| n.contains("the skill changelog-entry fits this request, but")
                && n.contains("VERSION")
        ),
        "{notices:?}"
    );
    assert_eq!(
        app.conversation().turns()[2].content,
        "Put together a changelog entry."
    );
    let asked = log
        .lock()
        .unwrap()
        .iter()
        .filter(|c| c.aside)
        .find(|c| {
            c.messages[1]
                .content
                .contains("Put together a changelog entry.")
        })
        .map(|c| c.messages[0].content.clone())
        .unwrap();
    assert!(
        asked.contains("- changelog-entry: ") && !asked.contains("release-checklist"),
        "release-checklist shares \"changelog\" but has a script: only the user runs it: {asked}"
    );

    // No skill fits: an ordinary turn.
    let turn = app.agent_turn("What is 2 plus 2?", &mut |_| {}).unwrap();
    assert_eq!(turn.completion.text, "4");
    assert_eq!(app.conversation().turns()[4].content, "What is 2 plus 2?");
}

/// A session record in which the user twice asked for the last commit and then edited
/// the changelog (the notes harvey writes for each call), with a command in between.
const REPEATING_SESSION: &str = "Title: Harvey Session
Credit: Written by harvey 0.1.0
Author: harvey and pi
Date: 2026-11-20 09:00:00
Model: Qwen2.5-Coder-1.5B-Instruct

FADE IN:

INT. HARVEY AND PI TALKING 2026-11-20 09:00:00

PI
What changed in the last commit?

HARVEY
It fixed the tide parser.

[[tool: git({\"action\":\"last_commit\"}) → ok]]

INT. HARVEY AND PI TALKING 2026-11-20 09:02:00

PI
Add that to CHANGELOG.md under Unreleased.

HARVEY
Added.

[[tool: edit_file({\"path\":\"CHANGELOG.md\",\"old\":\"## Unreleased\",\"new\":\"## Unreleased\\n- Fix the tide parser\"}) → ok]]
[[command (user): cargo test → exit 0, 300 bytes of output]]

INT. HARVEY AND PI TALKING 2026-11-20 10:00:00

PI
And the commit after that one? Same thing for the changelog.

HARVEY
Done.

[[tool: git({\"action\":\"last_commit\"}) → ok]]
[[tool: edit_file({\"path\":\"CHANGELOG.md\",\"old\":\"## Unreleased\",\"new\":\"## Unreleased\\n- Add moon factor\"}) → ok]]

THE END.
";

const DRAFT: &str = r#"{"name": "changelog-from-commit", "description": "Adds the last commit to CHANGELOG.md. Use when the user wants the changelog updated.", "steps": ["Ask git for the last commit.", "Edit CHANGELOG.md: add a line under Unreleased."]}"#;

fn plant_session(ws: &Path, name: &str, text: &str) {
    let dir = ws.join("agents/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
}

/// `/skill suggest`: the run of steps the newest session repeated is found, the model's
/// draft (scripted here) is shown as a SKILL.md, and written only after a yes; a no, no
/// terminal, a name that exists, a session where nothing repeats and a missing session
/// each write nothing and say why.
#[test]
fn skill_suggest_drafts_from_repeated_steps_and_writes_only_after_a_yes() {
    let ws = workspace();
    let p = ws.path();
    let mut app = app(p, &[DRAFT, DRAFT, DRAFT, DRAFT]);
    let out = line(&mut app, "/skill suggest");
    assert!(out.contains("no sessions recorded yet"), "{out}");
    plant_session(p, "harvey-session-20261120-090000.spmd", REPEATING_SESSION);
    // No terminal: shown, not written.
    let out = line(&mut app, "/skill suggest");
    assert!(
        out.contains("[harvey-session-20261120-090000.spmd: 2 times: git last_commit → edit_file]"),
        "{out}"
    );
    assert!(out.contains("name: changelog-from-commit"), "{out}");
    assert!(out.contains("1. Ask git for the last commit."), "{out}");
    assert!(
        out.contains("nothing written: /skill suggest asks before it writes"),
        "{out}"
    );
    let skill_md = p.join("agents/skills/changelog-from-commit/SKILL.md");
    assert!(!skill_md.exists());
    // No.
    app.install_asker(Rc::new(|_q: &str| Some("n".into())));
    let out = line(
        &mut app,
        "/skill suggest harvey-session-20261120-090000.spmd",
    );
    assert!(out.ends_with("[nothing written]\n"), "{out}");
    assert!(!skill_md.exists());
    // Yes: written, and it loads as a skill.
    app.install_asker(Rc::new(|q: &str| {
        assert_eq!(
            q,
            "write agents/skills/changelog-from-commit/SKILL.md? [y/N] "
        );
        Some("y".into())
    }));
    let out = line(&mut app, "/skill suggest");
    assert!(
        out.contains("[wrote agents/skills/changelog-from-commit/SKILL.md"),
        "{out}"
    );
    let catalog = app.skills();
    let skill = catalog
        .get("changelog-from-commit")
        .expect("the written skill loads");
    assert!(skill
        .body
        .contains("2. Edit CHANGELOG.md: add a line under Unreleased."));
    // Again: it exists now, nothing is written over it.
    let out = line(&mut app, "/skill suggest");
    assert!(
        out.contains("agents/skills/changelog-from-commit exists already: nothing written"),
        "{out}"
    );
    // Nothing repeats in another session; an unknown one is named.
    plant_session(
        p,
        "harvey-session-20261121-090000.spmd",
        &REPEATING_SESSION
            .replace("edit_file", "read_file")
            .replacen("read_file", "list_files", 1),
    );
    let out = line(
        &mut app,
        "/skill suggest harvey-session-20261121-090000.spmd",
    );
    assert!(out.contains("no run of steps repeats there"), "{out}");
    let out = line(&mut app, "/skill suggest nope.spmd");
    assert!(out.contains("no session \"nope.spmd\""), "{out}");
}

/// With the real model (SmolLM2) the draft is written under the grammar: whatever it
/// says, it parses and reads back as a skill with a valid name, a description and at
/// least two steps, and nothing is written without a yes.
#[test]
fn real_model_skill_suggest_drafts_a_skill_that_loads() {
    let ws = workspace();
    let p = ws.path();
    plant_session(p, "harvey-session-20261120-090000.spmd", REPEATING_SESSION);
    let config = harvey::config::load(p).unwrap();
    let engine = crate::support::engine(2048, 256);
    let mut app = App::with_engine(p.canonicalize().unwrap(), config, Box::new(engine));
    let s = app.suggest_skill(None).expect("a draft");
    assert_eq!(s.repeat.keys, ["git last_commit", "edit_file"]);
    let skill = harvey::skills::parse::parse(&s.text, &s.name).expect("the draft is a skill");
    assert_eq!(skill.name, s.name);
    assert!(!skill.description.trim().is_empty());
    let steps = skill.body.matches("\n2. ").count();
    assert_eq!(steps, 1, "at least two steps: {}", skill.body);
    assert!(
        !p.join("agents/skills").join(&s.name).exists(),
        "nothing written"
    );
}

/// A prompt skill's trigger runs it in `harvey run` too (the app's turn, not only the
/// REPL's line handling); a triggered skill that needs a value nobody gave, and a
/// message that matches no trigger, go to the model as they are.
#[test]
fn a_trigger_runs_its_prompt_skill_in_the_apps_own_turn() {
    let ws = workspace();
    let mut app = app(ws.path(), &["Reviewed.", "", "no entry", "", "fine", ""]);
    let mut notices = Vec::new();
    let turn = app
        .agent_turn("please review src/lib.rs", &mut |e| {
            if let harvey::chat::agent::TurnEvent::Notice(n) = e {
                notices.push(n);
            }
        })
        .unwrap();
    assert_eq!(turn.skill.as_deref(), Some("review-code"));
    assert!(
        notices
            .iter()
            .any(|n| n == "skill review-code (its trigger matched)"),
        "{notices:?}"
    );
    let sent = &app.conversation().turns()[0].content;
    assert!(
        sent.starts_with("[skill: review-code]\nRequest: please review src/lib.rs\n"),
        "{sent}"
    );
    let turn = app.agent_turn("write the changelog", &mut |_| {}).unwrap();
    assert_eq!(turn.skill, None);
    assert_eq!(app.conversation().turns()[2].content, "write the changelog");
    let turn = app.agent_turn("how are things?", &mut |_| {}).unwrap();
    assert_eq!(turn.skill, None);
    assert_eq!(app.conversation().turns()[4].content, "how are things?");
}
