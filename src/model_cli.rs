//! `harvey model list|show`: the GGUF files harvey can find, described from their headers
//! (no weights are loaded, so a directory of large models is listed at once).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Subcommand;
use harvey::app::AppOptions;
use harvey::gguf::{self, GgufInfo};
use harvey::models::ModelSources;

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// The GGUF files in the model directories; `*` marks the one harvey would load.
    List {
        /// Print JSON: one object per file ({path, chosen, info} or {path, error}).
        #[arg(long)]
        json: bool,
    },
    /// One model's header: architecture, parameters, quantization, training context,
    /// chat template, embedding or chat.
    Show {
        /// A file name in the model directories, or a path (default: the model harvey
        /// would load).
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(options: &AppOptions, cmd: ModelCommand) -> Result<ExitCode> {
    let (workspace, config) = crate::open_workspace(options)?;
    let sources = ModelSources::standard(
        options.model.clone(),
        config.model.path.as_deref(),
        &config.model.models_dir,
        &workspace,
    );
    let chosen = sources.find().ok();
    match cmd {
        ModelCommand::List { json } => list(&sources.dirs, chosen.as_deref(), json),
        ModelCommand::Show { name, json } => {
            let path = match name {
                Some(name) => named(&name, &sources.dirs)?,
                None => sources.find()?,
            };
            let info = gguf::read(&path)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&info)?);
            } else {
                print!("{}", describe(&info));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn list(dirs: &[PathBuf], chosen: Option<&Path>, json: bool) -> Result<ExitCode> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut here: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
            })
            .filter(|p| !files.iter().any(|f| same_file(f, p)))
            .collect();
        here.sort();
        files.extend(here);
    }
    let is_chosen = |p: &Path| chosen.is_some_and(|c| same_file(c, p));
    if json {
        let rows: Vec<serde_json::Value> = files
            .iter()
            .map(|p| match gguf::read(p) {
                Ok(info) => serde_json::json!({"path": p, "chosen": is_chosen(p), "info": info}),
                Err(e) => {
                    serde_json::json!({"path": p, "chosen": is_chosen(p), "error": e.to_string()})
                }
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    if files.is_empty() {
        println!(
            "no GGUF files in {} (fetch the default model with {})",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            harvey::models::FETCH_COMMAND
        );
        return Ok(ExitCode::SUCCESS);
    }
    for p in &files {
        let mark = if is_chosen(p) { "*" } else { " " };
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        match gguf::read(p) {
            Ok(i) => println!(
                "{mark} {name}  {}  {}  {}  ctx {}  {}  {} MB  ({})",
                i.architecture,
                gguf::human_count(i.parameters),
                i.quantization.as_deref().unwrap_or("?"),
                i.training_context
                    .map_or("?".to_string(), |c| c.to_string()),
                kind(&i),
                i.file_bytes / 1_000_000,
                p.parent().unwrap_or(p).display()
            ),
            Err(e) => println!("{mark} {name}  unreadable: {e}"),
        }
    }
    println!(
        "(* = the model harvey loads: --model, model.path, $HARVEY_MODEL, then these directories)"
    );
    Ok(ExitCode::SUCCESS)
}

/// A path as given, or a file name (with or without `.gguf`) in the model directories.
fn named(name: &str, dirs: &[PathBuf]) -> Result<PathBuf> {
    let path = PathBuf::from(name);
    if path.is_file() {
        return Ok(path);
    }
    for dir in dirs {
        for candidate in [dir.join(name), dir.join(format!("{name}.gguf"))] {
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    bail!(
        "no model {name:?}: not a file, and not in {} (harvey model list shows them)",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn kind(i: &GgufInfo) -> &'static str {
    match (i.embedding, i.has_chat_template) {
        (true, _) => "embedding",
        (false, true) => "chat template",
        (false, false) => "no chat template",
    }
}

fn describe(i: &GgufInfo) -> String {
    let mut out = format!("{}\n", i.path.display());
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<18}{v}\n"));
    row("name", i.name.clone().unwrap_or_else(|| "-".into()));
    row("architecture", i.architecture.clone());
    row(
        "parameters",
        format!("{} ({})", gguf::human_count(i.parameters), i.parameters),
    );
    row(
        "quantization",
        i.quantization.clone().unwrap_or_else(|| "-".into()),
    );
    row(
        "training context",
        i.training_context
            .map_or("-".to_string(), |c| format!("{c} tokens")),
    );
    row("kind", kind(i).to_string());
    row(
        "file",
        format!(
            "{} MB, GGUF v{}, {} tensors",
            i.file_bytes / 1_000_000,
            i.version,
            i.tensors
        ),
    );
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
