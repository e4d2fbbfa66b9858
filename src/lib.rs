//! harvey: a terminal agent that runs a GGUF model in-process and remembers across sessions.
//!
//! Module map (dependencies point downward only):
//! - `config`: raw YAML shape -> resolved, immutable [`config::Config`].
//! - `engine`: the only importer of `llama_cpp_2`: load, template, tokenize, generate.
//! - `tokens`: the token-counting boundary other modules use instead of the engine.
//! - `memory`: typed memories, their index and the budgeted recall path.
//! - `chat`: one conversation and one agent turn on top of an engine.
//! - `repl`: the interactive loop (the only importer of `rustyline`) and rendering.
//!
//! The core never prints: everything but `repl` and `main.rs` returns values.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod tokens;
pub mod memory;
