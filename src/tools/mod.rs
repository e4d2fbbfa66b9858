//! Tools the model can call: the `Tool` boundary, the registry, the call format and its
//! grammar, and the read-only workspace tools.
//!
//! Call format (chosen for the chatml-family templates small models are trained on, the
//! Hermes/Qwen convention): the model writes `<tool_call>{"name": …, "arguments": {…}}`
//! `</tool_call>`. Plain prose without the opener is a normal reply. Once the opener
//! appears, decoding continues under a GBNF grammar built from this registry, so the
//! name is always a registered tool and the arguments always match its schema; every
//! string is length-bounded so a small model cannot ramble to the context limit.
//! Results go back in the template's `tool` role. [`formats`] also recognises the other
//! families' conventions (Llama 3, Mistral) and the fenced or bare JSON small models write.
//!
//! Tools never print and never touch the terminal; they return text or a `ToolError`
//! that is shown to the model as the result.

pub mod atomic;
pub mod call;
pub mod command;
pub mod diff;
pub mod files;
pub mod formats;
pub mod grammar;
pub mod interned;
pub mod memory;
pub mod misses;
pub mod narrow;
pub mod search;
pub mod sessions;
pub mod workspace;

use serde::Serialize;
use serde_json::{Map, Value};

pub use call::{parse_call, ToolCall};

/// Every tool a session can offer, memory on (the names a skill's `allowed-tools` may
/// use; `app::default_tools` is checked against it).
pub const TOOL_NAMES: &[&str] = &[
    "read_file",
    "list_files",
    "search_files",
    "git",
    "run_command",
    "write_file",
    "edit_file",
    "memory_search",
    "memory_read",
    "memory_list",
    "session_search",
    "session_read",
    "memory_write",
    "memory_update",
    "memory_forget",
];

/// What marks the start and end of a call in the model's output.
pub const CALL_OPENER: &str = "<tool_call>";
pub const CALL_CLOSER: &str = "</tool_call>";

/// The shape of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ParamKind {
    /// A string of at most `max_len` characters.
    Str { max_len: usize },
    /// An integer in `[min, max]`.
    Int { min: i64, max: i64 },
    /// Up to `max_items` strings of at most `max_len` characters.
    StrList { max_items: usize, max_len: usize },
    /// One of the listed strings.
    Enum { values: &'static [&'static str] },
}

/// One argument of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Param {
    pub name: &'static str,
    pub kind: ParamKind,
    pub required: bool,
    pub help: &'static str,
}

/// Why a tool call failed; the text goes back to the model as the result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the schema.
    #[error("bad arguments: {0}")]
    BadArguments(String),
    /// The request is outside what the tool may do (sandbox, secrets, internals).
    #[error("refused: {0}")]
    Refused(String),
    /// Nothing there.
    #[error("not found: {0}")]
    NotFound(String),
    /// The tool ran and failed.
    #[error("failed: {0}")]
    Failed(String),
    #[error("unknown tool {0}")]
    UnknownTool(String),
    /// The call stopped before its grammar completed (the context filled up, or Ctrl-C):
    /// it was not parsed, and did not run.
    #[error("cut off: the call stopped ({0}) before it was complete; it did not run")]
    CutOff(&'static str),
}

impl From<crate::sandbox::SandboxError> for ToolError {
    fn from(e: crate::sandbox::SandboxError) -> Self {
        use crate::sandbox::SandboxError as S;
        match e {
            S::BadArguments(m) => Self::BadArguments(m),
            S::Refused(m) => Self::Refused(m),
            S::NotFound(m) => Self::NotFound(m),
            S::Failed(m) => Self::Failed(m),
        }
    }
}

