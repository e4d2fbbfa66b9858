//! `harvey bench --agent`: how well a model works as harvey's agent. Each task is one
//! user message in a fresh session of one [`App`] (the model loads once) in a fixture
//! workspace, driven through [`App::agent_turn`] exactly as `harvey run` drives it: the
//! same system prompt, tool registry, call handling and session-start memory injection.
//! When the engine's templates or call parsing change, these numbers move.
//!
//! Scored per task: the first tool called against the expected one, whether its
//! arguments validate against the registry's schema, a substring check of the reply,
//! parroting of the prompt (see [`score`]), seconds and stop reason, and for the tasks
//! that say so the workspace after the task ([`state`]: a memory archived or rewritten,
//! nothing else changed). Writes that need a person's yes (`write_file`, `edit_file`,
//! `run_command`) are refused as in `harvey run`; a memory update or forget goes through
//! only where the request asks for it and names that memory, as unattended in `harvey
//! run`. Returns a report; `render::agent` turns it into text.

pub mod fixture;
mod git;
pub mod memory_tasks;
pub mod project;
pub mod project_tasks;
pub mod score;
pub mod skill_tasks;
pub mod state;
mod summary;
pub mod tasks;

use std::time::Instant;

use serde::Serialize;

use crate::app::App;
use crate::chat::agent::AgentTurn;
use crate::chat::route::Route;
use crate::config::ConfigError;
use crate::config::RouteMode;
use crate::engine::{EngineError, EngineParams, LlamaEngine, StopReason};
use crate::memory::StoreError;

use fixture::{Fixture, FixtureKind};
use tasks::{Expected, Task};

pub use summary::{summarize, Summary};

/// Longest reply per generation unless told otherwise: a rambling model cannot take
/// minutes over one task.
pub const DEFAULT_REPLY_TOKENS: u32 = 256;

/// What to run.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub params: EngineParams,
    /// Run the first N tasks only (`None`: all).
    pub tasks: Option<usize>,
    /// Run only the tasks of these ids (empty: all).
    pub only: Vec<String>,
    /// Run the tasks of this file instead of the built-in ones ([`tasks::parse_file`]).
    pub task_file: Option<std::path::PathBuf>,
    /// `sampling.max_tokens` of every reply.
    pub reply_tokens: u32,
    /// `auto`/`on`/`off`: `tools.route` for the run (`None`: the config's); `only`: the
    /// router alone on every task.
    pub route: Option<String>,
    /// `compact`/`template`: `tools.schemas` for the run (`None`: the config's).
    pub schemas: Option<String>,
    /// The skills run ([`skill_tasks`]): the fixture gains three skills and the tasks
    /// are requests that fit one of them or none. Tide fixture only.
    pub skills: bool,
    /// The workspace, and with it the built-in tasks: tide's ([`tasks::tide`]) or the
    /// project's ([`project_tasks::PROJECT_TASKS`]).
    pub fixture: FixtureKind,
}

