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
