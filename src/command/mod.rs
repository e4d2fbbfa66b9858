//! Running programs for the user (`!prog`, `/run`, `/git`) and the model (the
//! `run_command` and `git` tools), safely: no shell ([`argv`]), safe mode's allowlist on
//! the resolved program ([`policy`]), read-only git ([`git`]), an environment without
//! secrets ([`env`]), a timeout and process-group kill ([`exec`]), and one audit line
//! per decision ([`audit`]).
//!
//! Nothing here prints or reads the terminal: questions go through an `ask` callback
//! (absent where nobody can answer, e.g. `harvey run`) and output through a callback.

pub mod argv;
pub mod audit;
pub mod env;
pub mod exec;
pub mod git;
pub mod policy;

use std::path::Path;
use std::time::Duration;

pub use audit::{AuditLog, Decision, Entry, Who};
pub use exec::{Ending, Outcome};
pub use policy::{Settings, Verdict};

/// Why a command did not run or could not be started.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("{0}: no such program (bare names are looked up in PATH; paths are relative to the workspace)")]
    NotFound(String),
    #[error("{0}")]
    Refused(String),
    #[error("cannot start {0}: {1}")]
    Start(String, std::io::Error),
}

/// Asks the user a yes/no question; `true` = yes.
pub type Ask<'a> = &'a dyn Fn(&str) -> bool;

/// Where commands run and what governs them.
pub struct Place<'a> {
    pub workspace: &'a Path,
    pub settings: &'a Settings,
    pub audit: &'a AuditLog,
    /// Variables added to the cleaned environment (a skill script's `HARVEY_*`).
    pub env: &'a [(String, String)],
}

/// What happened to one command.
#[derive(Debug)]
pub struct Report {
    pub who: Who,
    /// Program and arguments as given (for git: `git` and what followed it).
    pub words: Vec<String>,
    pub decision: Decision,
    /// The run, or why it did not run.
    pub result: Result<Outcome, String>,
    pub timeout: Duration,
    /// The audit line could not be written (the run itself is unaffected).
    pub audit_error: Option<String>,
}

impl Report {
    /// `prog args → exit N` (or why it did not run).
    pub fn summary(&self) -> String {
        let command = argv::display(&self.words);
        match &self.result {
            Ok(o) => format!("{command} → {}", o.ending.describe(self.timeout)),
            Err(why) => format!("{command} → not run: {why}"),
        }
    }

    /// The block attached to the next user message: the headline, then the kept output.
    pub fn attachment(&self) -> Option<String> {
        let o = self.result.as_ref().ok()?;
        let body = if o.kept.trim().is_empty() {
            "(no output)".to_string()
        } else {
            o.kept.trim_end().to_string()
        };
        Some(format!("[command: {}]\n{body}", self.summary()))
    }

    /// The session record's note for this command.
    pub fn note(&self) -> String {
        let who = match self.who {
            Who::User => "user",
            Who::Model => "model",
        };
        let bytes = match &self.result {
            Ok(o) => format!(", {} bytes of output", o.bytes),
            Err(_) => String::new(),
        };
        format!("command ({who}): {}{bytes}", self.summary())
    }
}

/// Runs `words` (program first) for `who`: refused, asked about or run according to
/// safe mode — or, with `always_ask`, only after a yes whatever the allowlist says (the
/// model's calls). `ask` is `None` where nobody can answer: then whatever needs a yes
/// is refused.
pub fn run_program(
    place: &Place<'_>,
    who: Who,
    words: Vec<String>,
    always_ask: bool,
    ask: Option<Ask<'_>>,
    on_output: &mut dyn FnMut(&[u8]),
    stop: &dyn Fn() -> bool,
) -> Report {
    let path_var = std::env::var_os("PATH");
    let program = words.first().cloned().unwrap_or_default();
    let resolved = match policy::resolve(&program, place.workspace, path_var.as_deref()) {
        Ok(p) => p,
        Err(e) => return refuse(place, who, words, Decision::Refused, e.to_string()),
    };
    let verdict = if always_ask {
        Verdict::NeedsConsent(format!("the model asks to run {}", argv::display(&words)))
    } else {
        policy::verdict(place.settings, &words, &resolved, place.workspace)
    };
    let decision = match verdict {
        Verdict::Allowlisted => Decision::Allowlisted,
        Verdict::SafeModeOff => Decision::SafeModeOff,
        Verdict::NeedsConsent(why) => match ask {
            None => {
                let reason = format!("{why}; it needs a yes and nobody can answer here (harvey run, or a session without a terminal)");
                return refuse(place, who, words, Decision::Refused, reason);
            }
            Some(ask) => {
                let question = format!("{why}. Run `{}`? [y/N] ", argv::display(&words));
                if !ask(&question) {
                    return refuse(
                        place,
                        who,
                        words,
                        Decision::Declined,
                        "the user said no".into(),
                    );
                }
                Decision::Confirmed
            }
        },
    };
    execute(place, who, words, &resolved, decision, on_output, stop)
}

