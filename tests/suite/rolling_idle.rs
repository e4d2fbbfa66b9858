//! The rolling summary as idle work (scripted engine): no model call summarizes between
//! a question and its answer; the summary written while the prompt waits is stopped by
//! input without changing the conversation; a long conversation in a small context keeps
//! answering.

use std::sync::{Arc, Mutex};

use harvey::app::App;
use harvey::config::Config;
use harvey::engine::scripted::{Call, Interrupt, ScriptedEngine};
use harvey::engine::Role;
use harvey::repl::handle_line;

/// The summarizer's system message (`rolling::summary_prompt`).
const SUMMARIZER: &str = "You write brief, factual summaries of conversations.";

fn is_summary(call: &Call) -> bool {
    call.aside && call.messages[0].content == SUMMARIZER
}

/// An app on the scripted engine in a small context, tools off; every reply ~20 words.
struct Setup {
    _dir: tempfile::TempDir,
    app: App,
    log: Arc<Mutex<Vec<Call>>>,
    interrupt: Interrupt,
}

fn app(n_ctx: u32, replies: usize) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.tools.enabled = false;
    config.memory.rolling_summary.keep_turns = 2;
    config.sampling.max_tokens = 24;
    let reply = "a reply of about twenty words that fills the small context quickly so that older turns must go";
    let script: Vec<String> = (0..replies).map(|i| format!("{reply} {i}")).collect();
    let engine = ScriptedEngine::new(n_ctx, script);
    let log = engine.log();
    let interrupt = engine.interrupt_asides();
    let app = App::with_engine(dir.path().to_path_buf(), config, Box::new(engine));
    Setup {
        _dir: dir,
        app,
        log,
        interrupt,
    }
}

fn question(i: usize) -> String {
    format!(
        "question number {i} about the boat and its rigging and sails and ropes and the harbour"
    )
}

#[test]
fn no_summary_is_written_between_a_question_and_its_answer() {
    // Replies for the answers; summaries take theirs from the same script (any text).
    let Setup { mut app, log, .. } = app(600, 200);
    let mut out = Vec::new();
    let mut folds = 0;
    for i in 0..40 {
        let from = log.lock().unwrap().len();
        handle_line(&mut app, &question(i), &mut out).unwrap();
        let calls = log.lock().unwrap()[from..].to_vec();
        // The turn's calls: the answer only, never a summary before it.
        assert!(calls.iter().all(|c| !is_summary(c)), "turn {i}: {calls:#?}");
        let answer = calls.iter().rfind(|c| !c.aside).expect("an answer");
        let last = answer.messages.last().unwrap();
        assert_eq!(
            (last.role, last.content.as_str()),
            (Role::User, question(i).as_str())
        );
        folds += usize::from(!app.conversation().folded().is_empty());
        // Idle work now and then (the user is mostly quicker): turns fold in between.
        if i % 16 == 15 {
            let from = log.lock().unwrap().len();
            if app.compression_due().is_some() {
                app.compress().unwrap();
            }
            let idle = log.lock().unwrap()[from..].to_vec();
            assert!(idle.iter().all(|c| c.aside), "idle work never answers");
            assert!(app.conversation().folded().is_empty());
        }
    }
    let text = String::from_utf8_lossy(&out);
    assert!(folds > 0, "the small context made turns fold: {text}");
    assert!(
        text.contains("older turns folded out to make room"),
        "{text}"
    );
    assert!(
        log.lock().unwrap().iter().any(is_summary),
        "the summaries were written while idle"
    );
    // What stands for turns folded without the model lists their questions.
    let summary = app.conversation().summary().unwrap_or_default().to_string();
    assert!(!summary.is_empty());
    assert_eq!(app.turns().len(), 40, "every question was answered");
}

