//! Budget advice for `/memory status`, from the `memory_stats` of past sessions. Advice
//! only: the config is never changed.

use super::index::SessionStats;

/// Sessions needed before advising.
pub const MIN_SESSIONS: usize = 10;

/// What the numbers say, with the numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub sessions: usize,
    /// Mean of injected / budget.
    pub saturation: f64,
    pub avg_tokens_per_sec: f64,
    /// Share of sessions in which the rolling summary fired.
    pub compressed_share: f64,
    pub lines: Vec<String>,
}

/// Advice from the stats rows and the current `budget_pct`; `None` below [`MIN_SESSIONS`].
pub fn advise(stats: &[SessionStats], budget_pct: f64) -> Option<Advice> {
    if stats.len() < MIN_SESSIONS {
        return None;
    }
    let n = stats.len() as f64;
    let saturation = stats
        .iter()
        .map(|s| {
            if s.budget_tokens > 0 {
                s.injected_tokens as f64 / s.budget_tokens as f64
            } else {
                0.0
            }
        })
        .sum::<f64>()
        / n;
    let avg_tokens_per_sec = stats.iter().map(|s| s.avg_tokens_per_sec).sum::<f64>() / n;
    let compressed_share = stats.iter().filter(|s| s.compressed).count() as f64 / n;
    let mut lines = Vec::new();
    // Thresholds compare with a little slack for floating-point sums. Slow comes first:
    // on a machine under 2 tok/s a full context is a cost to cut, not a sign to grow.
    if avg_tokens_per_sec < 2.0 && saturation > 0.70 + 1e-9 {
        lines.push(format!(
            "generation is slow ({avg_tokens_per_sec:.1} tok/s) and the memory context is {:.0}% full: consider lowering memory.budget_pct from {budget_pct} to {:.2}",
            saturation * 100.0,
            budget_pct * 0.75
        ));
    } else if saturation > 0.90 + 1e-9 {
        lines.push(format!(
            "the memory context is nearly always full ({:.0}% of the budget on average): consider raising memory.budget_pct from {budget_pct} to {:.2}",
            saturation * 100.0,
            budget_pct * 1.4
        ));
    }
    if compressed_share > 0.5 + 1e-9 {
        lines.push(format!(
            "the rolling summary fired in {:.0}% of sessions: the context is often too small for your sessions",
            compressed_share * 100.0
        ));
    }
    if lines.is_empty() {
        lines.push(format!(
            "memory.budget_pct {budget_pct} looks right for how you work"
        ));
    }
    Some(Advice {
        sessions: stats.len(),
        saturation,
        avg_tokens_per_sec,
        compressed_share,
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize, injected: i64, tps: f64, compressed_every: usize) -> Vec<SessionStats> {
        (0..n)
            .map(|i| SessionStats {
                session_id: format!("s{i}"),
                budget_tokens: 1000,
                injected_tokens: injected,
                compressed: compressed_every > 0 && i % compressed_every == 0,
                avg_tokens_per_sec: tps,
                recorded_at: format!("2026-11-{:02}", i + 1),
            })
            .collect()
    }

    /// Every (how full, how slow) pair: slow and full lowers, never raises.
    #[test]
    fn full_and_slow_combinations() {
        let cases: &[(i64, f64, &str)] = &[
            (500, 10.0, "looks right"),
            (500, 1.5, "looks right"),
            (800, 10.0, "looks right"),
            (800, 1.5, "lowering memory.budget_pct"),
            (950, 10.0, "raising memory.budget_pct"),
            (950, 1.5, "lowering memory.budget_pct"),
            (1000, 0.5, "lowering memory.budget_pct"),
        ];
        for &(injected, tps, want) in cases {
            let a = advise(&rows(10, injected, tps, 0), 0.25).unwrap();
            assert_eq!(a.lines.len(), 1, "{injected}/{tps}: {:?}", a.lines);
            assert!(a.lines[0].contains(want), "{injected}/{tps}: {:?}", a.lines);
        }
    }

    #[test]
    fn thresholds() {
        let cases: &[(usize, i64, f64, usize, Option<&str>)] = &[
            (9, 950, 10.0, 0, None),
            (
                10,
                950,
                10.0,
                0,
                Some("raising memory.budget_pct from 0.25 to 0.35"),
            ),
            (10, 900, 10.0, 0, Some("looks right")),
            (
                10,
                800,
                1.5,
                0,
                Some("lowering memory.budget_pct from 0.25 to 0.19"),
            ),
            (10, 700, 1.5, 0, Some("looks right")),
            (10, 800, 2.0, 0, Some("looks right")),
            (10, 500, 10.0, 1, Some("rolling summary fired in 100%")),
            (10, 500, 10.0, 2, Some("looks right")),
        ];
        for &(n, injected, tps, every, want) in cases {
            let got = advise(&rows(n, injected, tps, every), 0.25);
            match (want, got) {
                (None, None) => {}
                (Some(w), Some(a)) => assert!(
                    a.lines.iter().any(|l| l.contains(w)),
                    "{n} {injected} {tps} {every}: {:?}",
                    a.lines
                ),
                (w, g) => panic!("{n} {injected} {tps} {every}: want {w:?}, got {g:?}"),
            }
        }
    }
}
