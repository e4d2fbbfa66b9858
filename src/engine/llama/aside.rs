//! Where an aside call (a summary, tags, mining: work that must not disturb the chat's
//! KV cache) runs.
//!
//! - **Shared:** as sequence 1 of the chat context, in the cells the chat does not use.
//!   The chat context is created with two sequences in one unified cache of n_ctx cells,
//!   so this costs no second KV cache and no second compute buffer. Sequence 1 is emptied
//!   after every call, except a call that asks to keep its prompt (for a next call that
//!   starts the same way); the chat takes those cells back when its count of tokens may
//!   need them (prompt + reply cap + draft + kept > n_ctx; the vendored llama.cpp places
//!   a batch in any free cells, so a count is enough). The router keeps its instructions.
//! - **Own:** a context of its own, created on first use at the size the call needs and
//!   recreated only when a call needs more (see [`aside_size`]). Used when the chat leaves
//!   too little room, and always for recurrent and hybrid models, whose state is kept per
//!   sequence and cannot be shared this way.

use std::path::Path;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::token::LlamaToken;

use super::{clear_seq, prefill_only, truncate_cache, LlamaEngine};
use crate::engine::prompt::common_prefix;
use crate::engine::types::Message;
use crate::engine::EngineError;

use super::super::load::context_params;

/// The sequence an aside call uses in the chat context.
pub(super) const SHARED_SEQ: i32 = 1;

/// Where one call runs, and how many tokens (prompt + reply) it may hold there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// Sequence 0 of the chat context.
    Chat(usize),
    /// Sequence 1 of the chat context.
    Shared(usize),
    /// The aside context of its own.
    Own(usize),
}

impl Target {
    /// Tokens the call may hold.
    pub fn n_ctx(self) -> usize {
        match self {
            Self::Chat(n) | Self::Shared(n) | Self::Own(n) => n,
        }
    }
}

impl LlamaEngine {
    /// Tokens (prompt + reply) an aside call may take. The chat context's free cells when
    /// they are worth sharing (at least a quarter of n_ctx and [`ASIDE_MIN`]); otherwise a
    /// whole n_ctx, in the aside context of its own. Callers that chunk their input
    /// (summaries, mining) size chunks to this, so they run shared whenever they can.
    pub fn aside_room(&self) -> usize {
        let n_ctx = self.info.n_ctx as usize;
        let room = self.shared_room();
        if room >= (n_ctx / 4).max(ASIDE_MIN as usize).min(n_ctx) {
            room
        } else {
            n_ctx
        }
    }

    /// Free cells of the chat context for sequence 1 (0 when it cannot be shared).
    fn shared_room(&self) -> usize {
        if !self.shares_aside {
            return 0;
        }
        (self.info.n_ctx as usize).saturating_sub(self.chat_cached.len() + 1)
    }

    /// Empties sequence 1 when the chat, about to hold up to `need` tokens, could run out
    /// of cells because of what it keeps (see `GenerateOptions::keep_prompt`).
    pub(super) fn make_room_for_chat(&mut self, need: usize) {
        let n_ctx = self.info.n_ctx as usize;
        if need.saturating_add(self.shared_cached.len()) > n_ctx {
            self.release_shared();
        }
    }

    /// Empties sequence 1 of the chat context (a kept prompt goes).
    pub(super) fn release_shared(&mut self) {
        if self.shared_cached.is_empty() {
            return;
        }
        let Self {
            cell,
            chat_cached,
            shared_cached,
            ..
        } = self;
        shared_cached.clear();
        cell.with_dependent_mut(|_, c| {
            clear_seq(&mut c.chat, SHARED_SEQ);
            // If llama.cpp had to clear the whole cache, the chat prefills again.
            let held = usize::try_from(c.chat.kv_cache_seq_pos_max(0) + 1).unwrap_or(0);
            if held != chat_cached.len() {
                c.chat.clear_kv_cache();
                chat_cached.clear();
            }
        });
    }

    /// Positions sequence 1 of the chat context holds between aside calls: 0, or the
    /// prompt a call kept (a check).
    pub fn shared_aside_len(&self) -> usize {
        let max = self
            .cell
            .borrow_dependent()
            .chat
            .kv_cache_seq_pos_max(SHARED_SEQ);
        usize::try_from(max + 1).unwrap_or(0)
    }

    /// Aside calls that ran in the chat context's free cells so far.
    pub fn shared_aside_calls(&self) -> usize {
        self.shared_calls
    }

