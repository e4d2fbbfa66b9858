//! `/skill list | show NAME | run NAME ARGS…` and `/NAME ARGS…` for a skill of the
//! workspace: a prompt skill's body goes to the model as this turn's message (its
//! tools only), a skill with the Go tool's script runs it as `!` would.

use std::io::{self, Write};

use crate::app::App;
use crate::skills::{show, vars, Skill};

/// `/skill …`.
pub fn command(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let (sub, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    let rest = rest.trim();
    match sub {
        "" | "list" => write!(out, "{}", show::list(&app.skills())),
        "show" | "info" if !rest.is_empty() => {
            let catalog = app.skills();
            match (catalog.get(rest), catalog.problem(rest)) {
                (Some(skill), _) => write!(out, "{}", show::details(skill, app.workspace())),
                (None, Some(e)) => writeln!(out, "error: {e}"),
                (None, None) => not_found(out, rest),
            }
        }
        "run" if !rest.is_empty() => {
            let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if !invoke_named(app, name, args.trim(), out)? {
                not_found(out, name)?;
            }
            Ok(())
        }
        "new" => new(app, out),
        "suggest" => suggest(app, rest, out),
        _ => writeln!(
            out,
            "usage: /skill list | show NAME | run NAME ARGS… | new | suggest [SESSION]"
        ),
    }
}

fn not_found(out: &mut impl Write, name: &str) -> io::Result<()> {
    writeln!(
        out,
        "no skill {name:?} in agents/skills/ (/skill list shows them)"
    )
}

/// `/NAME ARGS…` typed as a command the table does not know: runs the skill of that
/// name, if there is one; `false` when there is none.
pub fn invoke_by_name(
    app: &mut App,
    word: &str,
    line: &str,
    out: &mut impl Write,
) -> io::Result<bool> {
    let args = line
        .trim()
        .strip_prefix('/')
        .and_then(|rest| rest.strip_prefix(word))
        .unwrap_or("")
        .trim();
    invoke_named(app, word, args, out)
}

/// A message that matches a skill's `trigger` runs that skill (its defaults, the
/// message as the request) without asking the model; `false` when none matches, or
/// when the skill would need a value nobody gave (the message then goes to the model).
pub fn triggered(app: &mut App, text: &str, out: &mut impl Write) -> io::Result<bool> {
    let catalog = app.skills();
    let Some(skill) = catalog.triggered(text) else {
        return Ok(false);
    };
    let Ok(mut filled) = vars::fill(skill, "", None) else {
        return Ok(false);
    };
    filled.args = text.trim().to_string();
    filled.request = Some(text.trim().to_string());
    writeln!(out, "[skill {} (its trigger matched)]", skill.name)?;
    if skill.has_run_script() {
        script(app, skill, &filled, out)?;
    } else {
        super::chat_with(app, out, |app, on_event| {
            app.skill_turn(skill, &filled, on_event)
        })?;
    }
    Ok(true)
}

/// Runs the skill `name` with `args`; `false` when no folder has that name.
fn invoke_named(app: &mut App, name: &str, args: &str, out: &mut impl Write) -> io::Result<bool> {
    let catalog = app.skills();
    if let Some(e) = catalog.problem(name) {
        writeln!(out, "error: the skill does not load, nothing ran: {e}")?;
        return Ok(true);
    }
    let Some(skill) = catalog.get(name) else {
        return Ok(false);
    };
    invoke(app, skill, args, out).map(|()| true)
}

fn invoke(app: &mut App, skill: &Skill, args: &str, out: &mut impl Write) -> io::Result<()> {
    let asker = app.asker();
    let ask_var = |v: &crate::skills::Variable| {
        let help = v
            .description
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        asker
            .as_ref()
            .and_then(|ask| ask(&format!("{}{help}? ", v.name)))
    };
    let filled = match vars::fill(skill, args, asker.is_some().then_some(&ask_var as _)) {
        Ok(f) => f,
        Err(e) => return writeln!(out, "error: {e}; nothing ran"),
    };
    writeln!(out, "[skill {}]", skill.name)?;
    if skill.has_run_script() {
        return script(app, skill, &filled, out);
    }
    super::chat_with(app, out, |app, on_event| {
        app.skill_turn(skill, &filled, on_event)
    })
}

/// The script, its output streamed as `!prog`'s is.
fn script(
    app: &mut App,
    skill: &Skill,
    filled: &vars::Filled,
    out: &mut impl Write,
) -> io::Result<()> {
    let asker = app.asker();
    let ask = move |question: &str| {
        asker
            .as_ref()
            .and_then(|ask| ask(question))
            .is_some_and(|reply| matches!(reply.trim().to_lowercase().as_str(), "y" | "yes"))
    };
    let can_ask = app.asker().is_some();
    let mut wrote_error = None;
    let mut ends_with_newline = true;
    let ran = app.run_skill_script(
        skill,
        filled,
        can_ask.then_some(&ask as &dyn Fn(&str) -> bool),
        &mut |chunk| {
            if wrote_error.is_none() && !chunk.is_empty() {
                ends_with_newline = chunk.ends_with(b"\n");
                wrote_error = out.write_all(chunk).and_then(|()| out.flush()).err();
            }
        },
    );
    if let Some(e) = wrote_error {
        return Err(e);
    }
    if !ends_with_newline {
        writeln!(out)?;
    }
    match ran {
        Some((report, tokens)) => {
            writeln!(out, "[{}]", super::run::status_line(&report, tokens))?;
            if let Some(e) = &report.audit_error {
                writeln!(out, "warning: the audit log was not written: {e}")?;
            }
            Ok(())
        }
        None => writeln!(out, "error: the skill has no scripts/compiled.bash"),
    }
}

/// `/skill new`: asks for a name, a description and the steps, shows the file, and
/// writes it only after a yes (never over an existing skill).
fn new(app: &mut App, out: &mut impl Write) -> io::Result<()> {
    let Some(ask) = app.asker() else {
        return writeln!(out, "/skill new asks questions: run it in a terminal");
    };
    let answer = |q: &str| ask(q).map(|a| a.trim().to_string());
    let Some(name) = answer("skill name (lowercase-with-hyphens): ") else {
        return Ok(());
    };
    let dir = app.workspace().join(crate::skills::SKILLS_DIR).join(&name);
    if dir.exists() {
        return writeln!(
            out,
            "agents/skills/{name} exists already: /skill show {name}"
        );
    }
    let Some(description) = answer("description (what it does; when to use it): ") else {
        return Ok(());
    };
    let mut steps = Vec::new();
    while let Some(step) = answer(&format!("step {} (empty: done): ", steps.len() + 1)) {
        if step.is_empty() {
            break;
        }
        steps.push(step);
    }
    let text = match crate::skills::new::draft(&name, &description, &steps) {
        Ok(t) => t,
        Err(p) => return writeln!(out, "error: {}; nothing written", p.message),
    };
    write!(out, "{text}")?;
    write_after_yes(app, &name, &text, out)
}

/// `/skill suggest [SESSION]`: the model's draft of a skill for a run of steps the
/// session repeated, shown, and written only after a yes.
fn suggest(app: &mut App, session: &str, out: &mut impl Write) -> io::Result<()> {
    let session = (!session.is_empty()).then_some(session);
    let s = match app.suggest_skill(session) {
        Ok(s) => s,
        Err(e) => return writeln!(out, "{e}"),
    };
    writeln!(
        out,
        "[{}: {} times: {}]",
        s.session,
        s.repeat.occurrences.len(),
        s.repeat.keys.join(" → ")
    )?;
    write!(out, "{}", s.text)?;
    if !s.text.ends_with('\n') {
        writeln!(out)?;
    }
    if app.asker().is_none() {
        return writeln!(
            out,
            "[nothing written: /skill suggest asks before it writes; run it in a terminal]"
        );
    }
    write_after_yes(app, &s.name, &s.text, out)
}

/// Asks whether to write `text` as `agents/skills/NAME/SKILL.md`, never over a skill
/// that exists.
fn write_after_yes(app: &mut App, name: &str, text: &str, out: &mut impl Write) -> io::Result<()> {
    let dir = app.workspace().join(crate::skills::SKILLS_DIR).join(name);
    if dir.exists() {
        return writeln!(
            out,
            "agents/skills/{name} exists already: nothing written (/skill show {name})"
        );
    }
    let yes = app
        .asker()
        .and_then(|ask| ask(&format!("write agents/skills/{name}/SKILL.md? [y/N] ")))
        .is_some_and(|a| matches!(a.trim().to_lowercase().as_str(), "y" | "yes"));
    if !yes {
        return writeln!(out, "[nothing written]");
    }
    let written =
        std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join("SKILL.md"), text));
    match written {
        Ok(()) => writeln!(
            out,
            "[wrote agents/skills/{name}/SKILL.md; run it with /{name}]"
        ),
        Err(e) => writeln!(
            out,
            "error: cannot write agents/skills/{name}/SKILL.md: {e}"
        ),
    }
}
