//! `harvey run`: one prompt, one reply, then the session closes and the process ends.
//!
//! With `memory.summary_at: later` (the default) the close only finishes the record, so
//! the process ends with its answer; the next interactive session writes the summary.
//! Ctrl-C, SIGTERM and SIGHUP stop the reply where it is: what was said is recorded
//! (marked as cut), the session closes, and the process exits 128 + the signal (130 for
//! Ctrl-C). A record or index that could not be written is an error (exit 1), never a
//! silent success.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use harvey::app::{App, AppOptions};
use harvey::chat::agent::TurnEvent;
use harvey::chat::stop_note;
use harvey::engine::AbortFlag;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt; read from stdin when omitted.
    prompt: Option<String>,
    /// Print {reply, prompt_tokens, evaluated_tokens, completion_tokens, prefill_tps,
    /// decode_tps, ttft_ms, draft_tokens, accepted_tokens, stop, prefix, memory, evidence,
    /// tool_calls, steps, timing} as JSON instead of the plain reply (draft/accepted:
    /// prompt-lookup decoding, engine.lookup; evidence: the sources of the [evidence] block
    /// sent with the question; steps: each step of the turn with its seconds — recall,
    /// evidence, router, each call's prefill and decode, each tool, the answer; timing: open_ms (config,
    /// stores, model load), prefix_ms, turn_ms, close_ms).
    #[arg(long)]
    json: bool,
    /// Longest reply in tokens (default: sampling.max_tokens from the config).
    #[arg(long, value_name = "N")]
    max_tokens: Option<u32>,
    /// Answer every line of FILE (`-`: stdin) as a question of its own, in one session:
    /// the model and the cached prompt prefix stay loaded, and each question starts a new
    /// conversation (as /clear does). Blank lines are skipped. With --json, one JSON
    /// object per line (JSON Lines), in the order of the questions.
    #[arg(long, value_name = "FILE", conflicts_with = "prompt")]
    each: Option<PathBuf>,
    /// With --each: the questions make one conversation, as typed into the REPL one after
    /// the other (each sees the earlier questions and answers; none starts a new one).
    #[arg(long)]
    conversation: bool,
}

/// Ctrl-C, SIGTERM or SIGHUP during `harvey run`: the first one stops the reply (or skips
/// the summary when the session is already closing); the session is then closed as usual.
/// Installed before the model loads, when there is no abort flag to raise yet.
#[derive(Default)]
struct Interrupt {
    /// The first signal that came (0: none).
    signal: AtomicI32,
    abort: OnceLock<AbortFlag>,
}

impl Interrupt {
    fn install() -> Result<Arc<Self>> {
        let interrupt = Arc::new(Self::default());
        let hook = Arc::clone(&interrupt);
        ctrlc::set_handler(move || hook.hit(signal_hook::consts::SIGINT))
            .context("cannot install the Ctrl-C handler")?;
        let mut signals = signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ])
        .context("cannot install the SIGTERM/SIGHUP handler")?;
        let hook = Arc::clone(&interrupt);
        std::thread::spawn(move || {
            for signal in signals.forever() {
                hook.hit(signal);
            }
        });
        Ok(interrupt)
    }

    fn hit(&self, signal: i32) {
        let _ = self
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        if let Some(abort) = self.abort.get() {
            abort.raise();
        }
    }

    /// The signal that came, if one did.
    fn signal(&self) -> Option<i32> {
        Some(self.signal.load(Ordering::SeqCst)).filter(|s| *s != 0)
    }

    /// Raises the abort flag again if a signal came: a turn and the close sequence clear
    /// the flag when they start, which must not swallow a signal that came before.
    fn reassert(&self) {
        if let (Some(_), Some(abort)) = (self.signal(), self.abort.get()) {
            abort.raise();
        }
    }

    /// The exit status a shell reports for a process ended by the signal.
    fn exit_code(signal: i32) -> ExitCode {
        ExitCode::from(u8::try_from(128 + signal).unwrap_or(1))
    }
}

/// The name of a signal `harvey run` handles, for its messages and the record.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        signal_hook::consts::SIGINT => "Ctrl-C",
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

