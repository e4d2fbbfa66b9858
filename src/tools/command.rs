//! The model's command tools: `run_command` (any program, no shell, only after the
//! user's yes — even for allowlisted programs — and refused where nobody can answer,
//! e.g. `harvey run` or `harvey tool call`) and `git` (read-only subcommands, never
//! asks). Both run under the session's limits (timeout, output cap, no secrets in the
//! environment) and write one audit line per decision.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{arg_str, Approval, Param, ParamKind, Tool, ToolError};
use crate::command::{self, AuditLog, Place, Report, Settings, Who};
use crate::engine::AbortFlag;

/// What both tools need: where to run, the limits, the audit log and the Ctrl-C flag.
#[derive(Debug, Clone)]
pub struct CommandPlace {
    pub workspace: PathBuf,
    pub settings: Settings,
    pub audit: AuditLog,
    pub abort: AbortFlag,
}

impl CommandPlace {
    fn place(&self) -> Place<'_> {
        Place {
            workspace: &self.workspace,
            settings: &self.settings,
            audit: &self.audit,
            env: &[],
        }
    }
}

const ARGS: Param = Param {
    name: "args",
    kind: ParamKind::StrList {
        max_items: 32,
        max_len: 200,
    },
    required: false,
    help: "arguments, one per item (no shell: quotes, pipes and globs are not interpreted)",
};

const RUN_PARAMS: &[Param] = &[
    Param {
        name: "program",
        kind: ParamKind::Str { max_len: 100 },
        required: true,
        help: "the program, e.g. cargo",
    },
    ARGS,
];

const GIT_PARAMS: &[Param] = &[
    Param {
        name: "subcommand",
        kind: ParamKind::Enum {
            values: command::git::SUBCOMMANDS,
        },
        required: true,
        help: "status, diff, log, show or blame",
    },
    ARGS,
];

fn string_list(args: &Map<String, Value>, name: &str) -> Vec<String> {
    args.get(name)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The tool result: the output block, or the refusal as an error.
fn result(report: Report) -> Result<String, ToolError> {
    match report.attachment() {
        Some(text) => Ok(text),
        None => Err(ToolError::Refused(
            report.result.err().unwrap_or_else(|| "did not run".into()),
        )),
    }
}

/// `run_command(program, args)`.
pub struct RunCommand(pub CommandPlace);

impl Tool for RunCommand {
    fn name(&self) -> &'static str {
        "run_command"
    }
    fn route(&self) -> Option<&'static str> {
        Some("build or compile the project, run the tests, cargo, make, npm, a script")
    }
    fn description(&self) -> &'static str {
        "Run a program in the workspace (no shell; the user approves every run) and read its output."
    }
    fn params(&self) -> &'static [Param] {
        RUN_PARAMS
    }
    fn writes(&self) -> bool {
        true
    }
    fn asks(&self) -> bool {
        true
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        self.call_approved(args, Approval::NobodyToAsk)
    }
    fn call_approved(
        &self,
        args: &Map<String, Value>,
        approval: Approval,
    ) -> Result<String, ToolError> {
        let program = arg_str(args, "program").unwrap_or_default().to_string();
        let words: Vec<String> = std::iter::once(program)
            .chain(string_list(args, "args"))
            .collect();
        let yes = |_: &str| true;
        let no = |_: &str| false;
        let ask: Option<command::Ask<'_>> = match approval {
            Approval::Allowed => Some(&yes),
            Approval::Declined => Some(&no),
            Approval::NobodyToAsk => None,
        };
        let abort = self.0.abort.clone();
        let report = command::run_program(
            &self.0.place(),
            Who::Model,
            words,
            true,
            ask,
            &mut |_| {},
            &move || abort.is_raised(),
        );
        result(report)
    }
}

/// `git(subcommand, args)`: read-only.
pub struct Git(pub CommandPlace);

impl Tool for Git {
    fn name(&self) -> &'static str {
        "git"
    }
    fn route(&self) -> Option<&'static str> {
        Some("commits, the log, branches, diffs, who changed what, uncommitted changes")
    }
    fn description(&self) -> &'static str {
        "Read the repository with git status, diff, log, show or blame (read-only)."
    }
    fn params(&self) -> &'static [Param] {
        GIT_PARAMS
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let sub = arg_str(args, "subcommand").unwrap_or_default().to_string();
        let words: Vec<String> = std::iter::once(sub)
            .chain(string_list(args, "args"))
            .collect();
        let abort = self.0.abort.clone();
        let report = command::run_git(
            &self.0.place(),
            Who::Model,
            words,
            &mut |_| {},
            &move || abort.is_raised(),
        );
        result(report)
    }
}
