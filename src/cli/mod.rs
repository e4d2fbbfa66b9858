//! The subcommand faces: `harvey run`, `memory`, `rag`, `kb`, `model` and `skill`. Each parses its
//! flags, asks the library (the operations in `ops`, the stores, the model wing) and renders
//! the result; none imports another face (`repl`).

pub mod bench_mining;
pub mod evidence;
#[cfg(test)]
mod help_tests;
pub mod knowledge;
pub mod memory;
pub mod model;
pub mod model_pull;
pub mod run;
pub mod skill;
