//! What running a skill means: the message a prompt skill sends to the model (the body
//! with its variables filled, after a `[skill: NAME]` line as the Go tool injects it),
//! and for a skill with the Go tool's script the program, its arguments and the
//! `HARVEY_*` environment the script reads. The app runs both (the turn with the
//! skill's tools only; the script through the command policy).

use std::path::Path;

use super::vars::{render, Filled};
use super::{Skill, SCRIPT};

/// The user message of a run.
pub fn message(skill: &Skill, filled: &Filled) -> String {
    let mut out = format!("[skill: {}]\n", skill.name);
    if !filled.values.is_empty() {
        let values: Vec<String> = filled
            .values
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        out.push_str(&format!("Variables: {}\n", values.join(", ")));
    }
    match &filled.request {
        Some(request) => out.push_str(&format!("Request: {request}\n")),
        None if filled.values.is_empty() && !filled.args.is_empty() => {
            out.push_str(&format!("Request: {}\n", filled.args));
        }
        None => {}
    }
    if let Some(tools) = &skill.allowed_tools {
        let tools = if tools.is_empty() {
            "none (answer from what you know)".to_string()
        } else {
            tools.join(", ")
        };
        out.push_str(&format!("Tools for this task: {tools}\n"));
    }
    out.push('\n');
    out.push_str(&render(&skill.body, filled));
    out
}

/// What the session lends a script.
pub struct ScriptEnv<'a> {
    pub workspace: &'a Path,
    pub model: &'a str,
    pub session_id: &'a str,
}

/// The words (program first) that run the skill's script: `bash` and the script's path
/// relative to the workspace, as the Go tool runs it. `None` when it has none.
pub fn script_words(skill: &Skill, workspace: &Path) -> Option<Vec<String>> {
    if !skill.has_run_script() {
        return None;
    }
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let path = skill.dir.join(SCRIPT);
    let shown = path.strip_prefix(&ws).unwrap_or(&path);
    Some(vec!["bash".into(), shown.display().to_string()])
}

/// The Go tool's environment for a script (`HARVEY_PROMPT` = the arguments).
pub fn script_env(filled: &Filled, env: &ScriptEnv<'_>) -> Vec<(String, String)> {
    vec![
        ("HARVEY_PROMPT".into(), filled.args.clone()),
        ("HARVEY_WORKDIR".into(), env.workspace.display().to_string()),
        ("HARVEY_MODEL".into(), env.model.to_string()),
        ("HARVEY_SESSION_ID".into(), env.session_id.to_string()),
    ]
}
