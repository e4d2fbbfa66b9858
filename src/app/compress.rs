//! The rolling summary as idle work: the REPL calls [`App::compress`] after an answer,
//! while the prompt waits for the user, with the abort flag raised by the line editor
//! when a line arrives. Between a question and its answer only the model-free fold of
//! [`crate::chat::prepare_turn`] runs.

use super::App;
use crate::chat::rolling::{compress_if_needed, warm, Compression};
use crate::engine::EngineError;

impl App {
    /// Whether [`Self::compress`] has work: turns folded without the model wait for
    /// their summary, or the context is at or over the rolling-summary threshold. The
    /// share of the context in use (0–1).
    pub fn compression_due(&self) -> Option<f64> {
        let rolling = &self.config.memory.rolling_summary;
        if !rolling.enabled {
            return None;
        }
        let n_ctx = self.engine.info().n_ctx as f64;
        let used = self.context_used().ok()? as f64 / n_ctx;
        let pending = !self.conversation.folded().is_empty();
        let full = used >= rolling.warn_at_pct && self.conversation.turn_count() > 1;
        (pending || full).then_some(used)
    }

    /// Writes the summary of older turns (those folded to make room, and all but
    /// `keep_turns` when the context is at or over `warn_at_pct` once the evidence blocks
    /// of the questions before the previous one are out) aside, then prefills
    /// the new prompt into the chat cache. Stops at the abort flag without changing the
    /// conversation (`Ok(None)`); the flag is not cleared here (the caller raised it to
    /// take the model back).
    pub fn compress(&mut self) -> Result<Option<Compression>, EngineError> {
        let rolling = &self.config.memory.rolling_summary;
        let n_ctx = self.engine.info().n_ctx as f64;
        let threshold = (n_ctx * rolling.warn_at_pct).floor() as usize;
        let keep = rolling.keep_turns;
        // The old questions' evidence blocks go first (the last question keeps its own, for
        // a follow-up): no model call, and the turns stay.
        if self.context_used()? >= threshold
            && crate::chat::drop_older_blocks(&mut self.conversation, 1) > 0
        {
            let warmed = warm(self.engine.as_mut(), &self.conversation, &self.abort)?;
            tracing::info!(
                warmed,
                "older questions' evidence blocks taken out while idle"
            );
            if self.context_used()? < threshold {
                return Ok(None);
            }
        }
        let done = compress_if_needed(
            self.engine.as_mut(),
            &mut self.conversation,
            threshold,
            keep,
            &self.abort,
        )?;
        if let Some(c) = &done {
            tracing::info!(
                folded = c.folded_turns,
                input_tokens = c.input_tokens,
                turn_tokens = c.turn_tokens,
                "older turns summarized while idle"
            );
            self.compressions.push(c.clone());
            // The record keeps the original turns; it only notes the compression.
            let _ = self.recorder.note(&c.note());
            let warmed = warm(self.engine.as_mut(), &self.conversation, &self.abort)?;
            tracing::info!(warmed, "the compressed prompt is prefilled");
        }
        Ok(done)
    }
}
