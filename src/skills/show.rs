//! The text `/skill list`, `/skill show` and `harvey skill list|show` print: built here
//! once so both faces say the same; nothing is printed here.

use super::catalog::summary;
use super::{vars, Catalog, Skill, SKILLS_DIR};

/// One line per skill (name, first sentence, `[script]`), then one per bad folder with
/// its error; a hint when there is none.
pub fn list(catalog: &Catalog) -> String {
    if catalog.is_empty() {
        return format!(
            "no skills in {SKILLS_DIR}/ (a skill is a folder there holding SKILL.md: a `---` header with name and description, then the steps)\n"
        );
    }
    let width = catalog
        .skills
        .iter()
        .map(|s| s.name.len())
        .chain(catalog.broken.iter().map(|e| e.folder.len()))
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for s in &catalog.skills {
        let script = if s.has_run_script() { " [script]" } else { "" };
        out.push_str(&format!(
            "  {:width$}  {}{script}\n",
            s.name,
            summary(&s.description)
        ));
    }
    for e in &catalog.broken {
        out.push_str(&format!("  {:width$}  error: {e}\n", e.folder));
    }
    out
}

/// Everything about one skill, then its body.
pub fn details(skill: &Skill, workspace: &std::path::Path) -> String {
    let mut out = String::new();
    let mut row = |key: &str, value: &str| {
        if !value.is_empty() {
            out.push_str(&format!("{key:14} {value}\n"));
        }
    };
    let folder = skill
        .dir
        .strip_prefix(workspace.canonicalize().unwrap_or_default())
        .unwrap_or(&skill.dir);
    row("name:", &skill.name);
    row("description:", &one_line(&skill.description));
    row("folder:", &folder.display().to_string());
    row("license:", skill.license.as_deref().unwrap_or(""));
    row(
        "compatibility:",
        skill.compatibility.as_deref().unwrap_or(""),
    );
    row("version:", skill.version.as_deref().unwrap_or(""));
    if let Some(tools) = &skill.allowed_tools {
        let written = skill.allowed_tools_text.as_deref().unwrap_or("");
        let names = if tools.is_empty() {
            "none".to_string()
        } else {
            tools.join(", ")
        };
        row("allowed-tools:", &format!("{names} (written: {written})"));
    }
    row("trigger:", skill.trigger.as_deref().unwrap_or(""));
    let scripts: Vec<String> = skill
        .scripts
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    row("scripts:", &scripts.join(", "));
    row("other keys:", &skill.unknown_keys.join(", "));
    for (k, v) in &skill.metadata {
        out.push_str(&format!("metadata:      {k}: {v}\n"));
    }
    for v in &skill.variables {
        out.push_str(&format!("variable:      {}\n", variable(v, &skill.body)));
    }
    out.push('\n');
    out.push_str(&skill.body);
    out.push('\n');
    out
}

/// `VERSION (string, required) — what it is; default x; e.g. y`.
fn variable(v: &super::Variable, body: &str) -> String {
    let mut traits: Vec<&str> = v.kind.iter().map(String::as_str).collect();
    if vars::is_required(v, body) {
        traits.push("required");
    }
    let mut line = v.name.clone();
    if !traits.is_empty() {
        line.push_str(&format!(" ({})", traits.join(", ")));
    }
    if let Some(d) = &v.description {
        line.push_str(&format!(" — {}", one_line(d)));
    }
    if let Some(d) = &v.default {
        line.push_str(&format!("; default {d}"));
    }
    if let Some(e) = &v.example {
        line.push_str(&format!("; e.g. {e}"));
    }
    line
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
