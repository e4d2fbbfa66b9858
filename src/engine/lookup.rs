//! Prompt-lookup drafting: guesses the next tokens of a reply by finding where the last
//! few tokens already occurred in the context (an attached file, the memory block, code
//! being edited, the previous reply) and proposing what followed them there.
//!
//! The decode loop verifies a draft in one batch and keeps only the tokens the normal
//! sampler picks (`decode.rs`), so drafting changes speed, never the output. [`Drafter`]
//! decides when to draft and how far: `on` drafts whenever a match exists, `auto` also
//! adapts the length to recent acceptance and pauses when drafts keep failing.

use serde::Serialize;

/// `engine.lookup`: whether the decode loop drafts from the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LookupMode {
    /// Draft when a match exists, adapt the length, pause when it does not pay.
    #[default]
    Auto,
    /// Draft the longest allowed length whenever a match exists.
    On,
    /// Plain one-token-at-a-time decoding.
    Off,
}

impl LookupMode {
    pub const ALL: [LookupMode; 3] = [LookupMode::Auto, LookupMode::On, LookupMode::Off];

    pub fn as_str(self) -> &'static str {
        match self {
            LookupMode::Auto => "auto",
            LookupMode::On => "on",
            LookupMode::Off => "off",
        }
    }

    /// The setting's value (`auto`, `on`, `off`); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// Longest draft `auto` considers: the k-cost table of `harvey bench` measures up to 8.
pub const MAX_DRAFT: usize = 8;
/// The fixed length of `on`'s drafts.
pub const ON_DRAFT: usize = 4;
/// The longest and shortest suffix that is looked up. One token matches almost anywhere
/// and predicts little.
const MAX_NGRAM: usize = 4;
const MIN_NGRAM: usize = 2;
/// How far back the lookup searches (tokens): the whole context of every supported size.
const WINDOW: usize = 16_384;
/// `auto`'s prior belief that a draft token is accepted, and its weight in verifies.
const PRIOR_ACCEPT: f64 = 0.5;
const PRIOR_WEIGHT: f64 = 1.0;
/// How much older verifies count against newer ones (per verify).
const DECAY: f64 = 0.85;
/// A draft row's cost as a fraction of a one-row decode before any was timed.
const PRIOR_ROW_COST: f64 = 0.25;
/// `auto` drafts only when it expects at least this gain in tokens per second. At 1.05
/// the 1.5B decoded free text at 0.928× of llama-bench (depth ~1,500): short matches
/// ("of the") kept a token often enough to look worth a draft, and the estimate's error
/// ate the margin.
const MIN_GAIN: f64 = 1.10;
/// When drafting stops paying, `auto` pauses for `MIN_PAUSE` decodes, then tries again
/// believing `RETRY_ACCEPT` (a reply may have started quoting); each try that keeps
/// too little (under half its draft) doubles the pause, up to `MAX_PAUSE`; a draft mostly
/// kept resets it (a single kept token had reset it: free text keeps one now and then).
const MIN_PAUSE: u32 = 8;
const MAX_PAUSE: u32 = 128;
const RETRY_ACCEPT: f64 = 0.65;
/// A match whose copy runs back at least this many tokens (the reply has been quoting
/// its source for a while) is judged by its own acceptance estimate, starting from
/// `LONG_PRIOR`, and is drafted even while short matches are paused.
const LONG_RUN: usize = 12;
const LONG_PRIOR: f64 = 0.9;
/// How far back a match's run is followed.
const RUN_CAP: usize = 32;

/// A place the reply's last tokens occurred before: what followed there, and how far
/// back the copy runs (tokens equal on both sides, up to `RUN_CAP`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match<T> {
    pub draft: Vec<T>,
    pub run: usize,
}

/// The up-to-`k` tokens that followed an earlier occurrence of the longest suffix of
/// `history` (between `MIN_NGRAM` and `MAX_NGRAM` tokens long): of its occurrences the
/// one whose copy runs back furthest, the most recent among equals. `None` when the
/// suffix does not occur earlier (or `k` is 0).
pub fn find_match<T: Copy + PartialEq>(history: &[T], k: usize) -> Option<Match<T>> {
    if k == 0 {
        return None;
    }
    let from = history.len().saturating_sub(WINDOW);
    let history = &history[from..];
    let end = history.len();
    for n in (MIN_NGRAM..=MAX_NGRAM).rev() {
        if end <= n {
            continue;
        }
        let suffix = &history[end - n..];
        // Most recent first; an earlier copy must end before the suffix starts, to be
        // followed by something.
        let mut best: Option<(usize, usize)> = None;
        for start in (0..end - n).rev() {
            if &history[start..start + n] != suffix {
                continue;
            }
            let run = n + run_back(history, start, end - n, RUN_CAP - n);
            if best.is_none_or(|(_, r)| run > r) {
                best = Some((start, run));
                if run >= RUN_CAP {
                    break;
                }
            }
        }
        if let Some((start, run)) = best {
            let follow = start + n;
            let stop = (follow + k).min(end);
            return Some(Match {
                draft: history[follow..stop].to_vec(),
                run,
            });
        }
    }
    None
}

