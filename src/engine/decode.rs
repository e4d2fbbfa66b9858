//! The sampling half of a generation: sample, show, decode, until the reply ends.
//!
//! With prompt lookup (`engine.lookup`), each decode carries the last sampled token plus a
//! draft of the tokens likely to follow it ([`Drafter`]), with logits for every row. The
//! normal sampler then samples row after row; a draft token is kept while it equals what
//! was sampled, and the first token that differs ends the batch: the rejected drafts
//! leave the KV cache and the sampled token is decoded next. Every shown token is one the
//! sampler chose from the right logits, so the reply is the reply of plain decoding
//! (grammars and penalties included), only reached in fewer decodes.
//!
//! Invariant, as in plain decoding: when the loop ends, the cache holds the prompt and
//! every shown token except the last sampled one.

use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::lookup::Drafter;
use super::run::{ms, position, truncate_cache, Run};
use super::stops::StopScanner;
use super::types::{rate, GenerateOptions, StopReason, TurnStats};
use super::utf8::Utf8Stream;
use super::EngineError;

/// Turns sampled tokens into shown text and says when the reply ends.
struct Output<'a> {
    model: &'a LlamaModel,
    opts: &'a GenerateOptions,
    stream: Utf8Stream,
    scanner: StopScanner<'a>,
    on_text: &'a mut dyn FnMut(&str),
}

impl Output<'_> {
    /// Shows `token`; `Some` when the reply ends with it.
    fn push(&mut self, token: LlamaToken, stats: &mut TurnStats) -> Option<StopReason> {
        let vocab = self.model.vocab();
        // Any end-of-generation token of the vocabulary (`<end_of_turn>`, `<|im_end|>`,
        // `<|eot_id|>`, …) ends the reply; so does any other control token (a new turn
        // or garbage), which is never shown as text.
        if vocab.is_eog(token) || vocab.is_control(token) {
            return Some(StopReason::EndOfGeneration);
        }
        stats.completion_tokens += 1;
        let piece = self.stream.push(&vocab.token_to_piece(token, false, None));
        let (shown, hit_stop) = self.scanner.push(&piece);
        if !shown.is_empty() {
            (self.on_text)(&shown);
        }
        if hit_stop {
            // A caller's stop string is reported as such; template text ends the turn.
            return Some(match self.scanner.hit() {
                Some(i) if i < self.opts.stop.len() => StopReason::StopString,
                Some(_) if self.scanner.found_by_finder() => StopReason::StopString,
                _ => StopReason::EndOfGeneration,
            });
        }
        let full = self
            .opts
            .max_tokens
            .is_some_and(|max| stats.completion_tokens >= max);
        full.then_some(StopReason::MaxTokens)
    }

    /// Releases held-back text; returns the whole reply.
    fn finish(mut self) -> String {
        if self.scanner.hit().is_none() {
            let (tail, _) = self.scanner.push(&self.stream.finish());
            let rest = tail + &self.scanner.finish();
            if !rest.is_empty() {
                (self.on_text)(&rest);
            }
        }
        self.scanner.text().to_string()
    }
}

/// The batch being read: where it starts in the cache, its draft, how much was kept.
#[derive(Default)]
struct Verify {
    /// Cache position of the batch's first token (the last sampled one).
    start: usize,
    draft: Vec<LlamaToken>,
    accepted: usize,
    /// How long the batch's decode took, milliseconds (`None`: the prefill's last
    /// chunk, or already learnt from).
    ms: Option<f64>,
    /// The KV cache sequence the batch was decoded into.
    seq: i32,
}

impl Verify {
    /// Whether `token` is the next draft token (already in the cache).
    fn accepts(&mut self, token: LlamaToken) -> bool {
        let hit = self.draft.get(self.accepted) == Some(&token);
        self.accepted += usize::from(hit);
        hit
    }

    /// Drops the rejected drafts from the cache. `drafter` learns from the batch when it
    /// was read to its end (a reply that ends mid-batch says nothing of the draft).
    fn settle(
        &mut self,
        ctx: &mut LlamaContext,
        cached: &mut Vec<LlamaToken>,
        drafter: &mut Drafter,
        read_to_end: bool,
    ) -> Result<(), EngineError> {
        if let Some(ms) = self.ms.take() {
            if read_to_end {
                drafter.record(self.draft.len(), self.accepted, ms);
            } else {
                drafter.count(self.draft.len(), self.accepted);
            }
        }
        if self.draft.is_empty() {
            return Ok(());
        }
        let keep = self.start + 1 + self.accepted;
        if cached.len() > keep && truncate_cache(ctx, cached, keep, self.seq) != keep {
            return Err(EngineError::Decode(
                "the KV cache could not drop rejected draft tokens; set engine.lookup: off".into(),
            ));
        }
        self.draft.clear();
        Ok(())
    }
}