    /// Token ids of an aside call's prompt (no tools section), as `generate_aside` sees it.
    pub fn aside_prompt_ids(&self, messages: &[Message]) -> Result<Vec<i32>, EngineError> {
        let tokens = self.tokenize_rendered(messages, false)?;
        Ok(tokens.into_iter().map(|t| t.0).collect())
    }

    /// Makes sequence 1 hold exactly `ids` as a kept prompt (decoding what is missing), so
    /// the next aside call that starts with them decodes only the rest. Refused when the
    /// chat leaves too little room for them and a call after them ([`KEEP_SLACK`]).
    pub fn keep_aside_prefix(&mut self, ids: &[i32]) -> Result<usize, EngineError> {
        self.check_keep_room(ids.len())?;
        let tokens: Vec<LlamaToken> = ids.iter().map(|&t| LlamaToken(t)).collect();
        let n_batch = self.info.n_batch as usize;
        let Self {
            cell,
            shared_cached,
            chat_cached,
            ..
        } = self;
        cell.with_dependent_mut(|model, c| {
            check_shared(&mut c.chat, shared_cached);
            let keep = common_prefix(shared_cached, &tokens);
            let keep = truncate_cache(&mut c.chat, shared_cached, keep, SHARED_SEQ);
            let result = prefill_only(
                model,
                &mut c.chat,
                shared_cached,
                &tokens[keep..],
                tokens.len() + 1,
                n_batch,
                SHARED_SEQ,
            );
            if result.is_err() {
                clear_seq(&mut c.chat, SHARED_SEQ);
                shared_cached.clear();
            }
            chat_untouched(&mut c.chat, chat_cached, shared_cached);
            result.map(|_| tokens.len() - keep)
        })
    }

    /// Saves the kept aside prompt (sequence 1 and its tokens) to `path`.
    pub fn save_aside_state(&self, path: &Path) -> Result<usize, EngineError> {
        self.cell
            .borrow_dependent()
            .chat
            .state_seq_save_file(path, SHARED_SEQ, &self.shared_cached)
            .map_err(|e| EngineError::State {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })
    }

    /// Loads a state saved by [`Self::save_aside_state`] into sequence 1 as the kept
    /// prompt. Kept only if its tokens are exactly `expected`; otherwise sequence 1 is
    /// emptied and an error says why (the caller decodes them instead).
    pub fn load_aside_state(&mut self, path: &Path, expected: &[i32]) -> Result<(), EngineError> {
        let fail = |reason: String| EngineError::State {
            path: path.to_path_buf(),
            reason,
        };
        self.check_keep_room(expected.len())
            .map_err(|e| fail(e.to_string()))?;
        let capacity = expected.len();
        let Self {
            cell,
            shared_cached,
            chat_cached,
            ..
        } = self;
        cell.with_dependent_mut(|_, c| {
            clear_seq(&mut c.chat, SHARED_SEQ);
            shared_cached.clear();
            let loaded = c.chat.state_seq_load_file(path, SHARED_SEQ, capacity);
            let result = match loaded {
                Ok((tokens, _)) if tokens.iter().map(|t| t.0).eq(expected.iter().copied()) => {
                    *shared_cached = tokens;
                    Ok(())
                }
                Ok(_) => Err(fail("saved tokens differ from this prompt's prefix".into())),
                Err(e) => Err(fail(e.to_string())),
            };
            if result.is_err() {
                clear_seq(&mut c.chat, SHARED_SEQ);
            }
            chat_untouched(&mut c.chat, chat_cached, shared_cached);
            result
        })
    }

    /// Whether `n` tokens may be kept in sequence 1 now: the model shares its context and
    /// the chat leaves room for them plus a call after them.
    fn check_keep_room(&self, n: usize) -> Result<(), EngineError> {
        let room = self.shared_room();
        if self.shares_aside && n.saturating_add(KEEP_SLACK) <= room {
            return Ok(());
        }
        Err(EngineError::PromptTooLong {
            tokens: n.saturating_add(KEEP_SLACK),
            n_ctx: room,
            fits: room.saturating_sub(KEEP_SLACK),
        })
    }

    /// Where an aside call of `needed` tokens (prompt + longest reply) runs: shared when it
    /// fits the chat's free cells, else in the aside context (created or grown here).
    pub(super) fn aside_target(&mut self, needed: usize) -> Result<Target, EngineError> {
        let room = self.shared_room();
        if needed <= room {
            self.shared_calls += 1;
            return Ok(Target::Shared(room));
        }
        self.ensure_aside(needed)
            .map(|n_ctx| Target::Own(n_ctx as usize))
    }

