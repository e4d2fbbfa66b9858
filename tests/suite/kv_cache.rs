//! `engine.kv_cache_type`: a q8_0 cache generates normally and llama.cpp really stores
//! it in about 8.5/16 of f16's bytes; `harvey bench --json` reports the memory split and
//! both cache types side by side.

use harvey::engine::{EngineParams, KvCacheType, LlamaEngine, Message, Role, StopReason};
use serde_json::Value;

use crate::support::process::{run, text, workspace};
use crate::support::{greedy, model_path, params};

/// q8_0 stores 32 values in 34 bytes, f16 in 64.
const Q8_0_PER_F16: f64 = 34.0 / 64.0;

fn load(kv_cache_type: KvCacheType) -> LlamaEngine {
    LlamaEngine::load(&EngineParams {
        kv_cache_type,
        ..params(512, 256)
    })
    .expect("the model loads")
}

fn chat(user: &str) -> Vec<Message> {
    vec![
        Message::new(Role::System, "You are a helpful assistant."),
        Message::new(Role::User, user),
    ]
}

/// Bytes of the saved chat state after the cache holds exactly `ids`.
fn saved_state_bytes(engine: &mut LlamaEngine, ids: &[i32], dir: &std::path::Path) -> u64 {
    engine.warm_prefix(ids).unwrap();
    let path = dir.join(format!("{}.state", engine.info().kv_type));
    engine.save_state(&path).unwrap();
    std::fs::metadata(&path).unwrap().len()
}

#[test]
fn q8_0_cache_replies_and_holds_about_half_the_bytes_of_f16() {
    let mut q8 = load(KvCacheType::Q8_0);
    assert_eq!(q8.info().kv_type, "q8_0");
    let messages = chat("Name a primary colour.");
    let reply = q8.generate(&messages, &greedy(24), &mut |_| {}).unwrap();
    assert!(!reply.text.trim().is_empty(), "{reply:?}");
    assert!((1..=24).contains(&reply.stats.completion_tokens));
    assert!(matches!(
        reply.stop,
        StopReason::EndOfGeneration | StopReason::MaxTokens
    ));

    // What llama.cpp itself writes for the same cached tokens: the KV rows dominate.
    let mut f16 = load(KvCacheType::F16);
    let ids = q8.prompt_ids(&messages).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let q8_bytes = saved_state_bytes(&mut q8, &ids, dir.path());
    let f16_bytes = saved_state_bytes(&mut f16, &ids, dir.path());
    let stored = q8_bytes as f64 / f16_bytes as f64;
    eprintln!("saved state: q8_0 {q8_bytes} B, f16 {f16_bytes} B, ratio {stored:.4}");
    assert!(
        (stored - Q8_0_PER_F16).abs() < 0.03,
        "state bytes q8_0 {q8_bytes} / f16 {f16_bytes} = {stored:.3}"
    );
    let computed = q8.info().kv_bytes as f64 / f16.info().kv_bytes as f64;
    assert!(f16.info().kv_bytes > 0);
    assert!((computed - Q8_0_PER_F16).abs() < 0.01, "{computed}");
}

