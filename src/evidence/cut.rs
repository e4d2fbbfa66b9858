//! A unit cut to the room it has in the block: the window of lines that holds the most of
//! the question's terms, each weighed by its rarity among the candidates and within the
//! unit, with a third of what is left over before it.

use crate::storage::evidence::Hit;
use crate::tokens::TokenCounter;

use super::block::{is_history, source_label, MIN_SNIPPET};

/// `hit` rendered in at most `room` tokens (its label, text and cost), cut around its best
/// lines when it is longer; `None` when not even a few lines fit.
pub(super) fn snippet_within(
    hit: &Hit,
    (terms, rarity): (&[String], &[f64]),
    room: usize,
    counter: &dyn TokenCounter,
) -> Option<(String, String, usize)> {
    if room < MIN_SNIPPET {
        return None;
    }
    let lines: Vec<&str> = hit.text.lines().collect();
    let best = best_line(&lines, terms, rarity);
    let (mut from, mut to) = (0, lines.len());
    loop {
        let (label, text) = render(hit, &lines, from, to);
        let tokens = counter.count_tokens(&text);
        if tokens <= room {
            return Some((label, text, tokens));
        }
        if to - from <= 2 {
            return None;
        }
        // Halve the window, keeping the best lines inside it (and a third of what is left
        // over before them).
        let keep = ((to - from) / 2).max(2);
        let lead = (keep / 3).min(keep.saturating_sub(BEST_WINDOW));
        from = best.saturating_sub(lead).max(from).min(to - keep);
        to = from + keep;
    }
}

/// Lines read together when looking for a unit's best lines: a workflow step's name and
/// its command, a function's head and its first line.
const BEST_WINDOW: usize = 3;

/// The first line with a term of the [`BEST_WINDOW`] lines holding most of `terms` (each
/// counted once; the first such window): "How do I run the tests?" keeps the step named "Tox tests"
/// whose next line runs it, not a later line that says "run" and "test" alone. A term weighs
/// the less the more of the unit's lines hold it (`ln(1 + lines / holding)`), as a word in
/// every document says nothing of which one to read: in a section of `HEXYL_COLOR_*` variables, "color" does not choose the
/// line, "offset" does. `rarity` ([`rarity`]) weighs each term by how few of the hits hold
/// it (1 each where it is empty): in `app.set`, "etag" chooses the line, "default" does not.
fn best_line(lines: &[&str], terms: &[String], rarity: &[f64]) -> usize {
    // A raising line with its text is also an `error message`, as the index reads it.
    let lower: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut low = l.to_lowercase();
            if super::terms::raises_message(l) {
                low.push_str(" error message");
            }
            low
        })
        .collect();
    let weight: Vec<f64> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let n = lower.iter().filter(|l| l.contains(t.as_str())).count();
            let rare = rarity.get(i).copied().unwrap_or(1.0);
            if n == 0 {
                0.0
            } else {
                rare * (1.0 + lines.len() as f64 / n as f64).ln()
            }
        })
        .collect();
    let mut best = (0, 0.0);
    for i in 0..lines.len() {
        let window = &lower[i..(i + BEST_WINDOW).min(lines.len())];
        let s: f64 = terms
            .iter()
            .zip(&weight)
            .filter(|(t, _)| window.iter().any(|l| l.contains(t.as_str())))
            .map(|(_, w)| w)
            .sum();
        if s > best.1 + 1e-9 {
            // The window's first line with a term, so a cut to two lines still holds it.
            let first = (i..i + window.len())
                .find(|&j| terms.iter().any(|t| lower[j].contains(t.as_str())))
                .unwrap_or(i);
            best = (first, s);
        }
    }
    best.0
}

/// How rare each of `terms` is among `hits` (the question's candidates), as an inverse
/// document frequency: `ln(1 + hits / holding)`, and `ln(1 + hits)` for a term none holds.
/// A word of the question every candidate holds ("default", "value") says little of which
/// line answers; a name few hold says much.
pub(super) fn rarity(hits: &[Hit], terms: &[String]) -> Vec<f64> {
    let texts: Vec<String> = hits.iter().map(|h| h.text.to_lowercase()).collect();
    let n = texts.len().max(1) as f64;
    terms
        .iter()
        .map(|t| {
            let holding = texts.iter().filter(|x| x.contains(t.as_str())).count();
            (1.0 + n / holding.max(1) as f64).ln()
        })
        .collect()
}

/// The snippet for lines `from..to` of `hit` (its label, and its head line then the lines).
fn render(hit: &Hit, lines: &[&str], from: usize, to: usize) -> (String, String) {
    let mut label = source_label(hit);
    if hit.source.starts_with("file:") && hit.first > 0 && (from > 0 || to < lines.len()) {
        let first = hit.first + from as i64;
        let last = hit.first + to as i64 - 1;
        let name = hit.source.trim_start_matches("file:");
        label = format!("{name}:{first}-{last}");
    }
    let mut out = format!("--- {label}");
    if !hit.heading.is_empty() && !is_history(hit) {
        out.push_str(&format!(" ({})", hit.heading));
    }
    out.push('\n');
    for l in &lines[from..to] {
        out.push_str(l);
        out.push('\n');
    }
    (label, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_unit_keeps_the_lines_that_hold_the_terms_together() {
        let text = "jobs:\n  test:\n    steps:\n      - name: Tox tests\n        run: |\n          tox -e py\n      - name: Upload\n        uses: upload\n  success:\n    steps:\n      - name: Success\n        run: echo Test successful\n";
        let terms = ["run".to_string(), "test".to_string(), "suite".to_string()];
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            best_line(&lines, &terms, &[]),
            3,
            "the step named Tox tests"
        );
        assert_eq!(best_line(&lines, &["upload".to_string()], &[]), 6);
        // A term on every line chooses none: the line holding the rarer terms wins.
        let vars = "# Environment variables\n\nColors are set by environment variables:\n\n- APP_COLOR_TEXT: the text\n- APP_COLOR_NULL: the null byte\n- APP_COLOR_LINK: a link\n- APP_COLOR_OFFSET: the lefthand offset\n";
        let lines: Vec<&str> = vars.lines().collect();
        let terms = ["environment", "variable", "color", "offset", "left"].map(String::from);
        let best = best_line(&lines, &terms, &[]);
        assert!(best > 2, "not the heading's lines: {best}");
        assert!(lines[best..]
            .iter()
            .take(BEST_WINDOW)
            .any(|l| l.contains("OFFSET")));
        assert_eq!(best_line(&lines, &[], &[]), 0);
        assert_eq!(best_line(&[], &terms, &[]), 0);
        // The error a question asks for is the line that raises it with its text.
        let run = "fn run() -> Result<()> {\n    let opt = Opt::parse();\n    print_table();\n\n    let mut x = 1;\n    x += 1;\n    if path.is_dir() {\n        bail!(\"'{}' is a directory.\", name);\n    }\n";
        let lines: Vec<&str> = run.lines().collect();
        let asked = ["error", "message", "print", "directory"].map(String::from);
        assert_eq!(best_line(&lines, &asked, &[]), 7, "{lines:?}");
    }
}
