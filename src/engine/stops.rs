//! Stop strings in streamed text: text that might be the start of a stop string is held
//! back until it is clear, so the user never sees half of an opener like `<tool_call>`.
//! A caller's [`StopFinder`] does the same for stops no fixed string describes (a JSON
//! tool call that starts a line): it names where the text stops, or what to hold back.

use std::sync::Arc;

/// What a [`StopFinder`] sees in the text so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Stop right before this byte offset.
    Stop(usize),
    /// Nothing yet, but the text from this offset may still become a stop: hold it back.
    Hold(usize),
    /// Nothing to stop at or hold.
    Clear,
}

/// A stop that is found by looking at the whole text so far (pure; called per piece).
#[derive(Clone)]
pub struct StopFinder(pub Arc<dyn Fn(&str) -> Scan + Send + Sync>);

impl std::fmt::Debug for StopFinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StopFinder")
    }
}

/// Scans streamed text for the first occurrence of any stop string.
#[derive(Debug)]
pub struct StopScanner<'a> {
    stops: &'a [String],
    text: String,
    emitted: usize,
    stopped: bool,
    /// Index in `stops` of the stop string that ended the text (`stops.len()` for the
    /// finder's stop).
    hit: Option<usize>,
    finder: Option<&'a StopFinder>,
}

impl<'a> StopScanner<'a> {
    pub fn new(stops: &'a [String]) -> Self {
        Self {
            stops,
            text: String::new(),
            emitted: 0,
            stopped: false,
            hit: None,
            finder: None,
        }
    }

    /// A scanner that also asks `finder` (see [`Scan`]).
    pub fn with_finder(stops: &'a [String], finder: Option<&'a StopFinder>) -> Self {
        Self {
            finder,
            ..Self::new(stops)
        }
    }

    /// Adds a piece; returns the text that is safe to show now and whether a stop string
    /// has appeared (the text is then cut right before it).
    pub fn push(&mut self, piece: &str) -> (String, bool) {
        if self.stopped {
            return (String::new(), true);
        }
        self.text.push_str(piece);
        if let Some((at, which)) = self.first_stop() {
            // What was shown stays shown: a stop is never cut before it.
            let at = at.max(self.emitted);
            self.hit = Some(which);
            self.text.truncate(at);
            self.stopped = true;
            return (self.take_until(at), true);
        }
        let mut safe = self.text.len() - self.held_back();
        if let Some(finder) = self.finder {
            match (finder.0)(&self.text) {
                Scan::Stop(at) => {
                    // A finder may name a line it let through before (it reads the whole
                    // text each time): what was shown stays shown.
                    let at = at.clamp(self.emitted, self.text.len());
                    self.hit = Some(self.stops.len());
                    self.text.truncate(at);
                    self.stopped = true;
                    return (self.take_until(at), true);
                }
                Scan::Hold(from) => safe = safe.min(from),
                Scan::Clear => {}
            }
        }
        (self.take_until(safe), false)
    }

    /// Releases held-back text (generation ended for another reason).
    pub fn finish(&mut self) -> String {
        let end = self.text.len();
        self.take_until(end)
    }

    /// Everything accepted so far (cut before the stop string if one appeared).
    pub fn text(&self) -> &str {
        &self.text
    }

    fn take_until(&mut self, end: usize) -> String {
        let mut end = end.max(self.emitted).min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let end = end.max(self.emitted);
        let out = self.text[self.emitted..end].to_string();
        self.emitted = end;
        out
    }

    /// Whether the finder, not a stop string, cut the text.
    pub fn found_by_finder(&self) -> bool {
        self.hit == Some(self.stops.len())
    }

    /// Which stop string (its index in `stops`) cut the text, if any.
    pub fn hit(&self) -> Option<usize> {
        self.hit
    }

