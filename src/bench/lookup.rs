//! The prompt-lookup side of `harvey bench`: what verifying a draft costs (the k-cost
//! table), and decode speed with `engine.lookup` off, auto and on over two workloads.
//!
//! - quote: replies that copy from the context (rewrite an attached code block with a small
//!   change, repeat an attached passage, answer from an attached file);
//! - free: open-ended text with nothing to copy.
//!
//! Every prompt is run greedily with each mode, the modes taking turns so that a machine
//! that slows down slows them alike; the replies of all modes are compared (lookup must
//! not change the text).

use serde::Serialize;

use super::greedy;
use crate::chat::SYSTEM_PROMPT;
use crate::engine::cost::VerifyCost;
use crate::engine::{EngineError, LlamaEngine, LookupMode, Message, Role};

/// Draft lengths whose verification cost is measured.
pub const COST_KS: [usize; 4] = [1, 2, 4, 8];
/// Cache depth of the cost table and decodes timed per size.
const COST_DEPTH: usize = 512;
const COST_REPS: usize = 15;

/// One workload with every lookup mode.
#[derive(Debug, Clone, Serialize)]
pub struct LookupRow {
    pub workload: &'static str,
    /// Prompts run, and prompts skipped because they and the reply do not fit in n_ctx.
    pub prompts: usize,
    pub skipped: usize,
    pub modes: Vec<ModeSpeed>,
    /// Whether every mode gave every prompt the same reply as `off`.
    pub same_text: bool,
}

/// How a mode's replies compare with `off`'s, prompt by prompt.
#[derive(Debug, Clone, Serialize)]
pub struct Agreement {
    /// Replies equal to `off`'s.
    pub identical: usize,
    /// Characters each reply shares with `off`'s before they part (the whole reply when
    /// identical).
    pub common_chars: Vec<usize>,
}

