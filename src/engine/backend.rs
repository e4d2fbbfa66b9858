//! The process-wide llama.cpp backend.
//!
//! llama.cpp allows one backend per process (a second `init` is an error), and every
//! model must be dropped before it. Keeping it in a `static` satisfies both: it is created
//! once, on first use, and never dropped, so no model can outlive it. Integration tests
//! that load several engines in one process share it the same way.

use std::sync::{Mutex, OnceLock};

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::{send_logs_to_tracing, LogOptions};

static BACKEND: OnceLock<LlamaBackend> = OnceLock::new();
static INIT: Mutex<()> = Mutex::new(());

/// Returns the backend, initializing it (and routing llama.cpp/ggml logs to `tracing`,
/// where they stay silent unless `--verbose`/`RUST_LOG` enables them) on first use.
pub fn backend() -> Result<&'static LlamaBackend, String> {
    if let Some(backend) = BACKEND.get() {
        return Ok(backend);
    }
    let _guard = INIT
        .lock()
        .map_err(|_| "backend init lock poisoned".to_string())?;
    if let Some(backend) = BACKEND.get() {
        return Ok(backend);
    }
    send_logs_to_tracing(LogOptions::default().with_logs_enabled(true));
    let backend = LlamaBackend::init().map_err(|e| e.to_string())?;
    Ok(BACKEND.get_or_init(|| backend))
}