pub fn run_once(options: &AppOptions, args: RunArgs) -> Result<ExitCode> {
    if args.conversation && args.each.is_none() {
        eprintln!(
            "error: --conversation makes one conversation of the questions of --each FILE; \
             without --each there is one question (harvey run --help)"
        );
        return Ok(ExitCode::from(2));
    }
    let numbered = match (&args.prompt, &args.each) {
        (_, Some(file)) => read_questions(file)?,
        (Some(p), None) => vec![(1, p.clone())],
        (None, None) => vec![(1, read_stdin_prompt()?)],
    };
    let (lines, prompts): (Vec<usize>, Vec<String>) = numbered.into_iter().unzip();
    if prompts.iter().all(|p| p.trim().is_empty()) {
        let what = match &args.each {
            Some(file) => format!("no question in {} (one per line)", file.display()),
            None => "empty prompt: pass PROMPT or pipe text on stdin".into(),
        };
        eprintln!("error: {what} (harvey run --help)");
        return Ok(ExitCode::from(2));
    }
    let interrupt = Interrupt::install()?;
    let started = Instant::now();
    let mut app = App::open(options)?;
    let opened = started.elapsed();
    for notice in &app.config().notices {
        eprintln!("warning: {notice}");
    }
    let _ = interrupt.abort.set(app.abort().clone());
    if let Some(n) = args.max_tokens {
        app.set_reply_max_tokens(n.max(1));
    }
    let stable = app.stable_memory_context();
    app.prepare_prefix(&stable);
    let prepared = started.elapsed();
    if let Some(note) = app.unsaved_prefix_note() {
        eprintln!("warning: {note}");
    }
    if let Some(signal) = interrupt.signal() {
        // Nothing was said yet: there is no session to close.
        return Ok(Interrupt::exit_code(signal));
    }
    let opening = Opening {
        started,
        opened,
        prepared,
    };
    let (last, failed) = answer_each(&mut app, &prompts, &args, &interrupt, &opening);
    if let Some(signal) = interrupt.signal() {
        app.note_at_close(format!("Ended by {}", signal_name(signal)));
    }
    // The same close sequence as the REPL's, quietly: scripts read stdout and stderr.
    // After a signal the summary is skipped: the first progress report comes after the
    // sequence clears the abort flag and before it summarizes.
    let before_close = started.elapsed();
    let closed = app.end_session(&mut |_| interrupt.reassert());
    if let Some(mut value) = last {
        value["timing"]["close_ms"] = ms(started.elapsed() - before_close).into();
        value["session"] = closed
            .as_ref()
            .map(|c| c.record.display().to_string())
            .into();
        value["summary_pending"] = closed.as_ref().is_some_and(|c| c.pending).into();
        println!("{value}");
    }
    // A turn that failed ends the list, after what was answered is printed and saved;
    // with --each the error names the question's line (`questions.txt:4: …`).
    if let Some((n, error)) = failed {
        let error = anyhow::Error::from(error);
        return Err(match &args.each {
            Some(file) => error.context(format!("{}:{}", file.display(), lines[n])),
            None => error,
        });
    }
    finish(closed.as_ref(), interrupt.signal())
}

/// When the run started, the model was opened and the prompt prefix was ready.
struct Opening {
    started: Instant,
    opened: Duration,
    prepared: Duration,
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round()
}

/// Answers the prompts in order, each in a new conversation after the first (or all in
/// one with --conversation); streams
/// each reply (or prints each JSON line but the last, returned so that the close can
/// complete it). A signal stops the reply under way and skips the rest; a turn that
/// fails stops the list and is returned beside the last line.
fn answer_each(
    app: &mut App,
    prompts: &[String],
    args: &RunArgs,
    interrupt: &Interrupt,
    at: &Opening,
) -> (
    Option<serde_json::Value>,
    Option<(usize, harvey::chat::TurnError)>,
) {
    let mut last: Option<serde_json::Value> = None;
    let mut turn_started = at.prepared;
    for (n, prompt) in prompts.iter().enumerate() {
        if n > 0 {
            if !args.conversation {
                app.clear();
            }
            if !args.json {
                println!();
            }
        }
        if args.each.is_some() {
            // Where a long list is: on stderr, so that stdout stays the replies.
            eprintln!("[question {} of {}]", n + 1, prompts.len());
            if !args.json {
                println!("> {prompt}");
            }
        }
        let turn = match stream_turn(app, prompt, interrupt, !args.json) {
            Ok(turn) => turn,
            Err(error) => return (last, Some((n, error))),
        };
        let answered = at.started.elapsed();
        if args.json {
            let mut value = run_json(app, &turn, None);
            // Only the first question waits for the model and the prefix.
            let (open, prefix) = if n == 0 {
                (ms(at.opened), ms(at.prepared - at.opened))
            } else {
                (0.0, 0.0)
            };
            value["timing"] = serde_json::json!({
                "open_ms": open,
                "prefix_ms": prefix,
                "turn_ms": ms(answered - turn_started),
                "close_ms": 0.0,
            });
            if let Some(done) = last.replace(value) {
                println!("{done}");
            }
        } else {
            println!();
            if let Some(note) = stop_note(turn.completion.stop) {
                eprintln!("{note}");
            }
        }
        turn_started = answered;
        if interrupt.signal().is_some() {
            break;
        }
    }
    (last, None)
}

