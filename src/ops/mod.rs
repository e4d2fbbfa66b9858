//! The operations both faces run: `/rag …` and `harvey rag …`, `/kb …` and `harvey kb …`.
//! Each is parsed into a typed request (`RagOp`, `KbOp`) and run against the stores, writing
//! its report to a `Write`; the REPL and the subcommands only choose the request and where
//! the output goes. Below both faces: nothing here imports `repl` or the CLI.

pub mod knowledge;
pub mod rag;
mod subcommand;
