//! `harvey`: command line -> config -> app -> REPL or one-shot run.
//! Exit codes: 0 ok, 1 runtime error (also: a session record that could not be written),
//! 2 usage error, 128+N `run` or the REPL ended by signal N (130 for Ctrl-C; the session
//! is closed first).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use harvey::app::{engine_params, App, AppOptions};
use harvey::engine::KvCacheType;
use harvey::repl;

mod cli;

/// The workspace directory and its config, for the subcommands that load no model; the
/// config's notices (keys of the Go tool's file) go to stderr, once.
fn open_workspace(options: &AppOptions) -> Result<(PathBuf, harvey::config::Config)> {
    let workspace = options.workspace.canonicalize().with_context(|| {
        format!(
            "workspace {} is not a directory",
            options.workspace.display()
        )
    })?;
    let config = harvey::config::load(&workspace)?;
    for notice in &config.notices {
        eprintln!("warning: {notice}");
    }
    Ok((workspace, config))
}

/// What `harvey --help` ends with: the two commands of the README and where the guide is.
const AFTER_HELP: &str = "\
Start here, in harvey's repository: scripts/start.sh installs what is missing, fetches the
default model, builds harvey and starts it in the current directory; scripts/test.sh runs
every check. The user guide is docs/ in the repository (docs/README.md lists its pages;
docs/configuration.md has every key).

Example: harvey run \"What version is this package?\"";

/// A terminal agent that runs a local GGUF model in-process and remembers across sessions.
///
/// Without a subcommand harvey starts an interactive chat in the workspace (the current
/// directory unless --workdir). Files it keeps live under <workspace>/agents/; settings
/// come from <workspace>/agents/harvey.yaml (see harvey.yaml in the repository for every
/// key and its default). The one thing kept outside the workspace is the evaluated head of
/// the system prompt per model (no workspace data; safe to delete): $HARVEY_CACHE_DIR,
/// else $XDG_CACHE_HOME/harvey/prefix, else ~/.cache/harvey/prefix
/// (engine.cache_shared: false turns it off).
#[derive(Debug, Parser)]
#[command(name = "harvey", version, about, long_about, after_help = AFTER_HELP)]
struct Cli {
    /// Workspace directory (default: the current directory).
    #[arg(short = 'w', long = "workdir", value_name = "DIR", global = true)]
    workdir: Option<PathBuf>,
    /// GGUF model file. Otherwise: model.path in the config, $HARVEY_MODEL, models/ in
    /// the workspace or the repository, ~/Models.
    #[arg(short = 'm', long = "model", value_name = "PATH", global = true)]
    model: Option<PathBuf>,
    /// Show llama.cpp's and harvey's logs on stderr (RUST_LOG also works).
    #[arg(short = 'v', long, global = true)]
    verbose: bool,
    /// Start by continuing the newest recorded session (its exchanges are restored).
    #[arg(long, conflicts_with = "continue_session")]
    resume: bool,
    /// Start by continuing a recorded session (a file in agents/sessions/).
    #[arg(long = "continue", value_name = "FILE")]
    continue_session: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Answer one prompt and exit (the prompt comes from the argument or from stdin), or
    /// each line of a file in one session (--each).
    ///
    /// Example: harvey run --json "What version is this package?"
    /// (or, one question per line: harvey run --json --each questions.txt)
    Run(cli::run::RunArgs),
    /// Measure load time, prefill/decode speed against a raw llama.cpp loop and beside
    /// llama.cpp's own llama-bench (scripts/build-llama-bench.sh builds it), TTFT over
    /// the turns of a scripted chat (with and without KV prefix reuse), peak memory, both KV
    /// cache types, and prompt-lookup decoding (what verifying k drafts costs; decode speed
    /// with engine.lookup off, auto and on when replies quote the context and when not);
    /// --footprint adds the memory scenario of a full session (chat model, embedder, a
    /// 100k-chunk RAG store, a chat turn and a summary) against its goal. --agent runs the
    /// agent benchmark instead (tool choice, call validity, answers; see --help), --mining
    /// the memory-mining one (what mining keeps from recorded sessions).
    ///
    /// Example: harvey bench --agent --fixture project
    Bench(BenchArgs),
    /// Typed memories for scripts: add, import, list, show, recall (also in batch),
    /// forget, flag, index, rebuild, status. Files live in <workspace>/agents/memories/.
    ///
    /// Example: harvey memory recall "how do I deploy?" --budget 300
    #[command(subcommand)]
    Memory(cli::memory::MemoryCommand),
    /// Run one of the model's tools yourself, or list them (no model is loaded).
    ///
    /// Example: harvey tool call list_files '{"path": "src"}'
    #[command(subcommand)]
    Tool(ToolCommand),
    /// RAG document stores (agents/rag/NAME.harvey.db): new, use, list, status, on, off,
    /// drop, import (a Go harvey store), ingest, query, prune. Recall draws from the
    /// stores in use.
    ///
    /// Example: harvey rag new docs && harvey rag ingest docs/
    #[command(subcommand)]
    Rag(cli::knowledge::RagCommand),
    /// The knowledge base (agents/harvey-knowledge.db): projects, observations, concepts
    /// and links; import copies the Go harvey's. Works without any setting: the first
    /// project is the workspace's name.
    ///
    /// Example: harvey kb observe --kind decision "We deploy from the release branch only"
    #[command(subcommand)]
    Kb(cli::knowledge::KbCommand),
    /// The GGUF models harvey can find, described from their headers (no weights
    /// loaded): list, show, and pull to download one.
    ///
    /// Example: harvey model list
    #[command(subcommand)]
    Model(cli::model::ModelCommand),
    /// The workspace's skills (agents/skills/NAME/SKILL.md, the Agent Skills format the
    /// Go harvey reads): list, show. Run them in the REPL: /skill run NAME or /NAME.
    ///
    /// Example: harvey skill list --json
    #[command(subcommand)]
    Skill(cli::skill::SkillCommand),
    /// The evidence index each question is answered from (agents/evidence.db: the
    /// workspace's files, git history, memories and session summaries): refresh, show
    /// QUESTION, stats. Derived: deleting it loses nothing.
    ///
    /// Example: harvey evidence show "Which file defines the config loader?"
    #[command(subcommand)]
    Evidence(cli::evidence::EvidenceCommand),
}

