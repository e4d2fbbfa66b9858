//! `harvey bench --agent --json`: the agent benchmark runs its tasks through the
//! product's agent turn and reports each task's scores in bounds. What the model
//! answers is never asserted: greedy decoding differs across CPUs.

use serde_json::Value;

use crate::support::model_path;
use crate::support::process::{run, text, workspace};

const STOPS: &[&str] = &[
    "end_of_generation",
    "max_tokens",
    "aborted",
    "context_full",
    "stop_string",
    "prompt_echo",
];

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn check_task(t: &Value) {
    let calls = t["calls"].as_array().unwrap();
    assert_eq!(t["first_tool"].is_null(), calls.is_empty(), "{t}");
    assert_eq!(t["args_valid"].is_null(), calls.is_empty(), "{t}");
    assert!(t["first_tool_ok"].is_boolean(), "{t}");
    assert!(t["parroted"].is_boolean(), "{t}");
    assert!(t["call_in_text"].is_boolean(), "{t}");
    assert!(
        t["answer_ok"].is_null() || t["answer_ok"].is_boolean(),
        "{t}"
    );
    let secs = t["secs"].as_f64().unwrap();
    assert!(secs.is_finite() && secs > 0.0, "{t}");
    assert!(t["error"].is_null(), "{t}");
    let stop = t["stop"].as_str().unwrap();
    assert!(STOPS.contains(&stop), "{t}");
    for c in calls {
        assert!(c["valid"].is_boolean() && c["ok"].is_boolean(), "{c}");
    }
}

#[test]
fn agent_bench_runs_three_tasks_and_scores_each_in_bounds() {
    let ws = workspace();
    let model = model_path();
    let out = run(
        ws.path(),
        &[
            "--model",
            model.to_str().unwrap(),
            "bench",
            "--agent",
            "--tasks",
            "3",
            "--agent-tokens",
            "64",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["version", "arithmetic", "list_notes"], "{report}");
    tasks.iter().for_each(check_task);
    let s = &report["summary"];
    assert_eq!(count(&s["tool_tasks"]), 2, "{s}");
    assert_eq!(count(&s["no_tool_tasks"]), 1, "{s}");
    assert!(count(&s["right_first_tool"]) <= 2, "{s}");
    assert!(count(&s["no_tool_ok"]) <= 1, "{s}");
    assert!(count(&s["valid_calls"]) <= count(&s["calls"]), "{s}");
    assert_eq!(count(&s["checkable"]), 3, "{s}");
    assert!(count(&s["answers_ok"]) <= 3, "{s}");
    assert!(count(&s["parroted"]) <= 3, "{s}");
    assert!(count(&s["calls_in_text"]) <= 3, "{s}");
    let (median, total) = (
        s["median_secs"].as_f64().unwrap(),
        s["total_secs"].as_f64().unwrap(),
    );
    assert!(median > 0.0 && median <= total, "{s}");
    assert_eq!(report["reply_tokens"], 64, "{report}");
}
