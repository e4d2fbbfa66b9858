//! `!prog args…`, `/run`, `/git` and `/audit`: the whole output streams to the screen
//! as it comes; a status line then says how it ended and what was attached to the next
//! message (in tokens).

use std::io::{self, Write};

use crate::app::App;
use crate::command::{Decision, Report};

/// `!prog args…` and `/run prog args…`.
pub fn command(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    if args.trim().is_empty() {
        return writeln!(
            out,
            "usage: !PROGRAM ARGS… or /run PROGRAM ARGS… (no shell: | > ; $() and globs are plain arguments)"
        );
    }
    let asker = app.asker();
    let ask = move |question: &str| {
        asker
            .as_ref()
            .and_then(|ask| ask(question))
            .is_some_and(|reply| matches!(reply.trim().to_lowercase().as_str(), "y" | "yes"))
    };
    let can_ask = app.asker().is_some();
    let mut screen = Screen::new(out);
    let ran = app.run_user_command(
        args,
        can_ask.then_some(&ask as &dyn Fn(&str) -> bool),
        &mut |chunk| screen.write(chunk),
    );
    screen.finish(ran)
}

/// `/git SUBCOMMAND args…`.
pub fn git(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let mut screen = Screen::new(out);
    let ran = app.run_user_git(args, &mut |chunk| screen.write(chunk));
    screen.finish(ran)
}

/// `/audit [N]`: the last N lines of `agents/harvey-audit.jsonl` (default 10).
pub fn audit(app: &App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let n = match args.trim() {
        "" => 10,
        text => match text.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                return writeln!(
                    out,
                    "usage: /audit [N] (N: how many recent lines, default 10)"
                )
            }
        },
    };
    match app.audit().last(n) {
        Ok((entries, _)) if entries.is_empty() => {
            writeln!(
                out,
                "no commands recorded yet ({})",
                app.audit().path().display()
            )
        }
        Ok((entries, bad)) => {
            for e in &entries {
                writeln!(out, "{}", e.line())?;
            }
            if bad > 0 {
                writeln!(
                    out,
                    "[{bad} line(s) of {} do not parse]",
                    app.audit().path().display()
                )?;
            }
            Ok(())
        }
        Err(e) => writeln!(
            out,
            "error: cannot read {}: {e}",
            app.audit().path().display()
        ),
    }
}

/// The terminal side of a run: output as it comes, then one status line.
struct Screen<'a, W: Write> {
    out: &'a mut W,
    error: Option<io::Error>,
    ends_with_newline: bool,
}

impl<'a, W: Write> Screen<'a, W> {
    fn new(out: &'a mut W) -> Self {
        Self {
            out,
            error: None,
            ends_with_newline: true,
        }
    }

    fn write(&mut self, chunk: &[u8]) {
        if self.error.is_some() || chunk.is_empty() {
            return;
        }
        self.ends_with_newline = chunk.ends_with(b"\n");
        if let Err(e) = self.out.write_all(chunk).and_then(|()| self.out.flush()) {
            self.error = Some(e);
        }
    }

    fn finish(
        self,
        ran: Result<(Report, Option<usize>), crate::command::argv::ArgvError>,
    ) -> io::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let out = self.out;
        if !self.ends_with_newline {
            writeln!(out)?;
        }
        let (report, tokens) = match ran {
            Ok(r) => r,
            Err(e) => return writeln!(out, "error: {e}"),
        };
        writeln!(out, "[{}]", status_line(&report, tokens))?;
        if let Some(e) = &report.audit_error {
            writeln!(out, "warning: the audit log was not written: {e}")?;
        }
        Ok(())
    }
}

/// `exit 0 · 12 ms · 40 bytes · attached to your next message (9 tokens)`, or why not.
pub fn status_line(report: &Report, tokens: Option<usize>) -> String {
    let o = match &report.result {
        Ok(o) => o,
        Err(why) => {
            let what = if report.decision == Decision::Declined {
                "not run"
            } else {
                "refused"
            };
            return format!("{what}: {why}");
        }
    };
    let mut line = format!(
        "{} · {} ms · {} bytes",
        o.ending.describe(report.timeout),
        o.duration.as_millis(),
        o.bytes
    );
    if o.cut > 0 {
        line.push_str(&format!(
            " ({} bytes cut for the model: first and last {} KB kept)",
            o.cut,
            crate::command::exec::CONTEXT_CAP / 2048
        ));
    }
    if let Some(t) = tokens {
        line.push_str(&format!(" · attached to your next message ({t} tokens)"));
    }
    line
}
