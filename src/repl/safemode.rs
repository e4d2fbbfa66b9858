//! `/safemode on|off|status|allow PROG|deny PROG|reset`: changes apply to this session
//! at once and are saved in `security:` of `agents/harvey.yaml` (only that section is
//! rewritten, so a file the Go tool wrote keeps all its other keys).

use std::io::{self, Write};

use crate::app::App;
use crate::command::policy::check_name;

pub const USAGE: &str = "/safemode [status] | on | off | allow PROGRAM | deny PROGRAM | reset";

pub fn command(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let (sub, rest) = args
        .trim()
        .split_once(char::is_whitespace)
        .unwrap_or((args.trim(), ""));
    let rest = rest.trim();
    let changed = match (sub, rest) {
        ("" | "status", "") => return status(app, out),
        ("on", "") => app.set_safe_mode(true),
        ("off", "") => app.set_safe_mode(false),
        ("allow", name) if !name.is_empty() => {
            if let Err(e) = check_name(name) {
                return writeln!(out, "error: {e}");
            }
            app.allow_program(name)
        }
        ("deny", name) if !name.is_empty() => app.deny_program(name),
        ("reset", "") => app.reset_security(),
        _ => return writeln!(out, "usage: {USAGE}"),
    };
    if !changed {
        writeln!(out, "[nothing to change]")?;
        return status(app, out);
    }
    match app.save_security() {
        Ok(path) => {
            let shown = path.strip_prefix(app.workspace()).unwrap_or(&path);
            writeln!(
                out,
                "[saved in {} under security: (safe_mode, allowed_commands, run_timeout)]",
                shown.display()
            )?;
        }
        Err(e) => writeln!(
            out,
            "error: the change holds for this session but was not saved: {e}"
        )?,
    }
    status(app, out)
}

fn status(app: &App, out: &mut impl Write) -> io::Result<()> {
    let s = app.security();
    let mode = if s.safe_mode {
        "on: programs off the allowlist ask [y/N] first"
    } else {
        "off: every program runs without asking (the model's run_command still asks)"
    };
    writeln!(out, "safe mode  {mode}")?;
    let list = if s.allowed.is_empty() {
        "(empty)".to_string()
    } else {
        s.allowed.join(" ")
    };
    writeln!(out, "allowlist  {list}")?;
    writeln!(
        out,
        "timeout    {} (security.run_timeout)",
        crate::config::format_duration(s.timeout)
    )
}
