//! `harvey model list|show`: GGUF headers read without loading weights.

use crate::support::process::{run, text, workspace};

#[test]
fn model_list_describes_every_gguf_and_marks_the_one_harvey_loads() {
    let ws = workspace();
    std::fs::create_dir_all(ws.path().join("models")).unwrap();
    std::fs::write(ws.path().join("models/broken.gguf"), "not a model").unwrap();
    let out = run(ws.path(), &["model", "list", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["path"].as_str().is_some_and(|p| p.ends_with(name)))
            .unwrap_or_else(|| panic!("{name} not listed: {rows:?}"))
            .clone()
    };
    // The fast test model, which the test environment names (`HARVEY_MODEL`).
    let chat = row(harvey::models::DEFAULT_MODEL_FILES[1]);
    assert_eq!(chat["chosen"], true);
    let info = &chat["info"];
    assert_eq!(info["architecture"], "llama");
    assert!(info["has_chat_template"].as_bool().unwrap());
    assert!(!info["embedding"].as_bool().unwrap());
    let params = info["parameters"].as_u64().unwrap();
    assert!((100_000_000..200_000_000).contains(&params), "{params}");
    assert!(info["training_context"].as_u64().unwrap() >= 2048);

    let embedder = row("all-MiniLM-L6-v2.gguf");
    assert_eq!(embedder["chosen"], false);
    assert!(embedder["info"]["embedding"].as_bool().unwrap());

    let broken = row("broken.gguf");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("not a GGUF file"),
        "{broken}"
    );

    let shown = run(ws.path(), &["model", "show"]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    assert!(text(&shown.stdout).contains("architecture      llama"));
    let missing = run(ws.path(), &["model", "show", "nothing-here"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("harvey model list"));
}

/// `/model use` saves the new model's prompt prefix at once (the cache keeps one per
/// model), so the next start with that model restores it instead of prefilling.
#[test]
fn model_use_saves_the_new_models_prefix_for_the_next_start() {
    let Some(gemma) = crate::support::gemma_path("model_use_saves_the_new_models_prefix") else {
        return;
    };
    let ws = workspace();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  embedder: none\n  recent_sessions: 0\nsampling:\n  max_tokens: 4\nengine:\n  n_ctx: 1024\n",
    )
    .unwrap();
    let smollm = crate::support::model_path();
    let cache_files = || {
        std::fs::read_dir(ws.path().join("agents/cache"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let mut cmd = crate::support::process::harvey(ws.path());
    cmd.arg("--model").arg(&gemma);
    let out =
        crate::support::process::with_stdin(cmd, &format!("/model use {}\n", smollm.display()));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("[prompt prefix: ") && stdout.contains("prefilled and saved"),
        "{stdout}"
    );
    assert_eq!(cache_files(), 4, "a state file and its key for each model");

    let run = crate::support::process::harvey(ws.path())
        .arg("--model")
        .arg(&smollm)
        .args(["run", "--json", "--max-tokens", "2", "Hi"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    let reply: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(reply["prefix_from_cache"], true, "{reply}");
    assert_eq!(
        cache_files(),
        4,
        "restored, not saved again under another key"
    );
}
