//! The Go tool's `agents/harvey.yaml`: its keys with a harvey equivalent are translated
//! (a harvey key set in the same file wins), the rest — HTTP back ends, cloud routes,
//! features harvey does not have — are accepted and named in one warning line.
//!
//! The mapping (also in docs/upgrading-from-go-harvey.md):
//! `llamacpp.ctx_size`, `ollama.context_length` → `engine.n_ctx`;
//! `llamacpp.threads` → `engine.threads`;
//! `llamacpp.models_dir`, `llamafile.models_dir` → `model.models_dir`;
//! the active (else first) `llamafile.models[].path` ending in `.gguf` → `model.path`;
//! `tools.max_tool_calls_per_turn` → `tools.max_rounds_per_turn`;
//! the flat `safe_mode`, `run_timeout` → `security.safe_mode`, `security.run_timeout`.
//! The `security:` section itself is shared: harvey reads `safe_mode`,
//! `allowed_commands` and `run_timeout` as the Go tool writes them.

use std::path::Path;

use serde_yaml::Value;

use super::raw::{Foreign, RawConfig};

/// What was made of the Go tool's keys.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Upstream {
    /// `(go key, harvey key)` pairs applied.
    pub translated: Vec<(String, &'static str)>,
    /// Go keys accepted and not used.
    pub ignored: Vec<String>,
}

impl Upstream {
    pub fn is_empty(&self) -> bool {
        self.translated.is_empty() && self.ignored.is_empty()
    }

    /// The one warning line, or `None` when the file has no key of the Go tool.
    pub fn warning(&self, path: &Path) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let mut parts = Vec::new();
        if !self.translated.is_empty() {
            let used: Vec<String> = self
                .translated
                .iter()
                .map(|(go, ours)| format!("{go} → {ours}"))
                .collect();
            parts.push(format!("used {}", used.join(", ")));
        }
        if !self.ignored.is_empty() {
            parts.push(format!(
                "ignored (no equivalent in harvey) {}",
                self.ignored.join(", ")
            ));
        }
        Some(format!(
            "{}: keys of the Go harvey: {}",
            path.display(),
            parts.join("; ")
        ))
    }

    /// Records `go → ours` unless `ours` is set in the file or already taken by
    /// another Go key; returns whether the value is to be applied.
    fn claim(&mut self, file: &Value, go: &str, ours: &'static str) -> bool {
        let taken = present(file, ours) || self.translated.iter().any(|(_, o)| *o == ours);
        if taken {
            self.ignored.push(format!("{go} ({ours} is set)"));
        } else {
            self.translated.push((go.to_string(), ours));
        }
        !taken
    }
}

/// Applies the translation to `raw` (taking its Go keys); `file` is the whole file,
/// to see which harvey keys it sets. `Err((key, message))` for a translated key whose
/// value harvey cannot use.
pub fn translate(raw: &mut RawConfig, file: &Value) -> Result<Upstream, (String, String)> {
    let mut up = Upstream::default();
    let llamacpp = raw.llamacpp.take();
    let ollama = raw.ollama.take();
    let llamafile = raw.llamafile.take();
    let mut used = Vec::new();

    for (section, name, key) in [
        (&llamacpp, "llamacpp", "ctx_size"),
        (&ollama, "ollama", "context_length"),
    ] {
        if let Some(n) = whole(section, name, key)? {
            used.push(format!("{name}.{key}"));
            if up.claim(file, &format!("{name}.{key}"), "engine.n_ctx") {
                raw.engine.n_ctx = fits(n, name, key)?;
            }
        }
    }
    if let Some(n) = whole(&llamacpp, "llamacpp", "threads")? {
        used.push("llamacpp.threads".into());
        if up.claim(file, "llamacpp.threads", "engine.threads") {
            raw.engine.threads = fits(n, "llamacpp", "threads")?;
        }
    }
    for (section, name) in [(&llamacpp, "llamacpp"), (&llamafile, "llamafile")] {
        if let Some(dir) = text(section, name, "models_dir")? {
            used.push(format!("{name}.models_dir"));
            if up.claim(file, &format!("{name}.models_dir"), "model.models_dir") {
                raw.model.models_dir = Some(home_expanded(&dir));
            }
        }
    }
    if let Some(path) = llamafile_gguf(&llamafile) {
        used.push("llamafile.models".into());
        if up.claim(file, "llamafile.models[].path", "model.path") {
            raw.model.path = Some(home_expanded(&path));
        }
    }
    const ROUNDS: &str = "tools.max_tool_calls_per_turn";
    if let Some(n) = whole(&raw.tools.max_tool_calls_per_turn, ROUNDS, "")? {
        if up.claim(file, ROUNDS, "tools.max_rounds_per_turn") {
            raw.tools.max_rounds_per_turn = fits(n, ROUNDS, "")?;
        }
    }

    flat_security(raw, file, &mut up)?;

    for (section, name) in [
        (&llamacpp, "llamacpp"),
        (&ollama, "ollama"),
        (&llamafile, "llamafile"),
    ] {
        list_keys(section, name, &used, &mut up.ignored);
    }
    up.ignored.extend(unsupported_keys(raw));
    Ok(up)
}

