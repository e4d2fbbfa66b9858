//! The text of `harvey bench --mining`: a header, a table with a line per session and
//! a total, then each session's kept memories (with their evidence, to judge against the
//! record) and dropped ones (with the reason).

use std::fmt::Write;

use super::{DropCounts, MiningReport, SessionResult, Totals};

/// The whole report as text.
pub fn report(r: &MiningReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "mining bench  {} ({}, {:.0}M parameters, {:.0} MB), n_ctx {}, loaded in {:.1} s",
        r.model_file,
        r.model,
        r.n_params as f64 / 1e6,
        r.model_bytes as f64 / 1e6,
        r.n_ctx,
        r.load_secs
    );
    let gate = if r.mined_at_exit_by_default {
        "mines"
    } else {
        "skips (below memory.mining.min_params)"
    };
    let _ = writeln!(
        out,
        "sessions {} ({}); greedy; a fresh temporary workspace and store, nothing saved; /exit with memory.mining.on_exit: auto {gate} this model\n",
        r.sessions_dir, r.totals.sessions
    );
    out.push_str(&table(&r.sessions, &r.totals));
    out.push('\n');
    for s in &r.sessions {
        out.push_str(&details(s));
    }
    out
}

/// The column heads, aligned as [`row`] aligns the numbers.
fn header() -> String {
    format!(
        "{:<38} {:>5} {:>5} {:>5} {:>13} {:>11} {:>8} {:>10} {:>7} {:>7}\n",
        "session",
        "exch",
        "prop",
        "kept",
        "not_grounded",
        "incomplete",
        "generic",
        "duplicate",
        "secret",
        "secs"
    )
}

/// A line per session, then the totals.
pub fn table(sessions: &[SessionResult], totals: &Totals) -> String {
    let mut out = header();
    for s in sessions {
        let name = match &s.error {
            Some(_) => format!("{} (failed)", s.file),
            None => s.file.clone(),
        };
        out.push_str(&row(
            &name,
            s.exchanges,
            s.proposals,
            s.kept.len(),
            &s.drops,
            s.secs,
        ));
    }
    out.push_str(&row(
        "total",
        totals.exchanges,
        totals.proposals,
        totals.kept,
        &totals.drops,
        totals.secs,
    ));
    if totals.errors > 0 {
        let _ = writeln!(
            out,
            "{} session(s) failed to mine (see below)",
            totals.errors
        );
    }
    out
}

fn row(
    name: &str,
    exchanges: usize,
    proposals: usize,
    kept: usize,
    d: &DropCounts,
    secs: f64,
) -> String {
    format!(
        "{name:<38} {exchanges:>5} {proposals:>5} {kept:>5} {:>13} {:>11} {:>8} {:>10} {:>7} {secs:>7.1}\n",
        d.not_grounded, d.incomplete, d.generic, d.duplicate, d.secret
    )
}

/// One session's kept memories with their evidence, and its dropped ones.
pub fn details(s: &SessionResult) -> String {
    let mut out = format!("{}\n", s.file);
    if let Some(e) = &s.error {
        let _ = writeln!(out, "  error: {e}");
    }
    if s.kept.is_empty() && s.dropped.is_empty() && s.error.is_none() {
        let _ = writeln!(
            out,
            "  no proposals; the model answered: {}",
            s.outputs.join(" | ")
        );
    }
    for k in &s.kept {
        let _ = writeln!(out, "  kept    [{}/{}] {}", k.mtype, k.kind, k.description);
        if !k.summary.is_empty() {
            let _ = writeln!(out, "          summary: {}", k.summary);
        }
        let _ = writeln!(out, "          evidence: \"{}\"", k.evidence);
    }
    for d in &s.dropped {
        let _ = writeln!(out, "  dropped ({}) {}", d.reason, d.description);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::mining::{totals, DroppedMemory, KeptMemory};

    fn session() -> SessionResult {
        SessionResult {
            file: "harvey-session-20261102-140000.spmd".into(),
            exchanges: 2,
            chunks: 1,
            proposals: 2,
            kept: vec![KeptMemory {
                mtype: "workflow".into(),
                kind: "pitfall".into(),
                description: "deploy.sh refuses a dirty tree".into(),
                summary: String::new(),
                evidence: "it refuses to run when the git tree is dirty".into(),
            }],
            dropped: vec![DroppedMemory {
                reason: "generic",
                description: "Use git stash".into(),
            }],
            drops: DropCounts {
                generic: 1,
                ..DropCounts::default()
            },
            outputs: Vec::new(),
            secs: 12.5,
            error: None,
        }
    }

    #[test]
    fn the_table_has_a_line_per_session_and_a_total_under_the_header() {
        let sessions = vec![session()];
        let text = table(&sessions, &totals(&sessions));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[1].len(), lines[0].len(), "{text}");
        assert!(
            lines[1].starts_with("harvey-session-20261102-140000.spmd        2     2     1             0           0        1"),
            "{text}"
        );
        assert!(lines[2].starts_with("total "), "{text}");
        assert!(lines[2].ends_with("12.5"), "{text}");
    }

    #[test]
    fn details_show_the_evidence_of_kept_ones_and_the_reason_of_dropped_ones() {
        let text = details(&session());
        assert!(
            text.contains("  kept    [workflow/pitfall] deploy.sh refuses a dirty tree\n          evidence: \"it refuses to run when the git tree is dirty\""),
            "{text}"
        );
        assert!(text.contains("  dropped (generic) Use git stash"), "{text}");
    }
}
