//! `harvey memory import` and `harvey memory export`: JSON Lines in and out (the line
//! formats are `harvey::memory::transfer`'s).

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use harvey::memory::transfer::Line;
use harvey::memory::MemoryStore;

/// Lines written per batch (one `MEMORY.md` and one progress step each).
const BATCH: usize = 200;

pub fn import(store: &mut MemoryStore, file: &Path, json: bool) -> Result<ExitCode> {
    let text = if file == Path::new("-") {
        let mut t = String::new();
        std::io::stdin()
            .read_to_string(&mut t)
            .context("cannot read stdin")?;
        t
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
    };
    let name = file.display().to_string();
    let report = |line: usize, result: Result<String, String>| match (&result, json) {
        (Ok(m), false) => println!("{name}:{line}: {m}"),
        (Err(e), false) => eprintln!("{name}:{line}: error: {e}"),
        (Ok(m), true) => println!(
            "{}",
            serde_json::json!({"line": line, "ok": true, "message": m})
        ),
        (Err(e), true) => println!(
            "{}",
            serde_json::json!({"line": line, "ok": false, "error": e})
        ),
    };
    let mut parsed = Vec::new();
    let mut failed = 0usize;
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        match Line::parse(raw) {
            Ok(line) => parsed.push((i + 1, line)),
            Err(e) => {
                failed += 1;
                report(i + 1, Err(e));
            }
        }
    }
    let progress = std::io::stderr().is_terminal() && parsed.len() > BATCH;
    let mut saved = 0usize;
    let mut done = 0usize;
    for chunk in parsed.chunks(BATCH) {
        let lines: Vec<Line> = chunk.iter().map(|(_, l)| l.clone()).collect();
        for ((number, _), result) in chunk.iter().zip(store.write_lines(&lines)) {
            match result {
                Ok(o) => {
                    saved += 1;
                    report(*number, Ok(o.describe()));
                }
                Err(e) => {
                    failed += 1;
                    report(*number, Err(e.to_string()));
                }
            }
        }
        done += chunk.len();
        if progress {
            eprint!("\rimported {done}/{}", parsed.len());
        }
    }
    if progress {
        eprintln!();
    }
    eprintln!("{saved} saved, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn export(store: &MemoryStore, file: Option<&Path>, force: bool) -> Result<ExitCode> {
    let memories = store.export()?;
    let mut text = String::new();
    for m in &memories {
        text.push_str(&serde_json::to_string(m)?);
        text.push('\n');
    }
    match file.filter(|f| *f != Path::new("-")) {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
        Some(path) => {
            if path.exists() && !force {
                bail!(
                    "{} exists: choose another file or add --force to replace it",
                    path.display()
                );
            }
            harvey::memory::file::write_atomic(path, text.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("exported {} memories to {}", memories.len(), path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
