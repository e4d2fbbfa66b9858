//! `/write PATH [--code]`: saves the last reply (or its first fenced code block) to a
//! workspace file, through the same sandbox and atomic write as the model's
//! `write_file`. A new file is written at once (the command is the user's yes); an
//! existing one is shown as a diff and replaced only after `[y/N]`.

use std::io::{self, Write};

use crate::app::App;
use crate::command::{argv, Decision, Who};
use crate::engine::Role;
use crate::sandbox::resolve_write;
use crate::tools::files::{commit, current_text, Change};
use crate::tools::ToolError;

use super::render;

const USAGE: &str = "usage: /write PATH [--code] (save the last reply, or with --code its first ``` code block, to PATH in the workspace)";

/// What `/write` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteArgs {
    pub path: String,
    pub code: bool,
}

/// `PATH [--code]` (the path may be quoted), or the usage line.
pub fn parse(args: &str) -> Result<WriteArgs, String> {
    let words = argv::split(args).map_err(|e| format!("{e}\n{USAGE}"))?;
    let code = words.iter().any(|w| w == "--code");
    let paths: Vec<&String> = words.iter().filter(|w| *w != "--code").collect();
    match paths.as_slice() {
        [path] if !path.starts_with("--") => Ok(WriteArgs {
            path: path.to_string(),
            code,
        }),
        _ => Err(USAGE.to_string()),
    }
}

/// The first fenced code block's body (an unterminated block runs to the end: a reply
/// cut off by the token limit still has its code).
pub fn first_code_block(text: &str) -> Option<String> {
    let mut lines = text.lines();
    lines.find(|l| l.trim_start().starts_with("```"))?;
    let body: Vec<&str> = lines
        .take_while(|l| !l.trim_start().starts_with("```"))
        .collect();
    Some(body.iter().map(|l| format!("{l}\n")).collect())
}

/// The last reply of this session (or of the conversation it continues).
fn last_reply(app: &App) -> Option<String> {
    if let Some((_, reply)) = app.transcript().last() {
        return Some(reply.clone());
    }
    app.conversation()
        .turns()
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| m.content.clone())
}

/// The text to save, or why there is none.
fn content(app: &App, code: bool) -> Result<String, &'static str> {
    let reply = last_reply(app).ok_or("there is no reply yet to save")?;
    let mut text = if code {
        first_code_block(&reply).ok_or(
            "the last reply has no fenced code block (```); /write PATH saves the whole reply",
        )?
    } else {
        reply
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

pub fn command(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let parsed = match parse(args) {
        Ok(p) => p,
        Err(usage) => return writeln!(out, "{usage}"),
    };
    let new = match content(app, parsed.code) {
        Ok(t) => t,
        Err(why) => return writeln!(out, "[not written: {why}]"),
    };
    let change = match resolve_write(app.workspace(), &parsed.path)
        .map_err(ToolError::from)
        .and_then(|target| Ok((current_text(&target)?, target)))
    {
        Ok((old, target)) => Change { target, old, new },
        Err(e) => return writeln!(out, "[not written: {e}]"),
    };
    let shown = change.target.shown.clone();
    if change.old.as_deref() == Some(change.new.as_str()) {
        return writeln!(
            out,
            "[{shown} already holds exactly this text; nothing written]"
        );
    }
    if change.old.is_some() && !confirm_overwrite(app, &change, out)? {
        return writeln!(out, "[not written: {shown} is unchanged]");
    }
    match commit(
        &change,
        app.audit(),
        Who::User,
        "/write",
        Decision::Confirmed,
    ) {
        Ok(line) => writeln!(out, "[{line}]"),
        Err(e) => writeln!(out, "[not written: {e}]"),
    }
}

/// Shows the diff and asks; nobody to ask (or no answer) is a no.
fn confirm_overwrite(app: &App, change: &Change, out: &mut impl Write) -> io::Result<bool> {
    render::diff(out, &change.diff())?;
    out.flush()?;
    let question = format!(
        "overwrite {} ({})? [y/N] ",
        change.target.shown,
        change.stat()
    );
    Ok(app
        .asker()
        .and_then(|ask| ask(&question))
        .is_some_and(|r| matches!(r.trim().to_lowercase().as_str(), "y" | "yes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let ok = |path: &str, code| {
            Ok(WriteArgs {
                path: path.into(),
                code,
            })
        };
        assert_eq!(parse("out.md"), ok("out.md", false));
        assert_eq!(parse("--code src/x.rs"), ok("src/x.rs", true));
        assert_eq!(parse("'my notes.md' --code"), ok("my notes.md", true));
        for bad in ["", "--code", "a b", "--force x", "'open"] {
            assert!(parse(bad).unwrap_err().contains("usage: /write"), "{bad}");
        }
    }

    #[test]
    fn code_blocks() {
        let reply = "Here:\n```rust\nfn main() {}\n  let x = 1;\n```\nand\n```\nsecond\n```\n";
        assert_eq!(
            first_code_block(reply).unwrap(),
            "fn main() {}\n  let x = 1;\n"
        );
        assert_eq!(
            first_code_block("x\n```py\nprint(1)").unwrap(),
            "print(1)\n"
        );
        assert_eq!(first_code_block("no code here"), None);
    }
}
