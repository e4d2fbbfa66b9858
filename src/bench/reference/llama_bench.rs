//! llama.cpp's own `llama-bench` as a child process: where the binary is, its command line
//! for one set of tests, and its `-o json` output. Only [`run`] spawns anything; finding,
//! argument building and parsing are plain functions.
//!
//! The flags are those of llama.cpp's tools/llama-bench/llama-bench.cpp: `-m`, `-t`,
//! `-p` (prompt tokens of a pp test), `-n` (generated tokens of a tg test), `-d` (tokens put
//! in the KV cache before the timed part, untimed), `-r` (repetitions), `-ctk`/`-ctv`, `-fa`,
//! `-o json`. `-b`/`-ub` are left at llama-bench's defaults (2048/512): they are the
//! yardstick harvey's own n_batch is judged against.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::engine::KvCacheType;

/// Builds the binary from the llama.cpp sources and ggml options harvey's build used.
pub const BUILD_SCRIPT: &str = "scripts/build-llama-bench.sh";

/// Where [`BUILD_SCRIPT`] puts the binary, under cargo's target directory.
const IN_TARGET: &str = "llama-bench/bin/llama-bench";

/// Why there are no llama-bench numbers.
#[derive(Debug, thiserror::Error)]
pub enum LlamaBenchError {
    #[error("no llama-bench at {}: build it with {BUILD_SCRIPT} (or pass --llama-bench PATH)", .looked.display())]
    Missing { looked: PathBuf },
    #[error("cannot run {}: {reason}", .binary.display())]
    Spawn { binary: PathBuf, reason: String },
    #[error("llama-bench failed ({status}): {stderr}")]
    Failed { status: String, stderr: String },
    #[error("llama-bench's output is not the JSON expected: {0}")]
    Output(String),
}

/// One test of llama-bench's JSON output (the fields harvey reads; the rest are ignored).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Test {
    pub n_prompt: usize,
    pub n_gen: usize,
    #[serde(default)]
    pub n_depth: usize,
    pub n_batch: u32,
    pub n_ubatch: u32,
    pub n_threads: u32,
    /// Mean and sample standard deviation of the repetitions' tokens per second.
    pub avg_ts: f64,
    pub stddev_ts: f64,
    #[serde(default)]
    pub samples_ts: Vec<f64>,
    #[serde(default)]
    pub type_k: String,
    #[serde(default)]
    pub build_commit: String,
}

impl Test {
    /// A prompt-processing test (`ppN`, at its depth).
    pub fn is_prefill(&self) -> bool {
        self.n_prompt > 0 && self.n_gen == 0
    }

    /// A text-generation test (`tgN`, at its depth).
    pub fn is_decode(&self) -> bool {
        self.n_gen > 0 && self.n_prompt == 0
    }
}

/// One llama-bench invocation: every depth with the given prompt and generation lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct Request<'a> {
    pub model: &'a Path,
    pub threads: u32,
    pub n_prompt: usize,
    pub n_gen: usize,
    pub depths: &'a [usize],
    pub reps: usize,
    pub kv_cache_type: KvCacheType,
}

/// The binary to run: `explicit` if given, else the one the build script writes (beside
/// this executable's target directory, then in the repository harvey was built from).
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, LlamaBenchError> {
    if let Some(path) = explicit {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(LlamaBenchError::Missing {
                looked: path.to_path_buf(),
            })
        };
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(IN_TARGET);
    let candidates = beside_exe().into_iter().chain([built.clone()]);
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .ok_or(LlamaBenchError::Missing { looked: built })
}

/// `<target>/llama-bench/bin/llama-bench` for an executable in `<target>/<profile>/`.
fn beside_exe() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.join(IN_TARGET))
}

