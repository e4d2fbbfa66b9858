//! The operations both faces run: `/rag …` and `harvey rag …`, `/kb …` and `harvey kb …`,
//! `/memory …` and `harvey memory …`.
//! Each is parsed into a typed request (`RagOp`, `KbOp`) and run against the stores, writing
//! its report to a `Write`; the REPL and the subcommands only choose the request and where
//! the output goes. The memory operations return values instead, which each face renders. Below both faces: nothing here imports `repl` or the CLI.

pub mod knowledge;
pub mod memory;
pub mod rag;
mod subcommand;
