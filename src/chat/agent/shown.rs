//! A request to see a file's lines ("Show me the first 10 lines of it", "print
//! Cargo.toml") answered with the lines the read returned, as they are, without a
//! generation: asked for the first 10 lines of a file it had just read, the 1.5B
//! re-typed 3 of them (92 tokens at 11 tok/s, deep in a 4K context) and stopped.
//!
//! Pure: reads the turn's records, runs nothing.

use super::CallRecord;

/// Verbs that ask to see something, as the request's first word (after [`POLITE`]).
const SHOW: &[&str] = &["show", "print", "display", "cat", "dump", "output", "paste"];

/// Words that may come before the verb.
const POLITE: &[&str] = &[
    "please", "can", "could", "would", "will", "you", "now", "and", "ok", "okay", "then", "just",
    "also", "so",
];

/// Words that make the thing to see a file or its lines (a path the request names counts
/// too).
const OBJECTS: &[&str] = &[
    "line", "lines", "content", "contents", "file", "whole", "source",
];

/// The answer to `request` when it asks to see lines of a file and the turn's last call
/// read them: the path, the line range and the lines in a fence, the file's own text.
/// `None` for any other request, or when the last call was no successful read.
pub(super) fn lines_shown(request: &str, calls: &[CallRecord]) -> Option<String> {
    let last = calls.last()?;
    let call = last.call.as_ref().filter(|c| c.name == "read_file")?;
    let text = last.result.as_ref().ok()?;
    let asked_path = call.arguments.get("path")?.as_str()?.trim();
    // A path forgiven to another is shown as the real one.
    let path = crate::workspace_map::nearest::forgiven_path(text).unwrap_or(asked_path);
    if !asks_to_see(request, path) && !asks_to_see(request, asked_path) {
        return None;
    }
    // The range the call asked for (a small file is read whole whatever the range),
    // then the count the request gives ("the first three").
    let arg = |name: &str| call.arguments.get(name).and_then(|v| v.as_u64());
    let from = arg("start_line").unwrap_or(1) as usize;
    let to = arg("end_line").map_or(usize::MAX, |e| e as usize);
    let mut lines: Vec<(usize, &str)> = text
        .lines()
        .filter_map(numbered)
        .filter(|(n, _)| (from..=to).contains(n))
        .collect();
    if let Some(n) = first_count(request) {
        lines.truncate(n);
    }
    let (first, last_line) = (lines.first()?.0, lines.last()?.0);
    let fence = fence_for(lines.iter().map(|(_, l)| *l));
    let lang = path
        .rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|e| !e.contains('/') && e.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or("");
    let mut out = format!("`{path}`, lines {first}–{last_line}:\n\n{fence}{lang}\n");
    for (_, line) in &lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&fence);
    if let Some(total) = total_lines(text).filter(|t| *t > last_line) {
        out.push_str(&format!(
            "\n\n(the file has {total} lines; ask for a range to see more)"
        ));
    }
    Some(out)
}

/// The answer when the turn's last call succeeded with a tool whose result is the
/// answer as it is ([`crate::tools::Tool::answers_as_is`]): that result.
pub(super) fn result_shown(
    registry: &crate::tools::Registry,
    calls: &[CallRecord],
) -> Option<String> {
    let last = calls.last()?;
    let call = last.call.as_ref()?;
    let tool = registry.get(&call.name)?;
    tool.answers_as_is()
        .then(|| last.result.as_ref().ok().cloned())
        .flatten()
}

/// Whether `request` is an order to see a file or its lines: it opens with a verb of
/// [`SHOW`] and names lines, contents, a file or the file `path` itself. Questions
/// ("What does line 3 show?") are not.
fn asks_to_see(request: &str, path: &str) -> bool {
    let lower = request.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let Some(verb) = words.iter().find(|w| !POLITE.contains(w)) else {
        return false;
    };
    let file = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    SHOW.contains(verb)
        && (words.iter().any(|w| OBJECTS.contains(w))
            || lower.contains(&path.to_lowercase())
            || (!file.is_empty() && lower.contains(&file)))
}