    fn first_stop(&self) -> Option<(usize, usize)> {
        let longest = self.stops.iter().map(String::len).max().unwrap_or(0);
        let mut from = self.emitted.saturating_sub(longest);
        while !self.text.is_char_boundary(from) {
            from -= 1;
        }
        self.stops
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_empty())
            .filter_map(|(which, s)| {
                self.text[from..]
                    .find(s.as_str())
                    .map(|i| (from + i, which))
            })
            .min()
    }

    /// Bytes at the end of the text that are a proper prefix of some stop string.
    fn held_back(&self) -> usize {
        let tail_start = self.emitted;
        let mut best = 0;
        for stop in self.stops {
            for (len, _) in stop.char_indices().skip(1) {
                let prefix = &stop[..len];
                if self.text.len() - tail_start >= len && self.text.ends_with(prefix) {
                    best = best.max(len);
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stops: &[&str], pieces: &[&str]) -> (Vec<String>, String, bool) {
        let stops: Vec<String> = stops.iter().map(|s| s.to_string()).collect();
        let mut scanner = StopScanner::new(&stops);
        let mut shown = Vec::new();
        let mut stopped = false;
        for p in pieces {
            let (out, s) = scanner.push(p);
            shown.push(out);
            if s {
                stopped = true;
                break;
            }
        }
        if !stopped {
            shown.push(scanner.finish());
        }
        (shown, scanner.text().to_string(), stopped)
    }

    #[test]
    fn a_finder_stop_before_the_shown_text_keeps_what_was_shown() {
        // Clear until the text holds "!", then a stop at the very start.
        let finder = StopFinder(Arc::new(|text: &str| {
            if text.contains('!') {
                Scan::Stop(0)
            } else {
                Scan::Clear
            }
        }));
        let stops: Vec<String> = Vec::new();
        let mut s = StopScanner::with_finder(&stops, Some(&finder));
        assert_eq!(s.push("déjà vu "), ("déjà vu ".to_string(), false));
        assert_eq!(s.push("again!"), (String::new(), true));
        assert_eq!(s.text(), "déjà vu ");
        assert!(s.found_by_finder());
    }

    #[test]
    fn a_finder_holds_back_then_stops_or_releases() {
        // Stops at a line that starts with `{"go"`; holds a line that starts with `{`.
        let finder = StopFinder(Arc::new(|text: &str| {
            let line = text.rfind('\n').map_or(0, |i| i + 1);
            let rest = &text[line..];
            if rest.starts_with("{\"go\"") {
                Scan::Stop(line)
            } else if rest.starts_with('{') && "{\"go\"".starts_with(rest) {
                Scan::Hold(line)
            } else {
                Scan::Clear
            }
        }));
        let stops: Vec<String> = Vec::new();
        let mut s = StopScanner::with_finder(&stops, Some(&finder));
        assert_eq!(s.push("ok\n{"), ("ok\n".to_string(), false));
        assert_eq!(s.push("\"g"), (String::new(), false));
        assert_eq!(s.push("o\": 1}"), (String::new(), true));
        assert_eq!(s.text(), "ok\n");
        assert_eq!(s.hit(), Some(0));
        let mut s = StopScanner::with_finder(&stops, Some(&finder));
        assert_eq!(s.push("{\"g"), (String::new(), false));
        assert_eq!(s.push("x"), ("{\"gx".to_string(), false));
    }

    #[test]
    fn opener_split_across_pieces_is_never_shown() {
        let (shown, text, stopped) = run(
            &["<tool_call>"],
            &["Let me check. <to", "ol_", "call>{\"name\""],
        );
        assert!(stopped);
        assert_eq!(text, "Let me check. ");
        assert_eq!(shown.concat(), "Let me check. ");
        assert_eq!(
            shown[0], "Let me check. ",
            "the possible opener start is held back"
        );
    }

    #[test]
    fn false_alarm_is_released() {
        let (shown, text, stopped) = run(&["<tool_call>"], &["a <to", "ast> b"]);
        assert!(!stopped);
        assert_eq!(text, "a <toast> b");
        assert_eq!(shown.concat(), "a <toast> b");
        assert_eq!(shown[0], "a ");
    }

    #[test]
    fn held_back_text_is_released_at_the_end() {
        let (shown, _, stopped) = run(&["<tool_call>"], &["ends with <tool"]);
        assert!(!stopped);
        assert_eq!(shown.concat(), "ends with <tool");
    }

    #[test]
    fn the_stop_that_cut_is_named() {
        let stops: Vec<String> = vec!["<tool_call>".into(), "<end_of_turn>".into()];
        let mut scanner = StopScanner::new(&stops);
        assert_eq!(scanner.hit(), None);
        let (shown, stopped) = scanner.push("Hi.<end_of");
        assert_eq!((shown.as_str(), stopped), ("Hi.", false));
        let (shown, stopped) = scanner.push("_turn> more");
        assert_eq!((shown.as_str(), stopped), ("", true));
        assert_eq!(scanner.hit(), Some(1));
        assert_eq!(scanner.text(), "Hi.");
    }

    #[test]
    fn no_stops_passes_through_and_multibyte_is_safe() {
        let (shown, text, _) = run(&[], &["héllo ", "wörld"]);
        assert_eq!(shown.concat(), "héllo wörld");
        assert_eq!(text, "héllo wörld");
        let (_, text, stopped) = run(&["ß<x>"], &["aé", "ß<", "x>tail"]);
        assert!(stopped);
        assert_eq!(text, "aé");
    }
}
