//! `harvey`: command line -> config -> app -> REPL or one-shot run.
//! Exit codes: 0 ok, 1 runtime error, 2 usage error.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use harvey::app::{App, AppOptions};
use harvey::chat::stop_note;
use harvey::repl;

/// A terminal agent that runs a local GGUF model in-process and remembers across sessions.
///
/// Without a subcommand harvey starts an interactive chat in the workspace (the current
/// directory unless --workdir). Files it keeps live under <workspace>/agents/; settings
/// come from <workspace>/agents/harvey.yaml (see harvey.yaml in the repository for every
/// key and its default).
#[derive(Debug, Parser)]
#[command(name = "harvey", version, about, long_about)]
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
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Answer one prompt and exit (the prompt comes from the argument or from stdin).
    Run(RunArgs),
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The prompt; read from stdin when omitted.
    prompt: Option<String>,
    /// Print {reply, prompt_tokens, evaluated_tokens, completion_tokens, prefill_tps,
    /// decode_tps, ttft_ms, stop} as JSON instead of the plain reply.
    #[arg(long)]
    json: bool,
    /// Longest reply in tokens (default: sampling.max_tokens from the config).
    #[arg(long, value_name = "N")]
    max_tokens: Option<u32>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
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
    match cli.command {
        None => interactive(&options),
        Some(Command::Run(args)) => run_once(&options, args),
    }
}

fn interactive(options: &AppOptions) -> Result<ExitCode> {
    eprintln!("loading model…");
    let mut app = App::open(options)?;
    let abort = app.abort.clone();
    ctrlc::set_handler(move || abort.raise()).context("cannot install the Ctrl-C handler")?;
    repl::run(&mut app).context("terminal error")?;
    Ok(ExitCode::SUCCESS)
}

fn run_once(options: &AppOptions, args: RunArgs) -> Result<ExitCode> {
    let prompt = match args.prompt {
        Some(p) => p,
        None => read_stdin_prompt()?,
    };
    if prompt.trim().is_empty() {
        eprintln!("error: empty prompt: pass PROMPT or pipe text on stdin (harvey run --help)");
        return Ok(ExitCode::from(2));
    }
    let mut app = App::open(options)?;
    if let Some(n) = args.max_tokens {
        app.config.sampling.max_tokens = n.max(1);
    }
    let mut stdout = std::io::stdout();
    let stream = !args.json;
    let completion = app.turn(&prompt, &mut |piece| {
        if stream {
            // A closed pipe only loses output; the run itself still completes.
            let _ = stdout
                .write_all(piece.as_bytes())
                .and_then(|()| stdout.flush());
        }
    })?;
    if args.json {
        let s = &completion.stats;
        let value = serde_json::json!({
            "reply": completion.text,
            "prompt_tokens": s.prompt_tokens,
            "evaluated_tokens": s.evaluated_tokens,
            "completion_tokens": s.completion_tokens,
            "prefill_tps": s.prefill_tps,
            "decode_tps": s.decode_tps,
            "ttft_ms": s.ttft_ms,
            "stop": completion.stop,
        });
        println!("{value}");
    } else {
        println!();
        if let Some(note) = stop_note(completion.stop) {
            eprintln!("{note}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn read_stdin_prompt() -> Result<String> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        bail!("no prompt: pass PROMPT, or pipe text on stdin (harvey run --help)");
    }
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .context("cannot read the prompt from stdin")?;
    Ok(text)
}