    /// Keeps only the part of the chat cache that `messages` (rendered) begin with. For a
    /// caller about to replace what follows (a rolling summary rewrites everything after the
    /// pinned messages), this costs nothing and frees those cells for its aside calls.
    pub fn keep_chat_prefix(&mut self, messages: &[Message]) {
        let keep = self
            .tokenize_prompt(messages)
            .map_or(0, |tokens| common_prefix(&self.chat_cached, &tokens));
        let Self {
            cell, chat_cached, ..
        } = self;
        cell.with_dependent_mut(|_, c| truncate_cache(&mut c.chat, chat_cached, keep, 0));
    }

    /// Makes the aside context hold at least `needed` tokens (see [`aside_size`]): created
    /// on first use, recreated only when a bigger one is needed. Returns its n_ctx.
    fn ensure_aside(&mut self, needed: usize) -> Result<u32, EngineError> {
        let want = aside_size(needed, self.info.n_ctx);
        if self.aside_n_ctx >= want {
            return Ok(self.aside_n_ctx);
        }
        let params = context_params(&self.info, want, self.kv_cache_type, 1);
        let backend = self.backend;
        let path = self.info.path.clone();
        self.aside_cached.clear();
        self.aside_n_ctx = 0;
        self.cell.with_dependent_mut(|model, c| {
            // Free the smaller one first: both at once would raise the peak.
            c.aside = None;
            let ctx = model
                .new_context(backend, params)
                .map_err(|e| EngineError::Load {
                    step: "create the aside context (not enough memory?)",
                    path,
                    reason: e.to_string(),
                })?;
            c.aside = Some(ctx);
            Ok::<_, EngineError>(())
        })?;
        self.aside_n_ctx = want;
        Ok(want)
    }
}

/// After work on sequence 1: if llama.cpp had to clear more than that sequence, the chat
/// prefills again rather than trust a stale mirror.
fn chat_untouched(
    chat: &mut LlamaContext,
    chat_cached: &mut Vec<LlamaToken>,
    shared_cached: &mut Vec<LlamaToken>,
) {
    let held = usize::try_from(chat.kv_cache_seq_pos_max(0) + 1).unwrap_or(0);
    if held != chat_cached.len() {
        chat.clear_kv_cache();
        chat_cached.clear();
        shared_cached.clear();
    }
}

/// Makes the mirror of sequence 1 (`cached`) agree with what llama.cpp holds before a
/// shared call reuses it: anything that cleared the whole chat cache (a reset, a loaded
/// state) took the kept prompt with it.
pub(super) fn check_shared(chat: &mut LlamaContext, cached: &mut Vec<LlamaToken>) {
    let held = usize::try_from(chat.kv_cache_seq_pos_max(SHARED_SEQ) + 1).unwrap_or(0);
    if held != cached.len() {
        clear_seq(chat, SHARED_SEQ);
        cached.clear();
    }
}

/// The aside context's n_ctx for a call that needs `needed` tokens (prompt + longest
/// reply): rounded up to a multiple of [`ASIDE_STEP`], at least [`ASIDE_MIN`], never more
/// than the chat's n_ctx. A summary of a short chat then costs a fraction of the chat's
/// KV cache instead of all of it.
fn aside_size(needed: usize, chat_n_ctx: u32) -> u32 {
    let step = ASIDE_STEP as usize;
    let capped = needed.max(ASIDE_MIN as usize).min(chat_n_ctx as usize);
    let rounded = capped.div_ceil(step) * step;
    u32::try_from(rounded).unwrap_or(u32::MAX).min(chat_n_ctx)
}

/// The aside context grows in steps of this many tokens.
const ASIDE_STEP: u32 = 256;
/// The smallest aside context, and the least room worth sharing.
const ASIDE_MIN: u32 = 512;
/// Room a kept prompt must leave in the chat's free cells for the call after it (its
/// request and reply); with less, that call would run in the aside context anyway.
const KEEP_SLACK: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aside_context_is_sized_to_the_call_in_steps_and_capped() {
        assert_eq!(aside_size(1, 4096), 512);
        assert_eq!(aside_size(512, 4096), 512);
        assert_eq!(aside_size(513, 4096), 768);
        assert_eq!(aside_size(1000 + 150, 4096), 1280);
        assert_eq!(aside_size(4000, 4096), 4096);
        assert_eq!(aside_size(usize::MAX, 4096), 4096);
        assert_eq!(aside_size(100, 300), 300);
    }
}
