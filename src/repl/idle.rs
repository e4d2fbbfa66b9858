//! Work the REPL does while the prompt waits for a line: first the session's prefix and
//! the router's instructions ([`start`]); after an answer, the rolling summary of older
//! turns (and the prefill of the shortened prompt); then the summaries
//! of sessions closed with `memory.summary_at: later` (and their mining). The model is
//! the main thread's; the line editor runs on its own thread and, when a line (or the
//! end of input) comes while this work runs, raises the abort flag so the model is free
//! for the user within a token. A summary that was stopped changes nothing: the
//! conversation stays as it was, a pending record stays pending.
//!
//! Nothing is printed while the user may be typing, except a failure (a full disk must
//! not pass unsaid).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::app::App;
use crate::engine::AbortFlag;

/// Whether idle work holds the model; shared with the line editor's thread.
#[derive(Clone)]
pub struct Idle {
    busy: Arc<Mutex<bool>>,
    abort: AbortFlag,
    /// Whether pending session records may be left (looked for until none is found or
    /// one fails: the look reads every record).
    records_left: Arc<AtomicBool>,
}

impl Idle {
    pub fn new(abort: AbortFlag) -> Self {
        Self {
            busy: Arc::new(Mutex::new(false)),
            abort,
            records_left: Arc::new(AtomicBool::new(true)),
        }
    }

    /// Idle work is about to run: called before the prompt is shown, so a line typed at
    /// once stops it too.
    pub fn begin(&self) {
        self.set_busy(true);
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

/// The first message's fixed work, done while the first prompt waits: the prefix and
/// the router's instructions ([`App::prepare_start`]). Not stopped by input (the line's
/// turn needs it and would do it anyway); only a prefix that could not be saved is said.
pub fn start(app: &mut App, out: &mut impl Write) {
    if let Some(note) = app.prepare_start() {
        let _ = writeln!(out, "\nnote: {note}");
        let _ = out.flush();
    }
}

/// The idle work after [`Idle::begin`]: the rolling summary first (the next turn needs
/// it), then pending session summaries, until done or input arrives. Ends the busy state.
pub fn work(app: &mut App, idle: &Idle, out: &mut impl Write) {
    compress(app, out);
    if idle.records_left.load(Ordering::Relaxed) && !summarize_pending(app, out) {
        idle.records_left.store(false, Ordering::Relaxed);
    }
    idle.set_busy(false);
}

/// Summarizes older turns when they were folded out to make room or the context is past
/// `warn_at_pct`.
fn compress(app: &mut App, out: &mut impl Write) {
    if app.abort().is_raised() || app.compression_due().is_none() {
        return;
    }
    if let Err(e) = app.compress() {
        let _ = writeln!(out, "\n[older turns were not summarized: {e}]");
        let _ = out.flush();
    }
}

/// Summarizes pending records one by one until none is left or input arrives. Returns
/// whether some may be left (stopped by input).
fn summarize_pending(app: &mut App, out: &mut impl Write) -> bool {
    while !app.abort().is_raised() {
        match app.summarize_pending(&mut |line| tracing::info!("{line}")) {
            Ok(Some(report)) => {
                tracing::info!(record = %report.record.display(), "pending summary written");
            }
            Ok(None) => return app.abort().is_raised(),
            Err(e) => {
                let _ = writeln!(out, "\n[a pending session summary was not written: {e}]");
                let _ = out.flush();
                return false;
            }
        }
    }
    true
}
