//! Memory mining from session records: the real model's output always parses, the
//! on-exit gate by model size, and `/memory mine` review with `/session replay`.

use std::path::Path;

use harvey::app::App;
use harvey::config::Config;
use harvey::session::fountain::parse;

use crate::support::engine;

#[test]
fn real_model_mining_output_always_parses() {
    use harvey::engine::{AbortFlag, Engine};
    use harvey::memory::MemoryStore;
    use harvey::session::mining::{
        mine_report, screen, ACTION_MAX_CHARS, DESCRIPTION_CHARS, EVIDENCE_CHARS, KINDS,
        MAX_PROPOSALS, MAX_TAGS, SUMMARY_MAX_CHARS, TAG_MAX_CHARS,
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    let mut engine = engine(2048, 512);
    let ws = tempfile::tempdir().unwrap();
    let (store, _) = MemoryStore::open(&ws.path().join("agents"), ws.path()).unwrap();
    let (mut proposals, mut outputs, mut dropped) = (0, 0, 0);
    for f in &files {
        let record = parse(&std::fs::read_to_string(f).unwrap());
        assert!(record.exchanges.len() >= 2, "{}", f.display());
        let exchanges: Vec<(String, String)> = record
            .exchanges
            .iter()
            .map(|e| (e.user.clone(), e.reply.clone()))
            .collect();
        // An error here is a cut-off (the grammar did not complete) or a parse failure.
        let mut mined = mine_report(
            &mut engine as &mut dyn Engine,
            &exchanges,
            &[],
            &AbortFlag::new(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // The model really answered, and every answer ended and went through the parser
        // (an empty list is a valid answer; no answer at all is not).
        assert!(mined.chunks >= 1, "{}", f.display());
        assert_eq!(mined.parsed, mined.chunks, "{}", f.display());
        outputs += mined.parsed;
        assert!(mined.proposals.len() <= MAX_PROPOSALS);
        // Whatever the model says, a kept proposal quotes the record, outside the
        // assistant's words (no workspace was given), and its text was not cut.
        let said: String = words(
            &record
                .exchanges
                .iter()
                .map(|e| e.user.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        );
        for p in &mined.proposals {
            let quote = words(&p.evidence);
            assert!(
                (EVIDENCE_CHARS.0..=EVIDENCE_CHARS.1).contains(&p.evidence.len()),
                "{p:?}"
            );
            assert!(
                !quote.trim().is_empty() && said.contains(quote.trim()),
                "{p:?}"
            );
            assert!(p.draft.description.len() < DESCRIPTION_CHARS.1, "{p:?}");
        }
        for d in mined.proposals.iter().map(|p| &p.draft) {
            assert!(
                harvey::memory::MemoryType::parse(&d.mtype).is_some(),
                "{d:?}"
            );
            assert!(
                KINDS.contains(&d.kind.as_deref().unwrap_or_default()),
                "{d:?}"
            );
            let chars = d.description.chars().count();
            assert!(
                (DESCRIPTION_CHARS.0..=DESCRIPTION_CHARS.1).contains(&chars),
                "{d:?}"
            );
            assert!(d.summary.chars().count() <= SUMMARY_MAX_CHARS, "{d:?}");
            let action = d.action.as_deref().unwrap_or_default();
            assert!(action.chars().count() <= ACTION_MAX_CHARS, "{d:?}");
            assert!((1..=MAX_TAGS).contains(&d.tags.len()), "{d:?}");
            assert!(
                d.tags.iter().all(|t| (1..=TAG_MAX_CHARS).contains(&t.len())
                    && t.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')),
                "{d:?}"
            );
        }
        proposals += mined.proposals.len();
        screen(&store, &mut mined);
        dropped += mined.drops().total();
        eprintln!("{}: dropped {}", f.display(), mined.drops());
    }
    eprintln!(
        "{} sessions mined: {outputs} outputs, all ended and parsed; {proposals} proposals kept, {dropped} dropped",
        files.len()
    );
}

/// Lowercased words joined by single spaces, with spaces at both ends: a quote's words
/// occur in a text's when one contains the other.
fn words(text: &str) -> String {
    let w: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    format!(" {} ", w.join(" "))
}

#[test]
fn mining_is_gated_by_model_size_and_saves_screened_proposals() {
    use harvey::config::MineOnExit;
    use harvey::engine::scripted::ScriptedEngine;
    let mined = r#"{"memories": [{"evidence": "We deploy with ./deploy.sh, which refuses a dirty tree", "type": "workflow", "kind": "pattern", "description": "Deploy with ./deploy.sh on a clean tree", "summary": "deploy.sh refuses a dirty tree", "action": "git stash first", "tags": ["deploy"]}, {"evidence": "We deploy with ./deploy.sh", "type": "tool_use", "kind": "pitfall", "description": "Token for the API", "summary": "password = hunter2hunter2", "action": "", "tags": ["api"]}]}"#;
    let replies = [
        "Commit or stash first.",
        "We talked about deploying.",
        r#"["deploy", "git", "stash"]"#,
        mined,
    ];
    let dir = tempfile::tempdir().unwrap();
    let run = |on_exit: MineOnExit| {
        let mut config = Config::default();
        config.tools.enabled = false;
        config.memory.mining.on_exit = on_exit;
        let mut app = App::with_engine(
            dir.path().to_path_buf(),
            config,
            Box::new(ScriptedEngine::new(4096, replies)),
        );
        app.turn(
            "We deploy with ./deploy.sh, which refuses a dirty tree.",
            &mut |_| {},
        )
        .unwrap();
        let mut lines = Vec::new();
        let report = app
            .close_session(&mut |l| lines.push(l.to_string()))
            .unwrap();
        (app, report, lines)
    };
    // The scripted model reports 0 parameters: auto does not mine, and says why.
    let (app, _, lines) = run(MineOnExit::Auto);
    assert!(
        lines.iter().any(|l| l.contains("memory mining skipped")),
        "{lines:?}"
    );
    assert!(app.memory().unwrap().list(None, None).unwrap().is_empty());
    drop(app);
    let (app, report, lines) = run(MineOnExit::On);
    let store = app.memory().unwrap();
    let saved = store.list(None, None).unwrap();
    assert_eq!(
        saved.len(),
        1,
        "the secret-looking proposal is dropped: {lines:?}"
    );
    let m = store.get(&saved[0].id).unwrap();
    assert_eq!(m.confidence, 0.5);
    let file = report
        .record
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(m.source_session.as_deref(), Some(file.as_str()));
    let record = parse(&std::fs::read_to_string(&report.record).unwrap());
    assert!(
        record
            .closing_notes
            .iter()
            .any(|n| n.starts_with("Mined: 1 saved") && n.ends_with("1 dropped (1 secret)")),
        "{:?}",
        record.closing_notes
    );
}

#[test]
fn memory_mine_reviews_proposals_and_replay_resends_the_turns() {
    use harvey::repl::handle_line;
    let dir = tempfile::tempdir().unwrap();
    let make = |replies: Vec<&str>| crate::support::scripted_app(dir.path(), replies);
    let say = |app: &mut App, line: &str| {
        let mut out = Vec::new();
        handle_line(app, line, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let file = {
        let mut first = make(vec![
            "Then roll back with ./deploy.sh --undo.",
            "Talked about deploying.",
            r#"["deploy", "git", "release"]"#,
        ]);
        say(
            &mut first,
            "We deploy with ./deploy.sh. How do we roll back?",
        );
        let report = first.close_session(&mut |_| {}).unwrap();
        report
            .record
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    // The second proposal quotes nothing that was said: dropped before review.
    let mined = r#"{"memories": [{"evidence": "We deploy with ./deploy.sh", "type": "workflow", "kind": "pattern", "description": "Deploy with ./deploy.sh", "summary": "the deploy script", "action": "", "tags": ["deploy"]}, {"evidence": "never deploy on Fridays", "type": "tool_use", "kind": "pitfall", "description": "Never deploy on Fridays", "summary": "team rule", "action": "", "tags": ["deploy"]}]}"#;
    let mut second = make(vec![mined, "replayed answer"]);
    let answers = std::cell::RefCell::new(vec!["a".to_string()]);
    second.install_asker(std::rc::Rc::new(move |_q: &str| answers.borrow_mut().pop()));
    let out = say(&mut second, "/memory mine");
    assert!(
        out.contains(&format!("[mining {file}: 1 exchanges")),
        "{out}"
    );
    assert!(
        out.contains("dropped (not_grounded): Never deploy on Fridays")
            && out.contains("evidence: \"We deploy with ./deploy.sh\""),
        "{out}"
    );
    let saved = second.memory().unwrap().list(None, None).unwrap();
    assert_eq!(saved.len(), 1, "{out}");
    assert_eq!(saved[0].description, "Deploy with ./deploy.sh");
    let m = second.memory().unwrap().get(&saved[0].id).unwrap();
    assert_eq!(m.source_session.as_deref(), Some(file.as_str()));
    assert!(say(&mut second, "/memory mine").contains("every recorded session has been mined"));
    assert!(say(&mut second, &format!("/memory mine {file}")).contains("--force"));
    // Replay sends the recorded user turns again, recorded in this session.
    let out = say(&mut second, &format!("/session replay {file}"));
    assert!(
        out.contains("you> We deploy with ./deploy.sh. How do we roll back?")
            && out.contains("replayed answer"),
        "{out}"
    );
    let record = parse(&std::fs::read_to_string(second.recorder().path().unwrap()).unwrap());
    assert_eq!(
        record.exchanges[0].user,
        "We deploy with ./deploy.sh. How do we roll back?"
    );
}

#[test]
fn mining_bench_reports_each_session_kept_with_evidence_and_drops_by_reason() {
    use harvey::bench::mining::{mine_sessions, render, session_files, totals};
    use harvey::engine::scripted::ScriptedEngine;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions");
    let files = session_files(&dir).unwrap();
    assert_eq!(files.len(), 5);
    let before: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let item = |evidence: &str, description: &str| {
        format!(
            r#"{{"evidence": "{evidence}", "type": "workflow", "kind": "pitfall", "description": "{description}", "summary": "", "action": "", "tags": ["deploy"]}}"#
        )
    };
    // One chunk a session; the second session (./deploy.sh) gets a grounded proposal and
    // one that quotes nothing said.
    let deploy = format!(
        r#"{{"memories": [{}, {}]}}"#,
        item(
            "it refuses to run when the git tree is dirty",
            "deploy.sh refuses to run on a dirty git tree"
        ),
        item("never deploy on Fridays", "Never deploy on Fridays"),
    );
    let empty = r#"{"memories": []}"#.to_string();
    let replies = [empty.clone(), deploy, empty.clone(), empty.clone(), empty];
    let mut engine = ScriptedEngine::new(4096, replies);
    let sessions = mine_sessions(&mut engine, &files).unwrap();
    let t = totals(&sessions);
    assert_eq!((t.sessions, t.errors, t.exchanges), (5, 0, 10));
    assert_eq!((t.proposals, t.kept, t.drops.not_grounded), (2, 1, 1));
    assert_eq!(sessions[0].outputs, [r#"{"memories": []}"#]);
    assert_eq!(sessions[1].file, "harvey-session-20261102-140000.spmd");
    assert_eq!(
        sessions[1].kept[0].evidence,
        "it refuses to run when the git tree is dirty"
    );
    let json = serde_json::to_value(&sessions[1]).unwrap();
    assert_eq!(json["kept"][0]["type"], "workflow");
    assert_eq!(json["dropped"][0]["reason"], "not_grounded");
    assert_eq!(json["drops"]["not_grounded"], 1);
    let table = render::table(&sessions, &t);
    assert_eq!(table.lines().count(), 7, "{table}");
    assert!(
        render::details(&sessions[1]).contains("dropped (not_grounded) Never deploy on Fridays")
    );
    // The records are only read.
    for (f, text) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read_to_string(f).unwrap(), text);
    }
}
