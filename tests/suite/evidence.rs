//! The evidence pipeline through the real binary and Qwen2.5-Coder-0.5B: a question about
//! a workspace is sent with an `[evidence]` block whose every source exists (a file of the
//! workspace, lines within it), no router is asked, and the reply ends. Only what holds for
//! any output is asserted (another CPU may decode along another path).

use std::path::Path;

use crate::support::process::{harvey, text};
use crate::support::qwen_path;

fn write(root: &Path, path: &str, body: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

#[test]
fn a_workspace_question_is_answered_from_evidence_whose_sources_exist() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(root, "agents/harvey.yaml", "memory:\n  embedder: none\n");
    write(root, "README.md", "# tidepool\n\nReads tide tables and serves them.\n\n## Configuration\n\nSet TIDEPOOL_PORT to change the port.\n");
    write(root, "src/server.rs", "/// Where tidepool listens unless TIDEPOOL_PORT is set.\npub const DEFAULT_PORT: u16 = 8080;\n\npub fn port() -> u16 {\n    std::env::var(\"TIDEPOOL_PORT\").ok().and_then(|p| p.parse().ok()).unwrap_or(DEFAULT_PORT)\n}\n");
    write(root, "docs/logo.svg", "<svg><text>port 9999</text></svg>\n");
    let out = harvey(root)
        .args(["-m"])
        .arg(qwen_path())
        .args([
            "run",
            "--json",
            "--max-tokens",
            "64",
            "Which port is used if I never set TIDEPOOL_PORT?",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sources: Vec<&str> = v["evidence"]["sources"]
        .as_array()
        .expect("an evidence block was sent")
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(!sources.is_empty());
    for source in &sources {
        let (path, lines) = source
            .split_once(':')
            .expect("a file source names its lines");
        let body = std::fs::read_to_string(root.join(path))
            .unwrap_or_else(|_| panic!("{source} is no file of the workspace"));
        let (first, last) = lines.split_once('-').unwrap();
        let (first, last): (usize, usize) = (first.parse().unwrap(), last.parse().unwrap());
        assert!(
            1 <= first && first <= last && last <= body.lines().count(),
            "{source}"
        );
        assert!(
            !path.ends_with(".svg") && !path.starts_with("agents/"),
            "{source}"
        );
    }
    assert!(v["evidence"]["tokens"].as_u64().unwrap() <= v["evidence"]["budget"].as_u64().unwrap());
    let steps = v["steps"].as_array().unwrap();
    assert!(steps.iter().any(|s| s["kind"] == "evidence"));
    // The model chose the first step itself: no router model was asked.
    assert!(
        steps
            .iter()
            .all(|s| s["kind"] != "router" || s["what"] == "evidence"),
        "{steps:?}"
    );
    let reply = v["reply"].as_str().unwrap();
    assert!(!reply.trim().is_empty());
    assert!(
        !reply.contains("<|im_") && !reply.contains("[evidence"),
        "{reply}"
    );
    assert!(
        [
            "end_of_generation",
            "max_tokens",
            "stop_string",
            "prompt_echo"
        ]
        .contains(&v["stop"].as_str().unwrap()),
        "{}",
        v["stop"]
    );
}
