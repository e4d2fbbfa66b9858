//! `harvey skill list | show NAME`: the workspace's skills for scripts (no model is
//! loaded). A folder that is not a valid skill is listed with its error; `show` of it
//! fails with that error.

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use harvey::skills::{self, show};

#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// The skills of agents/skills/: name, first sentence of the description, [script]
    /// when it has scripts/compiled.bash; a bad SKILL.md with its file, line and error.
    ///
    /// Example: harvey skill list --json
    List {
        /// Print JSON: {skills: [{name, description, scripts, allowed_tools}], errors: [..]}.
        #[arg(long)]
        json: bool,
    },
    /// Everything about one skill, then its body.
    ///
    /// Example: harvey skill show changelog-entry
    Show {
        /// The skill's name (its folder's).
        name: String,
    },
}

pub fn run(options: &harvey::app::AppOptions, cmd: SkillCommand) -> Result<ExitCode> {
    let (workspace, _config) = crate::open_workspace(options)?;
    let catalog = skills::load(&workspace);
    match cmd {
        SkillCommand::List { json: false } => print!("{}", show::list(&catalog)),
        SkillCommand::List { json: true } => {
            let value = serde_json::json!({
                "skills": catalog.skills.iter().map(|s| serde_json::json!({
                    "name": s.name,
                    "description": s.description,
                    "scripts": s.scripts.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                    "allowed_tools": s.allowed_tools,
                })).collect::<Vec<_>>(),
                "errors": catalog.broken.iter().map(|e| serde_json::json!({
                    "folder": e.folder,
                    "file": e.file.display().to_string(),
                    "line": e.line,
                    "message": e.message,
                })).collect::<Vec<_>>(),
            });
            println!("{}", serde_json::to_string_pretty(&value)?);
        }
        SkillCommand::Show { name } => match (catalog.get(&name), catalog.problem(&name)) {
            (Some(skill), _) => print!("{}", show::details(skill, &workspace)),
            (None, Some(e)) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(1));
            }
            (None, None) => {
                eprintln!(
                    "error: no skill {name:?} in agents/skills/ (harvey skill list shows them)"
                );
                return Ok(ExitCode::from(1));
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}