/// The questions of `harvey run --each FILE`, one per non-blank line (`-`: stdin), each
/// with its line number.
fn read_questions(file: &Path) -> Result<Vec<(usize, String)>> {
    let text = if file == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the questions from stdin")?;
        text
    } else {
        std::fs::read_to_string(file).with_context(|| {
            format!(
                "cannot read the questions file {} (one question per line)",
                file.display()
            )
        })?
    };
    Ok(text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| (i, l.to_string()))
        .collect())
}

/// The reply, streamed to stdout (unless `--json`); tool events go to stderr.
fn stream_turn(
    app: &mut App,
    prompt: &str,
    interrupt: &Interrupt,
    stream: bool,
) -> Result<harvey::chat::agent::AgentTurn, harvey::chat::TurnError> {
    let mut stdout = std::io::stdout();
    // Keys typed on the terminal while the reply streams are not echoed into it.
    let quiet = harvey::term::echo::EchoOff::stdin();
    let turn = app.agent_turn(prompt, &mut |event| {
        interrupt.reassert();
        match event {
            // A closed pipe only loses output; the run itself still completes.
            TurnEvent::Text(piece) if stream => {
                let _ = stdout
                    .write_all(piece.as_bytes())
                    .and_then(|()| stdout.flush());
            }
            TurnEvent::Text(_) => {}
            other => {
                let _ = harvey::term::events::turn_event(&mut std::io::stderr(), &other);
            }
        }
    });
    drop(quiet);
    turn
}

/// The exit status once the session is closed: 1 when something was not saved (said on
/// stderr), 128 + N after signal N, else 0.
fn finish(closed: Option<&harvey::app::CloseReport>, signal: Option<i32>) -> Result<ExitCode> {
    if let Some(c) = closed.filter(|c| !c.problems.is_empty()) {
        for problem in &c.problems {
            eprintln!("error: {problem}");
        }
        eprintln!("error: this exchange is not saved (free some space and ask again)");
        return Ok(ExitCode::from(1));
    }
    match signal {
        Some(signal) => {
            if let Some(c) = closed {
                eprintln!("[session saved to {}]", c.record.display());
            }
            Ok(Interrupt::exit_code(signal))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `harvey run --json`: the reply, its counters, the memory block and the tool calls.
fn run_json(
    app: &App,
    turn: &harvey::chat::agent::AgentTurn,
    closed: Option<&harvey::app::CloseReport>,
) -> serde_json::Value {
    let completion = &turn.completion;
    let s = &completion.stats;
    serde_json::json!({
        "reply": completion.text,
        "prompt_tokens": s.prompt_tokens,
        "evaluated_tokens": s.evaluated_tokens,
        "completion_tokens": s.completion_tokens,
        "prefill_tps": s.prefill_tps,
        "decode_tps": s.decode_tps,
        "ttft_ms": s.ttft_ms,
        "draft_tokens": s.draft_tokens,
        "accepted_tokens": s.accepted_tokens,
        "stop": completion.stop,
        "prefix": app.prefix().describe(),
        "session": closed.map(|c| c.record.display().to_string()),
        "summary_pending": closed.is_some_and(|c| c.pending),
        "memory": app.injection().map(|i| serde_json::json!({
            "items": i.items.iter().map(|p| &p.candidate.id).collect::<Vec<_>>(),
            "tokens": i.tokens,
            "budget": i.budget,
            "text": i.text,
        })),
        "evidence": app.last_evidence().map(|b| serde_json::json!({
            "sources": b.snippets.iter().map(|s| &s.source).collect::<Vec<_>>(),
            "tokens": b.tokens,
            "budget": b.budget,
        })),
        "prefix_from_cache": matches!(app.prefix(), harvey::chat::prefix_cache::PrefixOutcome::Restored { .. }),
        "steps": &turn.steps,
        "prefix_restored_tokens": app.prefix().restored_tokens(),
        "prefix_prefilled_tokens": app.prefix().prefilled_tokens(),
        "tool_calls": turn.calls.iter().map(|c| serde_json::json!({
            "call": c.call.as_ref().map(|c| c.summary()),
            "ok": c.result.is_ok(),
            "reused": c.reused,
        })).collect::<Vec<_>>(),
    })
}

fn read_stdin_prompt() -> Result<String> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        bail!("no prompt: pass PROMPT, or pipe text on stdin (harvey run --help)");
    }
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .context("cannot read the prompt from stdin")?;
    Ok(text)
}
