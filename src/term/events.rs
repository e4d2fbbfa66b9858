//! A turn's events as terminal text: streamed text as is, thoughts dimmed, tool calls and
//! results on lines of their own, diffs coloured. Both faces draw them (the REPL on stdout,
//! `harvey run` on stderr), to any `Write`.

use std::io::{self, Write};

use crate::chat::agent::TurnEvent;
use crate::tools::call::clip;

/// Streamed text as is; a thought dimmed; each tool call and result on a line of its own.
pub fn turn_event(out: &mut impl Write, event: &TurnEvent) -> io::Result<()> {
    match event {
        TurnEvent::Text(t) => write!(out, "{t}"),
        TurnEvent::Thought(t) => write!(out, "\x1b[2m{t}\x1b[22m"),
        TurnEvent::Notice(n) => writeln!(out, "[{n}]"),
        TurnEvent::ToolCall(summary) => writeln!(out, "\n[tool call] {summary}"),
        TurnEvent::Diff(d) => diff(out, d),
        // Shown by `/status` and `harvey run --json`, not in the reply.
        TurnEvent::Step(_) => Ok(()),
        TurnEvent::ToolResult { is_error, text, .. } => {
            let first = text.lines().next().unwrap_or("");
            let lines = text.lines().count();
            let more = if lines > 1 {
                format!(" (+{} lines)", lines - 1)
            } else {
                String::new()
            };
            let label = if *is_error {
                "tool error"
            } else {
                "tool result"
            };
            writeln!(out, "[{label}] {}{more}", clip(first, 120))
        }
    }
}

/// A unified diff, additions green and removals red.
pub fn diff(out: &mut impl Write, text: &str) -> io::Result<()> {
    for line in text.lines() {
        let color = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => "\x1b[32m",
            Some(b'-') if !line.starts_with("---") => "\x1b[31m",
            Some(b'@') => "\x1b[36m",
            _ => "",
        };
        if color.is_empty() {
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "{color}{line}\x1b[0m")?;
        }
    }
    Ok(())
}
