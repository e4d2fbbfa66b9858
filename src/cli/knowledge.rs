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
use harvey::kb::{default_project, KnowledgeBase};
use harvey::ops::knowledge::{import_summary, run_kb, KbOp};
use harvey::ops::rag::{progress_line, run_rag, Place, RagOp};

#[derive(Debug, Subcommand)]
pub enum RagCommand {
    /// Make a new store (agents/rag/NAME.harvey.db); the first store is put in use.
    ///
    /// Example: harvey rag new docs
    New { name: String },
    /// Make recall use these stores (saved in agents/rag/settings.json).
    ///
    /// Example: harvey rag use docs manuals
    Use {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// List the stores (* = in use).
    ///
    /// Example: harvey rag list --json
    List {
        #[arg(long)]
        json: bool,
    },
    /// Files, chunks, vectors and embedder of the stores in use (or of NAME).
    ///
    /// Example: harvey rag status docs
    Status {
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Let recall use the stores in use.
    ///
    /// Example: harvey rag on
    On,
    /// Keep RAG out of recall (the stores stay).
    ///
    /// Example: harvey rag off
    Off,
    /// Delete a store (harvey's own; a Go harvey store is never deleted).
    ///
    /// Example: harvey rag drop docs
    Drop { name: String },
    /// Copy the Go harvey's store agents/rag/NAME.db into a store of harvey's own
    /// (agents/rag/NAME.harvey.db), embedding its chunks with harvey's embedder. The Go
    /// file is only read and stays byte-identical; the name then means harvey's copy.
    ///
    /// Example: harvey rag import notes --json
    Import {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Add files and directories (symlinks are not followed; text, Markdown, source code,
    /// PDF through pdftotext). Unchanged files are skipped, changed files replaced, files
    /// gone from an ingested directory removed. Ctrl-C stops between files, keeping what
    /// was ingested.
    ///
    /// Example: harvey rag ingest README.md docs/ --store docs
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
    ///
    /// Example: harvey rag query "how is the pump primed?" -k 3 --json
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
    ///
    /// Example: harvey rag prune --store docs
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
    ///
    /// Example: harvey kb status --json
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Projects: list, add NAME [DESC], use NAME.
    ///
    /// Example: harvey kb project add pump-rig "The garden pump controller"
    Project {
        #[command(subcommand)]
        action: ProjectAction,
    },
    /// Record an observation in the current project.
    ///
    /// Example: harvey kb observe --kind finding "The SD card is nearly full"
    Observe {
        /// note, finding, decision, question or hypothesis.
        #[arg(long, default_value = "note")]
        kind: String,
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// Concepts: list, add NAME [DESC].
    ///
    /// Example: harvey kb concept add deployment "How releases reach the Pi"
    Concept {
        #[command(subcommand)]
        action: ConceptAction,
    },
    /// Link an observation to a concept (made if new).
    ///
    /// Example: harvey kb link 12 deployment
    Link { observation: i64, concept: String },
    /// Search observations of every project.
    ///
    /// Example: harvey kb search "disk space" --json
    Search {
        terms: String,
        #[arg(short, long)]
        k: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Copy the Go harvey's knowledge base (agents/knowledge.db: projects, observations,
    /// concepts, links) into harvey's own (agents/harvey-knowledge.db), embedding the
    /// observations. The Go file is only read and stays byte-identical; afterwards
    /// `harvey kb observe` adds to harvey's copy.
    ///
    /// Example: harvey kb import
    Import {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProjectAction {
    /// The projects (* = the current one).
    ///
    /// Example: harvey kb project list --json
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a project (DESC: one line about it).
    ///
    /// Example: harvey kb project add pump-rig "The garden pump controller"
    Add {
        name: String,
        #[arg(default_value = "")]
        description: String,
    },
    /// Make NAME the current project (observations are recorded and recalled there).
    ///
    /// Example: harvey kb project use pump-rig
    Use { name: String },
}

#[derive(Debug, Subcommand)]
pub enum ConceptAction {
    /// The concepts.
    ///
    /// Example: harvey kb concept list --json
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a concept (DESC: one line about it).
    ///
    /// Example: harvey kb concept add deployment "How releases reach the Pi"
    Add {
        name: String,
        #[arg(default_value = "")]
        description: String,
    },
}

/// The shared implementation words its hints as REPL commands (`/rag new NAME`); on the
/// command line they read `harvey rag new NAME`. Only a `/rag ` or `/kb ` that starts the
/// text or follows a space, backtick or parenthesis is a command, so paths are left alone.
fn cli_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        let at_boundary = prev.is_none_or(|p| p.is_whitespace() || p == '`' || p == '(');
        if c == '/' && at_boundary {
            if let Some(cmd) = ["rag ", "kb "].iter().find(|w| rest[1..].starts_with(*w)) {
                out.push_str("harvey ");
                out.push_str(cmd);
                rest = &rest[1 + cmd.len()..];
                prev = Some(' ');
                continue;
            }
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Runs `body` with an output buffer and prints what it wrote — reworded by `cli_words`
/// unless it is JSON — then its error, if any, with exit code 1.
fn emit(
    json: bool,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<Result<(), String>>,
) -> Result<ExitCode> {
    let mut buf = Vec::new();
    let result = body(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let text = if json {
        text.into_owned()
    } else {
        cli_words(&text)
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write the output")?;
    match result.context("cannot write the output")? {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("error: {}", cli_words(&e));
            Ok(ExitCode::from(1))
        }
    }
}

pub fn rag(options: &AppOptions, cmd: RagCommand) -> Result<ExitCode> {
    let (workspace, config) = crate::open_workspace(options)?;
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
        RagCommand::Import { name, json } => (RagOp::Import(name), json),
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
    let drew = std::cell::Cell::new(false);
    let mut progress = |p: harvey::rag::ingest::Progress| {
        if tty {
            eprint!("\r{}\x1b[K", progress_line(&p));
            drew.set(true);
        }
    };
    emit(json, |out| {
        let result = run_rag(&place, op, json, out, &mut progress, &|| {
            cancel.load(Ordering::SeqCst)
        });
        if drew.get() {
            eprint!("\r\x1b[K");
        }
        result.map(|r| r.map(|_| ()))
    })
}

pub fn kb(options: &AppOptions, cmd: KbCommand) -> Result<ExitCode> {
    let (workspace, config) = crate::open_workspace(options)?;
    let (embedder, note) = open_embedder(&config, &workspace);
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let project = default_project(config.memory.knowledge_base.project.as_deref(), &workspace);
    if let KbCommand::Import { json } = cmd {
        return emit(json, |out| {
            match harvey::kb::import::import(&workspace.join("agents"), &project, embedder) {
                Ok(done) => import_summary(out, &done, json).map(Ok),
                Err(e) => Ok(Err(e.to_string())),
            }
        });
    }
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
        KbCommand::Import { json } => (KbOp::Import, json),
    };
    emit(json, |out| {
        run_kb(&kb, op, json, out).map(|r| r.map(|_| ()))
    })
}

#[cfg(test)]
mod tests {
    use super::cli_words;

    #[test]
    fn repl_hints_read_as_cli_commands_and_paths_stay() {
        assert_eq!(
            cli_words("no RAG store is in use: /rag new NAME makes one, /rag use NAME picks one"),
            "no RAG store is in use: harvey rag new NAME makes one, harvey rag use NAME picks one"
        );
        assert_eq!(
            cli_words("no project named \"x\" (`/kb project list` shows them)"),
            "no project named \"x\" (`harvey kb project list` shows them)"
        );
        assert_eq!(cli_words("/kb observe TEXT"), "harvey kb observe TEXT");
        // Paths and words that merely contain the names are untouched.
        for text in [
            "docs/rag notes.md",
            "/home/me/rag x",
            "a/kb b",
            "/ragged",
            "/kbd x",
            "é/rag x",
        ] {
            assert_eq!(cli_words(text), text);
        }
    }
}
