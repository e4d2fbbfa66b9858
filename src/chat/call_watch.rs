//! Watching a streamed reply for a tool call written as plain JSON — the way small
//! instruction-tuned models really call tools (a fenced ```json block or a bare object
//! whose first key is `"name"`) — so generation can stop where the call starts and go on
//! under the call grammar, which admits only registered tools.
//!
//! A line that starts with `{` (or a fence followed by one) is held back from the user
//! until it is clear: it is a call once its name is a registered tool, or once an
//! invented name is followed by `"arguments"`/`"parameters"` (the grammar then picks a
//! real tool); any other text (a `package.json` whose name is `"my-app"` and whose next
//! key is `"version"`) releases it as prose. JSON in the middle of a line is prose.
//!
//! Pure: the engine calls [`watch`] through a `StopFinder` on the text so far.

use std::sync::{Arc, Mutex};

use crate::engine::{Scan, StopFinder};

/// Where a JSON call starts in the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonHead {
    /// Byte offset of the call's own text (its fence line, or its `{`).
    pub at: usize,
    /// The text between `at` and the `{`: the fence line (```` ```json\n ````), or empty.
    pub opener: String,
}

/// What the text says so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watch {
    Call(JsonHead),
    Hold(usize),
    Clear,
}

/// Looks at the last line that starts with `{` (and the fence line before it, if any).
pub fn watch(text: &str, tools: &[&str]) -> Watch {
    let Some(brace) = last_line_start_with(text, '{') else {
        return hold_fence(text);
    };
    let (at, opener) = match fence_before(text, brace) {
        Some(fence) => (fence, text[fence..brace].to_string()),
        None => (brace, String::new()),
    };
    match head_state(&text[brace..], tools) {
        State::Call => Watch::Call(JsonHead { at, opener }),
        State::Maybe => Watch::Hold(at),
        State::No => hold_fence(text),
    }
}

/// A `StopFinder` for [`watch`]; the head it stopped at is left in `found`.
pub fn finder(tools: Vec<String>, found: Arc<Mutex<Option<JsonHead>>>) -> StopFinder {
    StopFinder(Arc::new(move |text: &str| {
        let names: Vec<&str> = tools.iter().map(String::as_str).collect();
        match watch(text, &names) {
            Watch::Call(head) => {
                let at = head.at;
                if let Ok(mut slot) = found.lock() {
                    *slot = Some(head);
                }
                Scan::Stop(at)
            }
            Watch::Hold(from) => Scan::Hold(from),
            Watch::Clear => Scan::Clear,
        }
    }))
}

/// Holds a trailing fence line (```` ``` ```` or ```` ```json ````, with or without its
/// newline) until the next line shows whether a call follows.
fn hold_fence(text: &str) -> Watch {
    let start = text.rfind('\n').map_or(0, |i| i + 1);
    let last = &text[start..];
    let fence_line = last.trim_start();
    // Inside a code block a fence line closes it: nothing to wait for.
    let open_blocks = text[..start]
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count();
    if !fence_line.is_empty() && is_fence_prefix(fence_line) && open_blocks % 2 == 0 {
        return Watch::Hold(start);
    }
    // A complete fence line just ended: the call may start on the next line.
    if last.is_empty() && start > 0 {
        let prev_start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        if is_fence(text[prev_start..start - 1].trim()) {
            return Watch::Hold(prev_start);
        }
    }
    Watch::Clear
}

/// A fence line, complete: ```` ``` ```` with an optional language word.
fn is_fence(line: &str) -> bool {
    line.strip_prefix("```")
        .is_some_and(|lang| lang.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// Could `line` still become a fence line?
fn is_fence_prefix(line: &str) -> bool {
    if line.len() < 3 {
        return "```".starts_with(line);
    }
    is_fence(line)
}

/// Start of the last line whose first non-space character is `c`.
fn last_line_start_with(text: &str, c: char) -> Option<usize> {
    let mut end = text.len();
    loop {
        let start = text[..end].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[start..end];
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.starts_with(c) {
            return Some(start + (line.len() - trimmed.len()));
        }
        if start == 0 {
            return None;
        }
        end = start - 1;
    }
}

/// The start of the fence line right before the line at `brace`, if that fence opens a
/// block (one that closes a code block above is not the call's opener).
fn fence_before(text: &str, brace: usize) -> Option<usize> {
    let line_start = text[..brace].rfind('\n').map(|i| i + 1)?;
    let prev_end = line_start - 1;
    let prev_start = text[..prev_end].rfind('\n').map_or(0, |i| i + 1);
    let fences_above = text[..prev_start]
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count();
    (is_fence(text[prev_start..prev_end].trim()) && fences_above % 2 == 0).then_some(prev_start)
}

#[derive(Debug, PartialEq, Eq)]
enum State {
    Call,
    Maybe,
    No,
}

/// Reads `{ "name" : "NAME" , "arguments"` from the start of `obj`.
fn head_state(obj: &str, tools: &[&str]) -> State {
    let mut rest = &obj[1..];
    for expected in ["\"name\"", ":", "\""] {
        rest = rest.trim_start();
        if rest.is_empty() {
            return State::Maybe;
        }
        match literal(rest, expected) {
            Some(after) => rest = after,
            None if expected.starts_with(rest) => return State::Maybe,
            None => return State::No,
        }
    }
    let Some(close) = rest.find('"') else {
        return name_so_far(rest, tools);
    };
    let name = &rest[..close];
    if tools.contains(&name) {
        return State::Call;
    }
    if !is_identifier(name) {
        return State::No;
    }
    let after = rest[close + 1..].trim_start();
    let Some(after) = after.strip_prefix(',') else {
        return if after.is_empty() {
            State::Maybe
        } else {
            State::No
        };
    };
    let key = after.trim_start();
    if ["\"arguments\"", "\"parameters\""]
        .iter()
        .any(|k| key.starts_with(k))
    {
        State::Call
    } else if key.is_empty()
        || ["\"arguments\"", "\"parameters\""]
            .iter()
            .any(|k| k.starts_with(key))
    {
        State::Maybe
    } else {
        State::No
    }
}

fn literal<'a>(text: &'a str, expected: &str) -> Option<&'a str> {
    text.strip_prefix(expected)
}

