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

/// Writes `text` to stdout and flushes it; a reader that stopped reading (`harvey evidence
/// show … | head`) ends the output quietly instead of a panic on the broken pipe.
pub fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