impl Agreement {
    fn new(replies: &[String], off: &[String]) -> Self {
        let common_chars = replies
            .iter()
            .zip(off)
            .map(|(a, b)| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count())
            .collect();
        Self {
            identical: replies.iter().zip(off).filter(|(a, b)| a == b).count(),
            common_chars,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ModeSpeed {
    pub mode: LookupMode,
    /// Tokens generated over all prompts and the time their decoding took, as a rate.
    pub generated_tokens: usize,
    pub decode_tps: f64,
    pub draft_tokens: usize,
    pub accepted_tokens: usize,
    /// accepted / drafted (0 when nothing was drafted).
    pub acceptance: f64,
    /// decode_tps over `off`'s.
    pub speedup: f64,
    pub agreement: Agreement,
}

/// A Rust function to rewrite, and prose to quote: harvey's own text.
const CODE: &str = include_str!("../engine/utf8.rs");
const PROSE: &str = include_str!("../../README.md");

/// The quote workload's prompts (user messages).
fn quote_prompts() -> Vec<String> {
    let code: String = CODE.lines().take(45).collect::<Vec<_>>().join("\n");
    let prose: String = section(PROSE, "## How it is fast")
        .lines()
        .take(24)
        .collect::<Vec<_>>()
        .join("\n");
    vec![
        format!(
            "Here is a Rust file:\n```rust\n{code}\n```\nRewrite the whole file with \
             `Utf8Stream` renamed to `TextStream`. Output only the code."
        ),
        format!("Here is a passage:\n\n{prose}\n\nRepeat the passage above word for word."),
        format!(
            "Attached file README excerpt:\n\n{prose}\n\nUsing only the attached text, explain \
             how harvey keeps the first token fast. Quote the relevant sentences."
        ),
    ]
}

fn free_prompts() -> Vec<String> {
    vec![
        super::SPEED_PROMPT.to_string(),
        "Write a short poem about autumn rain in a small village.".into(),
        "Give me ten ideas for a weekend project with a Raspberry Pi.".into(),
    ]
}

/// The section of `text` that starts at the heading `title` (up to the next `## `), or
/// the first 40 lines when it is missing.
fn section(text: &str, title: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim() == title) else {
        return lines
            .iter()
            .take(40)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("## "))
        .map_or(lines.len(), |i| start + 1 + i);
    lines[start..end].join("\n")
}

/// The k-cost table at `COST_DEPTH` cached tokens (smaller when n_ctx is small).
pub fn cost_table(engine: &mut LlamaEngine) -> Result<Vec<VerifyCost>, EngineError> {
    let n_ctx = engine.info().n_ctx as usize;
    let depth = COST_DEPTH.min(n_ctx.saturating_sub(16));
    engine.verify_cost(depth, &COST_KS, COST_REPS)
}

/// Both workloads, every mode; `tokens` is the longest reply per prompt.
pub fn workloads(engine: &mut LlamaEngine, tokens: usize) -> Result<Vec<LookupRow>, EngineError> {
    let old = engine.lookup();
    let rows = [("quote", quote_prompts()), ("free", free_prompts())]
        .into_iter()
        .map(|(name, prompts)| workload(engine, name, &prompts, tokens))
        .collect();
    engine.set_lookup(old);
    rows
}

/// Per mode: (tokens, decode seconds, drafted, accepted, replies).
type Tally = (usize, f64, usize, usize, Vec<String>);

fn workload(
    engine: &mut LlamaEngine,
    name: &'static str,
    prompts: &[String],
    tokens: usize,
) -> Result<LookupRow, EngineError> {
    let mut tallies: Vec<Tally> = LookupMode::ALL
        .iter()
        .map(|_| (0, 0.0, 0, 0, Vec::new()))
        .collect();
    let n_ctx = engine.info().n_ctx as usize;
    let mut skipped = 0;
    for prompt in prompts {
        let messages = [
            Message::new(Role::System, SYSTEM_PROMPT),
            Message::new(Role::User, prompt.as_str()),
        ];
        if engine.tokenize_prompt(&messages)?.len() + tokens >= n_ctx {
            skipped += 1;
            continue;
        }
        for (mode, tally) in LookupMode::ALL.into_iter().zip(&mut tallies) {
            engine.reset();
            engine.set_lookup(mode);
            let c = engine.generate(&messages, &greedy(tokens), &mut |_| {})?;
            let s = &c.stats;
            // The rate covers the tokens after the first sample.
            let timed = s.completion_tokens.saturating_sub(1);
            tally.0 += timed;
            tally.1 += if s.decode_tps > 0.0 {
                timed as f64 / s.decode_tps
            } else {
                0.0
            };
            tally.2 += s.draft_tokens;
            tally.3 += s.accepted_tokens;
            tally.4.push(c.text);
        }
    }
    let mut row = summarize(name, prompts.len() - skipped, &tallies);
    row.skipped = skipped;
    Ok(row)
}

fn summarize(name: &'static str, prompts: usize, tallies: &[Tally]) -> LookupRow {
    let tps = |t: &Tally| if t.1 > 0.0 { t.0 as f64 / t.1 } else { 0.0 };
    let off = LookupMode::ALL
        .iter()
        .position(|&m| m == LookupMode::Off)
        .map_or(0.0, |i| tps(&tallies[i]));
    let off_replies = LookupMode::ALL
        .iter()
        .position(|&m| m == LookupMode::Off)
        .map_or(&[][..], |i| &tallies[i].4[..]);
    let reference = &tallies[tallies.len() - 1].4;
    LookupRow {
        workload: name,
        prompts,
        skipped: 0,
        same_text: tallies.iter().all(|t| &t.4 == reference),
        modes: LookupMode::ALL
            .into_iter()
            .zip(tallies)
            .map(|(mode, t)| ModeSpeed {
                mode,
                generated_tokens: t.0,
                decode_tps: tps(t),
                draft_tokens: t.2,
                accepted_tokens: t.3,
                acceptance: if t.2 > 0 {
                    t.3 as f64 / t.2 as f64
                } else {
                    0.0
                },
                speedup: if off > 0.0 { tps(t) / off } else { 0.0 },
                agreement: Agreement::new(&t.4, off_replies),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_runs_to_the_next_heading() {
        let text = "# t\n## A\none\ntwo\n## B\nthree\n";
        assert_eq!(section(text, "## A"), "## A\none\ntwo");
        assert_eq!(section(text, "## B"), "## B\nthree");
        assert_eq!(section(text, "## C"), text.trim_end());
    }

    #[test]
    fn speedup_and_acceptance_are_relative_to_off() {
        // ALL is auto, on, off: off decodes 100 tokens in 2 s, auto in 1 s.
        let tallies = vec![
            (100, 1.0, 50, 40, vec!["x".to_string()]),
            (100, 4.0, 0, 0, vec!["x".to_string()]),
            (100, 2.0, 0, 0, vec!["x".to_string()]),
        ];
        let row = summarize("quote", 1, &tallies);
        assert!(row.same_text);
        assert_eq!(row.modes[0].mode, LookupMode::Auto);
        assert!((row.modes[0].speedup - 2.0).abs() < 1e-9);
        assert!((row.modes[0].acceptance - 0.8).abs() < 1e-9);
        assert!((row.modes[1].speedup - 0.5).abs() < 1e-9);
        assert_eq!(row.modes[1].acceptance, 0.0);
        assert_eq!(row.modes[0].agreement.identical, 1);
        let mut differs = tallies.clone();
        differs[0].4 = vec!["xyz".into()];
        differs[2].4 = vec!["xy!".into()];
        let row = summarize("quote", 1, &differs);
        assert!(!row.same_text);
        assert_eq!(row.modes[0].agreement.identical, 0);
        assert_eq!(row.modes[0].agreement.common_chars, vec![2]);
    }
}
