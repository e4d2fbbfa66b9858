//! A reply that runs on past its answer into harvey's own prompt. After "The commit …
//! changed `src/main.rs`." the 1.5B went on with a new line copying the system prompt's
//! memory sentence, and after another answer with a `[tool result]` header. A later line
//! of a reply that starts as a line of the system prompt does, or with a marker harvey
//! puts around what it shows the model, ends the reply before that line; while the line
//! may still become one, it is held back, so the user never sees it.
//!
//! The first line is never judged (a reply that only copies the prompt is the parrot
//! guard's), nor a line inside a code block, and a line must copy [`KEY_CHARS`] characters of a prompt line to end the
//! reply: an answer that quotes a few words of the prompt stays whole.
//!
//! Pure: the engine calls [`scan`] through a `StopFinder` on the text so far.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::engine::{Scan, StopFinder};

/// Characters of a prompt line a reply's line must copy, from its start, to be an echo.
pub const KEY_CHARS: usize = 32;

/// Markers of what harvey shows the model (results, evidence, memory), and the bare
/// `[tool]` the 1.5B wrote under four answers of one REPL conversation: a reply's line
/// that starts with one is never the answer. After naming `FieldNamingPolicy.java` the
/// 1.5B went on for 430 tokens with `--- GsonDesignDocument.md:…` and the block's text.
const MARKERS: &[&str] = &[
    "[tool]",
    "[tool call]",
    "[tool result]",
    "[tool_result]",
    "<tool_response>",
    "</tool_response>",
    "[evidence: ",
    // A snippet's head in the evidence block (`--- src/lib.rs:3-9`); a rule is `---` alone.
    "--- ",
    "[memory context]",
    "[project facts]",
];

/// What ends a reply: the first [`KEY_CHARS`] characters of each long line of `system`
/// (trimmed), then the [`MARKERS`].
pub fn keys(system: &str) -> Vec<String> {
    let mut keys: Vec<String> = system
        .lines()
        .map(str::trim)
        .filter(|l| l.chars().count() >= KEY_CHARS)
        .map(|l| l.chars().take(KEY_CHARS).collect())
        .collect();
    keys.sort();
    keys.dedup();
    keys.extend(MARKERS.iter().map(|m| m.to_string()));
    keys
}

/// Where `text` (a reply so far) stops, or what of it to hold: its last line, when it is
/// not the first, starts with a key (stop before the line's newline), or is still the
/// start of one (hold the line).
pub fn scan(keys: &[String], text: &str) -> Scan {
    let Some(newline) = text.rfind('\n') else {
        return Scan::Clear;
    };
    let line = text[newline + 1..].trim_start();
    let fences = text[..newline]
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count();
    // Inside a code block a line is the code's (a TOML `[tool]` table).
    if line.is_empty() || fences % 2 == 1 {
        return Scan::Clear;
    }
    if keys.iter().any(|k| line.starts_with(k.as_str())) {
        return Scan::Stop(newline);
    }
    if keys.iter().any(|k| k.starts_with(line)) {
        return Scan::Hold(newline + 1);
    }
    Scan::Clear
}

/// A `StopFinder` for [`scan`] over `system`'s keys; `echoed` is raised when it stops.
pub fn finder(system: &str, echoed: Arc<AtomicBool>) -> StopFinder {
    let keys = keys(system);
    StopFinder(Arc::new(move |text: &str| {
        let found = scan(&keys, text);
        if let Scan::Stop(_) = found {
            echoed.store(true, Ordering::Relaxed);
        }
        found
    }))
}

