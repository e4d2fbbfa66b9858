//! Work the REPL does while it waits for the first line: the summaries of sessions
//! closed with `memory.summary_at: later` (and their mining). The model is the main
//! thread's; the line editor runs on its own thread and, when a line (or the end of
//! input) comes while this work runs, raises the abort flag so the model is free for
//! the user within a token. A record whose summary was stopped stays pending.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::app::App;
use crate::engine::AbortFlag;

/// Whether idle work holds the model; shared with the line editor's thread.
#[derive(Clone)]
pub struct Idle {
    busy: Arc<Mutex<bool>>,
    abort: AbortFlag,
}

impl Idle {
    pub fn new(abort: AbortFlag) -> Self {
        Self {
            busy: Arc::new(Mutex::new(false)),
            abort,
        }
    }

    /// Input arrived: stop the idle work, if any runs. Under the same lock as
    /// [`Self::set_busy`], so a raise never outlives the work it was meant to stop.
    pub fn interrupt(&self) {
        if let Ok(busy) = self.busy.lock() {
            if *busy {
                self.abort.raise();
            }
        }
    }

    fn set_busy(&self, busy: bool) {
        if let Ok(mut b) = self.busy.lock() {
            *b = busy;
            if !busy {
                self.abort.clear();
            }
        }
    }
}

/// Summarizes pending records one by one until none is left or input arrives. Errors
/// are said on `out` (a full disk must not pass unsaid) and end the work for now.
pub fn summarize_pending(app: &mut App, idle: &Idle, out: &mut impl Write) {
    idle.set_busy(true);
    loop {
        match app.summarize_pending(&mut |line| tracing::info!("{line}")) {
            Ok(Some(report)) => {
                tracing::info!(record = %report.record.display(), "pending summary written");
            }
            Ok(None) => break,
            Err(e) => {
                let _ = writeln!(out, "\n[a pending session summary was not written: {e}]");
                let _ = out.flush();
                break;
            }
        }
    }
    idle.set_busy(false);
}