/// How many tokens before `a` equal those before `b` (`a` < `b`), at most `cap`.
fn run_back<T: PartialEq>(history: &[T], a: usize, b: usize, cap: usize) -> usize {
    (1..=cap.min(a))
        .take_while(|&i| history[a - i] == history[b - i])
        .count()
}

/// The draft of [`find_match`], empty when there is none.
pub fn find_draft<T: Copy + PartialEq>(history: &[T], k: usize) -> Vec<T> {
    find_match(history, k).map_or_else(Vec::new, |m| m.draft)
}

/// Chooses each step's draft length and learns from what was accepted and what the
/// decodes cost.
///
/// `auto` keeps two estimates: `p`, the chance that a draft token is accepted given the
/// ones before it were (successes over successes + first failures, recent verifies
/// weighing more), and what a decode of `1 + k` rows costs against one row (timed on this
/// machine as it goes, see `cost`). A draft of `k` then yields `1 + p + p² + … + pᵏ`
/// tokens for `cost(k)` decodes' time; `auto` drafts the `k` with the best ratio, or not
/// at all when no `k` gains `MIN_GAIN`. A match whose copy already runs `LONG_RUN` tokens
/// back (the reply is quoting) has its own estimate of `p`, usually much higher, so long
/// quotes get long drafts while short, chancy matches get short ones or none.
/// Milliseconds of a decode with `k` draft rows, at index `k` (decayed averages; `None`
/// until one was timed). A property of the machine and the model, not of a reply: the
/// engine keeps it from one reply to the next, so each reply does not spend drafts on
/// learning it again.
pub type RowTimings = [Option<f64>; MAX_DRAFT + 1];

#[derive(Debug, Clone)]
pub struct Drafter {
    mode: LookupMode,
    /// Recent accepted draft tokens and rejections (decayed counts), of drafts from short
    /// matches and from long runs.
    successes: f64,
    failures: f64,
    long_successes: f64,
    long_failures: f64,
    /// The last draft came from a long run.
    long_last: bool,
    /// What decodes of `1 + k` rows took (see [`RowTimings`]).
    decode_ms: RowTimings,
    /// Decodes left in the current pause, and the next pause's length.
    idle: u32,
    pause: u32,
    /// The next verify is a try after a pause: if it keeps nothing, pause again at once.
    retrying: bool,
    pub drafted: usize,
    pub accepted: usize,
    pub verifies: usize,
}

impl Drafter {
    pub fn new(mode: LookupMode) -> Self {
        Self {
            mode,
            successes: PRIOR_ACCEPT * PRIOR_WEIGHT,
            failures: (1.0 - PRIOR_ACCEPT) * PRIOR_WEIGHT,
            long_successes: LONG_PRIOR * PRIOR_WEIGHT,
            long_failures: (1.0 - LONG_PRIOR) * PRIOR_WEIGHT,
            long_last: false,
            decode_ms: [None; MAX_DRAFT + 1],
            idle: 0,
            pause: MIN_PAUSE,
            retrying: false,
            drafted: 0,
            accepted: 0,
            verifies: 0,
        }
    }

    /// A drafter that starts from what earlier replies timed (the acceptance estimates
    /// start afresh: they depend on the reply).
    pub fn resume(mode: LookupMode, timings: RowTimings) -> Self {
        Self {
            decode_ms: timings,
            ..Self::new(mode)
        }
    }

    /// What this drafter's decodes took, for the next reply's [`Drafter::resume`].
    pub fn timings(&self) -> RowTimings {
        self.decode_ms
    }

    /// The draft for the step after `history`, at most `room` tokens long (what the
    /// context and the token limit still allow). Empty: decode one token.
    pub fn draft<T: Copy + PartialEq>(&mut self, history: &[T], room: usize) -> Vec<T> {
        self.long_last = false;
        match self.mode {
            LookupMode::Off => Vec::new(),
            LookupMode::On => find_draft(history, ON_DRAFT.min(room)),
            LookupMode::Auto => self.auto_draft(history, room),
        }
    }

    fn auto_draft<T: Copy + PartialEq>(&mut self, history: &[T], room: usize) -> Vec<T> {
        let timed = self.decode_ms[0].is_some();
        let found = if timed {
            find_match(history, MAX_DRAFT.min(room))
        } else {
            None
        };
        if let Some(m) = found.as_ref().filter(|m| m.run >= LONG_RUN) {
            let k = self.best_k_for(self.long_acceptance());
            if k > 0 {
                self.long_last = true;
                return m.draft[..k.min(m.draft.len())].to_vec();
            }
        }
        let k = self.auto_k();
        match found {
            Some(mut m) if k > 0 => {
                m.draft.truncate(k);
                m.draft
            }
            _ => Vec::new(),
        }
    }