/// `first`, then `second` where `first` finds nothing to stop at: the earlier of their
/// holds is kept.
pub fn either(first: StopFinder, second: StopFinder) -> StopFinder {
    StopFinder(Arc::new(move |text: &str| match (first.0)(text) {
        Scan::Stop(at) => Scan::Stop(at),
        Scan::Hold(from) => match (second.0)(text) {
            Scan::Stop(at) if at < from => Scan::Stop(at),
            Scan::Hold(other) => Scan::Hold(from.min(other)),
            _ => Scan::Hold(from),
        },
        Scan::Clear => (second.0)(text),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stops::StopScanner;

    const SYSTEM: &str = "You are Harvey, a helpful assistant running locally.\n\n\
        Tools:\nread_file(path): reads a file\n\
        memory_* tools search and keep your own notes: treat them as notes to verify.";

    /// What a user is shown of `pieces` streamed through the finder, and whether it stopped.
    fn streamed(pieces: &[&str]) -> (String, bool, bool) {
        let echoed = Arc::new(AtomicBool::new(false));
        let f = finder(SYSTEM, echoed.clone());
        let mut s = StopScanner::with_finder(&[], Some(&f));
        let mut shown = String::new();
        for p in pieces {
            let (out, stop) = s.push(p);
            shown.push_str(&out);
            if stop {
                return (shown, true, echoed.load(Ordering::Relaxed));
            }
        }
        shown.push_str(&s.finish());
        (shown, false, echoed.load(Ordering::Relaxed))
    }

    #[test]
    fn a_later_line_copying_the_system_prompt_ends_the_reply_unseen() {
        let (shown, stopped, echoed) = streamed(&[
            "The commit changed `src/main.rs`.",
            "\nmemory_* tools ",
            "search and keep your own notes: treat",
            " them as notes",
        ]);
        assert_eq!(shown, "The commit changed `src/main.rs`.\n");
        assert!(stopped && echoed);
    }

    #[test]
    fn a_template_marker_line_ends_the_reply() {
        let (shown, stopped, _) = streamed(&["It came from commit 9a3f7ff.\n[tool ", "result]"]);
        assert_eq!(shown, "It came from commit 9a3f7ff.\n");
        assert!(stopped);
        let (shown, stopped, _) = streamed(&["It is in `initialise.py`.\n\n[tool", "]"]);
        assert_eq!(shown, "It is in `initialise.py`.\n\n");
        assert!(stopped);
        let (shown, stopped, _) = streamed(&["In `Policy.java`.\n\n--- Design.md:", "3-9\n"]);
        assert_eq!(shown, "In `Policy.java`.\n");
        assert!(stopped);
        // A Markdown rule is no snippet's head.
        assert!(!streamed(&["One.\n---\nTwo."]).1);
    }

    #[test]
    fn the_first_line_a_short_quote_and_a_line_that_diverges_are_shown() {
        // The first line is the parrot guard's to judge.
        let first = "memory_* tools search and keep your own notes: treat them";
        assert_eq!(streamed(&[first]), (first.to_string(), false, false));
        // A few words of a prompt line, then the user's own text: held, then released.
        let (shown, stopped, echoed) =
            streamed(&["Done.\nYou are ", "Harvey's user, and the answer is 4."]);
        assert_eq!(shown, "Done.\nYou are Harvey's user, and the answer is 4.");
        assert!(!stopped && !echoed);
        // In a code block a line is the code's.
        let toml = "Add this:\n```toml\n[tool]\nname = 1\n```";
        assert_eq!(streamed(&[toml]), (toml.to_string(), false, false));
        // Held at the end of the reply, a line is still shown.
        assert_eq!(streamed(&["Done.\n[tool"]).0, "Done.\n[tool");
    }

    #[test]
    fn only_long_prompt_lines_are_keys() {
        let k = keys(SYSTEM);
        let first: String = SYSTEM
            .lines()
            .next()
            .unwrap()
            .chars()
            .take(KEY_CHARS)
            .collect();
        assert_eq!(first, "You are Harvey, a helpful assist");
        assert!(k.contains(&first));
        assert!(!k.iter().any(|k| k.starts_with("Tools:")));
        assert!(k
            .iter()
            .all(|k| k.chars().count() <= KEY_CHARS || MARKERS.contains(&k.as_str())));
    }

    #[test]
    fn either_stops_at_the_first_and_keeps_the_earlier_hold() {
        let stop_at = |n: usize| StopFinder(Arc::new(move |_: &str| Scan::Stop(n)));
        let hold_at = |n: usize| StopFinder(Arc::new(move |_: &str| Scan::Hold(n)));
        let clear = || StopFinder(Arc::new(|_: &str| Scan::Clear));
        assert_eq!((either(stop_at(5), stop_at(2)).0)("x"), Scan::Stop(5));
        assert_eq!((either(hold_at(5), stop_at(2)).0)("x"), Scan::Stop(2));
        assert_eq!((either(hold_at(5), stop_at(7)).0)("x"), Scan::Hold(5));
        assert_eq!((either(hold_at(5), hold_at(3)).0)("x"), Scan::Hold(3));
        assert_eq!((either(clear(), hold_at(3)).0)("x"), Scan::Hold(3));
        assert_eq!((either(clear(), clear()).0)("x"), Scan::Clear);
    }
}