/// `harvey --model SMOLLM2 bench --json ARGS` in a new workspace with `config`: its report.
fn bench_json(config: &str, args: &[&str]) -> Value {
    let ws = workspace();
    std::fs::write(ws.path().join("agents/harvey.yaml"), config).unwrap();
    let model = model_path();
    let mut all = vec!["--model", model.to_str().unwrap(), "bench", "--json"];
    all.extend_from_slice(args);
    let out = run(ws.path(), &all);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn bytes(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not a byte count: {v}"))
}

#[test]
fn bench_json_splits_memory_and_compares_both_cache_types() {
    let model = model_path();
    let report = bench_json(
        "engine:\n  n_ctx: 512\n  kv_cache_type: f16\nmemory:\n  embedder: none\n",
        &[
            "--turns",
            "1",
            "--decode-tokens",
            "4",
            "--turn-tokens",
            "2",
            "--kv-depths",
            "64",
            "--kv-cache-type",
            "q8_0",
            "--lookup-tokens",
            "8",
        ],
    );
    // The flag overrides the config for the main run.
    assert_eq!(report["kv_cache_type"], "q8_0");
    let memory = &report["memory"];
    let weights = bytes(&memory["weights_bytes"]);
    assert_eq!(weights, std::fs::metadata(&model).unwrap().len());
    let kv = bytes(&memory["kv_bytes"]);
    let rows = report["kv_cache"].as_array().unwrap();
    let types: Vec<&str> = rows
        .iter()
        .map(|r| r["kv_type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["f16", "q8_0"]);
    let row_bytes: Vec<u64> = rows.iter().map(|r| bytes(&r["kv_bytes"])).collect();
    assert_eq!(kv, row_bytes[1], "the main run's KV is the q8_0 row's");
    let ratio = row_bytes[1] as f64 / row_bytes[0] as f64;
    assert!((ratio - Q8_0_PER_F16).abs() < 0.01, "{ratio}");
    for row in rows {
        let depths = row["depths"].as_array().unwrap();
        assert_eq!(depths.len(), 1, "{row}");
        let depth = bytes(&depths[0]["depth"]);
        assert!((1..=64).contains(&depth), "{row}");
        assert!(depths[0]["decode_tps"].as_f64().unwrap() > 0.0, "{row}");
        assert!(
            (1..=4).contains(&bytes(&depths[0]["generated_tokens"])),
            "{row}"
        );
    }
    // The k-cost table: one row, then 1 + 1, 2, 4, 8 rows, each timed.
    let costs = report["verify_cost"].as_array().unwrap();
    let ks: Vec<u64> = costs.iter().map(|c| bytes(&c["k"])).collect();
    assert_eq!(ks, [0, 1, 2, 4, 8]);
    assert_eq!(costs[0]["relative"].as_f64(), Some(1.0));
    assert!(costs.iter().all(|c| c["ms"].as_f64().unwrap() > 0.0));
    // Both lookup workloads, every mode; prompts that do not fit n_ctx 512 are skipped.
    let lookup = report["lookup"].as_array().unwrap();
    let names: Vec<&str> = lookup
        .iter()
        .map(|w| w["workload"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["quote", "free"]);
    for w in lookup {
        let run = bytes(&w["prompts"]);
        assert_eq!(run + bytes(&w["skipped"]), 3, "{w}");
        let modes = w["modes"].as_array().unwrap();
        assert_eq!(modes.len(), 3, "{w}");
        for m in modes {
            assert!(bytes(&m["generated_tokens"]) <= run * 8, "{m}");
            assert!(
                bytes(&m["accepted_tokens"]) <= bytes(&m["draft_tokens"]),
                "{m}"
            );
            if m["mode"] == "off" {
                assert_eq!(bytes(&m["draft_tokens"]), 0, "{m}");
            }
        }
    }
    assert!(
        bytes(&lookup[1]["prompts"]) > 0,
        "the free prompts are short"
    );
    if cfg!(target_os = "linux") {
        let rss = bytes(&memory["peak_rss_bytes"]);
        assert!(
            rss > weights + kv,
            "peak RSS {rss} vs weights {weights} + KV {kv}"
        );
        let rest = memory["rest_bytes"].as_i64().unwrap();
        assert_eq!(rest, rss as i64 - weights as i64 - kv as i64);
    } else {
        assert!(memory["peak_rss_bytes"].is_null());
    }
}

#[test]
fn bench_pace_json_pairs_every_loop_with_the_yardstick_of_its_round() {
    let rows = bench_json(
        "engine:\n  n_ctx: 512\nmemory:\n  embedder: none\n",
        &[
            "--pace",
            "--pace-rounds",
            "3",
            "--pace-depth",
            "48",
            "--decode-tokens",
            "8",
        ],
    );
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "one model: {rows:?}");
    let row = &rows[0];
    assert_eq!(row["n_gen"], 8);
    assert!((1..=96).contains(&bytes(&row["depth"])), "{row}");
    let spread = |name: &str| {
        let s = &row[name];
        let (min, median, max) = (
            s["min"].as_f64().unwrap(),
            s["median"].as_f64().unwrap(),
            s["max"].as_f64().unwrap(),
        );
        assert!(0.0 < min && min <= median && median <= max, "{name}: {s}");
        (min, max)
    };
    let (bench_min, bench_max) = spread("llama_bench");
    for (name, paired) in [
        ("harvey_shape", "shape_paired"),
        ("greedy", "greedy_paired"),
        ("sampled", "sampled_paired"),
    ] {
        let (min, max) = spread(name);
        // Every round's ratio, so their median, lies between these two.
        let ratio = row[paired].as_f64().unwrap();
        assert!(
            min / bench_max <= ratio && ratio <= max / bench_min,
            "{paired} {ratio} outside {} ..= {}: {row}",
            min / bench_max,
            max / bench_min
        );
    }
}