    /// One decode of `1 + drafted` rows took `ms`, and `accepted` draft tokens were kept.
    pub fn record(&mut self, drafted: usize, accepted: usize, ms: f64) {
        if let Some(slot) = self.decode_ms.get_mut(drafted) {
            *slot = Some(blend(*slot, ms));
        }
        if drafted == 0 {
            return;
        }
        self.count(drafted, accepted);
        let failed = f64::from(u8::from(accepted < drafted));
        if std::mem::take(&mut self.long_last) {
            self.long_successes = self.long_successes * DECAY + accepted as f64;
            self.long_failures = self.long_failures * DECAY + failed;
            return;
        }
        if accepted * 2 >= drafted {
            self.pause = MIN_PAUSE;
        } else if self.retrying {
            self.start_pause();
        }
        self.retrying = false;
        self.successes = self.successes * DECAY + accepted as f64;
        self.failures = self.failures * DECAY + failed;
    }

    /// Adds a verify to the totals only (`drafted`, `accepted`, `verifies`).
    pub fn count(&mut self, drafted: usize, accepted: usize) {
        if drafted > 0 {
            self.drafted += drafted;
            self.accepted += accepted;
            self.verifies += 1;
        }
    }

    /// The chance that a draft token from a short match is accepted, as estimated now.
    pub fn acceptance(&self) -> f64 {
        self.successes / (self.successes + self.failures)
    }

    /// The same for a draft from a long run.
    pub fn long_acceptance(&self) -> f64 {
        self.long_successes / (self.long_successes + self.long_failures)
    }

    /// What a decode with `k` draft rows costs in one-row decodes: timed when it was,
    /// else read off the line between the timed sizes around `k`, or beyond the largest
    /// timed size at `PRIOR_ROW_COST` per row or that size's average, whichever is less
    /// (optimistic, so that a size is tried once and then known). Rows cost less each as a batch grows (the first extra row also
    /// pays for switching to batched kernels), so one size says little of another.
    fn cost(&self, k: usize) -> f64 {
        let Some(one) = self.decode_ms[0].filter(|&ms| ms > 0.0) else {
            return 1.0 + k as f64 * PRIOR_ROW_COST;
        };
        let relative = |j: usize| self.decode_ms[j].map(|ms| ms / one);
        if let Some(c) = relative(k) {
            return c;
        }
        let (lo, c_lo) = (0..k)
            .rev()
            .find_map(|j| relative(j).map(|c| (j, c)))
            .unwrap_or((0, 1.0));
        match (k + 1..=MAX_DRAFT).find_map(|j| relative(j).map(|c| (j, c))) {
            Some((hi, c_hi)) => c_lo + (c_hi - c_lo) * (k - lo) as f64 / (hi - lo) as f64,
            None => {
                let slope = if lo > 0 {
                    PRIOR_ROW_COST.min((c_lo - 1.0) / lo as f64)
                } else {
                    PRIOR_ROW_COST
                };
                c_lo + (k - lo) as f64 * slope.max(0.0)
            }
        }
    }

    /// The draft length with the best expected gain, 0 when none gains `MIN_GAIN`. Until
    /// a one-row decode was timed (the first decode of a new drafter), 0.
    fn best_k(&self) -> usize {
        self.best_k_for(self.acceptance())
    }

    /// The best draft length when a draft token is accepted with chance `p`.
    fn best_k_for(&self, p: f64) -> usize {
        if self.decode_ms[0].is_none() {
            return 0;
        }
        let mut best = (0, MIN_GAIN);
        let mut expected = 1.0;
        let mut p_i = 1.0;
        for k in 1..=MAX_DRAFT {
            p_i *= p;
            expected += p_i;
            let gain = expected / self.cost(k);
            if gain > best.1 {
                best = (k, gain);
            }
        }
        best.0
    }

    /// `auto`'s length for this step: 0 while paused; a pause starts when no length pays.
    fn auto_k(&mut self) -> usize {
        if self.idle > 0 {
            self.idle -= 1;
            if self.idle == 0 {
                // What this reply's drafts did so far (Laplace-smoothed), if better.
                let seen = (self.accepted as f64 + 1.0) / (self.drafted as f64 + 2.0);
                let p = RETRY_ACCEPT.max(seen);
                let weight = self.successes + self.failures;
                self.successes = p * weight;
                self.failures = (1.0 - p) * weight;
                self.retrying = true;
            }
            return 0;
        }
        let k = self.best_k();
        if k == 0 && self.decode_ms[0].is_some() {
            self.start_pause();
        }
        k
    }

    fn start_pause(&mut self) {
        self.idle = self.pause;
        self.pause = (self.pause * 2).min(MAX_PAUSE);
    }
}

/// A decayed running average (the first value stands alone).
fn blend(old: Option<f64>, new: f64) -> f64 {
    old.map_or(new, |old| old * DECAY + new * (1.0 - DECAY))
}

#[cfg(test)]
mod tests;