#[test]
fn input_during_the_idle_summary_stops_it_and_changes_nothing() {
    let Setup {
        mut app,
        log,
        interrupt,
        ..
    } = app(600, 200);
    let mut out = Vec::new();
    let mut i = 0;
    while app.conversation().folded().is_empty() {
        handle_line(&mut app, &question(i), &mut out).unwrap();
        i += 1;
        assert!(i < 30, "{}", String::from_utf8_lossy(&out));
    }
    let before = app.conversation().clone();
    let compressions = app.compressions().len();
    let cached = app.engine().cached_tokens();
    // Input arrives as the summary's third word is written.
    let abort = app.abort().clone();
    let from = log.lock().unwrap().len();
    *interrupt.lock().unwrap() = Some((3, abort.clone()));
    assert!(app.compression_due().is_some());
    assert_eq!(app.compress().unwrap(), None);
    assert!(
        log.lock().unwrap()[from..].iter().any(is_summary),
        "it had begun"
    );
    assert_eq!(*app.conversation(), before, "the conversation is as it was");
    assert_eq!(app.compressions().len(), compressions);
    assert_eq!(
        app.engine().cached_tokens(),
        cached,
        "the chat cache is untouched"
    );
    // The next prompt's idle work finishes it.
    abort.clear();
    *interrupt.lock().unwrap() = None;
    let done = app.compress().unwrap().expect("a summary");
    assert!(!done.pending && done.folded_turns >= 1, "{done:?}");
    assert!(app.conversation().folded().is_empty());
    assert_eq!(app.conversation().summary(), Some(done.summary.as_str()));
    // And the shortened prompt is in the chat cache: the next turn prefills its message.
    assert_eq!(
        app.engine().cached_tokens(),
        app.engine()
            .count_prompt(&app.conversation().messages())
            .unwrap()
    );
}

#[test]
fn a_long_conversation_in_a_small_context_keeps_answering() {
    let Setup {
        mut app, interrupt, ..
    } = app(500, 1000);
    let n_ctx = 500;
    let mut out = Vec::new();
    for i in 0..150 {
        handle_line(&mut app, &question(i), &mut out).unwrap();
        let last = app.turns().last().unwrap();
        assert_eq!(
            app.turns().len(),
            i + 1,
            "turn {i}: {}",
            String::from_utf8_lossy(&out)
        );
        assert!(
            last.prompt_tokens + last.completion_tokens <= n_ctx,
            "turn {i}"
        );
        // The user is quick two times out of three: idle work stopped early.
        let abort = app.abort().clone();
        if i % 3 != 0 {
            *interrupt.lock().unwrap() = Some((1 + i % 4, abort.clone()));
        }
        if app.compression_due().is_some() {
            app.compress().unwrap();
        }
        abort.clear();
        *interrupt.lock().unwrap() = None;
        assert!(app.context_used().unwrap() < n_ctx, "turn {i}");
    }
    let text = String::from_utf8_lossy(&out);
    assert!(!text.contains("error"), "{text}");
    assert_eq!(app.conversation().messages()[0].role, Role::System);
}

#[test]
fn idle_work_takes_out_the_old_questions_evidence_blocks_before_summarizing_any_turn() {
    use harvey::evidence::block::HEADER;
    let dir = tempfile::tempdir().unwrap();
    let notes =
        "The boat's rigging is checked before each sail. Ropes are kept in the harbour shed.\n";
    for name in ["README.md", "docs/rigging.md", "docs/harbour.md"] {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, notes.repeat(12)).unwrap();
    }
    let mut config = Config::default();
    config.sampling.max_tokens = 24;
    let replies: Vec<String> = (0..40)
        .map(|i| format!("The rigging is checked {i}."))
        .collect();
    let engine = ScriptedEngine::new(1600, replies);
    let log = engine.log();
    let mut app = App::with_engine(dir.path().to_path_buf(), config, Box::new(engine));
    let mut out = Vec::new();
    let mut i = 0;
    while app.compression_due().is_none() {
        handle_line(
            &mut app,
            &format!("How is the rigging of the boat checked, {i}?"),
            &mut out,
        )
        .unwrap();
        i += 1;
        assert!(i < 30, "{}", String::from_utf8_lossy(&out));
    }
    let with_block = |app: &App| {
        app.conversation()
            .turns()
            .iter()
            .filter(|m| m.role == Role::User && m.content.starts_with(HEADER))
            .count()
    };
    assert!(with_block(&app) >= 3, "{:#?}", app.conversation().turns());
    let turns = app.conversation().turn_count();
    let from = log.lock().unwrap().len();
    assert_eq!(app.compress().unwrap(), None, "no turn was summarized");
    assert!(!log.lock().unwrap()[from..].iter().any(is_summary));
    assert_eq!(app.conversation().turn_count(), turns, "every turn stays");
    assert_eq!(
        with_block(&app),
        1,
        "only the last question keeps its block"
    );
    assert!(app.compression_due().is_none(), "the room is made");
}
