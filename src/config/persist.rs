//! Saving `/safemode` changes: only the `security:` section of `agents/harvey.yaml` is
//! rewritten; every other line of the file — comments, the Go tool's keys — stays as
//! it is. The section keeps keys harvey does not use (the Go tool's `permissions`).
//! Before writing, the edited file is parsed again and must hold exactly the same
//! values outside `security:`; otherwise nothing is written and the error says what to
//! set by hand. The file is replaced atomically (write a temporary file, rename).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_yaml::{Mapping, Value};

use super::load::{parse, ConfigError, CONFIG_FILE};

/// Writes `security.safe_mode`, `security.allowed_commands` and `security.run_timeout`
/// into the workspace's config (creating it if needed); returns the file's path.
pub fn save_security(
    workspace: &Path,
    safe_mode: bool,
    allowed: &[String],
    run_timeout: Duration,
) -> Result<PathBuf, ConfigError> {
    let path = workspace.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let edit_error = |message: String| ConfigError::Edit {
        path: path.clone(),
        message,
    };
    let before: Value = serde_yaml::from_str(&text).map_err(|e| edit_error(e.to_string()))?;
    let mut section = match before.get("security") {
        Some(Value::Mapping(m)) => m.clone(),
        _ => Mapping::new(),
    };
    section.insert("safe_mode".into(), Value::Bool(safe_mode));
    section.insert(
        "allowed_commands".into(),
        Value::Sequence(allowed.iter().map(|a| Value::String(a.clone())).collect()),
    );
    section.insert(
        "run_timeout".into(),
        Value::String(super::format_duration(run_timeout)),
    );
    let rendered = render_section(&section).map_err(edit_error)?;
    let edited = replace_section(&text, "security", &rendered);
    check_edit(&before, &edited, &section, &path).map_err(edit_error)?;
    write_atomically(&path, &edited).map_err(|source| ConfigError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

fn render_section(section: &Mapping) -> Result<String, String> {
    let mut wrapper = Mapping::new();
    wrapper.insert("security".into(), Value::Mapping(section.clone()));
    serde_yaml::to_string(&wrapper).map_err(|e| e.to_string())
}

/// `text` with the top-level block `key:` (its line and the indented, blank or comment
/// lines under it) replaced by `block`, or `block` appended when there is none.
fn replace_section(text: &str, key: &str, block: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let opens = |l: &str| {
        l.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    };
    let Some(start) = lines.iter().position(|l| opens(l)) else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(block);
        return out;
    };
    let inside = |l: &str| l.trim().is_empty() || l.starts_with([' ', '\t']);
    let mut end = start + 1;
    while end < lines.len() && inside(lines[end]) {
        end += 1;
    }
    // Blank lines before the next section stay where they were.
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let mut out: String = lines[..start].concat();
    out.push_str(block);
    out.push_str(&lines[end..].concat());
    out
}

/// The edited text must parse as a harvey config, keep every other top-level value, and
/// hold the intended section.
fn check_edit(before: &Value, edited: &str, section: &Mapping, path: &Path) -> Result<(), String> {
    let by_hand = "nothing was written; set security.safe_mode / security.allowed_commands by hand";
    let after: Value = serde_yaml::from_str(edited).map_err(|e| format!("{e}; {by_hand}"))?;
    let others = |v: &Value| -> Mapping {
        let mut m = v.as_mapping().cloned().unwrap_or_default();
        m.remove("security");
        m
    };
    if others(before) != others(&after) {
        return Err(format!(
            "the edit would change keys outside security:; {by_hand}"
        ));
    }
    if after.get("security") != Some(&Value::Mapping(section.clone())) {
        return Err(format!(
            "the security: section did not come out as intended; {by_hand}"
        ));
    }
    parse(edited, path).map_err(|e| format!("{e}; {by_hand}"))?;
    Ok(())
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".harvey.yaml.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    if let Ok(meta) = std::fs::metadata(path) {
        // Keep the file's permissions.
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn save(ws: &Path, safe: bool) -> Result<PathBuf, ConfigError> {
        save_security(
            ws,
            safe,
            &["ls".into(), "cargo".into()],
            Duration::from_secs(90),
        )
    }

    #[test]
    fn a_missing_file_gets_just_the_section() {
        let ws = tempfile::tempdir().unwrap();
        let path = save(ws.path(), false).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "security:\n  safe_mode: false\n  allowed_commands:\n  - ls\n  - cargo\n  run_timeout: 1m30s\n"
        );
        let c = crate::config::load(ws.path()).unwrap();
        assert!(!c.security.safe_mode);
        assert_eq!(c.security.run_timeout, Duration::from_secs(90));
    }

    #[test]
    fn a_go_file_keeps_every_other_line_and_key() {
        let ws = tempfile::tempdir().unwrap();
        let go = "\
# written by the Go harvey
ollama:
  url: http://localhost:11434   # local server
security:
  safe_mode: true
  permissions:
    read: [src]
  # comment inside the section
  allowed_commands: [ls]

model_aliases:
  granite: granite3.3:8b
safe_mode: true
";
        std::fs::create_dir_all(ws.path().join("agents")).unwrap();
        std::fs::write(ws.path().join(CONFIG_FILE), go).unwrap();
        save(ws.path(), false).unwrap();
        let text = std::fs::read_to_string(ws.path().join(CONFIG_FILE)).unwrap();
        assert!(text.starts_with("# written by the Go harvey\nollama:\n  url: http://localhost:11434   # local server\nsecurity:\n"), "{text}");
        assert!(
            text.contains("\n\nmodel_aliases:\n  granite: granite3.3:8b\nsafe_mode: true\n"),
            "{text}"
        );
        let v: Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(v["security"]["permissions"]["read"][0], Value::from("src"));
        assert_eq!(v["security"]["safe_mode"], Value::Bool(false));
        assert_eq!(v["security"]["run_timeout"], Value::from("1m30s"));
        let c = crate::config::load(ws.path()).unwrap();
        assert!(!c.security.safe_mode);
        assert_eq!(c.security.allowed_commands, ["ls", "cargo"]);
    }

    #[test]
    fn an_unparsable_file_is_not_touched() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("agents")).unwrap();
        let bad = "engine: [unclosed\n";
        std::fs::write(ws.path().join(CONFIG_FILE), bad).unwrap();
        let e = save(ws.path(), false).unwrap_err().to_string();
        assert!(e.contains("agents/harvey.yaml"), "{e}");
        assert_eq!(
            std::fs::read_to_string(ws.path().join(CONFIG_FILE)).unwrap(),
            bad
        );
    }
}
