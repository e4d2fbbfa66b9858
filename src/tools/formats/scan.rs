//! Text scanning for [`super`]: where a JSON value that opens with `{` or `[` ends
//! (brackets balanced, strings and escapes respected), and where lines and fences start.
//! Pure byte work on `&str` offsets; it never parses values (serde_json does that).

/// How far a JSON object or list that opens at some offset runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// One past its closing bracket.
    Complete(usize),
    /// The text ends before it closes (still streaming, or cut off).
    Open,
    /// Not a bracket there, or a closing bracket that does not match.
    Broken,
}

/// The extent of the object or list opening at byte `start` of `text`.
pub fn extent(text: &str, start: usize) -> Extent {
    let bytes = text.as_bytes();
    if !matches!(bytes.get(start), Some(b'{' | b'[')) {
        return Extent::Broken;
    }
    let mut closers: Vec<u8> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => closers.push(b'}'),
            b'[' => closers.push(b']'),
            b'}' | b']' if closers.pop() != Some(b) => return Extent::Broken,
            b'}' | b']' if closers.is_empty() => return Extent::Complete(i + 1),
            _ => {}
        }
    }
    Extent::Open
}

/// `at` moved past JSON whitespace.
pub fn skip_ws(text: &str, at: usize) -> usize {
    let rest = &text[at..];
    at + rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n']).len()
}

/// Where the line holding byte `at` starts.
pub fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// Whether only spaces or tabs stand between the line's start and `at`.
pub fn starts_line(text: &str, at: usize) -> bool {
    text[line_start(text, at)..at]
        .bytes()
        .all(|b| b == b' ' || b == b'\t')
}

/// What kind of code fence a JSON object at the start of its line sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fence {
    /// Not inside a fence.
    Outside,
    /// Inside a ```` ``` ````, ```` ```json ```` or ```` ```tool_call ```` fence opened on the
    /// previous non-blank line, which starts at this offset.
    Json(usize),
    /// Inside a fence of some other language, or one not right above it: code, not a call.
    Other,
}

/// The fence around a line starting at `line`: the previous non-blank line opens one when it
/// starts with three backticks and an odd number of fence lines come before `line`.
pub fn fence_around(text: &str, line: usize) -> Fence {
    let before = &text[..line];
    let fences = before.lines().filter(|l| is_fence(l)).count();
    if fences % 2 == 0 {
        return Fence::Outside;
    }
    let trimmed = before.trim_end();
    let start = line_start(trimmed, trimmed.len());
    let above = trimmed[start..].trim();
    match above.strip_prefix("```") {
        Some(lang) if is_json_lang(lang.trim()) => Fence::Json(start),
        _ => Fence::Other,
    }
}

fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```")
}

fn is_json_lang(lang: &str) -> bool {
    ["", "json", "tool_call"]
        .iter()
        .any(|l| l.eq_ignore_ascii_case(lang))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extent_table() {
        let cases: &[(&str, Extent)] = &[
            ("{}", Extent::Complete(2)),
            (r#"{"a": [1, {"b": 2}]} tail"#, Extent::Complete(20)),
            (r#"{"a": "}]{["}x"#, Extent::Complete(13)),
            (r#"{"a": "\"}"}"#, Extent::Complete(12)),
            (r#"{"a": "\\"}"#, Extent::Complete(11)),
            ("[{}]", Extent::Complete(4)),
            (r#"{"a": "é}"#, Extent::Open),
            (r#"{"a": [1, 2"#, Extent::Open),
            ("{", Extent::Open),
            ("{]", Extent::Broken),
            ("x{}", Extent::Broken),
            ("", Extent::Broken),
        ];
        for (text, want) in cases {
            assert_eq!(extent(text, 0), *want, "{text}");
        }
        assert_eq!(extent("ab{}", 2), Extent::Complete(4));
    }

    #[test]
    fn lines_and_fences_table() {
        assert_eq!(skip_ws(" \n\t x", 0), 4);
        assert_eq!(skip_ws("x", 1), 1);
        assert!(starts_line("a\n  {", 4));
        assert!(!starts_line("a {", 2));
        let cases: &[(&str, Fence)] = &[
            ("{", Fence::Outside),
            ("Sure.\n```json\n{", Fence::Json(6)),
            ("```\n\n{", Fence::Json(0)),
            ("```tool_call\n{", Fence::Json(0)),
            ("```JSON\n{", Fence::Json(0)),
            ("```rust\n{", Fence::Other),
            ("```json\nlet x = 1;\n{", Fence::Other),
            ("```json\n{}\n```\n{", Fence::Outside),
        ];
        for (text, want) in cases {
            let line = line_start(text, text.len() - 1);
            assert_eq!(fence_around(text, line), *want, "{text:?}");
        }
    }
}
