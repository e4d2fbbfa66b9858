//! The user's hand on what the model sees: files read into the next message (`/read`,
//! `/attach`), the pinned context (`/context add|pin|clear`), the part-by-part account of
//! the context (`/context`) and folding the conversation now (`/compact`).
//!
//! Everything is counted with the loaded model's tokenizer before anything is sent: a
//! file that does not fit what is left of the context is refused here, with the numbers
//! the user needs to choose a line range or `/compact`. Nothing here prints.

use super::App;
use crate::chat::rolling::{compact, Compression, SUMMARY_MAX_TOKENS};
use crate::chat::Pin;
use crate::engine::EngineError;
use crate::files::{self, FileError, FileText, Range};

/// What is left of the context for the next message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    pub n_ctx: usize,
    /// The prompt as it stands (system prompt to the last turn), exact.
    pub used: usize,
    /// Attachments already waiting for the next message.
    pub pending: usize,
    /// Kept free for the reply.
    pub reply_reserve: usize,
    /// What a new attachment or pin may take: n_ctx − used − pending − reply_reserve.
    pub free: usize,
    /// What would be free after `/compact` (every turn folded into a summary of at most
    /// `SUMMARY_MAX_TOKENS`); `None` when there is nothing to fold.
    pub after_compact: Option<usize>,
}

/// Something added to the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub label: String,
    pub tokens: usize,
    /// Free tokens left afterwards.
    pub free: usize,
}

/// Why nothing was added.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    #[error(transparent)]
    File(#[from] FileError),
    /// Counted and too big: nothing was attached or sent.
    #[error("{label} has {tokens} tokens but only {} are free", room.free)]
    TooBig {
        label: String,
        tokens: usize,
        room: Room,
        /// `FILE 1-N` fits (text files only); `None` when not even the first line does.
        fitting_lines: Option<usize>,
    },
    #[error("cannot count tokens: {0}")]
    Engine(#[from] EngineError),
}

/// One row of `/context`: a part of the prompt and its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextPart {
    pub name: &'static str,
    pub tokens: usize,
}

/// Everything the model sees, part by part. `parts` add up to `used` exactly;
/// `used + pending + free = n_ctx`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextParts {
    pub parts: Vec<ContextPart>,
    /// Everything before the first message (system turn, map and memory context), and
    /// what `engine.fixed_prompt_pct` allows it.
    pub fixed: usize,
    pub fixed_cap: usize,
    pub used: usize,
    pub pending: usize,
    pub free: usize,
    pub n_ctx: usize,
    pub reply_reserve: usize,
}

impl App {
    /// What is left of the context for the next message (see [`Room`]).
    pub fn room(&self) -> Result<Room, EngineError> {
        let n_ctx = self.engine.info().n_ctx as usize;
        let used = self.context_used()?;
        let pending = self.attachments.tokens();
        let reply_reserve = self.reply_reserve();
        let free_of = |taken: usize| n_ctx.saturating_sub(taken + pending + reply_reserve);
        let after_compact = if self.conversation.turns().is_empty() {
            None
        } else {
            let kept = self.engine.count_prompt(&self.conversation.pinned())?;
            Some(free_of(kept + SUMMARY_MAX_TOKENS))
        };
        Ok(Room {
            n_ctx,
            used,
            pending,
            reply_reserve,
            free: free_of(used),
            after_compact,
        })
    }

    /// `/read FILE [RANGES]`, `/attach FILE`: the file (or its ranges) attached to the
    /// next message when it fits what is left of the context; otherwise nothing changes.
    pub fn read_file(&mut self, requested: &str, ranges: &[Range]) -> Result<Added, AddError> {
        let file = files::read(&self.workspace, requested, ranges)?;
        let tokens = self.check_fits(&file)?;
        self.attach(&file.label, file.text);
        Ok(Added {
            label: file.label,
            tokens,
            free: self.room()?.free,
        })
    }

    /// `/context add TEXT`: pinned for the whole session (it survives `/clear`).
    pub fn pin_text(&mut self, text: &str) -> Result<Added, AddError> {
        let file = FileText {
            path: String::new(),
            label: "text".into(),
            text: text.trim().to_string(),
            is_pdf: false,
            total_lines: 0,
        };
        self.pin(file)
    }

    /// `/context pin FILE`: a whole file (or PDF) pinned for the session.
    pub fn pin_file(&mut self, requested: &str) -> Result<Added, AddError> {
        let file = files::read(&self.workspace, requested, &[])?;
        self.pin(file)
    }

