//! `harvey bench --mining`: finds the recorded sessions and the model (saying how to
//! fetch it when missing), runs [`harvey::bench::mining`] and prints its report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use harvey::app::{engine_params, App, AppError, AppOptions};
use harvey::bench::mining::{self, MiningOptions, DEFAULT_SESSIONS_DIR};
use harvey::model::find::FETCH_COMMAND;

pub fn run(
    options: &AppOptions,
    sessions: Option<&Path>,
    threads: Option<u32>,
    json: bool,
) -> Result<ExitCode> {
    let dir = sessions_dir(sessions);
    // Before the model: a wrong directory is found without loading anything.
    let files = mining::session_files(&dir)?;
    let (_, config, model) = App::resolve(options).map_err(with_fetch_hint)?;
    let mut params = engine_params(&config, model);
    if let Some(t) = threads {
        params.threads = t.max(1);
        params.threads_batch = t.max(1);
    }
    let report = mining::run(&MiningOptions {
        params,
        sessions: files,
        sessions_dir: dir,
    })
    .context("the mining benchmark failed")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", mining::render::report(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--sessions`, else the default directory here, else the repository's.
fn sessions_dir(given: Option<&Path>) -> PathBuf {
    if let Some(dir) = given {
        return dir.to_path_buf();
    }
    let here = PathBuf::from(DEFAULT_SESSIONS_DIR);
    if here.is_dir() {
        return here;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_SESSIONS_DIR);
    if repo.is_dir() {
        repo
    } else {
        here
    }
}

/// A missing model file names the command that fetches the Qwen models.
fn with_fetch_hint(e: AppError) -> anyhow::Error {
    match e {
        AppError::Model(m) => anyhow::anyhow!(
            "{m}\nthe mining benchmark is meant for the Qwen models: fetch them with `{FETCH_COMMAND}`"
        ),
        other => other.into(),
    }
}