#[derive(Debug, Subcommand)]
enum ToolCommand {
    /// List the tools with their arguments.
    ///
    /// Example: harvey tool list --json
    List {
        /// Print JSON (name, description, writes, params).
        #[arg(long)]
        json: bool,
    },
    /// Call a tool with JSON arguments. run_command is refused here (it needs a yes in the
    /// REPL); git runs read-only subcommands.
    ///
    /// Example: harvey tool call read_file '{"path": "README.md", "start_line": 1, "end_line": 20}'
    Call {
        /// Tool name (see `harvey tool list`).
        name: String,
        /// Arguments as a JSON object (default: {}).
        #[arg(default_value = "{}")]
        arguments: String,
        /// Print {"ok": true, "result": …} or {"ok": false, "error": …}.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
struct BenchArgs {
    /// Turns of the scripted chat.
    #[arg(long, default_value_t = 10)]
    turns: usize,
    /// Tokens generated when measuring decode speed.
    #[arg(long, default_value_t = 128)]
    decode_tokens: usize,
    /// Reply length per chat turn, in tokens.
    #[arg(long, default_value_t = 32)]
    turn_tokens: usize,
    /// Decode and prefill threads (default: engine.threads from the config).
    #[arg(long)]
    threads: Option<u32>,
    /// KV cache type of the main run: f16 or q8_0 (default: engine.kv_cache_type).
    #[arg(long, value_parser = parse_kv_cache_type)]
    kv_cache_type: Option<KvCacheType>,
    /// Cache depths (tokens, comma-separated) at which every KV cache type's decode speed
    /// is measured; 0 measures sizes only.
    #[arg(long, value_delimiter = ',', default_value = "512,3000")]
    kv_depths: Vec<usize>,
    /// Also run the memory-footprint scenario: load the chat model and the embedder
    /// (memory.embedder), build a RAG store of synthetic chunks and unit vectors in a
    /// temporary directory (not embedded by the model; ~1 min for 100k on 2 cores), query
    /// it, answer one chat turn and write one summary aside (in the chat context's free
    /// cells when they suffice). Reports peak RSS, weights (both files), the chat KV cache
    /// and any aside context's, the rest, and whether
    /// peak ≤ weights + chat KV + 60 MB holds. Linux only for RSS.
    #[arg(long)]
    footprint: bool,
    /// Run only the footprint scenario (a clean peak: nothing else ran in the process).
    #[arg(long)]
    footprint_only: bool,
    /// Chunks in the footprint scenario's store.
    #[arg(long, default_value_t = harvey::bench::footprint::DEFAULT_CHUNKS)]
    footprint_chunks: usize,
    /// Longest reply per prompt of the prompt-lookup workloads ("quote": replies that copy
    /// an attached file or passage; "free": open-ended text), each run with engine.lookup
    /// off, auto and on; 0 skips them.
    #[arg(long, default_value_t = 192)]
    lookup_tokens: usize,
    /// Run the agent benchmark instead of the speed measurements: tasks such as reading
    /// a file, listing a folder, finding a function, git log/status/show, searching and
    /// writing memories, writing and editing files, running a command, and questions that
    /// need no tool. Each is one message in a fresh session of the agent `harvey run`
    /// uses (same prompt, tools and memory injection), in a temporary workspace holding a
    /// small Rust crate with a git history and two memories. Greedy sampling. Scores the
    /// first tool called, its arguments against the tool's schema, the reply, and whether
    /// the reply repeats the prompt; reports counts, seconds and a line per task. Writes
    /// and commands are refused, as in `harvey run` (no one to ask).
    #[arg(long, conflicts_with_all = ["footprint", "footprint_only"])]
    agent: bool,
    /// With --agent: run only the first N tasks.
    #[arg(long, value_name = "N", requires = "agent")]
    tasks: Option<usize>,
    /// With --agent: run only the tasks of these ids (comma-separated; the JSON report
    /// and the table name them), e.g. `--only version,not_committed`.
    #[arg(long, value_name = "ID,…", requires = "agent", value_delimiter = ',')]
    only: Vec<String>,
    /// With --agent: run the requests of FILE instead of the built-in tasks, one per line:
    /// the acceptable first tools (comma-separated, or `none`), a tab, the request; `#`
    /// lines are comments. Replies are not checked (tests/fixtures/route/heldout.tsv).
    #[arg(long, value_name = "FILE", requires = "agent")]
    task_file: Option<std::path::PathBuf>,
    /// With --agent: longest reply per generation, in tokens.
    #[arg(long, value_name = "N", default_value_t = harvey::bench::agent::DEFAULT_REPLY_TOKENS)]
    agent_tokens: u32,
    /// With --agent: who picks each task's first step — `auto`/`on`/`off` set
    /// `tools.route` for the run; `only` runs just the router on every task (seconds per
    /// task, no turn) and scores its choice as the first tool.
    #[arg(long, value_name = "MODE", requires = "agent", value_parser = ["auto", "on", "off", "only"])]
    route: Option<String>,
    /// With --agent: `tools.schemas` for the run — `compact` (one line per tool, the
    /// default) or `template` (every tool's JSON schema in the template's tools section),
    /// to compare what the fixed prompt's size does to the answers.
    #[arg(long, value_name = "FORM", requires = "agent", value_parser = ["compact", "template"])]
    schemas: Option<String>,
    /// With --agent: the skills run instead of the built-in tasks. The fixture gains three
    /// skills (agents/skills: a release checklist, a changelog entry, a code review) and
    /// the requests fit one of them without naming it, or none; scores whether the router
    /// chose the skill that fits (or none) and the reply its steps lead to.
    #[arg(long, requires = "agent", conflicts_with = "task_file")]
    skills: bool,
    /// With --agent: the workspace the tasks run in. `tide` (the default): a five-file
    /// Rust crate with three commits and the built-in tasks above. `project`: brindle, a
    /// static-site generator shaped like a real repository (53 files: nested src/
    /// modules, docs/, tests/, examples/, two licence files; 240 commits by six people
    /// and a bot; one changed and one new file not committed; a decision kept as a
    /// memory), with 16 requests of its own that name no tool, as a new user asks (who
    /// made the latest commit, how to deploy, where a setting comes from, what a test
    /// checks, …). --skills needs `tide`.
    #[arg(long, value_name = "NAME", requires = "agent", value_parser = ["tide", "project"])]
    fixture: Option<String>,
    /// Run the mining benchmark instead: each recorded session (.spmd) of --sessions goes
    /// through end-of-session mining as /exit and /memory mine run it (proposals under the
    /// JSON grammar, then the grounding, completeness, specificity, duplicate and secret
    /// screen), greedy, in a fresh temporary workspace and memory store (nothing is saved;
    /// the records are only read). Reports per session the proposals, the kept memories
    /// with their evidence, and the dropped ones by reason; then totals.
    #[arg(long, conflicts_with_all = ["agent", "pace", "footprint", "footprint_only"])]
    mining: bool,
    /// With --mining: the directory of recorded sessions (default: tests/fixtures/sessions,
    /// in the current directory or else in harvey's repository).
    #[arg(long, value_name = "DIR", requires = "mining")]
    sessions: Option<PathBuf>,
    /// Run only the decode-pace comparison: harvey's decode speed at a KV depth beside
    /// llama.cpp's own benchmark loop (llama-bench's context shape: depth + N cells, one
    /// sequence, random tokens, nothing sampled), the same loop in harvey's context shape,
    /// and harvey's engine greedy and with the config's sampling; interleaved rounds,
    /// min/median/max, ratios to the llama-bench loop. --decode-tokens sets N.
    #[arg(long, conflicts_with_all = ["agent", "footprint", "footprint_only"])]
    pace: bool,
    /// With --pace: tokens in the cache before the timed decoding.
    #[arg(long, value_name = "TOKENS", default_value_t = 360, requires = "pace")]
    pace_depth: usize,
    /// With --pace: rounds of the four loops.
    #[arg(long, value_name = "N", default_value_t = 5, requires = "pace")]
    pace_rounds: usize,
    /// With --pace: measure this model file too (repeatable); the configured model is
    /// measured first.
    #[arg(long, value_name = "FILE", requires = "pace")]
    pace_model: Vec<std::path::PathBuf>,
    /// Prefill chunk size for the run (default: engine.n_batch from the config).
    #[arg(long, value_name = "N")]
    n_batch: Option<u32>,
    /// llama.cpp's own llama-bench, the reference for prefill (pp512) and decode (tg at the
    /// same depths) beside harvey's, same model, threads and KV cache type (default:
    /// target/llama-bench/bin/llama-bench, built by scripts/build-llama-bench.sh from the
    /// llama.cpp harvey links with its ggml options). Without it harvey's side still runs.
    #[arg(long, value_name = "PATH")]
    llama_bench: Option<PathBuf>,
    /// KV depths (tokens, comma-separated) at which decode is compared with llama-bench's;
    /// 0 is harvey's shortest prompt.
    #[arg(
        long,
        value_name = "TOKENS,…",
        value_delimiter = ',',
        default_value = "0,1500"
    )]
    llama_bench_depths: Vec<usize>,
    /// Timed repetitions of each llama-bench comparison, on both sides.
    #[arg(long, value_name = "N", default_value_t = 3)]
    llama_bench_reps: usize,
    /// Run only the comparison with llama-bench.
    #[arg(long, conflicts_with_all = ["agent", "mining", "pace", "footprint", "footprint_only"])]
    llama_bench_only: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_kv_cache_type(text: &str) -> Result<KvCacheType, String> {
    KvCacheType::parse(text)
        .ok_or_else(|| format!("{text:?} is not a KV cache type: use f16 or q8_0"))
}

fn main() -> ExitCode {
    harvey::platform::tune_allocator();
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    };
    harvey::app::settle_embedders();
    code
}