    /// Pins `file` when the prompt grows by no more than what is free (header and
    /// template tokens included: that is what the pin costs every turn).
    fn pin(&mut self, file: FileText) -> Result<Added, AddError> {
        let room = self.room()?;
        self.conversation.pin(Pin {
            label: file.label.clone(),
            text: file.text,
        });
        let cost = match self.context_used() {
            Ok(after) => after.saturating_sub(room.used),
            Err(e) => {
                self.conversation.unpin_last();
                return Err(e.into());
            }
        };
        if cost > room.free {
            self.conversation.unpin_last();
            return Err(AddError::TooBig {
                label: file.label,
                tokens: cost,
                room,
                fitting_lines: None,
            });
        }
        self.pending_notes
            .push(format!("pinned {} ({cost} tokens)", file.label));
        Ok(Added {
            label: file.label,
            tokens: cost,
            free: self.room()?.free,
        })
    }

    /// `/context clear`: drops the pinned context; returns how many pins there were.
    pub fn unpin_all(&mut self) -> usize {
        let dropped = self.conversation.unpin_all().len();
        if dropped > 0 {
            self.pending_notes
                .push(format!("pinned context cleared ({dropped} items)"));
        }
        dropped
    }

    /// The file's tokens when it fits the room left, else why not.
    fn check_fits(&self, file: &FileText) -> Result<usize, AddError> {
        let tokens = self.engine.count_tokens(&file.text);
        let room = self.room()?;
        if tokens <= room.free {
            return Ok(tokens);
        }
        let fitting_lines = if file.is_pdf || file.path.is_empty() {
            None
        } else {
            self.fitting_lines(&file.path, file.total_lines, room.free)
        };
        Err(AddError::TooBig {
            label: file.label.clone(),
            tokens,
            room,
            fitting_lines,
        })
    }

    /// The most lines `1-N` of `path` whose block fits `free` tokens: doubling N while
    /// it fits, then a binary search, so no block much larger than what fits is counted.
    fn fitting_lines(&self, path: &str, total: usize, free: usize) -> Option<usize> {
        let fits = |n: usize| {
            let range = Range {
                start: 1,
                end: Some(n),
            };
            files::read(&self.workspace, path, &[range])
                .is_ok_and(|f| self.engine.count_tokens(&f.text) <= free)
        };
        let mut lo = 0;
        let mut hi = 1;
        while hi <= total && fits(hi) {
            lo = hi;
            hi *= 2;
        }
        let mut hi = hi.min(total + 1) - 1;
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        (lo > 0).then_some(lo)
    }

    /// Every part of the prompt with its tokens, from cumulative counts of the rendered
    /// prompt, so the parts add up to [`App::context_used`] exactly.
    pub fn context_parts(&self) -> Result<ContextParts, EngineError> {
        let c = &self.conversation;
        let messages = c.messages();
        let count = |k: usize| self.engine.count_prompt(&messages[..k]);
        let at_system = count(1)?;
        let k_memory = 1 + usize::from(c.context().is_some());
        let at_memory = count(k_memory)?;
        let k_pins = k_memory + usize::from(!c.pins().is_empty());
        let at_pins = count(k_pins)?;
        let used = count(messages.len())?;
        let guidance = self.engine.count_tokens(&self.guidance).min(at_system);
        // harvey's own words; the rest of the system turn is the tools (their lines or
        // the template's schemas) and the template's framing.
        let instructions = self
            .engine
            .count_tokens(crate::chat::SYSTEM_PROMPT)
            .min(at_system - guidance);
        let in_context = at_memory.saturating_sub(at_system);
        let map = self.map_tokens_in_context().min(in_context);
        let part = |name, tokens| ContextPart { name, tokens };
        let parts = vec![
            part("instructions", instructions),
            part("tools", at_system - guidance - instructions),
            part("guidance", guidance),
            part("workspace files", map),
            part("memory context", in_context - map),
            part("pinned", at_pins.saturating_sub(at_memory)),
            part("conversation", used.saturating_sub(at_pins)),
        ];
        let n_ctx = self.engine.info().n_ctx as usize;
        let pending = self.attachments.tokens();
        Ok(ContextParts {
            parts,
            fixed: at_memory,
            fixed_cap: self.fixed_cap(),
            used,
            pending,
            free: n_ctx.saturating_sub(used + pending),
            n_ctx,
            reply_reserve: self.reply_reserve(),
        })
    }

    /// Tokens of the `[workspace files]` map when the pinned context holds it.
    fn map_tokens_in_context(&self) -> usize {
        match (self.workspace_map.get(), self.conversation.context()) {
            (Some(Some(map)), Some(context)) if context.starts_with(&map.text) => map.tokens,
            _ => 0,
        }
    }

    /// `/compact [FOCUS]`: folds the whole conversation into the rolling summary now.
    /// `None` when there was nothing to fold.
    pub fn compact(&mut self, focus: Option<&str>) -> Result<Option<Compression>, EngineError> {
        self.abort.clear();
        let done = compact(
            self.engine.as_mut(),
            &mut self.conversation,
            focus,
            &self.abort,
        )?;
        if let Some(c) = &done {
            self.compressions.push(c.clone());
            let _ = self.recorder.note(&format!(
                "/compact: {} turns folded, {} → {} tokens",
                c.folded_turns, c.tokens_before, c.tokens_after
            ));
        }
        Ok(done)
    }
}
