//! `harvey model list|show`: the GGUF files harvey can find, described from their headers
//! (no weights are loaded, so a directory of large models is listed at once).
//! `harvey model pull` is in `model_pull`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use harvey::app::AppOptions;
use harvey::model::catalog;
use harvey::model::find::ModelSources;
use harvey::model::gguf;

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// The GGUF files in the model directories; `*` marks the one harvey would load.
    ///
    /// Example: harvey model list --json
    List {
        /// Print JSON: one object per file ({path, chosen, info} or {path, error}).
        #[arg(long)]
        json: bool,
    },
    /// One model's header: architecture, parameters, quantization, training context,
    /// chat template, embedding or chat.
    ///
    /// Example: harvey model show qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
    Show {
        /// A file name in the model directories, or a path (default: the model harvey
        /// would load).
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Download a GGUF into the models directory (model.models_dir, default models/),
    /// with progress on stderr. A download that was cut off or interrupted resumes
    /// where it stopped; the file gets its name only after its checks pass.
    ///
    /// Example: harvey model pull https://huggingface.co/OWNER/REPO/resolve/main/MODEL.gguf --sha256 HEX
    Pull {
        /// The http:// or https:// URL of the .gguf file (redirects are followed).
        url: String,
        /// The expected sha256 (64 hex digits) of the whole file.
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
        /// The file name to save as (default: the URL's last path segment).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        /// Replace a model of the same name.
        #[arg(long)]
        force: bool,
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
        ModelCommand::Pull {
            url,
            sha256,
            name,
            force,
        } => super::model_pull::run(harvey::model::pull::PullRequest {
            url,
            dir: workspace.join(&config.model.models_dir),
            name,
            sha256,
            force,
        }),
        ModelCommand::List { json } => list(&sources.dirs, chosen.as_deref(), json),
        ModelCommand::Show { name, json } => {
            let path = match name {
                Some(name) => catalog::named(&name, &sources.dirs).map_err(|e| {
                    anyhow::anyhow!("{}", e.replace("(model list", "(harvey model list"))
                })?,
                None => sources.find()?,
            };
            let info = gguf::read(&path)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&info)?);
            } else {
                print!("{}", catalog::describe(&info));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn list(dirs: &[PathBuf], chosen: Option<&Path>, json: bool) -> Result<ExitCode> {
    let files = catalog::gguf_files(dirs);
    let is_chosen = |p: &Path| chosen.is_some_and(|c| catalog::same_file(c, p));
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
            "no GGUF files in {} (fetch the default model with {}, or download one with \
             harvey model pull URL)",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            harvey::model::find::FETCH_COMMAND
        );
        return Ok(ExitCode::SUCCESS);
    }
    for p in &files {
        println!("{}", catalog::list_line(p, is_chosen(p)));
    }
    println!(
        "(* = the model harvey loads: --model, model.path, $HARVEY_MODEL, then these directories)"
    );
    Ok(ExitCode::SUCCESS)
}
