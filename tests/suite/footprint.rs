//! `harvey bench --footprint-only --json`: the memory scenario of a whole session (chat
//! model, embedder, a RAG store in use, a chat turn, a summary aside) and
//! its split of the peak into weights, KV caches and the rest.

use serde_json::Value;

use crate::support::model_path;
use crate::support::process::{run, text, workspace};

fn bytes(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not a byte count: {v}"))
}

fn bench(ws: &std::path::Path, config: &str) -> std::process::Output {
    std::fs::write(ws.join("agents/harvey.yaml"), config).unwrap();
    let model = model_path();
    run(
        ws,
        &[
            "--model",
            model.to_str().unwrap(),
            "bench",
            "--footprint-only",
            "--footprint-chunks",
            "2000",
            "--turn-tokens",
            "4",
            "--json",
        ],
    )
}

#[test]
fn footprint_splits_the_peak_and_judges_the_goal() {
    let ws = workspace();
    let embedder = model_path().with_file_name("all-MiniLM-L6-v2.gguf");
    let out = bench(
        ws.path(),
        &format!(
            "engine:\n  n_ctx: 2048\nmemory:\n  embedder: {}\n",
            embedder.display()
        ),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &report["footprint"];
    let len = |p: &std::path::Path| std::fs::metadata(p).unwrap().len();
    let weights = bytes(&f["weights_bytes"]);
    assert_eq!(weights, len(&model_path()) + len(&embedder), "{f}");
    assert_eq!(bytes(&f["chunks"]), 2000);
    assert!(bytes(&f["store_bytes"]) > 0, "{f}");
    let n_ctx = bytes(&f["n_ctx"]);
    let kv = bytes(&f["chat_kv_bytes"]);
    // The chat holds one short turn, so the summary runs in its free cells: no aside
    // context, no second KV cache.
    assert!(bytes(&f["aside_shared_calls"]) >= 1, "{f}");
    assert_eq!(bytes(&f["aside_n_ctx"]), 0, "{f}");
    assert_eq!(bytes(&f["aside_kv_bytes"]), 0, "{f}");
    assert!(n_ctx > 0, "{f}");
    assert_eq!(bytes(&f["goal_bytes"]), weights + kv + 60_000_000);
    let steps = f["steps"].as_array().unwrap();
    if cfg!(target_os = "linux") {
        let peak = bytes(&f["peak_rss_bytes"]);
        assert!(peak > weights + kv, "{f}");
        let rest = f["rest_bytes"].as_i64().unwrap();
        assert_eq!(rest, peak as i64 - weights as i64 - kv as i64);
        assert_eq!(
            f["goal_holds"].as_bool().unwrap(),
            peak <= weights + kv + 60_000_000
        );
        assert_eq!(steps.len(), 8, "{f}");
        for s in steps {
            assert!(bytes(&s["peak_rss_bytes"]) >= bytes(&s["rss_bytes"]), "{s}");
        }
        assert_eq!(bytes(&steps[7]["peak_rss_bytes"]), peak);
    } else {
        assert!(f["peak_rss_bytes"].is_null() && f["goal_holds"].is_null());
    }
}

#[test]
fn footprint_without_an_embedder_says_what_to_set() {
    let ws = workspace();
    let out = bench(ws.path(), "memory:\n  embedder: none\n");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("memory.embedder"), "{err}");
}
