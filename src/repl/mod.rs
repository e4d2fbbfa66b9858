//! The interactive loop: the only importer of `rustyline`, and (with `main.rs`) the only
//! place that writes to the terminal.
//!
//! Ctrl-C while a reply streams raises the app's abort flag (the engine stops within a
//! token); Ctrl-C at the prompt clears the line; Ctrl-D exits. Keys typed while a reply
//! streams are neither echoed into it nor kept for the next prompt ([`echo`]).

pub mod commands;
mod context;
mod files;
mod idle;
mod input;
mod memory;
mod model;
pub mod render;
mod run;
mod safemode;
mod session;
mod skill;
mod write;

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc;

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::Editor;

use crate::app::App;
use crate::chat::stop_note;
use crate::ops::{knowledge, rag};
use crate::term::echo;
use commands::{join_multiline, parse, CommandKind, Input};
use input::InputHelper;

/// Whether the loop goes on after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Exit,
}

/// What the loop asks of the input thread.
enum Control {
    /// Show the prompt for the next line.
    Next,
    /// Ask a question (a confirmation) and send the answer back.
    Ask(String),
}

/// What the input side reports to the loop.
enum Event {
    Line(String),
    Eof,
    Failed(io::Error),
    /// SIGTERM / SIGHUP (the number).
    Signal(i32),
}

/// Runs the REPL until `/exit`, Ctrl-D or a termination signal, then the end-of-session
/// sequence. The line editor runs on its own thread and hands over one line at a time, so
/// a signal reaches the loop even while the prompt waits for input.
pub fn run(app: &mut App, signals: Option<signal_hook::iterator::Signals>) -> io::Result<Ended> {
    let history = app.agents_dir().join("history");
    let mut editor = editor()?;
    let mut out = io::stdout();
    if let Some(n) = input::import_go_history(&mut editor, &app.agents_dir(), &history) {
        app.add_notice(format!(
            "line history: {n} entries from the Go harvey's agents/harvey_history"
        ));
    }
    match crate::project::ensure_agents_gitignore(&app.agents_dir()) {
        Ok(true) => app.add_notice(
            "wrote agents/.gitignore (sessions, cache, databases and history stay private)".into(),
        ),
        Ok(false) => {}
        // Not a reason to refuse the session (a full disk): said, and tried next time.
        Err(e) => app.add_notice(format!("error: cannot write agents/.gitignore: {e}")),
    }
    banner(&mut out, app)?;
    // A missing history file is normal on the first run.
    let _ = editor.load_history(&history);
    if io::IsTerminal::is_terminal(&io::stdin()) {
        onboard(app, &mut editor, &mut out)?;
    }
    let (events, inbox) = mpsc::channel::<Event>();
    let (control, requests) = mpsc::sync_channel::<Control>(0);
    let (answer, answers) = mpsc::channel::<String>();
    let idle = idle::Idle::new(app.abort().clone());
    // Before the first prompt: a line typed at once stops the idle work below.
    idle.begin();
    spawn_reader(
        editor,
        history,
        events.clone(),
        requests,
        answer,
        idle.clone(),
    );
    wire_questions(app, control.clone(), answers);
    if let Some(mut signals) = signals {
        let abort = app.abort().clone();
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Stop a reply in progress so the loop gets to the signal.
                abort.raise();
                let _ = events.send(Event::Signal(signal));
            }
        });
    }
    // While the first prompt waits: the session's prefix and the router's instructions
    // (a line typed meanwhile waits for them: its turn needs them), then the summaries
    // earlier sessions left for later.
    idle::start(app, &mut out);
    idle::work(app, &idle, &mut out);
    let mut ended_by = None;
    let result = loop {
        match inbox.recv() {
            Ok(Event::Line(line)) => match handle_quietly(app, &join_multiline(&line), &mut out) {
                Ok(Flow::Exit) => break Ok(()),
                Ok(Flow::Continue) => {
                    // The prompt comes back at once; older turns are summarized while
                    // the user reads or types.
                    idle.begin();
                    let _ = control.send(Control::Next);
                    idle::work(app, &idle, &mut out);
                }
                Err(e) => break Err(e),
            },
            Ok(Event::Eof) | Err(_) => break Ok(()),
            Ok(Event::Failed(e)) => break Err(e),
            Ok(Event::Signal(signal)) => {
                ended_by = Some(signal);
                break Ok(());
            }
        }
    };
    let saved = close(app, &mut out);
    result.map(|()| Ended {
        signal: ended_by,
        saved,
    })
}