/// The command line (without the binary) for `req`.
pub fn args(req: &Request<'_>) -> Vec<String> {
    let depths = if req.depths.is_empty() {
        "0".to_string()
    } else {
        req.depths
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut args: Vec<String> = vec![
        "-m".into(),
        req.model.display().to_string(),
        "-t".into(),
        req.threads.to_string(),
        "-p".into(),
        req.n_prompt.to_string(),
        "-n".into(),
        req.n_gen.to_string(),
        "-d".into(),
        depths,
        "-r".into(),
        req.reps.max(1).to_string(),
        "-o".into(),
        "json".into(),
    ];
    // Like with like: harvey quantizes both caches and turns flash attention on for q8_0.
    if req.kv_cache_type != KvCacheType::F16 {
        let kv = req.kv_cache_type.as_str().to_string();
        args.extend(["-ctk".into(), kv.clone(), "-ctv".into(), kv]);
        args.extend(["-fa".into(), "on".into()]);
    }
    args
}

/// Runs `binary` with `args` and parses what it printed.
pub fn run(binary: &Path, args: &[String]) -> Result<Vec<Test>, LlamaBenchError> {
    let output = Command::new(binary)
        .args(args)
        .output()
        .map_err(|e| LlamaBenchError::Spawn {
            binary: binary.to_path_buf(),
            reason: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(LlamaBenchError::Failed {
            status: output.status.to_string(),
            stderr: last_lines(&String::from_utf8_lossy(&output.stderr), 5),
        });
    }
    parse(&String::from_utf8_lossy(&output.stdout))
}

/// The tests of llama-bench's `-o json` output (a JSON array, one object per test).
pub fn parse(json: &str) -> Result<Vec<Test>, LlamaBenchError> {
    serde_json::from_str(json).map_err(|e| LlamaBenchError::Output(e.to_string()))
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from target/llama-bench/bin/llama-bench (built by the script) with
    /// `-m models/SmolLM2-135M-Instruct.Q4_1.gguf -t 2 -p 512 -n 32 -d 0,64 -r 2 -o json`.
    const SAMPLE: &str = include_str!("../../../tests/fixtures/llama-bench/smollm2.json");

    #[test]
    fn the_captured_output_parses_into_its_tests() {
        let tests = parse(SAMPLE).unwrap();
        assert_eq!(tests.len(), 4);
        let pp = &tests[0];
        assert!(pp.is_prefill() && !pp.is_decode());
        assert_eq!((pp.n_prompt, pp.n_gen, pp.n_depth), (512, 0, 0));
        assert_eq!((pp.n_batch, pp.n_ubatch, pp.n_threads), (2048, 512, 2));
        assert!(pp.avg_ts > 0.0 && pp.stddev_ts >= 0.0);
        assert_eq!(pp.samples_ts.len(), 2);
        assert_eq!(pp.type_k, "f16");
        let tg = tests.iter().find(|t| t.is_decode() && t.n_depth == 64);
        assert_eq!(tg.map(|t| t.n_gen), Some(32));
    }

    #[test]
    fn output_that_is_not_the_json_array_is_an_error() {
        assert!(matches!(
            parse("| model | size |\n"),
            Err(LlamaBenchError::Output(_))
        ));
        assert!(matches!(parse("{}"), Err(LlamaBenchError::Output(_))));
        assert_eq!(parse("[]").unwrap(), Vec::new());
    }

    #[test]
    fn the_command_line_names_every_test_parameter() {
        let model = Path::new("models/m.gguf");
        let req = Request {
            model,
            threads: 2,
            n_prompt: 0,
            n_gen: 128,
            depths: &[31, 1500],
            reps: 3,
            kv_cache_type: KvCacheType::F16,
        };
        let want = "-m models/m.gguf -t 2 -p 0 -n 128 -d 31,1500 -r 3 -o json";
        assert_eq!(args(&req).join(" "), want);
        let q8 = Request {
            kv_cache_type: KvCacheType::Q8_0,
            depths: &[],
            ..req
        };
        assert!(args(&q8)
            .join(" ")
            .ends_with("-d 0 -r 3 -o json -ctk q8_0 -ctv q8_0 -fa on"));
    }

    #[test]
    fn a_missing_binary_says_how_to_build_it() {
        let err = locate(Some(Path::new("/nonexistent/llama-bench"))).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/nonexistent/llama-bench"), "{text}");
        assert!(text.contains(BUILD_SCRIPT), "{text}");
    }

    #[test]
    fn a_failed_run_keeps_the_end_of_stderr() {
        assert_eq!(last_lines("a\n\nb\nc\n", 2), "b / c");
        assert_eq!(last_lines("", 3), "");
    }
}