#[derive(Debug, thiserror::Error)]
pub enum AgentBenchError {
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    UnknownTask(String),
    #[error("{path}: {message}")]
    TaskFile {
        path: std::path::PathBuf,
        message: String,
    },
    #[error("--skills runs in the tide fixture only (its skills and requests are about tide's files): drop --fixture project or --skills")]
    SkillsNeedTide,
    #[error("git failed while making the fixture workspace: {0}")]
    Git(String),
    #[error("cannot plant the fixture's memories: {0}")]
    Memory(#[from] StoreError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

#[derive(Debug, Clone, Serialize)]
pub struct AgentReport {
    pub model: String,
    /// The GGUF file's name.
    pub model_file: String,
    pub model_bytes: u64,
    pub n_ctx: u32,
    pub reply_tokens: u32,
    /// `tools.max_rounds_per_turn` (the default config's).
    pub max_rounds: usize,
    /// `tools.schemas` of the run (`compact` or `template`).
    pub schemas: String,
    pub load_secs: f64,
    /// The workspace the tasks ran in (`tide` or `project`).
    pub fixture: String,
    pub has_git: bool,
    /// The session's notices and skipped tasks.
    pub notes: Vec<String>,
    pub summary: Summary,
    pub tasks: Vec<TaskResult>,
}

/// One task's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct TaskResult {
    pub id: String,
    pub prompt: String,
    /// Acceptable first tools; empty means "no tool call".
    pub expected: Vec<String>,
    pub first_tool: Option<String>,
    pub first_tool_ok: bool,
    /// The router's choice (`tools.route`): a tool name, `none`, or `None` when no router
    /// ran or it could not choose.
    pub route: Option<String>,
    /// Whether the first call's arguments validate (`None`: no call).
    pub args_valid: Option<bool>,
    pub calls: Vec<CallOutcome>,
    /// The reply check (`None`: not checkable).
    pub answer_ok: Option<bool>,
    pub parroted: bool,
    /// The reply holds a JSON call the turn did not run ([`score::call_in_text`]).
    pub call_in_text: bool,
    pub secs: f64,
    /// Why the final generation ended (`None` when the turn failed).
    pub stop: Option<StopReason>,
    pub reply: String,
    /// The `[memory context]` this task's session started with.
    pub memory_block: String,
    pub error: Option<String>,
    /// The skill the router chose, which ran as the turn.
    pub skill: Option<String>,
    /// In the skills run: whether that is the skill the request fits (or none where
    /// none does). `None` in other runs.
    pub skill_ok: Option<bool>,
    /// The workspace after the task against its [`tasks::StateCheck`] (`None`: none).
    pub state_ok: Option<bool>,
    /// What was wrong with it ([`score::state_problems`]).
    pub state_problems: Vec<String>,
}

/// One call of a task: its one-line summary, schema validity, and whether it ran.
#[derive(Debug, Clone, Serialize)]
pub struct CallOutcome {
    pub call: String,
    pub valid: bool,
    pub ok: bool,
}

/// Builds the fixture, loads the model once and runs the tasks.
pub fn run(opts: &AgentOptions) -> Result<AgentReport, AgentBenchError> {
    if opts.skills && opts.fixture != FixtureKind::Tide {
        return Err(AgentBenchError::SkillsNeedTide);
    }
    let tasks = match &opts.task_file {
        Some(path) => read_tasks(path)?,
        None if opts.skills => skill_tasks::SKILL_TASKS.iter().map(|t| t.task).collect(),
        None if opts.fixture == FixtureKind::Project => project_tasks::PROJECT_TASKS.to_vec(),
        None => tasks::tide(),
    };
    let tasks = only(tasks, &opts.only)?;
    let fixture = Fixture::create_kind(opts.fixture)?;
    if opts.skills {
        fixture.plant_skills()?;
    }
    let started = Instant::now();
    let engine = LlamaEngine::load(&opts.params)?;
    let load_secs = started.elapsed().as_secs_f64();
    let mut app = open_app(&fixture, engine, opts)?;
    let route_only = opts.route.as_deref() == Some("only");
    let route = match opts.route.as_deref() {
        Some("on" | "only") => RouteMode::On,
        Some("off") => RouteMode::Off,
        Some(_) => RouteMode::Auto,
        None => app.config().tools.route,
    };
    app.set_route(route);
    let stable = app.stable_memory_context();
    app.prepare_prefix(&stable);
    let mut notes = app.notices().to_vec();
    if opts.fixture != FixtureKind::Tide {
        notes.push(format!("fixture: {}", opts.fixture.name()));
    }
    let mut results = Vec::new();
    for task in tasks.iter().take(opts.tasks.unwrap_or(tasks.len())) {
        if task.needs_git && !fixture.has_git {
            notes.push(format!("{}: skipped, git is not installed", task.id));
            continue;
        }
        fresh_session(&mut app);
        // The router alone changes nothing: there is no state to check.
        let check = task.state.filter(|_| !route_only);
        let before = check.map(|_| state::Snapshot::take(&fixture.dir));
        let mut result = if route_only {
            route_task(&mut app, task)
        } else {
            run_task(&mut app, task)
        };
        if let (Some(check), Some(before)) = (check, before) {
            result.state_problems = state::problems_after(check, before, &fixture.dir);
            result.state_ok = Some(result.state_problems.is_empty());
        }
        if opts.skills {
            result.skill_ok = skill_tasks::expected(task.id).map(|s| result.skill.as_deref() == s);
        }
        results.push(result);
    }
    let info = app.engine().info();
    Ok(AgentReport {
        model: info.name.clone(),
        model_file: opts
            .params
            .model_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        model_bytes: info.file_bytes,
        n_ctx: info.n_ctx,
        reply_tokens: opts.reply_tokens,
        max_rounds: app.config().tools.max_rounds_per_turn,
        schemas: format!("{:?}", app.config().tools.schemas).to_lowercase(),
        load_secs,
        fixture: opts.fixture.name().to_string(),
        has_git: fixture.has_git,
        notes,
        summary: summarize(&results),
        tasks: results,
    })
}

fn read_tasks(path: &std::path::Path) -> Result<Vec<Task>, AgentBenchError> {
    let text = std::fs::read_to_string(path).map_err(|source| AgentBenchError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    tasks::parse_file(&text).map_err(|message| AgentBenchError::TaskFile {
        path: path.to_path_buf(),
        message,
    })
}

/// The tasks whose ids are in `ids` (all when it is empty), in run order; an id no task
/// has is an error that lists the ids there are.
fn only(tasks: Vec<Task>, ids: &[String]) -> Result<Vec<Task>, AgentBenchError> {
    if let Some(missing) = ids.iter().find(|id| !tasks.iter().any(|t| t.id == *id)) {
        let known: Vec<&str> = tasks.iter().map(|t| t.id).collect();
        return Err(AgentBenchError::UnknownTask(format!(
            "no task \"{missing}\"; the tasks are: {}",
            known.join(", ")
        )));
    }
    Ok(tasks
        .into_iter()
        .filter(|t| ids.is_empty() || ids.iter().any(|id| id == t.id))
        .collect())
}

/// The app a session in the fixture would get from its (default) config, with greedy
/// sampling and bounded replies; the engine settings come from the caller's workspace.
fn open_app(
    fixture: &Fixture,
    engine: LlamaEngine,
    opts: &AgentOptions,
) -> Result<App, AgentBenchError> {
    let mut config = crate::config::load(&fixture.dir)?;
    config.sampling.temperature = 0.0;
    config.sampling.max_tokens = opts.reply_tokens.max(1);
    match opts.schemas.as_deref() {
        Some("template") => config.tools.schemas = crate::config::ToolSchemas::Template,
        Some("compact") => config.tools.schemas = crate::config::ToolSchemas::Compact,
        _ => {}
    }
    Ok(App::with_engine(
        fixture.dir.clone(),
        config,
        Box::new(engine),
    ))
}

/// Forgets the conversation and the pinned memory block, so the next message starts a
/// session: recall runs for it and the block is injected as at any session start.
fn fresh_session(app: &mut App) {
    app.start_fresh_session();
}

fn run_task(app: &mut App, task: &Task) -> TaskResult {
    let started = Instant::now();
    let mut turn = app.agent_turn(task.prompt, &mut |_| {});
    if let (Some(then), Ok(first)) = (task.then, &turn) {
        // The follow-up's reply is scored; the calls of both messages are counted.
        let earlier = first.calls.clone();
        turn = app.agent_turn(then, &mut |_| {}).map(|mut t| {
            t.calls.splice(0..0, earlier);
            t
        });
    }
    let secs = started.elapsed().as_secs_f64();
    let memory_block = app.injection().map(|i| i.text.clone()).unwrap_or_default();
    match turn {
        Ok(turn) => score_turn(app, task, &turn, &memory_block, secs),
        Err(e) => TaskResult {
            error: Some(e.to_string()),
            memory_block,
            ..empty_result(task, secs)
        },
    }
}

/// Only the router on `task`: its choice scored as the first tool.
fn route_task(app: &mut App, task: &Task) -> TaskResult {
    let started = Instant::now();
    let choice = app.choose_route(task.prompt);
    let secs = started.elapsed().as_secs_f64();
    match choice {
        Ok(choice) => {
            let route = choice.as_ref().map(route_name);
            let first_tool = match &choice {
                Some(Route::Tool(name)) => Some(name.clone()),
                _ => None,
            };
            let skill = match &choice {
                Some(Route::Skill(name)) => Some(name.clone()),
                _ => None,
            };
            TaskResult {
                skill,
                first_tool_ok: choice.is_some()
                    && score::first_tool_ok(task.expected, first_tool.as_deref()),
                first_tool,
                route,
                ..empty_result(task, secs)
            }
        }
        Err(e) => TaskResult {
            error: Some(e.to_string()),
            ..empty_result(task, secs)
        },
    }
}

fn route_name(route: &Route) -> String {
    match route {
        Route::Tool(name) => name.clone(),
        Route::Answer => "none".to_string(),
        Route::Skill(name) => format!("skill:{name}"),
    }
}

fn score_turn(
    app: &App,
    task: &Task,
    turn: &AgentTurn,
    memory_block: &str,
    secs: f64,
) -> TaskResult {
    let calls: Vec<CallOutcome> = turn
        .calls
        .iter()
        .map(|c| CallOutcome {
            call: c
                .call
                .as_ref()
                .map_or_else(|| "(unparsed call)".into(), |c| c.summary()),
            valid: score::args_valid(app.tools(), c),
            ok: c.result.is_ok(),
        })
        .collect();
    let first = turn.calls.first();
    let first_tool = first.map(|c| {
        c.call
            .as_ref()
            .map_or_else(|| "(unparsed)".to_string(), |c| c.name.clone())
    });
    let reply = &turn.completion.text;
    TaskResult {
        first_tool_ok: score::first_tool_ok(task.expected, first_tool.as_deref()),
        first_tool,
        route: turn.route.as_ref().map(route_name),
        args_valid: calls.first().map(|c| c.valid),
        calls,
        answer_ok: score::answer_ok(task.check, reply),
        parroted: score::parroted(
            reply,
            app.conversation().system(),
            memory_block,
            task.answers_from_memory,
        ),
        call_in_text: score::call_in_text(reply),
        skill: turn.skill.clone(),
        memory_block: memory_block.to_string(),
        stop: Some(turn.completion.stop),
        reply: reply.clone(),
        ..empty_result(task, secs)
    }
}

fn empty_result(task: &Task, secs: f64) -> TaskResult {
    let expected = match task.expected {
        Expected::Tool(names) => names.iter().map(|n| n.to_string()).collect(),
        Expected::NoTool => Vec::new(),
        Expected::NoToolOr(names) => std::iter::once("none")
            .chain(names.iter().copied())
            .map(str::to_string)
            .collect(),
    };
    TaskResult {
        id: task.id.to_string(),
        prompt: task.prompt.to_string(),
        expected,
        first_tool: None,
        first_tool_ok: false,
        route: None,
        args_valid: None,
        calls: Vec::new(),
        answer_ok: None,
        parroted: false,
        call_in_text: false,
        secs,
        stop: None,
        reply: String::new(),
        memory_block: String::new(),
        error: None,
        skill: None,
        skill_ok: None,
        state_ok: None,
        state_problems: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_keeps_the_named_tasks_in_run_order_and_names_the_ids_on_a_typo() {
        let ids = |t: &[Task]| t.iter().map(|t| t.id).collect::<Vec<_>>();
        let all = tasks::tide();
        let picked = only(all.clone(), &["forget_feet".into(), "version".into()]).unwrap();
        assert_eq!(ids(&picked), ["version", "forget_feet"]);
        assert_eq!(only(all.clone(), &[]).unwrap().len(), all.len());
        let err = only(all, &["capitol".into()]).unwrap_err();
        assert!(err.to_string().contains("no task \"capitol\""));
        assert!(err.to_string().contains("capital"));
    }
}
