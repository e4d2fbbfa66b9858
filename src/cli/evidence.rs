//! `harvey evidence`: the workspace's evidence index for scripts and for a person who
//! wants to see what a question would be answered from. `refresh` brings the index up to
//! date and says what it read; `show QUESTION` prints the block the question would get
//! (counted with the model's tokenizer, loaded vocabulary-only); `stats` counts the
//! index. No chat model is run.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Subcommand;
use harvey::app::{App, AppOptions};
use harvey::engine::LazyVocabulary;
use harvey::evidence::Index;

#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Bring agents/evidence.db up to date (only changed files are read again; history is
    /// read on from the last commit indexed) and say what was done.
    ///
    /// Example: harvey evidence refresh --json
    Refresh {
        /// Print JSON: {files, files_read, files_removed, commits_added, units, millis}.
        #[arg(long)]
        json: bool,
    },
    /// The [evidence] block a question gets, with each snippet's source and cost.
    ///
    /// Example: harvey evidence show "What port is used if I never set one?"
    Show {
        /// The question, as a user would ask it.
        question: String,
        /// Token budget (default: tools.evidence_pct of the model's n_ctx setting).
        #[arg(long, value_name = "TOKENS")]
        budget: Option<usize>,
        /// Print JSON: {text, tokens, budget, snippets: [{source, kind, score, tokens}],
        /// skipped, retrieval_ms}.
        #[arg(long)]
        json: bool,
    },
    /// Units per kind (code, doc, config, text, commit, memory, session) and the file's size.
    ///
    /// Example: harvey evidence stats
    Stats,
}

pub fn run(options: &AppOptions, cmd: EvidenceCommand) -> Result<ExitCode> {
    let (workspace, config) = crate::open_workspace(options)?;
    let mut index = Index::open(&workspace)?;
    match cmd {
        EvidenceCommand::Refresh { json } => {
            let report = index.refresh(&mut |_, _| {})?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                println!(
                    "{} files ({} read, {} removed), {} commits added, {} units, {} ms",
                    report.files,
                    report.files_read,
                    report.files_removed,
                    report.commits_added,
                    report.units,
                    report.millis
                );
            }
        }
        EvidenceCommand::Show {
            question,
            budget,
            json,
        } => {
            let (_, _, model) = App::resolve(options).context(
                "the block is counted with the model's tokenizer, so it needs a model (pass --model or run scripts/fetch-models.sh)",
            )?;
            let vocab = LazyVocabulary::new(&model)?;
            index.refresh(&mut |_, _| {})?;
            let n_ctx = config.engine.n_ctx;
            let budget = budget.unwrap_or_else(|| {
                harvey::memory::recall::budget(n_ctx, config.tools.evidence_pct)
            });
            // The tokenizer loads at its first count: not part of the retrieval's time.
            harvey::tokens::TokenCounter::count_tokens(&vocab, "warm");
            let started = Instant::now();
            let block = index.gather(&question, budget, &vocab)?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            if json {
                let mut value = serde_json::to_value(&block)?;
                value["retrieval_ms"] = serde_json::json!(ms);
                super::emit(&format!("{value}\n"))?;
            } else if block.snippets.is_empty() {
                super::emit(&format!(
                    "nothing in the workspace ranks for this question ({ms:.1} ms)\n"
                ))?;
            } else {
                super::emit(&format!(
                    "{}({} snippets, {}/{} tokens, {} skipped, {ms:.1} ms)\n",
                    block.text,
                    block.snippets.len(),
                    block.tokens,
                    block.budget,
                    block.skipped
                ))?;
            }
        }
        EvidenceCommand::Stats => {
            for (kind, n) in index.counts()? {
                println!("{kind:8} {n}");
            }
            let bytes = std::fs::metadata(index.path()).map_or(0, |m| m.len());
            println!("{}: {:.1} MB", index.path().display(), bytes as f64 / 1e6);
        }
    }
    Ok(ExitCode::SUCCESS)
}
