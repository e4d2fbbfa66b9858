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
/// `auto` drafts only when it expects at least this gain in tokens per second.
const MIN_GAIN: f64 = 1.05;
/// When drafting stops paying, `auto` pauses for `MIN_PAUSE` decodes, then tries again
/// believing `RETRY_ACCEPT` (a reply may have started quoting); each try that keeps
/// nothing doubles the pause, up to `MAX_PAUSE`; a kept token resets it.
const MIN_PAUSE: u32 = 8;
const MAX_PAUSE: u32 = 128;
const RETRY_ACCEPT: f64 = 0.8;
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
        if accepted > 0 {
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
mod tests {
    use super::*;

    #[test]
    fn the_longest_most_recent_match_gives_what_followed_it() {
        // "1 2 3" occurs twice; the later copy is followed by 7 8.
        let h = [1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8, 0, 1, 2, 3];
        assert_eq!(find_draft(&h, 2), vec![7, 8]);
        assert_eq!(find_draft(&h, 1), vec![7]);
        // A 4-token match beats a more recent 2-token one.
        let h = [5, 6, 7, 8, 1, 2, 0, 7, 8, 3, 5, 6, 7, 8];
        assert_eq!(find_draft(&h, 3), vec![1, 2, 0]);
    }

    #[test]
    fn no_draft_without_an_earlier_match_of_two_tokens() {
        assert!(find_draft(&[1, 2, 3, 4, 5], 4).is_empty());
        // A single shared token is not enough.
        assert!(find_draft(&[1, 9, 2, 1], 4).is_empty());
        assert!(find_draft::<i32>(&[], 4).is_empty());
        assert!(find_draft(&[1, 2, 1, 2], 0).is_empty());
    }

    #[test]
    fn a_draft_stops_at_the_end_of_the_history() {
        // The earlier copy of "1 2" is followed by only "1 2" before the suffix.
        assert_eq!(find_draft(&[1, 2, 1, 2], 8), vec![1, 2]);
    }

    #[test]
    fn off_never_drafts_and_on_keeps_its_length() {
        let h = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2];
        let mut off = Drafter::new(LookupMode::Off);
        assert!(off.draft(&h, 8).is_empty());
        let mut on = Drafter::new(LookupMode::On);
        for _ in 0..5 {
            assert_eq!(on.draft(&h, 8).len(), ON_DRAFT);
            on.record(ON_DRAFT, 0, 100.0);
        }
        assert_eq!(on.draft(&h, 3).len(), 3, "room bounds the draft");
        assert_eq!((on.drafted, on.accepted, on.verifies), (20, 0, 5));
    }

    #[test]
    fn of_several_occurrences_the_longest_copy_wins() {
        // The tail copies `src` from its start; its last 4 tokens also occur, more
        // recently, after an unrelated token.
        let src: Vec<i32> = (100..130).collect();
        let mut h = src.clone();
        h.extend([7, 120, 121, 122, 123, 5]);
        h.extend(&src[..24]);
        let m = find_match(&h, 3).unwrap();
        assert_eq!(m.draft, vec![124, 125, 126]);
        assert_eq!(m.run, 24, "the whole copied stretch");
        // Equal runs: the most recent.
        let h = [1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8, 0, 1, 2, 3];
        assert_eq!(
            find_match(&h, 2).unwrap(),
            Match {
                draft: vec![7, 8],
                run: 3
            }
        );
        // Runs stop at RUN_CAP.
        let long: Vec<i32> = (0..100).chain(0..90).collect();
        assert_eq!(find_match(&long, 1).unwrap().run, RUN_CAP);
    }

    #[test]
    fn a_resumed_drafter_drafts_from_the_first_step_on_earlier_timings() {
        let h = repeating();
        let mut first = Drafter::new(LookupMode::Auto);
        assert!(
            first.draft(&h, 100).is_empty(),
            "a new drafter times one row first"
        );
        first.record(0, 0, 10.0);
        let k = first.draft(&h, 100).len();
        assert!(k > 0);
        first.record(k, k, 10.0 + 2.0 * k as f64);
        let timings = first.timings();
        assert_eq!(timings[0], Some(10.0));
        assert!(timings[k].is_some());
        let mut next = Drafter::resume(LookupMode::Auto, timings);
        assert!(
            !next.draft(&h, 100).is_empty(),
            "no plain decode to time a row again"
        );
        assert_eq!(
            next.acceptance(),
            Drafter::new(LookupMode::Auto).acceptance()
        );
        // Rows that cost too much are not drafted by the next reply either.
        let mut dear = [None; MAX_DRAFT + 1];
        dear.iter_mut()
            .enumerate()
            .for_each(|(k, t)| *t = Some(10.0 * (1.0 + 2.0 * k as f64)));
        assert!(Drafter::resume(LookupMode::Auto, dear)
            .draft(&h, 100)
            .is_empty());
    }

    #[test]
    fn long_runs_are_drafted_on_their_own_estimate_even_while_short_ones_pause() {
        let short = repeating();
        let long: Vec<i32> = (0..40).chain(0..20).collect();
        let mut d = Drafter::new(LookupMode::Auto);
        d.draft(&short, 100);
        d.record(0, 0, 10.0);
        // Short matches fail until auto pauses them.
        for _ in 0..10 {
            let k = d.draft(&short, 100).len();
            if k == 0 {
                break;
            }
            d.record(k, 0, 10.0 + 2.0 * k as f64);
        }
        assert!(d.draft(&short, 100).is_empty(), "short matches paused");
        let before = d.acceptance();
        // A long run is drafted anyway, and long drafts that are kept keep it long.
        let k = d.draft(&long, 100).len();
        assert!(k > 0);
        d.record(k, k, 10.0 + 2.0 * k as f64);
        assert!(d.long_acceptance() > LONG_PRIOR);
        assert_eq!(d.acceptance(), before, "short estimate untouched");
        // Long drafts that fail stop too.
        for _ in 0..20 {
            let k = d.draft(&long, 100).len();
            if k == 0 {
                break;
            }
            d.record(k, 0, 10.0 + 2.0 * k as f64);
        }
        assert!(d.long_acceptance() < 0.5);
        assert_eq!(d.best_k_for(d.long_acceptance()), 0);
    }

    /// A history where every suffix has a long match.
    fn repeating() -> Vec<i32> {
        (0..40).chain(0..2).collect()
    }

    #[test]
    fn auto_times_a_plain_decode_first_then_drafts_when_rows_are_cheap() {
        let h = repeating();
        let mut d = Drafter::new(LookupMode::Auto);
        assert!(d.draft(&h, 100).is_empty(), "the first decode is plain");
        d.record(0, 0, 10.0);
        let first = d.draft(&h, 100);
        assert!(!first.is_empty());
        // Rows cost 10 % of a decode and every draft is accepted: the longest draft.
        for _ in 0..10 {
            let k = d.draft(&h, 100).len();
            d.record(k, k, 10.0 + k as f64);
        }
        assert_eq!(d.draft(&h, 100).len(), MAX_DRAFT);
        assert!(d.acceptance() > 0.9);
    }

    #[test]
    fn auto_stops_drafting_when_it_does_not_pay_and_tries_again_later() {
        let h = repeating();
        let mut d = Drafter::new(LookupMode::Auto);
        d.draft(&h, 100);
        d.record(0, 0, 10.0);
        // Every draft rejected, each row costing a fifth of a decode.
        let mut steps = 0;
        loop {
            let k = d.draft(&h, 100).len();
            if k == 0 {
                break;
            }
            d.record(k, 0, 10.0 + 2.0 * k as f64);
            steps += 1;
            assert!(steps < 10, "auto keeps drafting drafts that all fail");
        }
        // Paused: plain decodes for a while, then a new try; each failed try doubles
        // the pause, and a kept token ends the doubling.
        let pause = |d: &mut Drafter| {
            let mut steps = 0;
            while d.draft(&h, 100).is_empty() {
                d.record(0, 0, 10.0);
                steps += 1;
                assert!(steps < 1000, "auto never tries again");
            }
            steps
        };
        let first = pause(&mut d);
        assert!(
            first >= MIN_PAUSE as usize,
            "tried again after {first} steps"
        );
        d.record(2, 0, 14.0);
        let second = pause(&mut d);
        assert!(second > first, "{second} after {first}");
        d.record(2, 1, 14.0);
        let k = d.draft(&h, 100).len();
        d.record(k, 0, 10.0 + 2.0 * k as f64);
        let third = pause(&mut d);
        assert!(third < second, "{third} after {second}");
    }

    #[test]
    fn expensive_rows_need_high_acceptance() {
        let h = repeating();
        let mut d = Drafter::new(LookupMode::Auto);
        d.draft(&h, 100);
        d.record(0, 0, 10.0);
        // Rows as dear as a whole decode: half-accepted drafts never pay.
        for _ in 0..20 {
            let k = d.draft(&h, 100).len();
            if k == 0 {
                d.record(0, 0, 10.0);
                continue;
            }
            d.record(k, k / 2, 10.0 + 10.0 * k as f64);
        }
        assert!(d.cost(1) > 1.9);
        assert_eq!(d.best_k(), 0);
    }

    #[test]
    fn untimed_sizes_are_read_off_the_timed_ones() {
        let mut d = Drafter::new(LookupMode::Auto);
        assert_eq!(d.cost(4), 1.0 + 4.0 * PRIOR_ROW_COST, "nothing timed yet");
        d.record(0, 0, 10.0);
        d.record(2, 1, 20.0);
        d.record(6, 1, 40.0);
        assert_eq!(d.cost(0), 1.0);
        assert_eq!(d.cost(2), 2.0);
        assert_eq!(d.cost(1), 1.5, "between 0 and 2");
        assert_eq!(d.cost(4), 3.0, "between 2 and 6");
        assert_eq!(d.cost(8), 4.0 + 2.0 * PRIOR_ROW_COST, "beyond 6");
        let mut cheap = Drafter::new(LookupMode::Auto);
        cheap.record(0, 0, 10.0);
        cheap.record(4, 4, 12.0);
        assert!(
            (cheap.cost(8) - 1.4).abs() < 1e-9,
            "the timed size's own slope"
        );
    }
}
