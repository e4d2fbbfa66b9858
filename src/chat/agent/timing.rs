//! Where a turn's seconds go: one [`Step`] per thing the turn waited on (recall, a
//! compression, the router, each call's decoding and its tool run, the answer), sent as
//! [`TurnEvent::Step`] while the turn runs and kept in [`super::AgentTurn::steps`], so
//! `harvey run --json` and `/status` can say which part a user waited for.

use std::time::Instant;

use serde::Serialize;

use super::TurnEvent;
use crate::engine::TurnStats;

/// What a step was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// The session-start recall (the first message only).
    Recall,
    /// Older turns folded to make room.
    Compression,
    /// The question's evidence gathered (index refreshed, ranked, fitted).
    Evidence,
    /// The aside call choosing the next step.
    Router,
    /// A generation that wrote a tool call.
    Call,
    /// A tool running.
    Tool,
    /// The generation that answered.
    Answer,
}

/// One step of a turn and its time. Generations split their time into prefill (the
/// prompt tokens not taken from the KV cache) and decode; other steps have only `ms`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub kind: StepKind,
    /// The tool's name, the router's choice, … (empty when there is nothing to add).
    pub what: String,
    /// Wall time of the whole step.
    pub ms: f64,
    pub prefill_tokens: usize,
    pub prefill_ms: f64,
    pub decode_tokens: usize,
    pub decode_ms: f64,
}

impl Step {
    /// A step without a generation's numbers, timed from `started`.
    pub fn timed(kind: StepKind, what: impl Into<String>, started: Instant) -> Self {
        Self {
            kind,
            what: what.into(),
            ms: ms_since(started),
            prefill_tokens: 0,
            prefill_ms: 0.0,
            decode_tokens: 0,
            decode_ms: 0.0,
        }
    }

    /// A generation's step: its wall time from `started`, prefill and decode from `stats`.
    pub fn generation(kind: StepKind, what: &str, stats: &TurnStats, started: Instant) -> Self {
        Self {
            prefill_tokens: stats.evaluated_tokens,
            prefill_ms: ms_at(stats.evaluated_tokens, stats.prefill_tps),
            decode_tokens: stats.completion_tokens,
            decode_ms: ms_at(stats.completion_tokens, stats.decode_tps),
            ..Self::timed(kind, what, started)
        }
    }

    /// Sends the step to the turn's listener.
    pub fn send(self, on_event: &mut dyn FnMut(TurnEvent)) {
        on_event(TurnEvent::Step(self));
    }

    /// One line for a person: `call read_file  1.42 s (prefill 310 tok 0.95 s, decode 21 tok 0.40 s)`.
    pub fn line(&self) -> String {
        let name = match self.kind {
            StepKind::Recall => "recall",
            StepKind::Compression => "compression",
            StepKind::Evidence => "evidence",
            StepKind::Router => "router",
            StepKind::Call => "call",
            StepKind::Tool => "tool",
            StepKind::Answer => "answer",
        };
        let label = if self.what.is_empty() {
            name.to_string()
        } else {
            format!("{name} {}", self.what)
        };
        let split = if self.prefill_tokens + self.decode_tokens > 0 {
            format!(
                " (prefill {} tok {:.2} s, decode {} tok {:.2} s)",
                self.prefill_tokens,
                self.prefill_ms / 1000.0,
                self.decode_tokens,
                self.decode_ms / 1000.0
            )
        } else {
            String::new()
        };
        format!("{label:<22} {:>6.2} s{split}", self.ms / 1000.0)
    }
}

/// Milliseconds since `started`.
fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// Milliseconds `tokens` took at `tps` tokens per second (0 when either is 0).
fn ms_at(tokens: usize, tps: f64) -> f64 {
    if tokens == 0 || tps <= 0.0 {
        0.0
    } else {
        tokens as f64 / tps * 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_splits_prefill_and_decode() {
        let stats = TurnStats {
            evaluated_tokens: 300,
            prefill_tps: 150.0,
            completion_tokens: 20,
            decode_tps: 10.0,
            ..TurnStats::default()
        };
        let s = Step::generation(StepKind::Answer, "", &stats, Instant::now());
        assert!((s.prefill_ms - 2000.0).abs() < 1e-6);
        assert!((s.decode_ms - 2000.0).abs() < 1e-6);
        assert!(s.line().starts_with("answer "), "{}", s.line());
        assert!(s
            .line()
            .contains("prefill 300 tok 2.00 s, decode 20 tok 2.00 s"));
    }

    #[test]
    fn a_step_without_tokens_has_no_split() {
        let s = Step::timed(StepKind::Tool, "read_file", Instant::now());
        assert!(s.line().starts_with("tool read_file"), "{}", s.line());
        assert!(!s.line().contains("prefill"));
        assert_eq!(ms_at(0, 10.0), 0.0);
        assert_eq!(ms_at(10, 0.0), 0.0);
    }
}