impl Run<'_> {
    /// Samples from row `logits_at` of the last decode until the reply ends.
    #[expect(
        clippy::too_many_arguments,
        reason = "one private step of a generation; grouping would only rename the same state"
    )]
    pub(super) fn sample_loop(
        &self,
        ctx: &mut LlamaContext,
        batch: &mut LlamaBatch,
        cached: &mut Vec<LlamaToken>,
        logits_at: i32,
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
        stats: &mut TurnStats,
    ) -> Result<(String, StopReason), EngineError> {
        let mut banned = single_tokens(self.model, &opts.banned);
        if opts.grammar.is_some() {
            banned.extend_from_slice(self.inner_controls);
        }
        let mut sampler =
            super::sampler::build(self.model, &opts.sampling, opts.grammar.as_deref(), &banned)?;
        let stops = self.stops(opts);
        let mut out = Output {
            model: self.model,
            opts,
            stream: Utf8Stream::default(),
            scanner: StopScanner::with_finder(&stops, opts.stop_finder.as_ref()),
            on_text,
        };
        // A recurrent or hybrid model's state cannot drop rejected rows: never draft.
        let recurrent = self.model.is_recurrent() || self.model.is_hybrid();
        let mode = if recurrent {
            super::lookup::LookupMode::Off
        } else {
            self.lookup
        };
        let mut drafter = Drafter::resume(mode, self.row_timings.get());
        let mut verify = Verify::default();
        let mut row = logits_at;
        let mut decode_started: Option<Instant> = None;
        // Decode rate = tokens that entered the cache after the first sample / the time
        // since that sample.
        let mut kept = 0;
        let stop = loop {
            if opts.abort.is_raised() {
                break StopReason::Aborted;
            }
            let token = sampler.sample(ctx, row);
            let since = *decode_started.get_or_insert_with(|| {
                stats.ttft_ms = ms(self.started.elapsed());
                Instant::now()
            });
            if let Some(stop) = out.push(token, stats) {
                break stop;
            }
            if verify.accepts(token) {
                row += 1;
                kept += 1;
                stats.decode_tps = rate(kept, since.elapsed());
                continue;
            }
            verify.settle(ctx, cached, &mut drafter, true)?;
            if cached.len() >= self.n_ctx {
                break StopReason::ContextFull;
            }
            verify = self.decode_next(ctx, batch, cached, token, &mut drafter, opts, stats)?;
            row = 0;
            kept += 1;
            stats.decode_tps = rate(kept, since.elapsed());
        };
        verify.settle(ctx, cached, &mut drafter, false)?;
        self.row_timings.set(drafter.timings());
        stats.draft_tokens = drafter.drafted;
        stats.accepted_tokens = drafter.accepted;
        Ok((out.finish(), stop))
    }

    /// Decodes `token` and, when the context offers one, a draft of what follows it.
    #[expect(
        clippy::too_many_arguments,
        reason = "one private step of a generation; grouping would only rename the same state"
    )]
    fn decode_next(
        &self,
        ctx: &mut LlamaContext,
        batch: &mut LlamaBatch,
        cached: &mut Vec<LlamaToken>,
        token: LlamaToken,
        drafter: &mut Drafter,
        opts: &GenerateOptions,
        stats: &TurnStats,
    ) -> Result<Verify, EngineError> {
        let start = cached.len();
        // Room: every draft token needs a cache cell, and a batch of 1 + k rows can show
        // up to 1 + k tokens, which the token limit may not allow.
        let left = opts.max_tokens.map_or(usize::MAX, |max| {
            max.saturating_sub(stats.completion_tokens)
        });
        let room = (self.n_ctx - start - 1)
            .min(left.saturating_sub(1))
            .min(self.n_batch.saturating_sub(1));
        cached.push(token);
        let draft = drafter.draft(cached, room);
        batch.clear();
        for (i, &t) in std::iter::once(&token).chain(&draft).enumerate() {
            batch
                .add(t, position(start + i)?, &[self.seq], true)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
        }
        let started = Instant::now();
        ctx.decode(batch)
            .map_err(|e| EngineError::Decode(e.to_string()))?;
        let ms = ms(started.elapsed());
        cached.extend_from_slice(&draft);
        Ok(Verify {
            start,
            draft,
            accepted: 0,
            ms: Some(ms),
            seq: self.seq,
        })
    }
}

/// Control tokens that do not end a generation (`<|im_start|>`, `<repo_name>`, …),
/// banned under a grammar. llama.cpp's grammar reads a token by its text, special tokens
/// included, so inside a JSON string it accepts `<|im_start|>` as thirteen characters;
/// the loop ends the reply at any control token (`Output::push`), so that would cut a
/// call's string in the middle with `EndOfGeneration`, which says the grammar completed.
/// End-of-generation tokens are the grammar's own business (allowed where it may end).
/// A walk over the whole vocabulary: the engine does it once, at load.
pub(super) fn inner_control_tokens(model: &LlamaModel) -> Vec<LlamaToken> {
    let vocab = model.vocab();
    (0..model.n_vocab())
        .map(LlamaToken::new)
        .filter(|&t| vocab.is_control(t) && !vocab.is_eog(t))
        .collect()
}

/// The texts of `banned` that are one token each in `model`'s vocabulary (special tokens
/// parsed), as those tokens.
fn single_tokens(model: &LlamaModel, banned: &[String]) -> Vec<LlamaToken> {
    banned
        .iter()
        .filter_map(|text| {
            let ids = model.vocab().tokenize(text.as_bytes(), false, true);
            (ids.len() == 1).then(|| ids[0])
        })
        .collect()
}
