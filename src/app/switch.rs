//! `/model use`: free the loaded model, load another in the same process, and carry the
//! conversation over — older turns folded out if it no longer fits the new n_ctx (their
//! summary is idle work), then prefilled so the next turn starts warm.
//!
//! The old model is dropped before the new one loads, so the new n_ctx is fitted to the
//! memory actually free; if the new one fails to load, the old one is loaded back. Each
//! model keeps its own saved prompt prefix in `agents/cache/`: the switch restores the new
//! model's, or saves it.

use std::path::{Path, PathBuf};

use super::{engine_params, App, AppError};
use crate::chat::prefix_cache::PrefixOutcome;
use crate::chat::rolling::{fold_for_room, Compression};
use crate::engine::{LlamaEngine, Unloaded};

/// What a switch did, for the REPL to report.
#[derive(Debug, Clone)]
pub struct SwitchReport {
    pub from: String,
    pub to: String,
    pub path: PathBuf,
    pub n_ctx: u32,
    pub template: String,
    /// Tokens of the conversation now in the new model's KV cache.
    pub prefilled: usize,
    /// Older turns summarized to fit the new context.
    pub compression: Option<Compression>,
    /// Resident memory before and after (freeing the old model shows here).
    pub rss_before: Option<u64>,
    pub rss_after: Option<u64>,
    /// Load notes (n_ctx lowered to fit memory, …) and anything that went wrong after
    /// the load (the conversation could not be prefilled).
    pub notes: Vec<String>,
}

impl App {
    /// Switches to the model at `path`; the conversation (system prompt, memory context,
    /// turns) stays. On a load failure the previous model is loaded back.
    pub fn switch_model(&mut self, path: &Path) -> Result<SwitchReport, AppError> {
        let rss_before = crate::platform::rss_bytes();
        let old = self.engine.info().clone();
        // Free first: dropping the old engine releases its weights and KV caches.
        self.engine = Box::new(Unloaded::new(old.clone()));
        let engine = match LlamaEngine::load(&engine_params(&self.config, path.to_path_buf())) {
            Ok(engine) => engine,
            Err(e) => {
                if let Ok(back) = LlamaEngine::load(&engine_params(&self.config, old.path.clone()))
                {
                    self.engine = Box::new(back);
                }
                return Err(e.into());
            }
        };
        self.engine = Box::new(engine);
        self.offer_tools_to_engine();
        self.prefix = PrefixOutcome::Empty;
        self.forget_workspace_map();
        let info = self.engine.info().clone();
        let mut notes = info.notes.clone();
        if self.config.engine.cache_prefix {
            // This model's own saved prefix (the cache keys it by model): restored when an
            // earlier session saved one, else prefilled and saved now, so the next start
            // with this model is warm too. The conversation below extends it.
            let stable = self.stable_memory_context();
            let prefix = self.prepare_prefix(&stable).describe();
            notes.push(format!("prompt prefix: {prefix}"));
        }
        let compression = self.fit_conversation(&mut notes);
        let prefilled = match self
            .engine
            .prompt_ids(&self.conversation.messages())
            .and_then(|ids| self.engine.warm_prefix(&ids).map(|_| ids.len()))
        {
            Ok(n) => n,
            Err(e) => {
                notes.push(format!("the conversation was not prefilled: {e}"));
                0
            }
        };
        let _ = self.recorder.note(&format!(
            "model switched from {} to {} (n_ctx {}, template {})",
            old.name, info.name, info.n_ctx, info.template_name
        ));
        Ok(SwitchReport {
            from: old.name,
            to: info.name,
            path: info.path,
            n_ctx: info.n_ctx,
            template: format!("{} ({})", info.template_name, info.template_reason),
            prefilled,
            compression,
            rss_before,
            rss_after: crate::platform::rss_bytes(),
            notes,
        })
    }

    /// Folds older turns out (without the model: their summary is idle work) when the
    /// conversation plus a reply no longer fits.
    fn fit_conversation(&mut self, notes: &mut Vec<String>) -> Option<Compression> {
        let n_ctx = self.engine.info().n_ctx as usize;
        let threshold = n_ctx.saturating_sub(self.reply_reserve());
        let keep = self.config.memory.rolling_summary.keep_turns;
        match fold_for_room(
            self.engine.as_ref(),
            &mut self.conversation,
            threshold,
            keep,
        ) {
            Ok(done) => {
                if let Some(c) = &done {
                    self.compressions.push(c.clone());
                }
                done
            }
            Err(e) => {
                notes.push(format!("older turns could not be folded to fit: {e}"));
                None
            }
        }
    }
}
