//! `/read FILE [START-END]…` and `/attach FILE…`: workspace files attached to the next
//! message when they fit the context, with a line saying what was attached and what it
//! costs; a file that does not fit is refused with both numbers and a way out.

use std::io::{self, Write};

use crate::app::context::{AddError, Added};
use crate::app::App;
use crate::command::argv;
use crate::files::parse_request;

/// `/read FILE [START-END]…`.
pub fn read(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    if args.trim().is_empty() {
        return writeln!(
            out,
            "usage: /read FILE [START-END]… (lines of a text file, pages of a PDF; e.g. /read src/main.rs 1-40)"
        );
    }
    let (path, ranges) = match parse_request(args) {
        Ok(request) => request,
        Err(e) => return writeln!(out, "error: {e}"),
    };
    let result = app.read_file(&path, &ranges);
    attached(out, &path, result)
}

/// `/attach FILE…`: each file whole (quote a path with spaces).
pub fn attach(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let paths = match argv::split(args) {
        Ok(words) => words,
        Err(argv::ArgvError::Empty) => {
            return writeln!(out, "usage: /attach FILE… (whole text files or PDFs)")
        }
        Err(e) => return writeln!(out, "error: {e}"),
    };
    for path in paths {
        let result = app.read_file(&path, &[]);
        attached(out, &path, result)?;
    }
    Ok(())
}

fn attached(out: &mut impl Write, path: &str, result: Result<Added, AddError>) -> io::Result<()> {
    match result {
        Ok(a) => writeln!(
            out,
            "[attached {}: {} tokens, {} left free — it goes with your next message]",
            a.label, a.tokens, a.free
        ),
        Err(e) => refused(out, path, &e, "nothing was attached"),
    }
}

/// Why nothing was added; for a file too big, both numbers, where they come from and
/// what would fit (`/read` of the first lines, `/compact`).
pub fn refused(out: &mut impl Write, path: &str, e: &AddError, what: &str) -> io::Result<()> {
    let AddError::TooBig {
        label,
        tokens,
        room,
        fitting_lines,
    } = e
    else {
        return writeln!(out, "error: {e}");
    };
    writeln!(
        out,
        "{label} has {tokens} tokens but only {} are free (n_ctx {}: {} in use, {} attached, {} kept for the reply); {what}.",
        room.free, room.n_ctx, room.used, room.pending, room.reply_reserve
    )?;
    if let Some(n) = fitting_lines {
        writeln!(out, "  /read {path} 1-{n} fits; other line ranges work too")?;
    }
    match room.after_compact {
        Some(free) if free >= *tokens => writeln!(
            out,
            "  /compact folds the conversation into a summary: about {free} tokens free after it, enough for this"
        ),
        Some(free) => writeln!(
            out,
            "  /compact would leave about {free} tokens free: still not enough for the whole file"
        ),
        None => Ok(()),
    }
}
