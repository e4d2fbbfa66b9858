//! harvey: a terminal agent that runs a GGUF model in-process and remembers across sessions.
//!
//! Module map (dependencies point downward only):
//! - `app`: composition root, builds everything once from `Config`.
//! - `repl`: the interactive loop (the only importer of `rustyline`) and rendering.
//! - `chat`: one conversation and one agent turn on top of an engine.
//! - `memory`: typed memories, their index and the budgeted recall path.
//! - `rag`: document stores (chunks, full text, vectors) for recall.
//! - `kb`: the knowledge base (projects, observations, concepts).
//! - `vector`: content-hash-keyed vectors, exact top-k and rank fusion.
//! - `model`: the model wing: where the model file is found (`find`), what it is from its
//!   GGUF header (`gguf`, `catalog`), its chat template by family (`template`), and
//!   downloading it resumably (`pull`, the only importer of `ureq`).
//! - `ops`: the `/rag` and `/kb` operations that the REPL and the subcommands both run.
//! - `term`: the terminal both faces share (echo off while a reply streams, turn events).
//! - `platform`: cores, memory, SoC temperature and throttling.
//! - `command`: running programs safely (no shell, allowlist, timeout, audit log).
//! - `config`: raw YAML shape -> resolved, immutable [`config::Config`].
//! - `engine`: the only importer of `llama_cpp_2`: load, template, tokenize, generate.
//! - `evidence`: answers from evidence: the workspace's files, history, memories and
//!   session summaries in one ranked index, fitted to a budget per question.
//! - `tokens`: the token-counting boundary other modules use instead of the engine.
//! - `text`: shared text helpers (chunking lines to a token limit, durations as written).
//! - `sandbox`: the workspace's path rules (inside it, not `agents/`, `.git/` or a secret)
//!   that the tools, the git command, `files` and session mining share.
//! - `files`: workspace files read into the context (`/read`, `/attach`, `/context pin`).
//! - `skills`: the user's workflows in `agents/skills/<name>/SKILL.md` (the Agent Skills
//!   format the Go tool reads): found, checked, filled in for a run.
//! - `workspace_map`: the files the tools may read, as the `[workspace files]` block and
//!   as the nearest real paths for a path the model got wrong.
//!
//! The core never prints: everything but `repl` returns values.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod app;
pub mod bench;
pub mod chat;
pub mod command;
pub mod config;
pub mod engine;
pub mod evidence;
pub mod files;
pub mod kb;
pub mod memory;
pub mod model;
pub mod onboarding;
pub mod ops;
pub mod platform;
pub mod project;
pub mod rag;
pub mod regular_file;
pub mod repl;
pub mod sandbox;
pub mod session;
pub mod skills;
pub mod sources;
pub mod storage;
pub mod term;
pub mod text;
pub mod tokens;
pub mod tools;
pub mod vector;
pub mod workspace_map;

// The model wing's files stood at the top before; their old paths stay for callers outside
// the crate.
pub use model::{find as models, gguf};