/// `git` + `args` (subcommand first), read-only (see [`git`]); never asks. Refused,
/// with a line in the audit log, when an option or a path is not allowed or the
/// repository's config cannot be made safe.
pub fn run_git(
    place: &Place<'_>,
    who: Who,
    args: Vec<String>,
    on_output: &mut dyn FnMut(&[u8]),
    stop: &dyn Fn() -> bool,
) -> Report {
    let words: Vec<String> = std::iter::once("git".to_string())
        .chain(args.iter().cloned())
        .collect();
    let argv = match git_argv(place, &args) {
        Ok(a) => a,
        Err(e) => return refuse(place, who, words, Decision::Refused, e.to_string()),
    };
    let full: Vec<String> = std::iter::once("git".to_string())
        .chain(argv.args)
        .collect();
    let mut report = execute(
        place,
        who,
        full,
        &argv.program,
        Decision::ReadOnly,
        on_output,
        stop,
    );
    report.words = words;
    report
}

/// The git program and its checked arguments.
struct GitArgv {
    program: std::path::PathBuf,
    args: Vec<String>,
}

/// Options first (no process), then paths, then the repository's drivers.
fn git_argv(place: &Place<'_>, args: &[String]) -> Result<GitArgv, CommandError> {
    git::argv(args, &[])?;
    git::paths::check(place.workspace, &args[1..]).map_err(|why| {
        CommandError::Refused(format!(
            "{why} (git reads only what the read tools may: inside the workspace, not agents/, .git/ or secret-looking files)"
        ))
    })?;
    let path_var = std::env::var_os("PATH");
    let program = policy::resolve("git", place.workspace, path_var.as_deref())?;
    let drivers = git::drivers::neutralising(&program, place.workspace, &args[0])?;
    Ok(GitArgv {
        args: git::argv(args, &drivers)?,
        program,
    })
}

fn refuse(
    place: &Place<'_>,
    who: Who,
    words: Vec<String>,
    decision: Decision,
    reason: String,
) -> Report {
    let entry = Entry::new(who, &words, place.workspace, decision, Some(&reason));
    let audit_error = place.audit.append(&entry).err().map(|e| e.to_string());
    Report {
        who,
        words,
        decision,
        result: Err(reason),
        timeout: place.settings.timeout,
        audit_error,
    }
}

fn execute(
    place: &Place<'_>,
    who: Who,
    words: Vec<String>,
    resolved: &Path,
    decision: Decision,
    on_output: &mut dyn FnMut(&[u8]),
    stop: &dyn Fn() -> bool,
) -> Report {
    let vars = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    let spec = exec::Spec {
        program: resolved,
        args: &words[1..],
        cwd: place.workspace,
        env: env::cleaned(vars)
            .into_iter()
            .chain(place.env.iter().cloned())
            .collect(),
        timeout: place.settings.timeout,
    };
    let result = exec::run(&spec, on_output, stop).map_err(|e| e.to_string());
    let mut entry = Entry::new(who, &words, place.workspace, decision, None);
    match &result {
        Ok(o) => {
            entry.exit = o.ending.code();
            entry.ended = Some(o.ending.describe(place.settings.timeout));
            entry.duration_ms = Some(u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX));
            entry.bytes = Some(o.bytes);
        }
        Err(e) => entry.reason = Some(e.clone()),
    }
    let audit_error = place.audit.append(&entry).err().map(|e| e.to_string());
    Report {
        who,
        words,
        decision,
        result,
        timeout: place.settings.timeout,
        audit_error,
    }
}
