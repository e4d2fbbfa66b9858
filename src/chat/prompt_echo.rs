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

/// A `StopFinder` for [`scan`] over `system`'s keys.
pub fn finder(system: &str) -> StopFinder {
    let keys = keys(system);
    StopFinder(Arc::new(move |text: &str| scan(&keys, text)))
}

/// `calls` (the tool-call watcher), then `echo` where `calls` finds nothing to stop at:
/// the earlier of their holds is kept, and `echoed` is raised when the stop returned is
/// the echo's (not when a call being held wins over it).
pub fn after(calls: Option<StopFinder>, echo: StopFinder, echoed: Arc<AtomicBool>) -> StopFinder {
    StopFinder(Arc::new(move |text: &str| {
        let first = calls.as_ref().map_or(Scan::Clear, |c| (c.0)(text));
        let found = match (first, (echo.0)(text)) {
            (Scan::Stop(at), _) => return Scan::Stop(at),
            (Scan::Hold(from), Scan::Stop(at)) if at < from => Scan::Stop(at),
            (Scan::Hold(from), Scan::Hold(other)) => return Scan::Hold(from.min(other)),
            (Scan::Hold(from), _) => return Scan::Hold(from),
            (Scan::Clear, second) => second,
        };
        if let Scan::Stop(_) = found {
            echoed.store(true, Ordering::Relaxed);
        }
        found
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stops::StopScanner;

    const SYSTEM: &str = "You are Harvey, a helpful assistant running locally.\n\n\
        Tools:\nread_file(path): reads a file\n\
        memory_* tools search and keep your own notes: treat them as notes to verify.";

    /// What a user is shown of `pieces` streamed through the finder, whether it stopped
    /// and whether the echo was said to be the stop.
    fn streamed(pieces: &[&str]) -> (String, bool, bool) {
        let echoed = Arc::new(AtomicBool::new(false));
        let f = after(None, finder(SYSTEM), echoed.clone());
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
    fn a_call_stops_first_and_a_held_call_keeps_the_earlier_hold() {
        let fixed = |scan: Scan| StopFinder(Arc::new(move |_: &str| scan));
        let combined = |calls: Option<Scan>, echo: Scan| {
            let echoed = Arc::new(AtomicBool::new(false));
            let f = after(calls.map(fixed), fixed(echo), echoed.clone());
            ((f.0)("x"), echoed.load(Ordering::Relaxed))
        };
        assert_eq!(
            combined(Some(Scan::Stop(5)), Scan::Stop(2)),
            (Scan::Stop(5), false)
        );
        assert_eq!(
            combined(Some(Scan::Hold(5)), Scan::Stop(2)),
            (Scan::Stop(2), true)
        );
        // A call held from 5 wins over an echo later in it: no echo said.
        assert_eq!(
            combined(Some(Scan::Hold(5)), Scan::Stop(7)),
            (Scan::Hold(5), false)
        );
        assert_eq!(
            combined(Some(Scan::Hold(5)), Scan::Hold(3)),
            (Scan::Hold(3), false)
        );
        assert_eq!(
            combined(Some(Scan::Clear), Scan::Hold(3)),
            (Scan::Hold(3), false)
        );
        assert_eq!(combined(None, Scan::Stop(3)), (Scan::Stop(3), true));
        assert_eq!(combined(None, Scan::Clear), (Scan::Clear, false));
    }
}
