//! `/session [list | show [FILE] | continue FILE | replay FILE]`: the sessions recorded
//! under `agents/sessions/`.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::app::App;

pub fn command(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let (sub, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    match sub {
        "" | "list" => {
            let Some(index) = app.sessions() else {
                return writeln!(out, "the sessions index is unavailable");
            };
            match index.recent(20) {
                Ok(list) if list.is_empty() => writeln!(out, "no finished sessions yet"),
                Ok(list) => {
                    for e in list {
                        let name = e.name.map(|n| format!(" \"{n}\"")).unwrap_or_default();
                        writeln!(
                            out,
                            "{}{name}  {}  {} turns  [{}]\n    {}",
                            e.file,
                            e.started,
                            e.turns,
                            e.tags.join(", "),
                            crate::tools::call::clip(&e.summary, 160)
                        )?;
                    }
                    Ok(())
                }
                Err(e) => writeln!(out, "error: {e}"),
            }
        }
        "show" => {
            let path = if rest.trim().is_empty() {
                app.recorder().path().map(PathBuf::from).ok_or_else(|| {
                    "this session has no exchanges yet; /session show FILE shows another"
                        .to_string()
                })
            } else {
                app.find_session(Some(rest))
            };
            match path.and_then(|p| {
                std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
            }) {
                Ok(text) => write!(out, "{text}"),
                Err(e) => writeln!(out, "error: {e}"),
            }
        }
        "replay" => replay(app, rest, out),
        "continue" => match app
            .find_session(Some(rest))
            .and_then(|p| app.continue_session(&p))
        {
            Ok(n) => writeln!(
                out,
                "[continued: {n} exchanges restored into the conversation]"
            ),
            Err(e) => writeln!(out, "error: {e}"),
        },
        other => writeln!(
            out,
            "unknown /session subcommand {other:?}: list | show [FILE] | continue FILE | replay FILE"
        ),
    }
}

/// `/session replay FILE`: sends each user turn of a recorded session to the current
/// model, in a fresh conversation recorded as this session (Ctrl-C stops the replay).
fn replay(app: &mut App, name: &str, out: &mut impl Write) -> io::Result<()> {
    if name.trim().is_empty() {
        return writeln!(
            out,
            "usage: /session replay FILE (/session list shows them)"
        );
    }
    let record = match app.find_session(Some(name)).and_then(|p| {
        std::fs::read_to_string(&p)
            .map(|t| crate::session::fountain::parse(&t))
            .map_err(|e| format!("{}: {e}", p.display()))
    }) {
        Ok(r) => r,
        Err(e) => return writeln!(out, "error: {e}"),
    };
    app.clear();
    writeln!(
        out,
        "[replaying {} user turns with {}]",
        record.exchanges.len(),
        app.engine().info().name
    )?;
    for ex in &record.exchanges {
        writeln!(out, "you> {}", ex.user)?;
        super::chat(app, &ex.user, out)?;
        if app.abort().is_raised() {
            writeln!(out, "[replay stopped]")?;
            break;
        }
    }
    Ok(())
}
