//! Watching a streamed reply for the evidence block said again. A small model that has
//! no answer, or that wants to show where it found one, goes on to write the block's
//! snippets back, head line after head line, until its token limit: the 1.5B answered a
//! dependency question with an apology and then 390 tokens of the block (24.7 s where the
//! other answers took 6), and the OutputSettings question with the right file followed
//! by the whole snippet it came from.
//!
//! The reply stops where it begins a second snippet of the block, or where it begins the
//! first after an answer of its own (at least [`OWN_WORDS`] words): "The crate is `clap`,
//! see:" keeps its answer, and a reply that opens by quoting one snippet keeps that
//! snippet, which is then its answer. The block's first line (its header) said again is
//! an echo too. What might still become an echo at the end of the text is held back
//! until its line shows what it is.
//!
//! Pure: the engine calls [`watch`] through a `StopFinder` on the text so far.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::engine::{Scan, StopFinder};
use crate::evidence::block;

/// Words of its own a reply writes before an echo for the echo to end it (fewer: the
/// reply opened with a quote, and its first snippet is kept).
pub const OWN_WORDS: usize = 8;

/// How a snippet's head line begins in the block.
const HEAD: &str = "--- ";

/// The start of the block's header, as a model writes it again (with or without the
/// space after the colon).
const HEADER_START: &str = "[evidence:";

/// The head lines of the block sent with `message` (`--- ` and the source, without the
/// heading in parentheses); empty for a message sent without one.
pub fn heads_of(message: &str) -> Vec<String> {
    if !(message.starts_with(block::HEADER) || message.starts_with(block::MEMORY_HEADER)) {
        return Vec::new();
    }
    let mut heads: Vec<String> = message
        .lines()
        .filter(|l| l.starts_with(HEAD) && l.len() > HEAD.len())
        .map(|l| {
            l.split_once(" (")
                .map_or(l, |(source, _)| source)
                .to_string()
        })
        .collect();
    heads.sort();
    heads.dedup();
    heads
}

/// Where `text` (the reply so far, its lead included) stops, or what it holds back, given
/// the block's `heads`.
pub fn watch(text: &str, heads: &[String]) -> Scan {
    if heads.is_empty() {
        return Scan::Clear;
    }
    let echoes = echoed_heads(text, heads);
    let header = find_header(text);
    let first = echoes.first().copied().into_iter().chain(header).min();
    if let Some(at) = first {
        if own_words(&text[..at]) >= OWN_WORDS {
            return Scan::Stop(at);
        }
    }
    if let Some(&second) = echoes.get(1) {
        return Scan::Stop(second);
    }
    held(text, heads)
}

/// A `StopFinder` for [`watch`] over `lead` (the reply's first token, decoded apart)
/// and the streamed text; `echoed` is set when it stops the reply.
pub fn finder(heads: Vec<String>, lead: String, echoed: Arc<AtomicBool>) -> StopFinder {
    StopFinder(Arc::new(move |text: &str| {
        let whole = format!("{lead}{text}");
        let shift = |at: usize| at.saturating_sub(lead.len());
        match watch(&whole, &heads) {
            Scan::Stop(at) => {
                echoed.store(true, Ordering::Relaxed);
                Scan::Stop(shift(at))
            }
            Scan::Hold(from) => Scan::Hold(shift(from)),
            Scan::Clear => Scan::Clear,
        }
    }))
}

/// One finder of two: the earlier stop wins, else the earlier hold.
pub fn either(a: StopFinder, b: StopFinder) -> StopFinder {
    StopFinder(Arc::new(move |text: &str| {
        match ((a.0)(text), (b.0)(text)) {
            (Scan::Stop(x), Scan::Stop(y)) => Scan::Stop(x.min(y)),
            (Scan::Stop(x), _) | (_, Scan::Stop(x)) => Scan::Stop(x),
            (Scan::Hold(x), Scan::Hold(y)) => Scan::Hold(x.min(y)),
            (Scan::Hold(x), Scan::Clear) | (Scan::Clear, Scan::Hold(x)) => Scan::Hold(x),
            (Scan::Clear, Scan::Clear) => Scan::Clear,
        }
    }))
}

/// Starts of the complete lines of `text` that begin with one of `heads` (leading white
/// space and a list marker allowed), in order.
fn echoed_heads(text: &str, heads: &[String]) -> Vec<usize> {
    let mut at = 0;
    let mut out = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.ends_with('\n') && heads.iter().any(|h| unmarked(line).starts_with(h.as_str())) {
            out.push(at);
        }
        at += line.len();
    }
    out
}

/// A line without its indent and a list marker (`- `, `* `) before a head line.
fn unmarked(line: &str) -> &str {
    let t = line.trim_start_matches([' ', '\t']);
    match t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
        Some(rest) if rest.starts_with(HEAD) => rest,
        _ => t,
    }
}

/// Where the block's header is written again, if it is.
fn find_header(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    lower.find(HEADER_START)
}

/// Words of the reply's own before an echo (letters or digits in a row).
fn own_words(text: &str) -> usize {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .count()
}