/// A tool the model can call.
pub trait Tool {
    fn name(&self) -> &'static str;
    /// One line, shown to the model in the system prompt and by `/tools`.
    fn description(&self) -> &'static str;
    fn params(&self) -> &'static [Param];
    /// When this tool is the right first step for a request, in a few words for the
    /// router (`chat::route`); `None` = never a first step (`memory_read` needs an id a
    /// search gives). A tool that takes a memory id may still be one: the turn gives the
    /// model the memories that rank for the request with their ids in the same message.
    fn route(&self) -> Option<&'static str> {
        None
    }
    /// Whether a call can find nothing at all here (an empty store): such a tool is not
    /// offered as a first step. Cheap; `false` when unsure.
    fn finds_nothing(&self) -> bool {
        false
    }
    /// Whether calling it changes anything (memory writes).
    fn writes(&self) -> bool;
    /// Whether it saves a memory the model writes (`memory_write`): the turn's guard
    /// checks such a call is asked for and grounded before it runs (`chat::memory_guard`).
    fn remembers(&self) -> bool {
        false
    }
    /// Whether a successful result is itself the answer, shown to the user as it is
    /// (`memory_list`: a listing asked for has nothing for a model to add, and the 1.5B
    /// answered "List all memory files" with the listing's first line only).
    fn answers_as_is(&self) -> bool {
        false
    }
    /// Whether every call needs the user's yes, whatever the settings (`run_command`).
    fn asks(&self) -> bool {
        false
    }
    /// Whether it writes workspace files (`write_file`, `edit_file`): its question is asked
    /// only where the user can see the diff on a terminal.
    fn writes_files(&self) -> bool {
        false
    }
    /// What the user sees before answering for a tool that asks; an error refuses the
    /// call without asking (e.g. a path outside the sandbox).
    fn preview(&self, _args: &Map<String, Value>) -> Result<Option<Preview>, ToolError> {
        Ok(None)
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError>;
    /// A call with what the session lends it ([`ToolContext`]); tools that need nothing
    /// of the session keep the default.
    fn call_in(
        &self,
        args: &Map<String, Value>,
        _ctx: ToolContext<'_>,
    ) -> Result<String, ToolError> {
        self.call(args)
    }
    /// A call of a tool that [`asks`](Tool::asks), with the user's answer. The default
    /// runs only when allowed; a tool may override it to record refusals.
    fn call_approved(
        &self,
        args: &Map<String, Value>,
        approval: Approval,
    ) -> Result<String, ToolError> {
        match approval {
            Approval::Allowed => self.call(args),
            Approval::Declined => Err(ToolError::Refused(
                "the user declined this call; do not retry it".into(),
            )),
            Approval::NobodyToAsk => Err(ToolError::Refused(
                "this tool needs the user's yes and nobody can answer here".into(),
            )),
        }
    }
}

/// What the running session lends a tool call.
#[derive(Clone, Copy, Default)]
pub struct ToolContext<'a> {
    /// The loaded model's tokenizer: `memory_search` packs its result under a budget of
    /// exact tokens, as the session start does. `None` where no model is loaded.
    pub counter: Option<&'a dyn crate::tokens::TokenCounter>,
    /// Where a memory the model writes comes from (set by the turn's guard).
    pub provenance: Option<&'a Provenance>,
}

/// Where a memory the model writes came from: the session and the words it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    pub session: Option<String>,
    /// `user: "…"` or `tool result: "…"`.
    pub evidence: String,
}

/// Shown before the question for a tool that asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// One line for the `[y/N]` question, e.g. `write_file src/a.rs (+3 −1)`.
    pub question: String,
    /// The unified diff, or a new file's head and size.
    pub diff: String,
}

/// The user's answer for a tool that asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    Allowed,
    Declined,
    /// No one can answer (`harvey run`, `harvey tool call`): the call is refused.
    NobodyToAsk,
}

/// The registered tools, in the order they are described to the model.
#[derive(Default)]
pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
}

/// A tool's public description (`harvey tool list --json`).
#[derive(Debug, Clone, Serialize)]
pub struct ToolInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub writes: bool,
    pub params: Vec<Param>,
}