/// A name still being written: it may become a tool's name or an invented identifier.
fn name_so_far(partial: &str, tools: &[&str]) -> State {
    if tools.iter().any(|t| t.starts_with(partial)) || is_identifier(partial) || partial.is_empty()
    {
        State::Maybe
    } else {
        State::No
    }
}

/// `snake_case`-like names a model invents for tools (`find_function`, `parse-config`).
fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["read_file", "list_files", "git"];

    fn call(at: usize, opener: &str) -> Watch {
        Watch::Call(JsonHead {
            at,
            opener: opener.to_string(),
        })
    }

    #[test]
    fn calls_are_found_at_their_start() {
        let cases: &[(&str, Watch)] = &[
            (r#"{"name": "read_file""#, call(0, "")),
            ("Let me look.\n{\n  \"name\": \"git\"", call(13, "")),
            ("```json\n{\"name\": \"list_files\", ", call(0, "```json\n")),
            ("Sure:\n```\n{ \"name\" : \"read_file\"", call(6, "```\n")),
            (r#"{"name": "find_function", "arguments""#, call(0, "")),
            (r#"{"name": "find_function", "parameters": {"#, call(0, "")),
            ("  {\"name\": \"git\"", call(2, "")),
            // The fence above closes a code block: the call starts at its brace.
            ("```py\nx = 1\n```\n{\"name\": \"git\"", call(16, "")),
        ];
        for (text, want) in cases {
            assert_eq!(&watch(text, TOOLS), want, "{text:?}");
        }
    }

    #[test]
    fn prose_and_other_json_are_released() {
        let cases = [
            "I would call read_file here.",
            r#"Use {"name": "read_file"} like this"#,
            "{\n  \"name\": \"my-app\",\n  \"version\": \"1.0\"",
            r#"{"title": "x"}"#,
            r#"{"name": "Alice Smith", "#,
            "```rust\nfn main() {}\n```",
            "Done.",
        ];
        for text in cases {
            assert_eq!(watch(text, TOOLS), Watch::Clear, "{text:?}");
        }
    }

    #[test]
    fn partial_heads_are_held_never_called_early() {
        let full = "Sure.\n```json\n{\"name\": \"read_file\", \"arguments\": {}}";
        let head_end = full.find("read_file").unwrap() + "read_file\"".len();
        for end in 1..full.len() {
            if !full.is_char_boundary(end) {
                continue;
            }
            let got = watch(&full[..end], TOOLS);
            if end < head_end {
                assert!(
                    !matches!(got, Watch::Call(_)),
                    "{:?} -> {got:?}",
                    &full[..end]
                );
            } else {
                assert_eq!(got, call(6, "```json\n"), "{:?}", &full[..end]);
            }
            if end > "Sure.\n`".len() && end < head_end {
                assert_eq!(got, Watch::Hold(6), "{:?}", &full[..end]);
            }
        }
    }

    #[test]
    fn the_finder_stops_and_records_the_head() {
        let found = Arc::new(Mutex::new(None));
        let f = finder(vec!["git".into()], found.clone());
        assert_eq!((f.0)("ok\n{\"name\": \"git\""), Scan::Stop(3));
        assert_eq!(found.lock().unwrap().as_ref().map(|h| h.at), Some(3));
        assert_eq!((f.0)("ok\n{\"na"), Scan::Hold(3));
        assert_eq!((f.0)("ok"), Scan::Clear);
    }
}
