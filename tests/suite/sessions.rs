//! Session records and the end-of-session sequence on every exit path.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harvey::app::App;
use harvey::config::Config;
use harvey::session::fountain::parse;
use harvey::session::SessionIndex;

use crate::support::{engine, model_path};

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("agents")).unwrap();
    std::fs::write(
        dir.path().join("agents/harvey.yaml"),
        "sampling:\n  max_tokens: 12\n  temperature: 0\nengine:\n  n_ctx: 1024\n",
    )
    .unwrap();
    dir
}

fn records(ws: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(ws.join("agents/sessions"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

enum Ending {
    Exit,
    Eof,
    Signal(&'static str),
}

fn session_ending(ending: Ending) -> tempfile::TempDir {
    let ws = workspace();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .arg("--workdir")
        .arg(ws.path())
        .arg("-m")
        .arg(model_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"Name one colour of the sky.\n").unwrap();
    match ending {
        Ending::Exit => stdin.write_all(b"/exit\n").unwrap(),
        Ending::Eof => drop(stdin),
        Ending::Signal(signal) => {
            // Wait for the exchange to be on disk, then terminate while the prompt waits.
            let started = Instant::now();
            loop {
                let done = records(ws.path())
                    .first()
                    .map(|p| parse(&std::fs::read_to_string(p).unwrap()).exchanges.len())
                    == Some(1);
                if done {
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(600),
                    "no exchange recorded"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
            let status = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
            // Keep stdin open: the session must end because of the signal.
            std::mem::forget(stdin);
        }
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("[session saved to") || stderr.contains("[session saved to"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    ws
}

fn assert_closed(ws: &Path) {
    let files = records(ws);
    assert_eq!(files.len(), 1, "{files:?}");
    let record = parse(&std::fs::read_to_string(&files[0]).unwrap());
    assert!(record.ended, "THE END. written");
    assert_eq!(record.exchanges.len(), 1);
    assert_eq!(record.exchanges[0].user, "Name one colour of the sky.");
    assert!(
        record
            .closing_notes
            .iter()
            .any(|n| n.starts_with("Summary: ")),
        "{:?}",
        record.closing_notes
    );
    let index = SessionIndex::open(&ws.join("agents")).unwrap();
    let sessions = index.recent(10).unwrap();
    assert_eq!(sessions.len(), 1);
    assert!(!sessions[0].summary.is_empty());
    assert_eq!(sessions[0].turns, 1);
    let stats = index.stats().unwrap();
    assert_eq!(stats.len(), 1);
    assert_eq!(stats[0].budget_tokens, 256, "floor(1024 × 0.25)");
    assert!(stats[0].avg_tokens_per_sec > 0.0);
}

#[test]
fn exit_command_closes_the_session() {
    assert_closed(session_ending(Ending::Exit).path());
}

#[test]
fn end_of_input_closes_the_session() {
    assert_closed(session_ending(Ending::Eof).path());
}

#[test]
fn sigterm_closes_the_session() {
    assert_closed(session_ending(Ending::Signal("-TERM")).path());
}

#[test]
fn sighup_closes_the_session() {
    assert_closed(session_ending(Ending::Signal("-HUP")).path());
}

#[test]
fn a_session_without_exchanges_leaves_nothing_behind() {
    let ws = workspace();
    let out = Command::new(env!("CARGO_BIN_EXE_harvey"))
        .arg("--workdir")
        .arg(ws.path())
        .arg("-m")
        .arg(model_path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(records(ws.path()).is_empty());
    let index = SessionIndex::open(&ws.path().join("agents")).unwrap();
    assert!(index.recent(10).unwrap().is_empty());
    assert!(index.stats().unwrap().is_empty());
}

#[test]
fn real_model_summarizes_a_transcript_three_times_the_context() {
    let ws = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.engine.n_ctx = 512;
    let mut app = App::with_engine(ws.path().to_path_buf(), config, Box::new(engine(512, 256)));
    let topics = [
        "sailing",
        "baking bread",
        "rust lifetimes",
        "mountain hiking",
        "chess openings",
    ];
    let mut tokens = 0;
    let mut i = 0;
    while tokens < 3 * 512 {
        let user = format!(
            "Tell me about {} in detail, part {i}.",
            topics[i % topics.len()]
        );
        let reply = format!(
            "Here is part {i} about {}: it takes practice, patience and the right tools; \
             start small, learn the basics well, then build on them step by step.",
            topics[i % topics.len()]
        );
        tokens += harvey::tokens::TokenCounter::count_tokens(
            app.engine.as_ref(),
            &format!("{user}\n{reply}"),
        );
        app.recorder.exchange(&user, &reply, Vec::new()).unwrap();
        app.transcript.push((user, reply));
        i += 1;
    }
    let report = app.close_session(&mut |_| {}).expect("closed");
    assert!(!report.skipped);
    assert!(
        report.summary.split_whitespace().count() >= 5,
        "{}",
        report.summary
    );
    // The tags are the model's (its grammar always ends and parses), not the fallback.
    assert_eq!(
        report.tag_source,
        harvey::chat::rolling::TagSource::Model,
        "{:?}",
        report.tags
    );
    assert!((3..=5).contains(&report.tags.len()), "{:?}", report.tags);
    assert!(
        report
            .tags
            .iter()
            .all(|t| !t.is_empty() && t.chars().all(|c| !c.is_uppercase())),
        "{:?}",
        report.tags
    );
    let record = parse(&std::fs::read_to_string(&report.record).unwrap());
    assert_eq!(record.exchanges.len(), i);
    assert!(record.ended);
    // Closing twice does nothing.
    assert!(app.close_session(&mut |_| {}).is_none());
}

mod scripted {
    use harvey::app::App;
    use harvey::config::Config;
    use harvey::engine::scripted::ScriptedEngine;
    use harvey::repl::handle_line;

    fn say(app: &mut App, line: &str) -> String {
        let mut out = Vec::new();
        handle_line(app, line, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn app(dir: &std::path::Path, replies: &[&str]) -> App {
        let mut config = Config::default();
        config.tools.enabled = false;
        App::with_engine(
            dir.to_path_buf(),
            config,
            Box::new(ScriptedEngine::new(4096, replies.iter().copied())),
        )
    }

    #[test]
    fn list_show_continue_rename_and_session_tools() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut first = app(
                dir.path(),
                &[
                    "A jib is the small sail at the front.\n\nIt helps steering.",
                    "The user asked about sailing rigs: jibs and mainsails.",
                    r#"["sailing", "jib", "rigging"]"#,
                ],
            );
            say(&mut first, "What is a jib on a sailing boat?");
            assert!(say(&mut first, "/rename sailing questions").contains("sailing questions"));
            let report = first.close_session(&mut |_| {}).unwrap();
            assert_eq!(report.tags, vec!["sailing", "jib", "rigging"]);
        }
        let mut second = app(dir.path(), &["Yes, as I said: the front sail."]);
        let listed = say(&mut second, "/session list");
        assert!(listed.contains("\"sailing questions\""), "{listed}");
        assert!(listed.contains("[sailing, jib, rigging]"), "{listed}");
        let file = listed.split_whitespace().next().unwrap().to_string();
        let shown = say(&mut second, &format!("/session show {file}"));
        assert!(shown.contains("It helps steering."), "{shown}");
        assert!(say(&mut second, "/session show ../../etc/passwd").starts_with("error: no session"));
        let cont = say(&mut second, &format!("/session continue {file}"));
        assert!(cont.contains("1 exchanges restored"), "{cont}");
        let turns = second.conversation.turns();
        assert_eq!(turns.len(), 2);
        assert_eq!(
            turns[1].content,
            "A jib is the small sail at the front.\n\nIt helps steering."
        );
        // The model's session tools find and read it.
        let found = second
            .tools
            .call(
                "session_search",
                &serde_json::from_str(r#"{"query": "jib sailing"}"#).unwrap(),
            )
            .unwrap();
        assert!(found.starts_with(&file), "{found}");
        let read = second
            .tools
            .call(
                "session_read",
                &serde_json::from_str(&format!(r#"{{"id": "{file}"}}"#)).unwrap(),
            )
            .unwrap();
        assert!(read.contains("Harvey: A jib is the small sail"), "{read}");
        let refused = second
            .tools
            .call(
                "session_read",
                &serde_json::from_str(r#"{"id": "../memories/memories.db"}"#).unwrap(),
            )
            .unwrap_err();
        assert!(refused.to_string().contains("no session"), "{refused}");
        // The new session's record notes where it continued from.
        say(&mut second, "So the jib is at the front?");
        let record = std::fs::read_to_string(second.recorder.path().unwrap()).unwrap();
        assert!(
            record.contains(&format!("[[continued from {file} (1 exchanges)]]")),
            "{record}"
        );
    }
}

#[test]
fn compression_follows_the_memory_context_and_the_record_keeps_the_originals() {
    use harvey::engine::scripted::ScriptedEngine;
    use harvey::engine::Role;
    use harvey::repl::handle_line;
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.tools.enabled = false;
    config.memory.rolling_summary.keep_turns = 2;
    config.sampling.max_tokens = 20;
    let reply = "a reply of about twenty words that fills the small context quickly so that older turns must be folded away soon";
    let replies: Vec<String> = (0..40).map(|i| format!("{reply} {i}")).collect();
    let mut app = App::with_engine(
        dir.path().to_path_buf(),
        config,
        Box::new(ScriptedEngine::new(700, replies)),
    );
    let mut out = Vec::new();
    handle_line(
        &mut app,
        "/memory add project_fact The boat is called Kestrel",
        &mut out,
    )
    .unwrap();
    let mut said = Vec::new();
    for i in 0..20 {
        let line =
            format!("question number {i} about the boat and its rigging and sails and ropes");
        handle_line(&mut app, &line, &mut out).unwrap();
        said.push(line);
    }
    assert!(
        !app.compressions.is_empty(),
        "{}",
        String::from_utf8_lossy(&out)
    );
    let messages = app.conversation.messages();
    assert_eq!(messages[0].role, Role::System);
    assert!(
        messages[1].content.starts_with("[memory context]"),
        "{}",
        messages[1].content
    );
    assert!(messages[1].content.contains("Kestrel"));
    assert!(messages[2]
        .content
        .starts_with("[Session history compressed — summary: "));
    // The record has every original exchange, and notes the compression.
    let record = parse(&std::fs::read_to_string(app.recorder.path().unwrap()).unwrap());
    let users: Vec<&str> = record.exchanges.iter().map(|e| e.user.as_str()).collect();
    assert_eq!(users, said.iter().map(String::as_str).collect::<Vec<_>>());
    let text = std::fs::read_to_string(app.recorder.path().unwrap()).unwrap();
    assert!(text.contains("[[rolling summary:"), "{text}");
    let report = app.close_session(&mut |_| {}).unwrap();
    let index = SessionIndex::open(&dir.path().join("agents")).unwrap();
    assert!(index.stats().unwrap()[0].compressed);
    assert!(report.record.is_file());
}

#[test]
fn real_model_mining_output_always_parses() {
    use harvey::engine::{AbortFlag, Engine};
    use harvey::memory::MemoryStore;
    use harvey::session::mining::{
        mine_report, screen, ACTION_MAX_CHARS, DESCRIPTION_CHARS, KINDS, MAX_PROPOSALS, MAX_TAGS,
        SUMMARY_MAX_CHARS, TAG_MAX_CHARS,
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
    let (mut proposals, mut outputs) = (0, 0);
    for f in &files {
        let record = parse(&std::fs::read_to_string(f).unwrap());
        assert!(record.exchanges.len() >= 2, "{}", f.display());
        let exchanges: Vec<(String, String)> = record
            .exchanges
            .iter()
            .map(|e| (e.user.clone(), e.reply.clone()))
            .collect();
        // An error here is a cut-off (the grammar did not complete) or a parse failure.
        let mined = mine_report(
            &mut engine as &mut dyn Engine,
            &exchanges,
            &AbortFlag::new(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // The model really answered, and every answer ended and went through the parser
        // (an empty list is a valid answer; no answer at all is not).
        assert!(mined.chunks >= 1, "{}", f.display());
        assert_eq!(mined.parsed, mined.chunks, "{}", f.display());
        outputs += mined.parsed;
        assert!(mined.drafts.len() <= MAX_PROPOSALS);
        for d in &mined.drafts {
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
        proposals += mined.drafts.len();
        let (kept, _) = screen(&store, mined.drafts);
        assert!(kept.len() <= MAX_PROPOSALS);
    }
    eprintln!(
        "{} sessions mined: {outputs} outputs, all ended and parsed; {proposals} proposals",
        files.len()
    );
}

#[test]
fn mining_is_gated_by_model_size_and_saves_screened_proposals() {
    use harvey::config::MineOnExit;
    use harvey::engine::scripted::ScriptedEngine;
    let mined = r#"{"memories": [{"type": "workflow", "kind": "pattern", "description": "Deploy with ./deploy.sh on a clean tree", "summary": "deploy.sh refuses a dirty tree", "action": "git stash first", "tags": ["deploy"]}, {"type": "tool_use", "kind": "pitfall", "description": "Token for the API", "summary": "password = hunter2hunter2", "action": "", "tags": ["api"]}]}"#;
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
    assert!(app
        .memory
        .as_ref()
        .unwrap()
        .list(None, None)
        .unwrap()
        .is_empty());
    drop(app);
    let (app, report, lines) = run(MineOnExit::On);
    let store = app.memory.as_ref().unwrap();
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
            .any(|n| n.starts_with("Mined: 1 saved")),
        "{:?}",
        record.closing_notes
    );
}

#[test]
fn memory_mine_reviews_proposals_and_replay_resends_the_turns() {
    use harvey::engine::scripted::ScriptedEngine;
    use harvey::repl::handle_line;
    let dir = tempfile::tempdir().unwrap();
    let make = |replies: Vec<&str>| {
        let mut config = Config::default();
        config.tools.enabled = false;
        App::with_engine(
            dir.path().to_path_buf(),
            config,
            Box::new(ScriptedEngine::new(4096, replies)),
        )
    };
    let say = |app: &mut App, line: &str| {
        let mut out = Vec::new();
        handle_line(app, line, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let file = {
        let mut first = make(vec![
            "Use ./deploy.sh.",
            "Talked about deploying.",
            r#"["deploy", "git", "release"]"#,
        ]);
        say(&mut first, "How do we deploy?");
        let report = first.close_session(&mut |_| {}).unwrap();
        report
            .record
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let mined = r#"{"memories": [{"type": "workflow", "kind": "pattern", "description": "Deploy with ./deploy.sh", "summary": "the deploy script", "action": "", "tags": ["deploy"]}, {"type": "tool_use", "kind": "pitfall", "description": "Never deploy on Fridays", "summary": "team rule", "action": "", "tags": ["deploy"]}]}"#;
    let mut second = make(vec![mined, "replayed answer"]);
    let answers = std::cell::RefCell::new(vec!["s".to_string(), "a".to_string()]);
    second.ask = Some(std::rc::Rc::new(move |_q: &str| answers.borrow_mut().pop()));
    let out = say(&mut second, "/memory mine");
    assert!(
        out.contains(&format!("[mining {file}: 1 exchanges")),
        "{out}"
    );
    let saved = second.memory.as_ref().unwrap().list(None, None).unwrap();
    assert_eq!(saved.len(), 1, "{out}");
    assert_eq!(saved[0].description, "Deploy with ./deploy.sh");
    let m = second.memory.as_ref().unwrap().get(&saved[0].id).unwrap();
    assert_eq!(m.source_session.as_deref(), Some(file.as_str()));
    assert!(say(&mut second, "/memory mine").contains("every recorded session has been mined"));
    assert!(say(&mut second, &format!("/memory mine {file}")).contains("--force"));
    // Replay sends the recorded user turns again, recorded in this session.
    let out = say(&mut second, &format!("/session replay {file}"));
    assert!(
        out.contains("you> How do we deploy?") && out.contains("replayed answer"),
        "{out}"
    );
    let record = parse(&std::fs::read_to_string(second.recorder.path().unwrap()).unwrap());
    assert_eq!(record.exchanges[0].user, "How do we deploy?");
}

#[test]
fn recent_sessions_are_injected_pruned_and_a_second_ctrl_c_skips_the_summary() {
    use harvey::engine::scripted::ScriptedEngine;
    let dir = tempfile::tempdir().unwrap();
    let make = |replies: Vec<&str>| {
        let mut config = Config::default();
        config.tools.enabled = false;
        App::with_engine(
            dir.path().to_path_buf(),
            config,
            Box::new(ScriptedEngine::new(4096, replies)),
        )
    };
    // A Ctrl-C while the summary is written: the record still closes validly.
    let mut first = make(vec![
        "Tides follow the moon.",
        "A long summary that never finishes",
    ]);
    first.turn("Why are there tides?", &mut |_| {}).unwrap();
    let abort = first.abort.clone();
    let report = first
        .close_session(&mut |line| {
            if line.starts_with("summarizing") {
                abort.raise();
            }
        })
        .unwrap();
    assert!(report.skipped);
    assert!(
        report
            .summary
            .starts_with("(no summary) Began with: Why are there tides?"),
        "{}",
        report.summary
    );
    let record = parse(&std::fs::read_to_string(&report.record).unwrap());
    assert!(record.ended);
    drop(first);
    // The next session's memory context lists it (date + one line).
    let mut second = make(vec!["ok"]);
    second.turn("hello", &mut |_| {}).unwrap();
    let context = second
        .conversation
        .context()
        .unwrap_or_default()
        .to_string();
    assert!(context.contains("[recent sessions]\n- 20"), "{context}");
    assert!(context.contains("Why are there tides?"), "{context}");
    drop(second);
    // A record deleted by hand leaves the index at the next start.
    std::fs::remove_file(&report.record).unwrap();
    let third = make(vec![]);
    let listed = third.sessions.as_ref().unwrap().recent(10).unwrap();
    assert!(
        listed.iter().all(|e| !report.record.ends_with(&e.file)),
        "{listed:?}"
    );
}

#[test]
fn session_summaries_are_screened_for_secrets_before_they_are_saved_or_injected() {
    use harvey::chat::rolling::TagSource;
    use harvey::engine::scripted::ScriptedEngine;
    let dir = tempfile::tempdir().unwrap();
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let make = |replies: Vec<String>| {
        let mut config = Config::default();
        config.tools.enabled = false;
        App::with_engine(
            dir.path().to_path_buf(),
            config,
            Box::new(ScriptedEngine::new(4096, replies)),
        )
    };
    let mut first = make(vec![
        "Pushed.".into(),
        format!("The user pushed the release with the token {token} and tagged it."),
        r#"["release", "git", "tags"]"#.into(),
    ]);
    first
        .turn(&format!("Push with {token}"), &mut |_| {})
        .unwrap();
    let report = first.close_session(&mut |_| {}).unwrap();
    assert!(!report.summary.contains(token), "{}", report.summary);
    assert!(
        report.summary.contains("[redacted: a GitHub token]"),
        "{}",
        report.summary
    );
    assert_eq!(report.tag_source, TagSource::Model);
    assert_eq!(report.tags, ["release", "git", "tags"]);
    let index = SessionIndex::open(&dir.path().join("agents")).unwrap();
    let saved = index.recent(1).unwrap();
    assert!(!saved[0].summary.contains(token), "{saved:?}");
    drop(first);
    let mut second = make(vec!["ok".into()]);
    second.turn("hello", &mut |_| {}).unwrap();
    let context = second
        .conversation
        .context()
        .unwrap_or_default()
        .to_string();
    assert!(context.contains("[recent sessions]"), "{context}");
    assert!(!context.contains(token), "{context}");
}