/// "the first 10 lines", "its first three lines" → 10, 3.
fn first_count(request: &str) -> Option<usize> {
    const WORDS: &[&str] = &[
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    let lower = request.to_lowercase();
    let mut words = lower.split(|c: char| !c.is_alphanumeric());
    while let Some(w) = words.next() {
        if w == "first" {
            let count = words.next()?;
            let n = count
                .parse()
                .ok()
                .or_else(|| WORDS.iter().position(|w| *w == count).map(|i| i + 1))?;
            return (n > 0).then_some(n);
        }
    }
    None
}

/// A read's `"   12| text"` line as `(12, "text")`.
pub(super) fn numbered(line: &str) -> Option<(usize, &str)> {
    let (number, text) = line.split_once("| ")?;
    let n = number.trim_start().parse().ok()?;
    Some((n, text))
}

/// The file's length from a read's cut note (`[cut: showed lines 1–200 of 812; …]`) or
/// its whole-file note (`(… the file has only 5 lines, all shown)`).
fn total_lines(text: &str) -> Option<usize> {
    let cut = text
        .lines()
        .find_map(|l| l.strip_prefix("[cut: showed lines "))?;
    let (_, after) = cut.split_once(" of ")?;
    after.split(';').next()?.trim().parse().ok()
}

/// A code fence longer than any run of backticks in `lines`, so a Markdown file's own
/// fences do not close it.
fn fence_for<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let longest = lines
        .flat_map(|l| l.split(|c| c != '`').map(str::len))
        .max()
        .unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{ToolCall, ToolError};
    use serde_json::json;

    fn read(path: &str, result: Result<&str, ()>) -> CallRecord {
        let args = json!({ "path": path, "start_line": 1, "end_line": 40 });
        CallRecord {
            call: Some(ToolCall {
                name: "read_file".into(),
                arguments: args.as_object().unwrap().clone(),
            }),
            result: result
                .map(str::to_string)
                .map_err(|_| ToolError::NotFound("x".into())),
            reused: false,
        }
    }

    fn numbered_file(n: usize) -> String {
        (1..=n).map(|i| format!("{i:>5}| line {i}\n")).collect()
    }

    #[test]
    fn an_order_to_see_lines_is_answered_with_every_line_read() {
        let text = numbered_file(10);
        let calls = [read("src/lib.rs", Ok(&text))];
        let out = lines_shown("Show me the first 10 lines of it.", &calls).unwrap();
        assert!(out.starts_with("`src/lib.rs`, lines 1–10:"), "{out}");
        for i in 1..=10 {
            assert!(out.contains(&format!("\nline {i}\n")), "line {i}: {out}");
        }
        assert!(out.contains("```rs\n"), "{out}");
        assert!(!out.contains("| line"), "numbers are the header's: {out}");
    }

    #[test]
    fn the_first_n_lines_are_kept_when_more_were_read() {
        let text = format!(
            "{}[cut: showed lines 1–40 of 812; call again with start_line 41 for more]\n",
            numbered_file(40)
        );
        let calls = [read("notes/todo.md", Ok(&text))];
        let out = lines_shown(
            "Could you print the first 5 lines of notes/todo.md?",
            &calls,
        )
        .unwrap();
        assert!(out.contains("lines 1–5:"), "{out}");
        assert!(
            out.contains("line 5\n") && !out.contains("line 6\n"),
            "{out}"
        );
        assert!(out.contains("the file has 812 lines"), "{out}");
    }

    #[test]
    fn a_small_file_read_whole_shows_only_the_lines_asked_for() {
        let text = format!(
            "(lines 1–3 were asked for; the file has only 12 lines, all shown)\n{}",
            numbered_file(12)
        );
        let mut call = read("src/main.rs", Ok(&text));
        let args = call.call.as_mut().unwrap();
        args.arguments.insert("end_line".into(), json!(3));
        let calls = [call];
        let out = lines_shown("Show me its first three lines.", &calls).unwrap();
        assert!(out.contains("lines 1–3:"), "{out}");
        assert!(
            out.contains("line 3\n") && !out.contains("line 4\n"),
            "{out}"
        );
        let mut no_range = calls[0].clone();
        let args = &mut no_range.call.as_mut().unwrap().arguments;
        args.remove("start_line");
        args.remove("end_line");
        let out = lines_shown("Show me its first three lines.", &[no_range]).unwrap();
        assert!(out.contains("lines 1–3:"), "the request's count: {out}");
    }

    #[test]
    fn questions_other_tools_and_failed_reads_are_left_to_the_model() {
        let text = numbered_file(3);
        let calls = [read("src/lib.rs", Ok(&text))];
        assert!(lines_shown("What does line 3 of it show?", &calls).is_none());
        assert!(
            lines_shown("Show me how to deploy", &calls).is_none(),
            "no file object"
        );
        assert!(
            lines_shown("Show me lib.rs", &calls).is_some(),
            "the file named"
        );
        assert!(lines_shown("Show me the lines", &[read("a.rs", Err(()))]).is_none());
        assert!(lines_shown("Show me the lines", &[]).is_none());
        let mut search = read("src/lib.rs", Ok(&text));
        search.call.as_mut().unwrap().name = "search_files".into();
        assert!(lines_shown("Show me the lines", &[search]).is_none());
    }

    #[test]
    fn a_markdown_file_s_own_fence_does_not_close_the_answer() {
        let text = "    1| # Notes\n    2| ```sh\n    3| make\n    4| ```\n";
        let calls = [read("README.md", Ok(text))];
        let out = lines_shown("show the contents of the README.md", &calls).unwrap();
        assert!(out.contains("````md\n"), "{out}");
        assert!(out.trim_end().ends_with("````"), "{out}");
    }
}
