//! The model's command tools: `run_command` (any program, no shell, only after the
//! user's yes — even for allowlisted programs — and refused where nobody can answer,
//! e.g. `harvey run` or `harvey tool call`) and `git` (read-only subcommands, never
//! asks; named actions, not free arguments). Both run under the session's limits (timeout, output cap, no secrets in the
//! environment) and write one audit line per decision.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{arg_int, arg_str, Approval, Param, ParamKind, Tool, ToolError};
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

pub(crate) const GIT_PARAMS: &[Param] = &[
    Param {
        name: "action",
        kind: ParamKind::Enum {
            values: command::git::actions::ACTIONS,
        },
        required: true,
        help: "",
    },
    Param {
        name: "rev",
        kind: ParamKind::Str { max_len: 80 },
        required: false,
        help: "commit or range",
    },
    Param {
        name: "path",
        kind: ParamKind::Str { max_len: 200 },
        required: false,
        help: "a file",
    },
    Param {
        name: "line",
        kind: ParamKind::Int {
            min: 1,
            max: 1_000_000,
        },
        required: false,
        help: "",
    },
    Param {
        name: "n",
        kind: ParamKind::Int { min: 1, max: 50 },
        required: false,
        help: "",
    },
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

/// `git(action, rev?, path?, line?, n?)`: read-only. The action names the question
/// ([`command::git::actions`]); harvey builds the invocations.
pub struct Git(pub CommandPlace);

impl Git {
    /// Runs one invocation (subcommand first): its output block, or why it failed.
    fn run(&self, words: Vec<String>) -> Result<String, ToolError> {
        let abort = self.0.abort.clone();
        let report = command::run_git(
            &self.0.place(),
            Who::Model,
            words,
            &mut |_| {},
            &move || abort.is_raised(),
        );
        let exited_0 = report
            .result
            .as_ref()
            .is_ok_and(|o| o.ending == command::Ending::Exited(0));
        match result(report) {
            Ok(text) if !exited_0 => Err(ToolError::Failed(text)),
            other => other,
        }
    }
}

impl Tool for Git {
    fn name(&self) -> &'static str {
        "git"
    }
    fn route(&self) -> Option<&'static str> {
        Some("commits: the last commit, who committed or changed what, a file's history, how many commits, uncommitted changes")
    }
    fn description(&self) -> &'static str {
        "Read the git history (read-only): pick the action that asks your question (last_commit is the newest commit)."
    }
    fn params(&self) -> &'static [Param] {
        GIT_PARAMS
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let ask = command::git::actions::Ask {
            action: arg_str(args, "action").unwrap_or_default(),
            rev: arg_str(args, "rev"),
            path: arg_str(args, "path"),
            line: arg_int(args, "line"),
            n: arg_int(args, "n"),
        };
        let plan = command::git::actions::plan(&ask).map_err(ToolError::BadArguments)?;
        let mut out = vec![format!("({})", plan.label)];
        let patch = plan.patch;
        for (i, words) in plan.runs.into_iter().enumerate() {
            let status = words.first().is_some_and(|w| w == "status");
            let text = self.run(words)?;
            // A later command that printed nothing adds nothing: asked "Are there any
            // uncommitted changes?" with one new file, the status named it, the diff of
            // committed files said "(no output)", and the 1.5B answered "Yes, there are
            // uncommitted changes" without the file.
            if i > 0 && text.lines().nth(1).map(str::trim) == Some("(no output)") {
                continue;
            }
            out.push(if status {
                command::git::actions::describe_status(&text)
            } else {
                text
            });
        }
        if let Some(words) = patch {
            out.extend(command::git::patch::shown(&self.run(words)?));
        }
        Ok(out.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::agent::fixture::Fixture;

    fn git_tool(dir: &std::path::Path) -> Git {
        Git(CommandPlace {
            workspace: dir.to_path_buf(),
            settings: Settings {
                safe_mode: true,
                allowed: Settings::default_allowed(),
                timeout: std::time::Duration::from_secs(30),
            },
            audit: AuditLog::new(&dir.join("agents")),
            abort: AbortFlag::new(),
        })
    }

    fn call(tool: &Git, args: serde_json::Value) -> Result<String, ToolError> {
        let args = args.as_object().cloned().unwrap_or_default();
        super::super::call::validate(tool.params(), &args)?;
        tool.call(&args)
    }

    /// Each action on the agent benchmark's repository (three commits by `bench`, the
    /// newest "Document the default harbour in the README", one untracked file): the
    /// output holds what the question asks.
    #[test]
    fn each_git_action_answers_its_question_on_a_fixture_repository() {
        let f = Fixture::create().unwrap();
        if !f.has_git {
            return;
        }
        let tool = git_tool(&f.dir);
        let ok = |args: serde_json::Value| {
            call(&tool, args.clone()).unwrap_or_else(|e| panic!("{args}: {e}"))
        };
        let last = ok(serde_json::json!({"action": "last_commit"}));
        assert!(last.starts_with("(the newest commit (HEAD)"), "{last}");
        for fact in [
            "Author: bench",
            "2024-05-03",
            "Document the default harbour",
            "README.md",
            "notes/ideas.md",
        ] {
            assert!(last.contains(fact), "{fact}: {last}");
        }
        assert!(!last.contains("Add high water mark"), "not HEAD~: {last}");
        let count = ok(serde_json::json!({"action": "commit_count"}));
        assert_eq!(count.lines().last(), Some("3"), "{count}");
        let first = ok(serde_json::json!({"action": "show_commit", "rev": "HEAD~2"}));
        assert!(
            first.contains("Initial commit: tide table parser")
                && first.contains("+pub fn parse_tide_table"),
            "{first}"
        );
        let history = ok(serde_json::json!({"action": "file_history", "path": "src/main.rs"}));
        assert!(
            history.contains("2024-05-02 bench - Add high water mark calculation"),
            "{history}"
        );
        assert!(!history.contains("Initial commit"), "{history}");
        let blame =
            ok(serde_json::json!({"action": "who_changed", "path": "README.md", "line": 5}));
        assert!(
            blame.contains("bench") && blame.contains("2024-05-03") && blame.contains("Port Isaac"),
            "{blame}"
        );
        assert_eq!(
            blame.lines().filter(|l| l.contains("bench")).count(),
            1,
            "{blame}"
        );
        let root = ok(serde_json::json!({"action": "show_commit", "rev": "first"}));
        assert!(
            root.contains("Initial commit: tide table parser")
                && root.contains("+pub fn parse_tide_table")
                && !root.contains("Add high water mark"),
            "{root}"
        );
        let authors = ok(serde_json::json!({"action": "who_changed"}));
        assert!(
            authors.contains("bench - 2024-05-03 - Document the default harbour"),
            "{authors}"
        );
        let open = ok(serde_json::json!({"action": "uncommitted"}));
        assert!(
            open.contains(
                "Yes: 1 file is not committed (notes/todo.md):\n- notes/todo.md: new file, never committed"
            ),
            "{open}"
        );
        assert!(
            !open.contains("(no output)") && !open.contains("diff --stat"),
            "the diff of committed files printed nothing and is left out: {open}"
        );
        let log = ok(serde_json::json!({"action": "log", "n": 2}));
        let commits: Vec<&str> = log.lines().filter(|l| l.contains(" bench - ")).collect();
        assert_eq!(commits.len(), 2, "{log}");
        assert!(commits[0].contains("Document the default harbour"), "{log}");
        let diff = ok(serde_json::json!({"action": "diff", "rev": "HEAD~1..HEAD"}));
        assert!(
            diff.contains("+- The default harbour is Port Isaac."),
            "{diff}"
        );
        let bad = call(
            &tool,
            serde_json::json!({"action": "show_commit", "rev": "no-such-rev"}),
        );
        assert!(matches!(bad, Err(ToolError::Failed(_))), "{bad:?}");
        let bad = call(&tool, serde_json::json!({"action": "file_history"}));
        assert!(
            matches!(&bad, Err(ToolError::BadArguments(m)) if m.contains("path")),
            "{bad:?}"
        );
    }
}
