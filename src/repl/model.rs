//! `/model list | show [NAME] | use NAME`: the GGUF files harvey can find (headers only),
//! and switching the loaded model in this process.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::app::{App, SwitchReport};
use crate::model::catalog;
use crate::model::find::ModelSources;
use crate::model::gguf;

const USAGE: &str = "usage: /model [list] | /model show [NAME] | /model use NAME";

pub fn command(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let (verb, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    let rest = rest.trim();
    match verb {
        "" | "list" => list(app, out),
        "show" => show(app, rest, out),
        "use" if !rest.is_empty() => switch(app, rest, out),
        _ => writeln!(out, "{USAGE}"),
    }
}

fn dirs(app: &App) -> Vec<PathBuf> {
    ModelSources::standard(
        None,
        app.config().model.path.as_deref(),
        &app.config().model.models_dir,
        app.workspace(),
    )
    .dirs
}

fn list(app: &App, out: &mut impl Write) -> io::Result<()> {
    let dirs = dirs(app);
    let loaded = app.engine().info().path.clone();
    let mut files = catalog::gguf_files(&dirs);
    if !files.iter().any(|f| catalog::same_file(f, &loaded)) && loaded.is_file() {
        files.insert(0, loaded.clone());
    }
    for f in &files {
        writeln!(
            out,
            "{}",
            catalog::list_line(f, catalog::same_file(f, &loaded))
        )?;
    }
    writeln!(
        out,
        "(* = loaded; /model use NAME switches, /model show NAME describes)"
    )
}

fn show(app: &App, name: &str, out: &mut impl Write) -> io::Result<()> {
    let path = if name.is_empty() {
        app.engine().info().path.clone()
    } else {
        match catalog::named(name, &dirs(app)) {
            Ok(p) => p,
            Err(e) => return writeln!(out, "{e}"),
        }
    };
    match gguf::read(&path) {
        Ok(info) => write!(out, "{}", catalog::describe(&info)),
        Err(e) => writeln!(out, "cannot read {}: {e}", path.display()),
    }
}

fn switch(app: &mut App, name: &str, out: &mut impl Write) -> io::Result<()> {
    let path = match catalog::named(name, &dirs(app)) {
        Ok(p) => p,
        Err(e) => return writeln!(out, "{e}"),
    };
    match gguf::read(&path) {
        Ok(info) if info.embedding => {
            return writeln!(
                out,
                "{} is an embedding model; pick a chat model (/model list)",
                path.display()
            )
        }
        Ok(_) => {}
        Err(e) => return writeln!(out, "cannot use {}: {e}", path.display()),
    }
    if catalog::same_file(&path, &app.engine().info().path) {
        return writeln!(out, "[{} is already loaded]", path.display());
    }
    writeln!(
        out,
        "[freeing {} and loading {} …]",
        app.engine().info().name,
        path.display()
    )?;
    out.flush()?;
    match app.switch_model(&path) {
        Ok(report) => switched(out, &report),
        Err(e) => writeln!(
            out,
            "error: {e}\n[still on {} ({})]",
            app.engine().info().name,
            app.engine().info().path.display()
        ),
    }
}

fn switched(out: &mut impl Write, r: &SwitchReport) -> io::Result<()> {
    writeln!(
        out,
        "[model {} → {}: n_ctx {}, template {}]",
        r.from, r.to, r.n_ctx, r.template
    )?;
    if let Some(c) = &r.compression {
        writeln!(
            out,
            "[the conversation did not fit: {} older turns folded out, {} → {} tokens; summarized while you type]",
            c.folded_turns, c.tokens_before, c.tokens_after
        )?;
    }
    writeln!(out, "[conversation kept: {} tokens prefilled]", r.prefilled)?;
    if let (Some(before), Some(after)) = (r.rss_before, r.rss_after) {
        writeln!(
            out,
            "[resident memory: {} MB before, {} MB after]",
            before / 1_000_000,
            after / 1_000_000
        )?;
    }
    for n in &r.notes {
        writeln!(out, "[{n}]")?;
    }
    Ok(())
}
