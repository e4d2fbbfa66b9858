//! `cargo bench --bench engine`: the same measurements as `harvey bench`, on the default
//! model with the machine's physical cores. Set HARVEY_BENCH_JSON=1 for JSON output.

use std::path::PathBuf;

use harvey::app::physical_cores;
use harvey::bench::{run, BenchOptions};
use harvey::engine::EngineParams;

fn main() {
    let model =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    if !model.is_file() {
        eprintln!(
            "{} is missing: run scripts/fetch-models.sh",
            model.display()
        );
        std::process::exit(1);
    }
    let cores = physical_cores();
    let options = BenchOptions {
        params: EngineParams {
            model_path: model,
            n_ctx: 4096,
            n_batch: 512,
            threads: cores,
            threads_batch: cores,
            template: None,
            kv_cache_type: Default::default(),
            lookup: Default::default(),
            mmap: Default::default(),
        },
        turns: 10,
        decode_tokens: 128,
        turn_tokens: 32,
        kv_depths: vec![512, 3000],
        lookup_tokens: 192,
    };
    match run(&options) {
        Ok(report) if std::env::var_os("HARVEY_BENCH_JSON").is_some() => {
            println!(
                "{}",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            );
        }
        Ok(report) => print!("{}", harvey::bench::render::report(&report)),
        Err(e) => {
            eprintln!("bench failed: {e}");
            std::process::exit(1);
        }
    }
}