/// How the REPL ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// The termination signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Whether the session's record and index entry were written in full.
    pub saved: bool,
}

/// The line editor's thread: sends each line (or the end) to the loop, then waits until
/// the loop asks for the next prompt, answering its questions meanwhile.
fn spawn_reader(
    mut editor: Editor<InputHelper, FileHistory>,
    history: std::path::PathBuf,
    lines: mpsc::Sender<Event>,
    requests: mpsc::Receiver<Control>,
    answer: mpsc::Sender<String>,
    idle: idle::Idle,
) {
    std::thread::spawn(move || loop {
        let event = match editor.readline("you> ") {
            Ok(line) => {
                remember(&mut editor, &line, &history);
                Event::Line(line)
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => Event::Eof,
            Err(e) => Event::Failed(io::Error::other(e)),
        };
        let last = !matches!(event, Event::Line(_));
        // The model may be summarizing an earlier session: the user comes first.
        idle.interrupt();
        if lines.send(event).is_err() || last {
            break;
        }
        // While the loop handles the line it may ask a question; then the next prompt.
        loop {
            match requests.recv() {
                Ok(Control::Next) => break,
                Ok(Control::Ask(question)) => {
                    let reply = editor.readline(&question).unwrap_or_default();
                    if answer.send(reply).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            }
        }
    });
}

/// Questions the app asks (memory writes to confirm, file writes, reviews) go through the
/// reader thread's prompt.
fn wire_questions(
    app: &mut App,
    ask_line: mpsc::SyncSender<Control>,
    answers: mpsc::Receiver<String>,
) {
    let answers = std::sync::Mutex::new(answers);
    let ask: std::rc::Rc<crate::app::Ask> = std::rc::Rc::new(move |question: &str| {
        // Keys typed while a reply streamed must not answer a question asked now.
        echo::discard_typed();
        ask_line.send(Control::Ask(question.to_string())).ok()?;
        answers.lock().ok()?.recv().ok()
    });
    if app.config().tools.confirm_memory_writes {
        let confirm = std::rc::Rc::clone(&ask);
        app.install_write_confirmation(Box::new(move |what: &str| {
            let reply = confirm(&format!("allow {what}? [y/N] ")).unwrap_or_default();
            matches!(reply.trim().to_lowercase().as_str(), "y" | "yes")
        }));
    }
    app.install_asker(ask);
    // File writes are confirmed only by someone who can see the diff.
    app.set_ask_file_writes(io::IsTerminal::is_terminal(&io::stdin()));
}

/// First interactive session without a workspace profile: a few questions (Enter skips,
/// Ctrl-D stops) saved as one profile memory.
fn onboard(
    app: &mut App,
    editor: &mut Editor<InputHelper, FileHistory>,
    out: &mut impl Write,
) -> io::Result<()> {
    let Some(store) = app.memory_mut() else {
        return Ok(());
    };
    if !crate::onboarding::needs_profile(store) {
        return Ok(());
    }
    writeln!(
        out,
        "First time here: a few questions so I remember who you are (Enter skips)."
    )?;
    let draft = crate::onboarding::ask_profile(&mut |q| editor.readline(&format!("{q} ")).ok());
    match draft.map(|d| store.write(&d)) {
        Some(Ok(outcome)) => writeln!(
            out,
            "[profile {}; /memory profile edit changes it]",
            outcome.describe()
        ),
        Some(Err(e)) => writeln!(out, "error: the profile was not saved: {e}"),
        None => writeln!(
            out,
            "[no profile saved; /memory profile edit adds one later]"
        ),
    }
}

/// The end-of-session sequence with its progress on `out` (errors writing are ignored:
/// the terminal may be gone). Returns whether everything was saved.
pub fn close(app: &mut App, out: &mut impl Write) -> bool {
    let report = app.end_session(&mut |line| {
        let _ = writeln!(out, "[{line}]");
        let _ = out.flush();
    });
    let Some(r) = report else {
        return true;
    };
    if !r.problems.is_empty() {
        // Each problem was said as it happened; the session is not called saved.
        let _ = writeln!(
            out,
            "[error: the session was not saved in full; free some space: {}]",
            r.record.display()
        );
        return false;
    }
    let how = match (r.skipped, r.pending) {
        (true, _) => " (summary skipped)",
        (false, true) => "; the next session summarizes it",
        (false, false) => "",
    };
    let _ = writeln!(out, "[session saved to {}{how}]", r.record.display());
    true
}

fn editor() -> io::Result<Editor<InputHelper, FileHistory>> {
    let config = rustyline::Config::builder()
        .max_history_size(2000)
        .map_err(io::Error::other)?
        .auto_add_history(false)
        .build();
    let mut editor = Editor::with_config(config).map_err(io::Error::other)?;
    editor.set_helper(Some(InputHelper));
    Ok(editor)
}

fn remember(editor: &mut Editor<InputHelper, FileHistory>, line: &str, path: &PathBuf) {
    if line.trim().is_empty() {
        return;
    }
    // History is a convenience: failing to save it must not stop the session.
    let _ = editor.add_history_entry(line);
    // Saved beside and renamed over: a full disk keeps the old history, never an empty one.
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    let saved = editor
        .save_history(&temp)
        .map_err(io::Error::other)
        .and_then(|()| std::fs::rename(&temp, path));
    if saved.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
}

fn banner(out: &mut impl Write, app: &App) -> io::Result<()> {
    let i = app.engine().info();
    writeln!(
        out,
        "harvey {} — {} ({} ctx, {} threads), workspace {}",
        env!("CARGO_PKG_VERSION"),
        i.name,
        i.n_ctx,
        i.threads,
        app.workspace().display()
    )?;
    for notice in app.notices() {
        writeln!(out, "note: {notice}")?;
    }
    writeln!(out, "Type /help for commands, Ctrl-D to exit.")
}

/// [`handle_line`] with the terminal's echo off while a reply streams (chat text and
/// `/session replay`), so keys typed meanwhile do not land in the reply ([`echo`]).
/// Other commands keep the terminal as it is: `/memory edit` hands it to an editor.
fn handle_quietly(app: &mut App, line: &str, out: &mut impl Write) -> io::Result<Flow> {
    let streams = match parse(line) {
        Input::Text(_) => true,
        Input::Command { kind, args } => {
            kind == CommandKind::Session && args.trim_start().starts_with("replay")
        }
        Input::Empty | Input::Unknown(_) => false,
    };
    let _quiet = if streams {
        echo::EchoOff::stdin()
    } else {
        None
    };
    handle_line(app, line, out)
}

/// Handles one complete input; public so the loop's behaviour is testable without a TTY.
pub fn handle_line(app: &mut App, line: &str, out: &mut impl Write) -> io::Result<Flow> {
    match parse(line) {
        Input::Empty => Ok(Flow::Continue),
        Input::Text(text) => chat(app, &text, out).map(|()| Flow::Continue),
        Input::Unknown(word) => {
            if !skill::invoke_by_name(app, &word, line, out)? {
                writeln!(out, "unknown command /{word} — /help lists the commands")?;
            }
            Ok(Flow::Continue)
        }
        Input::Command { kind, args } => dispatch(app, kind, &args, out),
    }
}

fn dispatch(
    app: &mut App,
    kind: CommandKind,
    args: &str,
    out: &mut impl Write,
) -> io::Result<Flow> {
    match kind {
        CommandKind::Help => render::help(out)?,
        CommandKind::Status => status(app, out)?,
        CommandKind::Clear => {
            app.clear();
            let pins = app.conversation().pins().len();
            match pins {
                0 => writeln!(out, "[conversation cleared]")?,
                n => writeln!(out, "[conversation cleared; {n} pinned items kept]")?,
            }
        }
        CommandKind::Tools => tools(app, args, out)?,
        CommandKind::Memory => memory::command(app, args, out)?,
        CommandKind::Rag => rag(app, args, out)?,
        CommandKind::Kb => kb(app, args, out)?,
        CommandKind::Context => context::command(app, args, out)?,
        CommandKind::Read => files::read(app, args, out)?,
        CommandKind::Attach => files::attach(app, args, out)?,
        CommandKind::Compact => context::compact(app, args, out)?,
        CommandKind::Session => session::command(app, args, out)?,
        CommandKind::Rename => {
            if args.is_empty() {
                writeln!(out, "usage: /rename NAME")?;
            } else {
                app.rename_session(args);
                writeln!(out, "[this session is now called {args:?}]")?;
            }
        }
        CommandKind::Think => think(app, args, out)?,
        CommandKind::Model => model::command(app, args, out)?,
        CommandKind::Run => run::command(app, args, out)?,
        CommandKind::Git => run::git(app, args, out)?,
        CommandKind::Safemode => safemode::command(app, args, out)?,
        CommandKind::Audit => run::audit(app, args, out)?,
        CommandKind::Write => write::command(app, args, out)?,
        CommandKind::Skill => skill::command(app, args, out)?,
        CommandKind::Exit => return Ok(Flow::Exit),
    }
    Ok(Flow::Continue)
}

fn think(app: &App, args: &str, out: &mut impl Write) -> io::Result<()> {
    if !matches!(args, "" | "show") {
        return writeln!(out, "usage: /think [show]");
    }
    match app.last_thought() {
        Some(t) => writeln!(out, "{}", render::thought(t)),
        None => writeln!(out, "[no reply of this session had a <think> block]"),
    }
}

fn rag(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let op = match rag::parse_rag(args) {
        Ok(op) => op,
        Err(e) => return writeln!(out, "{e}"),
    };
    let place = rag::Place {
        workspace: app.workspace(),
        config: app.config(),
        embedder: app.embedder().cloned(),
    };
    app.abort().clear();
    let abort = app.abort().clone();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut drew = false;
    let mut progress = |p: crate::rag::ingest::Progress| {
        if tty {
            let mut err = std::io::stderr();
            let _ = write!(err, "\r{}\x1b[K", rag::progress_line(&p));
            let _ = err.flush();
            drew = true;
        }
    };
    let result = rag::run_rag(&place, op, false, out, &mut progress, &|| abort.is_raised())?;
    if drew {
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
    match result {
        Ok(outcome) => {
            if outcome.settings_changed {
                for note in app.reload_rag() {
                    writeln!(out, "{note}")?;
                }
            }
            Ok(())
        }
        Err(e) => writeln!(out, "{e}"),
    }
}

fn kb(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let op = match knowledge::parse_kb(args) {
        Ok(op) => op,
        Err(e) => return writeln!(out, "{e}"),
    };
    if op == knowledge::KbOp::Import {
        return kb_import(app, out);
    }
    let Some(kb) = app.kb() else {
        return writeln!(out, "the knowledge base is unavailable (memory is off or it failed to open; see the startup notices)");
    };
    match knowledge::run_kb(kb, op, false, out)? {
        Ok(Some(block)) => {
            app.attach("knowledge-base observations", block);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => writeln!(out, "{e}"),
    }
}

/// `/kb import`: the open (Go, in-memory) knowledge base is replaced by the imported one.
fn kb_import(app: &mut App, out: &mut impl Write) -> io::Result<()> {
    let agents = app.workspace().join("agents");
    let project = crate::kb::default_project(
        app.config().memory.knowledge_base.project.as_deref(),
        app.workspace(),
    );
    let done = match crate::kb::import::import(&agents, &project, app.embedder().cloned()) {
        Ok(done) => done,
        Err(e) => return writeln!(out, "{e}"),
    };
    knowledge::import_summary(out, &done, false)?;
    match crate::kb::KnowledgeBase::open(&agents, &project, app.embedder().cloned()) {
        Ok(kb) => app.replace_knowledge_base(kb),
        Err(e) => writeln!(out, "the imported knowledge base does not open: {e}")?,
    }
    Ok(())
}

fn status(app: &App, out: &mut impl Write) -> io::Result<()> {
    let view = render::StatusView {
        info: app.engine().info(),
        context_used: app.context_used().unwrap_or(0),
        cached_tokens: app.engine().cached_tokens(),
        last_turn: app.turns().last(),
        steps: app.last_steps(),
        turns: app.turns().len(),
        prefix: app.prefix().describe(),
        compressions: app.compressions().len(),
        soc: crate::platform::soc_line(std::path::Path::new("/")),
    };
    render::status(out, &view)
}

fn tools(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    match args {
        "on" => app.set_tools_enabled(true),
        "off" => app.set_tools_enabled(false),
        "" => {}
        other => return writeln!(out, "usage: /tools [on|off] (not {other:?})"),
    }
    render::tools(out, &app.tools().list(), app.tools_enabled())
}

fn chat(app: &mut App, text: &str, out: &mut impl Write) -> io::Result<()> {
    if skill::triggered(app, text, out)? {
        return Ok(());
    }
    chat_with(app, out, |app, on_event| app.agent_turn(text, on_event))
}

/// A turn `run` starts, its events rendered as a chat turn's.
fn chat_with(
    app: &mut App,
    out: &mut impl Write,
    run: impl FnOnce(
        &mut App,
        &mut dyn FnMut(crate::chat::agent::TurnEvent),
    ) -> Result<crate::chat::agent::AgentTurn, crate::chat::TurnError>,
) -> io::Result<()> {
    let mut write_error = None;
    let mut view = render::TurnView::default();
    let result = run(app, &mut |event| {
        if write_error.is_none() {
            if let Err(e) = view.event(out, &event).and_then(|()| out.flush()) {
                write_error = Some(e);
            }
        }
    });
    if let Some(e) = write_error {
        return Err(e);
    }
    view.close(out)?;
    match result {
        Ok(turn) => {
            writeln!(out)?;
            if let Some(note) = stop_note(turn.completion.stop) {
                writeln!(out, "{note}")?;
            }
            if let Some(c) = &turn.compression {
                writeln!(
                    out,
                    "[{} older turns folded out to make room: {} → {} tokens; summarized while you type]",
                    c.folded_turns, c.tokens_before, c.tokens_after
                )?;
            }
            writeln!(out, "[{}]", render::turn_line(&turn.completion.stats))?;
            if app.recorder().has_unsaved() {
                let problem = app
                    .record_problem()
                    .unwrap_or("the session record is behind");
                writeln!(
                    out,
                    "[error: {problem}; the exchange is kept in memory and written once there is room]"
                )?;
            }
            Ok(())
        }
        Err(e) => {
            writeln!(out, "error: {e}")?;
            if !app.attachments().is_empty() {
                writeln!(
                    out,
                    "[{} tokens of attachments wait for your next message; /clear drops them]",
                    app.attachments().tokens()
                )?;
            }
            Ok(())
        }
    }
}