/// The Go tool's keys harvey reads but does not use (they are listed as ignored).
fn unsupported_keys(raw: &RawConfig) -> Vec<String> {
    let mut ignored = Vec::new();
    for (value, name) in [
        (&raw.security.permissions, "security.permissions"),
        (&raw.session, "session"),
        (&raw.model_aliases, "model_aliases"),
        (&raw.chunking, "chunking"),
        (&raw.skills, "skills"),
        (&raw.learn_model, "learn_model"),
        (&raw.knowledge_db, "knowledge_db"),
        (&raw.auto_record, "auto_record"),
        (&raw.ollama_timeout, "ollama_timeout"),
        (&raw.sessions_dir, "sessions_dir"),
        (&raw.agents_dir, "agents_dir"),
        (&raw.model_cache_db, "model_cache_db"),
        (&raw.syntax_highlight, "syntax_highlight"),
        (&raw.auto_format, "auto_format"),
        (
            &raw.sensor_inject_format_findings,
            "sensor_inject_format_findings",
        ),
        (&raw.tools.max_output_bytes, "tools.max_output_bytes"),
        (
            &raw.tools.tool_result_compaction,
            "tools.tool_result_compaction",
        ),
        (&raw.memory.rag.stores, "memory.rag.stores"),
        (&raw.memory.rag.db_path, "memory.rag.db_path"),
        (
            &raw.memory.rag.embedding_model,
            "memory.rag.embedding_model",
        ),
        (&raw.memory.rag.model_map, "memory.rag.model_map"),
        (
            &raw.memory.knowledge_base.path,
            "memory.knowledge_base.path",
        ),
    ] {
        if value.is_some() {
            ignored.push(name.to_string());
        }
    }
    ignored
}

/// The Go tool's older flat `safe_mode` and `run_timeout` keys.
fn flat_security(
    raw: &mut RawConfig,
    file: &Value,
    up: &mut Upstream,
) -> Result<(), (String, String)> {
    match raw.safe_mode.take() {
        None | Some(Value::Null) => {}
        Some(Value::Bool(on)) => {
            if up.claim(file, "safe_mode", "security.safe_mode") {
                raw.security.safe_mode = on;
            }
        }
        Some(_) => return Err(("safe_mode".into(), "must be true or false".into())),
    }
    match raw.run_timeout.take() {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) => {
            if up.claim(file, "run_timeout", "security.run_timeout") {
                raw.security.run_timeout = t;
            }
        }
        Some(_) => {
            return Err((
                "run_timeout".into(),
                "must be a duration like 2m (harvey uses it)".into(),
            ))
        }
    }
    Ok(())
}

/// Whether the dotted key is set in the file.
fn present(file: &Value, dotted: &str) -> bool {
    let mut at = file;
    for part in dotted.split('.') {
        match at.get(part) {
            Some(next) => at = next,
            None => return false,
        }
    }
    true
}

/// `section.key` (or the value itself when `key` is empty) as a positive whole number;
/// absent, null or 0 (the Go tool's "server default") is `None`.
fn whole(section: &Foreign, name: &str, key: &str) -> Result<Option<u64>, (String, String)> {
    let value = match (section, key) {
        (Some(v), "") => Some(v),
        (Some(v), key) => v.get(key),
        (None, _) => None,
    };
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(0) => Ok(None),
            Some(n) => Ok(Some(n)),
            None => Err((
                dotted(name, key),
                "must be a whole number (harvey uses it)".into(),
            )),
        },
    }
}

fn text(section: &Foreign, name: &str, key: &str) -> Result<Option<String>, (String, String)> {
    match section.as_ref().and_then(|v| v.get(key)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err((dotted(name, key), "must be a path (harvey uses it)".into())),
    }
}

fn fits<T: TryFrom<u64>>(n: u64, name: &str, key: &str) -> Result<T, (String, String)> {
    T::try_from(n).map_err(|_| (dotted(name, key), format!("{n} is too large")))
}

fn dotted(name: &str, key: &str) -> String {
    if key.is_empty() {
        name.to_string()
    } else {
        format!("{name}.{key}")
    }
}

/// The active entry's path (else the first entry's) when it is a GGUF file; a
/// `.llamafile` executable is no model file harvey can load.
fn llamafile_gguf(llamafile: &Foreign) -> Option<String> {
    let section = llamafile.as_ref()?;
    let models = section.get("models")?.as_sequence()?;
    let active = section.get("active").and_then(Value::as_str);
    let entry = models
        .iter()
        .find(|m| active.is_some() && m.get("name").and_then(Value::as_str) == active)
        .or_else(|| models.first())?;
    let path = entry.get("path")?.as_str()?;
    path.to_ascii_lowercase()
        .ends_with(".gguf")
        .then(|| path.to_string())
}