/// Holds the last line back while it may still become a head line, or the header.
fn held(text: &str, heads: &[String]) -> Scan {
    let start = text.rfind('\n').map_or(0, |i| i + 1);
    let last = unmarked(&text[start..]);
    let could_be_head = !last.is_empty() && heads.iter().any(|h| h.starts_with(last));
    let could_be_list = matches!(text[start..].trim_start(), "-" | "*" | "- " | "* ");
    let line_is_head = heads.iter().any(|h| last.starts_with(h.as_str()));
    if could_be_head || could_be_list || line_is_head {
        return Scan::Hold(start);
    }
    let lower = text.to_ascii_lowercase();
    (1..HEADER_START.len())
        .rev()
        .find(|&n| lower.ends_with(&HEADER_START[..n]))
        .map_or(Scan::Clear, |n| Scan::Hold(text.len() - n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent() -> String {
        format!(
            "{}\n--- Cargo.toml:1-9 (package)\n[package]\nname = \"hexyl\"\n\
             --- src/main.rs:40-52 (fn run)\nlet args = Args::parse();\n\
             --- commit 1a2b3c4\nAdd the braille table\n\nWhich crate parses the arguments?\n{}",
            block::HEADER,
            block::ANSWER_NOTE
        )
    }

    fn heads() -> Vec<String> {
        heads_of(&sent())
    }

    #[test]
    fn the_heads_are_the_blocks_sources_without_their_headings() {
        assert_eq!(
            heads(),
            vec![
                "--- Cargo.toml:1-9".to_string(),
                "--- commit 1a2b3c4".into(),
                "--- src/main.rs:40-52".into(),
            ]
        );
        assert!(heads_of("--- Cargo.toml:1-9\nno block here").is_empty());
    }

    #[test]
    fn an_answer_followed_by_the_block_stops_where_the_block_begins() {
        let text = "The arguments are parsed with `clap`, as the manifest shows.\n\n\
                    --- Cargo.toml:1-9 (package)\n";
        let at = text.find("---").unwrap();
        assert_eq!(watch(text, &heads()), Scan::Stop(at));
        // The header said again after an answer stops it too.
        let text = "It uses clap, as the manifest of the project says. [evidence: snippets";
        assert_eq!(
            watch(text, &heads()),
            Scan::Stop(text.find("[evidence").unwrap())
        );
    }

    #[test]
    fn a_reply_that_opens_with_a_quote_keeps_one_snippet() {
        let text =
            "From the evidence:\n- --- src/main.rs:40-52 (fn run)\nlet args = Args::parse();\n";
        assert_eq!(watch(text, &heads()), Scan::Clear);
        let more = format!("{text}--- Cargo.toml:1-9 (package)\n");
        assert_eq!(watch(&more, &heads()), Scan::Stop(text.len()));
    }

    #[test]
    fn what_may_become_a_head_line_is_held_and_prose_is_not() {
        let text = "The crate is clap.\n--- src/ma";
        assert_eq!(
            watch(text, &heads()),
            Scan::Hold(text.rfind('\n').unwrap() + 1)
        );
        assert_eq!(watch("It is clap.\n-", &heads()), Scan::Hold(12));
        assert_eq!(watch("It is clap [evid", &heads()), Scan::Hold(11));
        // A rule line, a list and a source named in prose are the reply's own.
        for text in [
            "It is clap.\n---\nMore.",
            "It is clap.\n- one\n- two\n",
            "It is clap (see src/main.rs:40-52).\n",
            "It is clap.\n--- README.md:1-4\n",
        ] {
            assert_eq!(watch(text, &heads()), Scan::Clear, "{text:?}");
        }
    }

    #[test]
    fn the_finder_counts_the_lead_and_reports_its_stop() {
        let echoed = Arc::new(AtomicBool::new(false));
        let f = finder(heads(), "The".into(), echoed.clone());
        let text = " crate is clap, the manifest of the project says so.\n--- Cargo.toml:1-9\n";
        assert_eq!((f.0)(text), Scan::Stop(text.find("---").unwrap()));
        assert!(echoed.load(Ordering::Relaxed));
        let quiet = Arc::new(AtomicBool::new(false));
        let g = finder(Vec::new(), String::new(), quiet.clone());
        assert_eq!((g.0)(text), Scan::Clear);
        assert!(!quiet.load(Ordering::Relaxed));
    }

    #[test]
    fn either_finder_takes_the_earlier_stop() {
        let at = |n: usize| StopFinder(Arc::new(move |_: &str| Scan::Stop(n)));
        let hold = |n: usize| StopFinder(Arc::new(move |_: &str| Scan::Hold(n)));
        let clear = || StopFinder(Arc::new(|_: &str| Scan::Clear));
        assert_eq!((either(at(5), at(3)).0)(""), Scan::Stop(3));
        assert_eq!((either(hold(2), at(9)).0)(""), Scan::Stop(9));
        assert_eq!((either(hold(4), hold(2)).0)(""), Scan::Hold(2));
        assert_eq!((either(clear(), hold(7)).0)(""), Scan::Hold(7));
        assert_eq!((either(clear(), clear()).0)(""), Scan::Clear);
    }
}
