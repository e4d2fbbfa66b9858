//! `harvey memory …`: the memory store for scripts (no chat, no full model load).

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use harvey::app::{App, AppOptions};
use harvey::config::Config;
use harvey::engine::embed::ArrivingEmbedder;
use harvey::engine::LazyVocabulary;
use harvey::memory::recall::CostCache;
use harvey::memory::types::split_tags;
use harvey::memory::{Draft, MemoryStore};
use harvey::ops::memory::{self as ops, ListRequest, RecallRequest};
use harvey::sources::Opened;
use harvey::tokens::Embedder;

mod transfer;

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Save one memory (a description equal to an existing one updates it instead).
    ///
    /// Example: harvey memory add --type project_fact --description "The API listens on 8080" --tags api
    Add(AddArgs),
    /// Save memories from a JSON Lines file, one per line with the fields of `add`
    /// ({"type": …, "description": …, "summary": …, "tags": [..], "body": …, "kind": …,
    /// "action": …, "confidence": …, "supersedes": [..], "expires_at": …}), and when the
    /// note was written: "created_at" / "updated_at" (RFC 3339 or a plain day such as
    /// 2024-03-01; updated_at defaults to created_at; without them, now). A line with an
    /// "id" is a memory written by `export` and is restored as it was (same id, dates,
    /// tags; importing it again changes nothing). A bad line is reported with its file
    /// and line number and the rest go on. `-` reads stdin.
    ///
    /// Example: harvey memory import notes.jsonl
    Import {
        file: PathBuf,
        /// One JSON result per line instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write every active memory as JSON Lines with all its fields (to FILE, or stdout),
    /// for `harvey memory import` in another workspace or tool.
    ///
    /// Example: harvey memory export all.jsonl
    Export {
        file: Option<PathBuf>,
        /// Replace FILE if it exists.
        #[arg(long)]
        force: bool,
    },
    /// List active (or archived) memories.
    ///
    /// Example: harvey memory list --type project_fact --json
    List {
        #[arg(long = "type", value_name = "TYPE")]
        mtype: Option<String>,
        #[arg(long)]
        kind: Option<String>,
        /// Archived (forgotten, superseded, flagged-out) memories instead.
        #[arg(long)]
        archived: bool,
        #[arg(long)]
        json: bool,
    },
    /// Print one memory's file.
    ///
    /// Example: harvey memory show project_fact_1a2b3c
    Show { id: String },
    /// Ranked memories for a query, with scores and exact token costs (the model's
    /// vocabulary is loaded, not its weights). With --budget: what the session-start
    /// injection would pack under that many tokens. With --batch: one JSON query per
    /// stdin line ({"query": …, "k": …, "budget": …} or a JSON string), one JSON result
    /// per output line; a bad line reports its error and the batch goes on.
    ///
    /// Example: harvey memory recall "how do I deploy?" --k 5 --json
    Recall(RecallArgs),
    /// Archive a memory (it is never recalled again; the file moves to archive/).
    ///
    /// Example: harvey memory forget project_fact_1a2b3c
    Forget { id: String },
    /// Lower a memory's confidence by 0.1; at 0.2 or below it is archived.
    ///
    /// Example: harvey memory flag tool_use_a3f891
    Flag { id: String },
    /// Print MEMORY.md: one line per active memory, most useful first, capped.
    ///
    /// Example: harvey memory index
    Index,
    /// Rebuild the index (agents/memories/harvey-index.db) from the memory files (the files are the truth).
    ///
    /// Example: harvey memory rebuild
    Rebuild,
    /// Counts per type, the store path and the injection budget.
    ///
    /// Example: harvey memory status --json
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// workspace_profile | project_fact | tool_use | workflow | user_preference
    #[arg(long = "type", value_name = "TYPE")]
    mtype: String,
    /// One line: what the memory is about (also the duplicate key).
    #[arg(long)]
    description: String,
    #[arg(long, default_value = "")]
    summary: String,
    /// Comma-separated tags.
    #[arg(long, default_value = "")]
    tags: String,
    /// pitfall | workaround | recommendation | pattern (free text).
    #[arg(long)]
    kind: Option<String>,
    /// What to do next time.
    #[arg(long)]
    action: Option<String>,
    /// 0–1 (default 0.5).
    #[arg(long)]
    confidence: Option<f64>,
    /// Comma-separated ids this memory replaces (they are archived).
    #[arg(long, default_value = "")]
    supersedes: String,
    /// Body text, or `-` to read it from stdin (at most 4 KB).
    #[arg(long)]
    body: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct RecallArgs {
    /// The query (not with --batch).
    query: Option<String>,
    /// How many results (default: memory.top_k).
    #[arg(long)]
    k: Option<usize>,
    /// Pack under this many tokens as the session-start injection does.
    #[arg(long, value_name = "TOKENS")]
    budget: Option<usize>,
    #[arg(long)]
    json: bool,
    /// Read one JSON query per line from stdin; write one JSON result per line.
    #[arg(long)]
    batch: bool,
}

pub fn run(options: &AppOptions, cmd: MemoryCommand) -> Result<ExitCode> {
    tracing::debug!("phase: start");
    let (workspace, config) = crate::open_workspace(options)?;
    tracing::debug!("phase: config loaded");
    let (mut store, embedder) =
        open_store(&workspace, &config, !matches!(cmd, MemoryCommand::Rebuild))?;
    tracing::debug!("phase: missing vectors checked");
    let extra = open_extra(
        &workspace,
        &config,
        embedder.clone().map(|e| e as Arc<dyn Embedder>),
    );
    tracing::debug!("phase: other sources open");
    if matches!(cmd, MemoryCommand::Recall(_)) && embedder.as_ref().is_some_and(|e| !e.arrived()) {
        // While the embedder loads: the first query then only scores the vectors.
        let warmed = store.warm_vectors() as usize + extra.warm();
        tracing::debug!("phase: {warmed} vector copies warmed");
    }
    let done = command(options, &config, &mut store, &extra, cmd);
    report_embedder(embedder.as_deref());
    done
}

fn command(
    options: &AppOptions,
    config: &Config,
    store: &mut MemoryStore,
    extra: &Opened,
    cmd: MemoryCommand,
) -> Result<ExitCode> {
    match cmd {
        MemoryCommand::Add(args) => add(store, args),
        MemoryCommand::Import { file, json } => transfer::import(store, &file, json),
        MemoryCommand::Export { file, force } => transfer::export(store, file.as_deref(), force),
        MemoryCommand::List {
            mtype,
            kind,
            archived,
            json,
        } => list(store, mtype.as_deref(), kind.as_deref(), archived, json),
        MemoryCommand::Show { id } => {
            print!("{}", ops::show(store, &id)?.text);
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Recall(args) => recall(options, config, store, extra, args),
        MemoryCommand::Forget { id } => {
            ops::forget(store, &id)?;
            println!("archived {id}");
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Flag { id } => {
            let f = ops::flag(store, &id)?;
            let archived = if f.archived { " — archived" } else { "" };
            println!("{id}: confidence {:.1}{archived}", f.confidence);
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Index => {
            print!("{}", ops::index(store)?);
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Rebuild => {
            let r = store.rebuild()?;
            for w in &r.warnings {
                eprintln!("warning: {w}");
            }
            println!(
                "rebuilt {}: {} memories indexed, {} files skipped",
                store
                    .dir()
                    .join(harvey::memory::location::INDEX_FILE)
                    .display(),
                r.indexed,
                r.warnings.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Status { json } => status(store, config, json),
    }
}

fn add(store: &mut MemoryStore, args: AddArgs) -> Result<ExitCode> {
    let body = match args.body.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the body from stdin")?;
            text
        }
        Some(text) => text.to_string(),
        None => String::new(),
    };
    let draft = Draft {
        mtype: args.mtype,
        description: args.description,
        summary: args.summary,
        tags: split_tags(&args.tags),
        body,
        kind: args.kind,
        action: args.action,
        confidence: args.confidence,
        supersedes: split_tags(&args.supersedes),
        source_session: None,
        expires_at: None,
        evidence: None,
    };
    let outcome = ops::add(store, &draft)?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({"id": outcome.id(), "updated": matches!(outcome, harvey::memory::WriteOutcome::Updated { .. }), "message": outcome.describe()})
        );
    } else {
        println!("{}", outcome.describe());
    }
    Ok(ExitCode::SUCCESS)
}

fn list(
    store: &MemoryStore,
    mtype: Option<&str>,
    kind: Option<&str>,
    archived: bool,
    json: bool,
) -> Result<ExitCode> {
    let request = ListRequest {
        mtype: mtype
            .map(ops::parse_type)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        kind: kind.map(str::to_string),
        archived,
    };
    let rows = ops::list(store, &request)?;
    if json {
        let items: Vec<_> = rows.iter().map(row_json).collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
    } else {
        for r in &rows {
            println!(
                "{:<26} {:<18} {:.2}  {}",
                r.id,
                r.mtype.as_str(),
                r.confidence,
                r.description
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn row_json(r: &harvey::memory::index::Row) -> serde_json::Value {
    serde_json::json!({
        "id": r.id,
        "type": r.mtype,
        "kind": r.kind,
        "description": r.description,
        "summary": r.summary,
        "action": r.action,
        "tags": r.tags.split_whitespace().collect::<Vec<_>>(),
        "confidence": r.confidence,
        "archived": r.archived,
        "path": r.path,
    })
}

/// The memory store, reconciled, with the embedder (if any) set; the embedder goes on
/// loading on its own thread ([`harvey::app::open_memory_and_embedder`]). Warnings are
/// printed (a rebuild's only with `warn`: it reads every file again anyway).
fn open_store(
    workspace: &std::path::Path,
    config: &Config,
    warn: bool,
) -> Result<(MemoryStore, Option<Arc<ArrivingEmbedder>>)> {
    let (opened, embedder, note) = harvey::app::open_memory_and_embedder(config, workspace);
    let (mut store, report) = opened?;
    if warn {
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
    }
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    if let Some(arriving) = embedder.clone() {
        // An embedder llama.cpp refused is reported once, when the command ends.
        if let Err(e) = store.set_embedder(arriving.clone()) {
            if arriving.wait().is_ok() {
                eprintln!("warning: {e}");
            }
        }
    }
    Ok((store, embedder))
}

/// Tells the user when llama.cpp refused the embedder (found only once a command waited
/// for it): what used vectors used full text alone.
fn report_embedder(embedder: Option<&ArrivingEmbedder>) {
    if let Some(Err(why)) = embedder.map(ArrivingEmbedder::wait) {
        eprintln!("note: the embedder did not load ({why}); full-text search only");
    }
}

/// The other sources recall draws from (the memory store is opened by [`run`]), opened
/// as the session opens them; problems are printed as notes.
fn open_extra(
    workspace: &std::path::Path,
    config: &Config,
    embedder: Option<std::sync::Arc<dyn harvey::tokens::Embedder>>,
) -> Opened {
    let (opened, notes) = Opened::open(workspace, &config.memory, embedder);
    for n in notes {
        eprintln!("note: {n}");
    }
    opened
}

fn recall(
    options: &AppOptions,
    config: &Config,
    store: &MemoryStore,
    extra: &Opened,
    args: RecallArgs,
) -> Result<ExitCode> {
    let (_, _, model) = App::resolve(options).context(
        "recall reports exact token costs, so it needs the model's tokenizer (pass --model or run scripts/fetch-models.sh)",
    )?;
    // As at the session start, counts come from the index's cache first; the
    // tokenizer loads only for a text it has not counted before.
    let vocab = LazyVocabulary::new(&model)?;
    let print = harvey::engine::model_fingerprint(&model, std::fs::metadata(&model)?.len())?;
    let counter = CostCache::new(&vocab, store, &print);
    if args.batch {
        let stdin = std::io::stdin();
        let mut out = std::io::stdout().lock();
        for (i, line) in stdin.lock().lines().enumerate() {
            let line = line.context("cannot read stdin")?;
            if line.trim().is_empty() {
                continue;
            }
            let value = match parse_query(&line) {
                Ok(q) => answer(store, extra, config, &counter, &q)
                    .unwrap_or_else(|e| serde_json::json!({"error": e.to_string()})),
                Err(e) => serde_json::json!({"error": e}),
            };
            let mut value = value;
            value["line"] = serde_json::json!(i + 1);
            writeln!(out, "{value}")?;
        }
        counter.save();
        return Ok(ExitCode::SUCCESS);
    }
    let Some(query) = args.query else {
        bail!("no query: harvey memory recall QUERY, or --batch with queries on stdin");
    };
    let q = RecallRequest {
        query,
        k: args.k,
        budget: args.budget,
    };
    let value = answer(store, extra, config, &counter, &q)?;
    counter.save();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let empty = Vec::new();
    let results = value["results"].as_array().unwrap_or(&empty);
    if results.is_empty() {
        println!("nothing matches {:?}", q.query);
    }
    for r in results {
        println!(
            "{:>3}. {:<26} {:<10} score {:.3}  {:>4} tokens  {}",
            r["rank"],
            r["id"].as_str().unwrap_or(""),
            r["source"].as_str().unwrap_or(""),
            r["score"].as_f64().unwrap_or(0.0),
            r["tokens"],
            r["text"].as_str().unwrap_or("")
        );
    }
    if let Some(budget) = q.budget {
        println!(
            "packed {} of {budget} tokens:\n{}",
            value["tokens"],
            value["block"].as_str().unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_query(line: &str) -> Result<RecallRequest, String> {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(serde_json::Value::String(query)) => Ok(RecallRequest {
            query,
            k: None,
            budget: None,
        }),
        Ok(v @ serde_json::Value::Object(_)) => serde_json::from_value(v)
            .map_err(|e| format!("{e} (expected {{\"query\": …, \"k\": …, \"budget\": …}})")),
        Ok(_) => Err("expected a JSON object {\"query\": …} or a JSON string".into()),
        Err(e) => Err(format!("not JSON: {e}")),
    }
}

/// One query through the session-start recall path: a list of k items after the
/// factual ones, or with a budget, everything that fits.
fn answer(
    store: &MemoryStore,
    extra: &Opened,
    config: &Config,
    counter: &CostCache<'_, LazyVocabulary>,
    q: &RecallRequest,
) -> Result<serde_json::Value> {
    let sources = extra.sources(&config.memory, store);
    let injection = ops::recall(&sources, &config.memory, q, counter)?;
    if let Some(e) = counter.counter().error() {
        bail!("recall reports exact token costs, and the model's tokenizer did not load: {e}");
    }
    tracing::debug!("phase: recalled and packed");
    let results: Vec<_> = injection
        .items
        .iter()
        .enumerate()
        .map(|(i, p)| {
            serde_json::json!({
                "rank": i + 1,
                "id": p.candidate.id,
                "section": p.candidate.section,
                "source": p.candidate.source,
                "score": p.candidate.score,
                "tokens": p.tokens,
                "text": p.candidate.text,
            })
        })
        .collect();
    let mut value = serde_json::json!({"query": q.query, "results": results});
    if let Some(budget) = q.budget {
        value["tokens"] = serde_json::json!(injection.tokens);
        value["budget"] = serde_json::json!(budget);
        value["skipped"] = serde_json::json!(injection.skipped);
        value["block"] = serde_json::json!(injection.text);
    }
    Ok(value)
}

fn status(store: &MemoryStore, config: &Config, json: bool) -> Result<ExitCode> {
    let status = ops::status(store);
    let counts = status.counts?;
    let n_ctx = config.engine.n_ctx;
    let budget = harvey::memory::recall::budget(n_ctx, config.memory.budget_pct);
    if json {
        let per_type: serde_json::Map<String, serde_json::Value> = counts
            .iter()
            .map(|(t, a, r)| {
                (
                    t.as_str().to_string(),
                    serde_json::json!({"active": a, "archived": r}),
                )
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "store": status.dir,
                "types": per_type,
                "n_ctx": n_ctx,
                "budget_pct": config.memory.budget_pct,
                "budget_tokens": budget,
            })
        );
    } else {
        println!("store  {}", status.dir.display());
        match status.vectors {
            Some(v) => {
                let (with, without) = v.coverage?;
                println!(
                    "vectors {with} of {} active memories ({})",
                    with + without,
                    v.model
                );
            }
            None => println!("vectors none: no embedder, recall is full-text only"),
        }
        for (t, active, archived) in counts {
            println!(
                "  {:<18} {active:>5} active  {archived:>5} archived",
                t.as_str()
            );
        }
        println!(
            "budget n_ctx {n_ctx} (engine.n_ctx; the live context may be smaller if the model was trained on less) × budget_pct {} = {budget} tokens",
            config.memory.budget_pct
        );
    }
    Ok(ExitCode::SUCCESS)
}
