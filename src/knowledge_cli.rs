//! `harvey rag …` and `harvey kb …`: the same commands as `/rag` and `/kb` in the REPL,
//! for scripts (`--json` where there is something to read back). No chat model is loaded;
//! the embedding model is, when `memory.embedder` finds one.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Subcommand;
use harvey::app::{open_embedder, AppOptions};
use harvey::config::Config;
use harvey::kb::{default_project, KnowledgeBase};
use harvey::repl::knowledge::{progress_line, run_kb, run_rag, KbOp, Place, RagOp};

#[derive(Debug, Subcommand)]
pub enum RagCommand {
    /// Make a new store (agents/rag/NAME.db); the first store is put in use.
    New { name: String },
    /// Make recall use these stores (saved in agents/rag/settings.json).
    Use {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// List the stores (* = in use).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Files, chunks, vectors and embedder of the stores in use (or of NAME).
    Status {
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Let recall use the stores in use.
    On,
    /// Keep RAG out of recall (the stores stay).
    Off,
    /// Delete a store.
    Drop { name: String },
    /// Add files and directories (symlinks are not followed; text, Markdown, source code,
    /// PDF through pdftotext). Unchanged files are skipped, changed files replaced, files
    /// gone from an ingested directory removed. Ctrl-C stops between files, keeping what
    /// was ingested.
    Ingest {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Store (default: the first in use).
        #[arg(long)]
        store: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Search a store: full text and vectors, fused.
    Query {
        text: String,
        #[arg(long)]
        store: Option<String>,
        /// Results (default: memory.rag.top_k).
        #[arg(short, long)]
        k: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Remove chunks of files that no longer exist.
    Prune {
        #[arg(long)]
        store: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum KbCommand {
    /// Counts and the current project.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Projects: list, add NAME [DESC], use NAME.
    Project {
        #[command(subcommand)]
        action: ProjectAction,
    },
    /// Record an observation in the current project.
    Observe {
        /// note, finding, decision, question or hypothesis.
        #[arg(long, default_value = "note")]
        kind: String,
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// Concepts: list, add NAME [DESC].
    Concept {
        #[command(subcommand)]
        action: ConceptAction,
    },
    /// Link an observation to a concept (made if new).
    Link { observation: i64, concept: String },
    /// Search observations of every project.
    Search {
        terms: String,
        #[arg(short, long)]
        k: Option<usize>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProjectAction {
    List {
        #[arg(long)]
        json: bool,
    },
    Add {
        name: String,
        #[arg(default_value = "")]
        description: String,
    },
    Use {
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConceptAction {
    List {
        #[arg(long)]
        json: bool,
    },
    Add {
        name: String,
        #[arg(default_value = "")]
        description: String,
    },
}

fn setup(options: &AppOptions) -> Result<(PathBuf, Config)> {
    let workspace = options.workspace.canonicalize().with_context(|| {
        format!(
            "workspace {} is not a directory",
            options.workspace.display()
        )
    })?;
    let config = harvey::config::load(&workspace)?;
    Ok((workspace, config))
}

fn finish(result: std::io::Result<Result<(), String>>) -> Result<ExitCode> {
    match result.context("cannot write the output")? {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

pub fn rag(options: &AppOptions, cmd: RagCommand) -> Result<ExitCode> {
    let (workspace, config) = setup(options)?;
    let (embedder, note) = open_embedder(&config, &workspace);
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let place = Place {
        workspace: &workspace,
        config: &config,
        embedder,
    };
    let (op, json) = match cmd {
        RagCommand::New { name } => (RagOp::New(name), false),
        RagCommand::Use { names } => (RagOp::Use(names), false),
        RagCommand::List { json } => (RagOp::List, json),
        RagCommand::Status { name, json } => (RagOp::Status(name), json),
        RagCommand::On => (RagOp::On, false),
        RagCommand::Off => (RagOp::Off, false),
        RagCommand::Drop { name } => (RagOp::Drop(name), false),
        RagCommand::Ingest { paths, store, json } => (RagOp::Ingest { store, paths }, json),
        RagCommand::Query {
            text,
            store,
            k,
            json,
        } => (RagOp::Query { store, text, k }, json),
        RagCommand::Prune { store, json } => (RagOp::Prune(store), json),
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .context("cannot install the Ctrl-C handler")?;
    let tty = std::io::stderr().is_terminal();
    let mut drew = false;
    let mut progress = |p: harvey::rag::ingest::Progress| {
        if tty {
            eprint!("\r{}\x1b[K", progress_line(&p));
            drew = true;
        }
    };
    let mut out = std::io::stdout().lock();
    let result = run_rag(&place, op, json, &mut out, &mut progress, &|| {
        cancel.load(Ordering::SeqCst)
    });
    if drew {
        eprint!("\r\x1b[K");
    }
    out.flush().ok();
    finish(result.map(|r| r.map(|_| ())))
}

pub fn kb(options: &AppOptions, cmd: KbCommand) -> Result<ExitCode> {
    let (workspace, config) = setup(options)?;
    let (embedder, note) = open_embedder(&config, &workspace);
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let project = default_project(config.memory.knowledge_base.project.as_deref(), &workspace);
    let kb = KnowledgeBase::open(&workspace.join("agents"), &project, embedder)?;
    let (op, json) = match cmd {
        KbCommand::Status { json } => (KbOp::Status, json),
        KbCommand::Project { action } => match action {
            ProjectAction::List { json } => (KbOp::ProjectList, json),
            ProjectAction::Add { name, description } => {
                (KbOp::ProjectAdd { name, description }, false)
            }
            ProjectAction::Use { name } => (KbOp::ProjectUse(name), false),
        },
        KbCommand::Observe { kind, text, json } => (KbOp::Observe { kind, text }, json),
        KbCommand::Concept { action } => match action {
            ConceptAction::List { json } => (KbOp::ConceptList, json),
            ConceptAction::Add { name, description } => {
                (KbOp::ConceptAdd { name, description }, false)
            }
        },
        KbCommand::Link {
            observation,
            concept,
        } => (
            KbOp::Link {
                observation,
                concept,
            },
            false,
        ),
        KbCommand::Search { terms, k, json } => (KbOp::Search { terms, k }, json),
    };
    let mut out = std::io::stdout().lock();
    let result = run_kb(&kb, op, json, &mut out);
    out.flush().ok();
    finish(result.map(|r| r.map(|_| ())))
}
