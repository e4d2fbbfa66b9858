//! Skills: the user's own repeatable workflows, in the Agent Skills format the Go harvey
//! reads. A skill is a folder `agents/skills/<name>/` holding `SKILL.md` (a YAML header:
//! `name`, `description`, optionally `license`, `compatibility`, `allowed-tools`,
//! `trigger`, `variables`, `metadata`; unknown keys are tolerated) and a Markdown body,
//! optionally with `scripts/` (the Go tool runs `scripts/compiled.bash`).
//!
//! - [`parse`]: one `SKILL.md` text into a [`Skill`], or a [`Problem`] naming the line
//!   and what to fix (YAML through `text::front_matter`, the one YAML reader outside the
//!   config loader).
//! - [`allowed`]: `allowed-tools` words to harvey's tool names.
//! - [`catalog`]: finding the skills of a workspace (symlinks checked), a bad one listed
//!   with its error beside the good ones; the one-line catalog.
//! - [`vars`]: arguments to variables, defaults, required ones; `{{NAME}}` filled in.
//! - [`run`]: what a run sends to the model, and the script's command and environment.
//! - [`trigger`]: a message that runs a skill without asking the model.
//! - [`suggest`]: a repeated run of steps found in a session record, and the model's
//!   draft of a skill for it.
//!
//! Nothing here prints, runs a program or touches the engine: the app runs the turn and
//! the command policy runs the script.

pub mod allowed;
pub mod catalog;
pub mod new;
pub mod parse;
pub mod run;
pub mod show;
pub mod suggest;
pub mod trigger;
pub mod vars;

use std::path::PathBuf;

pub use catalog::{load, Catalog};

/// Where skills live, relative to the workspace.
pub const SKILLS_DIR: &str = "agents/skills";

/// The Go tool's script for a skill, relative to its folder.
pub const SCRIPT: &str = "scripts/compiled.bash";

/// One skill, read from its `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub version: Option<String>,
    /// harvey tool names (`None`: the key is absent, every tool; empty: no tool).
    pub allowed_tools: Option<Vec<String>>,
    /// `allowed-tools` as written.
    pub allowed_tools_text: Option<String>,
    pub trigger: Option<String>,
    pub variables: Vec<Variable>,
    pub metadata: Vec<(String, String)>,
    /// Header keys harvey does not read (kept for `show`).
    pub unknown_keys: Vec<String>,
    pub body: String,
    /// The skill's folder (absolute).
    pub dir: PathBuf,
    /// Files under `scripts/`, relative to the folder.
    pub scripts: Vec<PathBuf>,
}

impl Skill {
    /// Whether the folder holds the Go tool's script (`scripts/compiled.bash`).
    pub fn has_run_script(&self) -> bool {
        self.scripts
            .iter()
            .any(|s| s == std::path::Path::new(SCRIPT))
    }
}

/// One declared input of a skill (`variables:`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Variable {
    pub name: String,
    pub kind: Option<String>,
    pub description: Option<String>,
    pub example: Option<String>,
    pub default: Option<String>,
    /// `required:` as written (`None`: decided by the body, see [`vars::is_required`]).
    pub required: Option<bool>,
}

/// Why a text is not a skill: the line of `SKILL.md` (when one is to blame) and what to
/// fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: Option<usize>,
    pub message: String,
}

impl Problem {
    pub fn at(line: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

/// A skill folder that does not give a skill: its file, the line and what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SkillError {
    /// The folder's name (what `/skill show` is asked for).
    pub folder: String,
    /// The file, relative to the workspace.
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}