impl ToolInfo {
    /// One line for a person: `read_file(path, start_line?)[writes] — description` (`?`
    /// marks an optional parameter), as `/tools` and `harvey tool list` show it.
    pub fn summary_line(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{}{}", p.name, if p.required { "" } else { "?" }))
            .collect();
        let writes = if self.writes { " [writes]" } else { "" };
        format!(
            "{}({}){writes} — {}",
            self.name,
            params.join(", "),
            self.description
        )
    }
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, tool: Box<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(|t| t.as_ref())
    }

    pub fn list(&self) -> Vec<ToolInfo> {
        self.tools
            .iter()
            .map(|t| ToolInfo {
                name: t.name(),
                description: t.description(),
                writes: t.writes(),
                params: t.params().to_vec(),
            })
            .collect()
    }

    /// The tools that can be a request's first step, with when to pick each.
    pub fn routes(&self) -> Vec<(&'static str, &'static str)> {
        self.tools
            .iter()
            .filter_map(|t| t.route().map(|when| (t.name(), when)))
            .collect()
    }

    /// Validates the arguments against the schema, then runs the tool (a tool that
    /// asks is refused: nobody answered).
    pub fn call(&self, name: &str, args: &Map<String, Value>) -> Result<String, ToolError> {
        self.call_approved(name, args, Approval::NobodyToAsk)
    }

    /// What to show before asking about a call (arguments validated first).
    pub fn preview(
        &self,
        name: &str,
        args: &Map<String, Value>,
    ) -> Result<Option<Preview>, ToolError> {
        let tool = self
            .get(name)
            .ok_or_else(|| ToolError::UnknownTool(name.to_string()))?;
        call::validate(tool.params(), args)?;
        tool.preview(args)
    }

    /// [`Self::call`] with the user's answer, for tools that ask.
    pub fn call_approved(
        &self,
        name: &str,
        args: &Map<String, Value>,
        approval: Approval,
    ) -> Result<String, ToolError> {
        self.call_in(name, args, approval, ToolContext::default())
    }

    /// [`Self::call_approved`] with what the session lends the tool.
    pub fn call_in(
        &self,
        name: &str,
        args: &Map<String, Value>,
        approval: Approval,
        ctx: ToolContext<'_>,
    ) -> Result<String, ToolError> {
        let tool = self
            .get(name)
            .ok_or_else(|| ToolError::UnknownTool(name.to_string()))?;
        call::validate(tool.params(), args)?;
        if tool.asks() {
            tool.call_approved(args, approval)
        } else {
            tool.call_in(args, ctx)
        }
    }

    /// The tools as JSON schemas in the OpenAI function format that chat templates with a
    /// tools section expect (`{"type": "function", "function": {name, description,
    /// parameters}}`), in registry order.
    pub fn schemas(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| {
                serde_json::json!({
                    "type": "function",
                    "function": {
                        "name": t.name(),
                        "description": t.description(),
                        "parameters": params_schema(t.params()),
                    }
                })
            })
            .collect()
    }

    /// One line per tool: `- git(action: last_commit|log, rev?): description` (`?` marks
    /// an optional parameter; an enum shows its values, which a grammar alone would leave
    /// the model to guess). What the fixed prompt carries instead of the JSON schemas.
    pub fn compact_lines(&self) -> String {
        let mut out = String::new();
        for t in &self.tools {
            let params: Vec<String> = t.params().iter().map(compact_param).collect();
            out.push_str(&format!(
                "- {}({}): {}\n",
                t.name(),
                params.join(", "),
                t.description()
            ));
        }
        out
    }

    /// The compact tool section of the system prompt (stable for the whole session).
    pub fn prompt_section(&self) -> String {
        let mut out = String::from("Tools you can call:\n");
        out.push_str(&self.compact_lines());
        let example = self.tools.first().map_or_else(String::new, |t| {
            let args: Vec<String> = t
                .params()
                .iter()
                .filter(|p| p.required)
                .map(|p| format!("\"{}\": \"...\"", p.name))
                .collect();
            format!(
                "{{\"name\": \"{}\", \"arguments\": {{{}}}}}",
                t.name(),
                args.join(", ")
            )
        });
        out.push_str(&format!(
            "To call a tool, reply with only {CALL_OPENER}{example}{CALL_CLOSER} (any tool, its arguments as JSON). The result comes back in a tool message; then answer the user. When no tool is needed, just answer.\n"
        ));
        out
    }
}

/// `name`, `name?` or `name: a|b|c` for [`Registry::compact_lines`].
fn compact_param(p: &Param) -> String {
    let optional = if p.required { "" } else { "?" };
    match p.kind {
        ParamKind::Enum { values } => format!("{}{optional}: {}", p.name, values.join("|")),
        _ => format!("{}{optional}", p.name),
    }
}

/// A tool's parameters as a JSON Schema object. Bounds are left out (the call grammar
/// enforces them; every token of the tools section is paid in every prompt).
fn params_schema(params: &[Param]) -> Value {
    let mut properties = Map::new();
    for p in params {
        let mut schema = match p.kind {
            ParamKind::Str { .. } => serde_json::json!({"type": "string"}),
            ParamKind::Int { .. } => serde_json::json!({"type": "integer"}),
            ParamKind::StrList { .. } => {
                serde_json::json!({"type": "array", "items": {"type": "string"}})
            }
            ParamKind::Enum { values } => serde_json::json!({"type": "string", "enum": values}),
        };
        if let (Some(obj), false) = (schema.as_object_mut(), p.help.is_empty()) {
            obj.insert("description".into(), Value::from(p.help));
        }
        properties.insert(p.name.to_string(), schema);
    }
    let required: Vec<&str> = params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    serde_json::json!({"type": "object", "properties": properties, "required": required})
}

/// A string argument (validated by the schema before `call`).
pub fn arg_str<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

/// An integer argument.
pub fn arg_int(args: &Map<String, Value>, name: &str) -> Option<i64> {
    args.get(name).and_then(Value::as_i64)
}
