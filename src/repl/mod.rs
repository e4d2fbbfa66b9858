//! The interactive loop: the only importer of `rustyline`, and (with `main.rs`) the only
//! place that writes to the terminal.
//!
//! Ctrl-C while a reply streams raises the app's abort flag (the engine stops within a
//! token); Ctrl-C at the prompt clears the line; Ctrl-D exits.

pub mod commands;
mod input;
mod memory;
pub mod render;

use std::io::{self, Write};
use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::Editor;

use crate::app::App;
use crate::chat::stop_note;
use commands::{join_multiline, parse, CommandKind, Input};
use input::InputHelper;

/// Whether the loop goes on after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Exit,
}

/// Runs the REPL until `/exit` or Ctrl-D.
pub fn run(app: &mut App) -> io::Result<()> {
    let history = app.agents_dir().join("history");
    let mut editor = editor()?;
    if crate::project::ensure_agents_gitignore(&app.agents_dir())? {
        app.notices.push(
            "wrote agents/.gitignore (sessions, cache, databases and history stay private)".into(),
        );
    }
    // A missing history file is normal on the first run.
    let _ = editor.load_history(&history);
    let mut out = io::stdout();
    banner(&mut out, app)?;
    loop {
        match editor.readline("you> ") {
            Ok(line) => {
                remember(&mut editor, &line, &history);
                if handle_line(app, &join_multiline(&line), &mut out)? == Flow::Exit {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(io::Error::other(e)),
        }
    }
    Ok(())
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
    let _ = editor.save_history(path);
}

fn banner(out: &mut impl Write, app: &App) -> io::Result<()> {
    let i = app.engine.info();
    writeln!(
        out,
        "harvey {} — {} ({} ctx, {} threads), workspace {}",
        env!("CARGO_PKG_VERSION"),
        i.name,
        i.n_ctx,
        i.threads,
        app.workspace.display()
    )?;
    for notice in &app.notices {
        writeln!(out, "note: {notice}")?;
    }
    writeln!(out, "Type /help for commands, Ctrl-D to exit.")
}

/// Handles one complete input; public so the loop's behaviour is testable without a TTY.
pub fn handle_line(app: &mut App, line: &str, out: &mut impl Write) -> io::Result<Flow> {
    match parse(line) {
        Input::Empty => Ok(Flow::Continue),
        Input::Text(text) => chat(app, &text, out).map(|()| Flow::Continue),
        Input::Unknown(word) => {
            writeln!(out, "unknown command /{word} — /help lists the commands")?;
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
            writeln!(out, "[conversation cleared]")?;
        }
        CommandKind::Tools => tools(app, args, out)?,
        CommandKind::Memory => memory::command(app, args, out)?,
        CommandKind::Context => memory::context(app, out)?,
        CommandKind::Exit => return Ok(Flow::Exit),
    }
    Ok(Flow::Continue)
}

fn status(app: &App, out: &mut impl Write) -> io::Result<()> {
    let view = render::StatusView {
        info: app.engine.info(),
        context_used: app.context_used().unwrap_or(0),
        cached_tokens: app.engine.cached_tokens(),
        last_turn: app.turns.last(),
        turns: app.turns.len(),
        prefix: app.prefix.describe(),
        compressions: app.compressions.len(),
    };
    render::status(out, &view)
}

fn tools(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    match args {
        "on" => app.tools_enabled = true,
        "off" => app.tools_enabled = false,
        "" => {}
        other => return writeln!(out, "usage: /tools [on|off] (not {other:?})"),
    }
    render::tools(out, &app.tools.list(), app.tools_enabled)
}

fn chat(app: &mut App, text: &str, out: &mut impl Write) -> io::Result<()> {
    let mut write_error = None;
    let result = app.agent_turn(text, &mut |event| {
        if write_error.is_none() {
            if let Err(e) = render::turn_event(out, &event).and_then(|()| out.flush()) {
                write_error = Some(e);
            }
        }
    });
    if let Some(e) = write_error {
        return Err(e);
    }
    match result {
        Ok(turn) => {
            writeln!(out)?;
            if let Some(note) = stop_note(turn.completion.stop) {
                writeln!(out, "{note}")?;
            }
            if let Some(c) = &turn.compression {
                writeln!(
                    out,
                    "[compressed {} older turns to make room: {} → {} tokens]",
                    c.folded_turns, c.tokens_before, c.tokens_after
                )?;
            }
            writeln!(out, "[{}]", render::turn_line(&turn.completion.stats))?;
            compress(app, out)
        }
        Err(e) => writeln!(out, "error: {e}"),
    }
}

fn compress(app: &mut App, out: &mut impl Write) -> io::Result<()> {
    let Some(used) = app.compression_due() else {
        return Ok(());
    };
    writeln!(
        out,
        "[context ~{:.0}% full — compressing older turns]",
        used * 100.0
    )?;
    out.flush()?;
    match app.compress() {
        Ok(Some(c)) => writeln!(
            out,
            "[compressed {} turns: {} → {} tokens]",
            c.folded_turns, c.tokens_before, c.tokens_after
        ),
        Ok(None) => Ok(()),
        Err(e) => writeln!(out, "error: could not compress: {e}"),
    }
}
