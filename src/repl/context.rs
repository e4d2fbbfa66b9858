//! `/context [add TEXT | pin FILE | clear | memory]` and `/compact [FOCUS]`.
//!
//! `/context` alone lists every part of the prompt with its tokens (they add up to the
//! context in use), what waits for the next message, and what is free.

use std::io::{self, Write};

use crate::app::context::ContextParts;
use crate::app::App;

const USAGE: &str =
    "usage: /context [add TEXT | pin FILE | clear | memory] (alone: what the model sees, in tokens)";

/// `/context …`.
pub fn command(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let (sub, rest) = args
        .trim()
        .split_once(char::is_whitespace)
        .unwrap_or((args.trim(), ""));
    let rest = rest.trim();
    match (sub, rest.is_empty()) {
        ("", _) => show(app, out),
        ("add", false) => {
            let result = app.pin_text(rest);
            pinned(out, rest, result)
        }
        ("pin", false) => {
            let result = app.pin_file(rest);
            pinned(out, rest, result)
        }
        ("clear", true) => match app.unpin_all() {
            0 => writeln!(out, "[nothing was pinned]"),
            n => writeln!(out, "[pinned context cleared: {n} items]"),
        },
        ("memory", true) => super::memory::context(app, out),
        _ => writeln!(out, "{USAGE}"),
    }
}

fn pinned(
    out: &mut impl Write,
    what: &str,
    result: Result<crate::app::context::Added, crate::app::context::AddError>,
) -> io::Result<()> {
    match result {
        Ok(a) => writeln!(
            out,
            "[pinned {}: {} tokens, {} left free — kept for the whole session, /context clear drops it]",
            a.label, a.tokens, a.free
        ),
        Err(e) => super::files::refused(out, what, &e, "nothing was pinned"),
    }
}

fn show(app: &App, out: &mut impl Write) -> io::Result<()> {
    let parts = match app.context_parts() {
        Ok(p) => p,
        Err(e) => return writeln!(out, "error: cannot count the context: {e}"),
    };
    render(out, &parts)?;
    if let Some(map) = app.workspace_map() {
        writeln!(
            out,
            "  workspace files: {} of {} files named in {} tokens (tools.workspace_map_pct)",
            map.named, map.files, map.tokens
        )?;
    }
    for pin in app.conversation().pins() {
        writeln!(out, "  pinned: {}", pin.label)?;
    }
    for a in app.attachments().list() {
        writeln!(out, "  next message: {} ({} tokens)", a.label, a.tokens)?;
    }
    if let Some(i) = app.injection().filter(|i| !i.text.is_empty()) {
        writeln!(
            out,
            "  memory: {} items (/context memory shows them)",
            i.items.len()
        )?;
    }
    Ok(())
}

/// The table: each part, the total in use, attachments waiting, free.
pub fn render(out: &mut impl Write, p: &ContextParts) -> io::Result<()> {
    writeln!(out, "context of {} tokens:", p.n_ctx)?;
    for part in &p.parts {
        writeln!(out, "  {:<16} {:>7}", part.name, part.tokens)?;
    }
    writeln!(out, "  {:<16} {:>7}", "= in use", p.used)?;
    writeln!(
        out,
        "  {:<16} {:>7}  ({:.0}% of n_ctx; engine.fixed_prompt_pct allows {})",
        "before 1st msg",
        p.fixed,
        100.0 * p.fixed as f64 / p.n_ctx.max(1) as f64,
        p.fixed_cap
    )?;
    writeln!(out, "  {:<16} {:>7}", "attachments", p.pending)?;
    writeln!(
        out,
        "  {:<16} {:>7}  ({} of it kept for the reply)",
        "free",
        p.free,
        p.reply_reserve.min(p.free)
    )
}

/// `/compact [FOCUS]`.
pub fn compact(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let focus = Some(args.trim()).filter(|f| !f.is_empty());
    writeln!(out, "[compacting the conversation…]")?;
    out.flush()?;
    match app.compact(focus) {
        Ok(Some(c)) => {
            writeln!(
                out,
                "[compacted {} turns into a summary: {} → {} tokens]",
                c.folded_turns, c.tokens_before, c.tokens_after
            )?;
            if c.tokens_after >= c.tokens_before {
                writeln!(
                    out,
                    "[the summary is no shorter than the turns it replaced: compacting pays off on longer conversations]"
                )?;
            }
            Ok(())
        }
        Ok(None) if app.abort().is_raised() => {
            writeln!(out, "[compacting stopped; the conversation is unchanged]")
        }
        Ok(None) => writeln!(out, "[nothing to compact: no turns yet]"),
        Err(e) => writeln!(out, "error: could not compact: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::context::ContextPart;

    #[test]
    fn table_snapshot() {
        let part = |name, tokens| ContextPart { name, tokens };
        let parts = ContextParts {
            parts: vec![
                part("instructions", 60),
                part("tools", 60),
                part("guidance", 30),
                part("workspace files", 96),
                part("memory context", 0),
                part("pinned", 12),
                part("conversation", 40),
            ],
            fixed: 246,
            fixed_cap: 1843,
            used: 298,
            pending: 9,
            free: 3789,
            n_ctx: 4096,
            reply_reserve: 512,
        };
        let mut out = Vec::new();
        render(&mut out, &parts).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }
}
