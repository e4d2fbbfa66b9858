//! The documented `harvey.yaml` at the repository root is exactly the built-in defaults.

use std::path::Path;

use harvey::config::{parse, Config};

#[test]
fn top_level_harvey_yaml_equals_the_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("harvey.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(parse(&text, &path).unwrap(), Config::default());
}

#[test]
fn every_default_key_is_documented_with_a_comment() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("harvey.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let is_leaf = !t.starts_with('#') && t.contains(": ");
        if is_leaf {
            let above = lines[i - 1].trim_start();
            assert!(
                above.starts_with('#'),
                "harvey.yaml line {}: `{t}` has no comment above it",
                i + 1
            );
        }
    }
}

/// A workspace the Go tool has used: its config starts harvey with one warning line that
/// names the keys, and the file is not rewritten.
#[test]
fn a_go_harvey_config_is_read_with_one_warning_and_left_as_it_was() {
    use crate::support::process::{run, text, workspace};
    let ws = workspace();
    let config = "\
ollama:
  url: http://localhost:11434
  context_length: 2048
llamacpp:
  threads: 2
security:
  safe_mode: true
  run_timeout: 5m
session:
  auto_record: true
tools:
  max_tool_calls_per_turn: 3
memory:
  rag:
    stores: []
model_aliases:
  small: smollm2:135m
auto_format: true
";
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    let path = ws.path().join("agents/harvey.yaml");
    std::fs::write(&path, config).unwrap();
    let out = run(ws.path(), &["memory", "list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    for name in [
        "ollama.context_length → engine.n_ctx",
        "llamacpp.threads → engine.threads",
        "tools.max_tool_calls_per_turn → tools.max_rounds_per_turn",
        "ollama.url",
        "session",
        "memory.rag.stores",
        "model_aliases",
        "auto_format",
    ] {
        assert!(warnings[0].contains(name), "{name}: {}", warnings[0]);
    }
    // security: is shared with harvey (safe_mode, allowed_commands, run_timeout): used, not warned about.
    assert!(!warnings[0].contains("security"), "{}", warnings[0]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), config);

    std::fs::write(&path, format!("{config}engine:\n  n_ctxx: 1\n")).unwrap();
    let out = run(ws.path(), &["memory", "list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("agents/harvey.yaml:20:3: engine: unknown field `n_ctxx`"),
        "{}",
        text(&out.stderr)
    );
}