fn init_logging(verbose: bool) {
    let filter = if verbose {
        tracing_subscriber::EnvFilter::new("debug")
    } else {
        tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"))
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    let options = AppOptions {
        workspace: match cli.workdir {
            Some(dir) => dir,
            None => std::env::current_dir().context("cannot read the current directory")?,
        },
        model: cli.model,
    };
    let resume = match (cli.resume, cli.continue_session) {
        (true, _) => Some(None),
        (false, Some(file)) => Some(Some(file)),
        (false, None) => None,
    };
    match cli.command {
        None => interactive(&options, resume),
        Some(Command::Run(args)) => cli::run::run_once(&options, args),
        Some(Command::Bench(args)) => bench(&options, &args),
        Some(Command::Tool(cmd)) => tool(&options, cmd),
        Some(Command::Memory(cmd)) => cli::memory::run(&options, cmd),
        Some(Command::Rag(cmd)) => cli::knowledge::rag(&options, cmd),
        Some(Command::Kb(cmd)) => cli::knowledge::kb(&options, cmd),
        Some(Command::Model(cmd)) => cli::model::run(&options, cmd),
        Some(Command::Skill(cmd)) => cli::skill::run(&options, cmd),
        Some(Command::Evidence(cmd)) => cli::evidence::run(&options, cmd),
    }
}

fn tool(options: &AppOptions, cmd: ToolCommand) -> Result<ExitCode> {
    let (workspace, config) = open_workspace(options)?;
    let (registry, _) = harvey::app::default_tools(&workspace, &config);
    match cmd {
        ToolCommand::List { json } => {
            if json {
                println!("{}", serde_json::to_string_pretty(&registry.list())?);
            } else {
                println!("tool use is on");
                for t in registry.list() {
                    println!("  {}", t.summary_line());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ToolCommand::Call {
            name,
            arguments,
            json,
        } => {
            let args: serde_json::Map<String, serde_json::Value> =
                match serde_json::from_str(&arguments) {
                    Ok(map) => map,
                    Err(e) => {
                        eprintln!("error: arguments must be a JSON object: {e}");
                        return Ok(ExitCode::from(2));
                    }
                };
            // memory_search packs its result in exact tokens: the model's tokenizer.
            let vocab = (name == "memory_search")
                .then(|| App::resolve(options).ok())
                .flatten()
                .and_then(|(_, _, model)| harvey::engine::Vocabulary::load(&model).ok());
            let ctx = harvey::tools::ToolContext {
                counter: vocab
                    .as_ref()
                    .map(|v| v as &dyn harvey::tokens::TokenCounter),
                provenance: None,
            };
            let result = registry.call_in(&name, &args, harvey::tools::Approval::NobodyToAsk, ctx);
            print_tool_result(&result, json)?;
            Ok(if result.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}

/// Prints a tool's result; a reader that stopped reading (`harvey tool call … | head`)
/// ends the output quietly instead of a panic on the broken pipe.
fn print_tool_result(result: &Result<String, harvey::tools::ToolError>, json: bool) -> Result<()> {
    let text = match (result, json) {
        (Ok(text), false) => text.clone(),
        (Err(e), false) => {
            eprintln!("error: {e}");
            return Ok(());
        }
        (Ok(text), true) => serde_json::json!({"ok": true, "result": text}).to_string(),
        (Err(e), true) => serde_json::json!({"ok": false, "error": e.to_string()}).to_string(),
    };
    cli::emit(&format!("{text}\n"))
}

fn bench(options: &AppOptions, args: &BenchArgs) -> Result<ExitCode> {
    if args.mining {
        return cli::bench_mining::run(options, args.sessions.as_deref(), args.threads, args.json);
    }
    let (workspace, config, model) = App::resolve(options)?;
    let mut params = engine_params(&config, model);
    if let Some(t) = args.threads {
        params.threads = t.max(1);
        params.threads_batch = t.max(1);
    }
    if let Some(kv) = args.kv_cache_type {
        params.kv_cache_type = kv;
    }
    if let Some(n) = args.n_batch {
        params.n_batch = n.max(1);
    }
    if args.agent {
        return bench_agent(params, args);
    }
    if args.pace {
        return bench_pace(params, config.sampling.params(), args);
    }
    let footprint = if args.footprint || args.footprint_only {
        Some(footprint_options(&config, &workspace, args)?)
    } else {
        None
    };
    if let (true, Some(f)) = (args.footprint_only, &footprint) {
        let measured = harvey::bench::footprint::run(&params, f)?;
        if args.json {
            let out = serde_json::json!({ "footprint": measured });
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            print!("{}", harvey::bench::render::footprint(&measured));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let reference = harvey::bench::reference::ReferenceOptions {
        params: params.clone(),
        binary: args.llama_bench.clone(),
        depths: args.llama_bench_depths.clone(),
        decode_tokens: args.decode_tokens.max(1),
        reps: args.llama_bench_reps.max(1),
    };
    if args.llama_bench_only {
        let measured = harvey::bench::reference::run(&reference)?;
        if args.json {
            let out = serde_json::json!({ "llama_bench": measured });
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            print!("{}", harvey::bench::render::reference(&measured));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut report = harvey::bench::run(&harvey::bench::BenchOptions {
        params: params.clone(),
        turns: args.turns.max(1),
        decode_tokens: args.decode_tokens.max(1),
        turn_tokens: args.turn_tokens.max(1),
        kv_depths: args.kv_depths.clone(),
        lookup_tokens: args.lookup_tokens,
    })?;
    report.llama_bench = Some(harvey::bench::reference::run(&reference)?);
    if let Some(f) = &footprint {
        report.footprint = Some(harvey::bench::footprint::run(&params, f)?);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", harvey::bench::render::report(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// `harvey bench --agent`.
fn bench_agent(params: harvey::engine::EngineParams, args: &BenchArgs) -> Result<ExitCode> {
    let report = harvey::bench::agent::run(&harvey::bench::agent::AgentOptions {
        params,
        tasks: args.tasks,
        only: args.only.clone(),
        task_file: args.task_file.clone(),
        reply_tokens: args.agent_tokens.max(1),
        route: args.route.clone(),
        schemas: args.schemas.clone(),
        skills: args.skills,
        fixture: args
            .fixture
            .as_deref()
            .and_then(harvey::bench::agent::fixture::FixtureKind::from_name)
            .unwrap_or_default(),
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", harvey::bench::render::agent(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// `harvey bench --pace`.
fn bench_pace(
    params: harvey::engine::EngineParams,
    sampling: harvey::engine::SamplingParams,
    args: &BenchArgs,
) -> Result<ExitCode> {
    let mut models = vec![params.model_path.clone()];
    models.extend(args.pace_model.iter().cloned());
    let rows = harvey::bench::pace::run(&harvey::bench::pace::PaceOptions {
        params,
        models,
        depth: args.pace_depth,
        n_gen: args.decode_tokens.max(1),
        rounds: args.pace_rounds.max(1),
        sampling,
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", harvey::bench::render::pace(&rows));
    }
    Ok(ExitCode::SUCCESS)
}

/// The footprint scenario's embedder (what `memory.embedder` resolves to) and sizes.
fn footprint_options(
    config: &harvey::config::Config,
    workspace: &std::path::Path,
    args: &BenchArgs,
) -> Result<harvey::bench::footprint::FootprintOptions> {
    let embedder = harvey::app::embedder_path(config, workspace)
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| {
            anyhow::anyhow!(
                "memory.embedder is none: the footprint scenario needs the embedder (set memory.embedder to auto or a file)"
            )
        })?;
    Ok(harvey::bench::footprint::FootprintOptions {
        embedder,
        chunks: args.footprint_chunks.max(1),
        turn_tokens: args.turn_tokens.max(1),
    })
}

fn interactive(options: &AppOptions, resume: Option<Option<String>>) -> Result<ExitCode> {
    eprintln!("loading model…");
    let mut app = App::open(options)?;
    if let Some(which) = resume {
        let path = app
            .find_session(which.as_deref())
            .map_err(anyhow::Error::msg)?;
        let n = app.continue_session(&path).map_err(anyhow::Error::msg)?;
        eprintln!("continuing {} ({n} exchanges)", path.display());
    }
    // The prefix is prepared by the REPL while its first prompt waits.
    let abort = app.abort().clone();
    ctrlc::set_handler(move || abort.raise()).context("cannot install the Ctrl-C handler")?;
    // SIGTERM and SIGHUP run the same end-of-session sequence as /exit.
    let signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ])
    .context("cannot install the SIGTERM/SIGHUP handler")?;
    let ended = repl::run(&mut app, Some(signals)).context("terminal error")?;
    Ok(match ended {
        repl::Ended { saved: false, .. } => ExitCode::from(1),
        repl::Ended {
            signal: Some(signal),
            ..
        } => ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)),
        repl::Ended { signal: None, .. } => ExitCode::SUCCESS,
    })
}