/// `~/x` → `$HOME/x` (the Go tool's files use it; harvey reads paths literally).
fn home_expanded(path: &str) -> String {
    match (path.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) if !home.is_empty() => format!("{home}/{rest}"),
        _ => path.to_string(),
    }
}

/// Every key of a Go section not translated, as `section.key`.
fn list_keys(section: &Foreign, name: &str, used: &[String], out: &mut Vec<String>) {
    let Some(value) = section else { return };
    match value.as_mapping() {
        Some(map) => {
            for key in map.keys().filter_map(Value::as_str) {
                let full = format!("{name}.{key}");
                if !used.contains(&full) {
                    out.push(full);
                }
            }
        }
        None => out.push(name.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_noted;

    const GO: &str = "\
ollama:
  url: http://localhost:11434
  model: granite3.3:8b
  context_length: 8192
  timeout: 10m
llamacpp:
  server_bin: llama-server
  ctx_size: 2048
  threads: 3
  models_dir: ~/Models
llamafile:
  active: small
  models:
    - name: big
      path: /opt/big.llamafile
    - name: small
      path: /opt/small.Q4.gguf
tools:
  max_tool_calls_per_turn: 4
  max_output_bytes: 4096
security:
  safe_mode: true
  allowed_commands: [ls, cat]
  permissions:
    read: [src]
memory:
  budget_pct: 0.2
  rag:
    active: notes
    stores:
      - name: notes
        db_path: agents/rag/notes.db
  knowledge_base:
    path: agents/knowledge.db
model_aliases:
  granite: granite3.3:8b
safe_mode: true
knowledge_db: agents/knowledge.db
";

    fn parse(text: &str) -> (crate::config::Config, Upstream) {
        parse_noted(text, Path::new("agents/harvey.yaml")).unwrap()
    }

    #[test]
    fn keys_with_an_equivalent_are_translated_and_the_rest_named() {
        let (c, up) = parse(GO);
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(c.engine.n_ctx, 2048, "llamacpp first, then ollama");
        assert_eq!(c.engine.threads, Some(3));
        if !home.is_empty() {
            assert_eq!(c.model.models_dir, Path::new(&home).join("Models"));
        }
        assert_eq!(
            c.model.path.as_deref(),
            Some(Path::new("/opt/small.Q4.gguf"))
        );
        assert_eq!(c.tools.max_rounds_per_turn, 4);
        assert_eq!(c.memory.budget_pct, 0.2);
        assert_eq!(c.memory.rag.active.as_deref(), Some("notes"));
        assert!(c.security.safe_mode);
        assert_eq!(c.security.allowed_commands, ["ls", "cat"]);
        let line = up.warning(Path::new("agents/harvey.yaml")).unwrap();
        assert!(!line.contains('\n'), "one line: {line}");
        for name in [
            "llamacpp.ctx_size → engine.n_ctx",
            "ollama.context_length (engine.n_ctx is set)",
            "ollama.url",
            "llamacpp.server_bin",
            "security.permissions",
            "model_aliases",
            "safe_mode (security.safe_mode is set)",
            "knowledge_db",
            "tools.max_output_bytes",
            "memory.rag.stores",
            "memory.knowledge_base.path",
        ] {
            assert!(line.contains(name), "{name} missing from: {line}");
        }
        assert!(!line.contains("llamacpp.threads,"), "{line}");
    }

    #[test]
    fn a_harvey_key_in_the_same_file_wins() {
        let (c, up) = parse("engine:\n  n_ctx: 1024\nllamacpp:\n  ctx_size: 8192\n");
        assert_eq!(c.engine.n_ctx, 1024);
        assert_eq!(up.ignored, vec!["llamacpp.ctx_size (engine.n_ctx is set)"]);
    }

    #[test]
    fn a_harvey_file_has_no_warning_and_misspelt_harvey_keys_still_fail() {
        let (_, up) = parse("engine:\n  n_ctx: 1024\n");
        assert_eq!(up.warning(Path::new("x")), None);
        let e = parse_noted(
            "llamacpp:\n  ctx_size: 2048\nengine:\n  n_ctxx: 1\n",
            Path::new("x"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("x:4:3: ") && e.contains("n_ctxx"), "{e}");
    }

    #[test]
    fn a_translated_key_of_the_wrong_type_names_its_line() {
        let e = parse_noted(
            "ollama:\n  url: x\nllamacpp:\n  ctx_size: big\n",
            Path::new("x"),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "x:4: llamacpp.ctx_size must be a whole number (harvey uses it)"
        );
        let e = parse_noted("llamacpp:\n  ctx_size: 32\n", Path::new("x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("engine.n_ctx must be at least 64"), "{e}");
    }
}
