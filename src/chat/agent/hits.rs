//! A search's hits in the order a "which file implements …" question needs them: code
//! whose file name fits the question first, then other code, then tests, then
//! documents. Asked "Which file implements the /memory status command?" in harvey's own
//! repository, the search listed the README's lines first and both models named the
//! README; the handler is in `src/repl/memory.rs`, a name the question's "memory" fits.
//!
//! Only the order changes: every line the tool returned is kept, notes first as they were.

use crate::workspace_map::named::{asked_stems, is_document, word_fits};

/// Words that ask which file holds some code.
const ASKS_FILE: &[&str] = &[
    "which file",
    "what file",
    "which files",
    "what files",
    "implement",
    "implements",
    "implemented",
    "handles",
    "handled",
];

/// `result` (a `search_files` result) with its hits reordered for `request`, or `None`
/// when the request does not ask which file, or the order stands.
pub(super) fn code_first(request: &str, result: &str) -> Option<String> {
    let lower = format!("{} ", request.to_lowercase());
    if !ASKS_FILE.iter().any(|w| lower.contains(w)) {
        return None;
    }
    let stems = asked_stems(request);
    let rank = |path: &str| -> u8 {
        let name_fits = crate::text::words::name_words(path.rsplit('/').next().unwrap_or(path))
            .iter()
            .any(|w| word_fits(&stems, w));
        match (is_document(path), super::steps::in_tests(path), name_fits) {
            (true, _, _) => 3,
            (false, true, _) => 2,
            (false, false, false) => 1,
            (false, false, true) => 0,
        }
    };
    let (mut notes, mut found) = (Vec::new(), Vec::new());
    for (i, line) in result.lines().enumerate() {
        match super::steps::match_parts(line) {
            Some((path, _, _)) => found.push((rank(path), i, line)),
            None => notes.push(line),
        }
    }
    let before: Vec<usize> = found.iter().map(|f| f.1).collect();
    found.sort_by_key(|(rank, i, _)| (*rank, *i));
    if found.iter().map(|f| f.1).eq(before) {
        return None;
    }
    let mut out: Vec<&str> = notes;
    out.extend(found.into_iter().map(|(_, _, line)| line));
    Some(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULT: &str = "README.md:531: /memory status   /memory index\n\
tests/suite/memory_recall.rs:296: assert!(say(&mut app, \"/memory status\"));\n\
src/sources.rs:4: //! `/memory status` all call [`Sources::recall`]\n\
src/repl/memory.rs:476: /// The advice block of `/memory status`\n\
docs/benchmarks.md:749: - Still wrong: /memory status";

    #[test]
    fn code_named_like_the_question_comes_first_and_documents_last() {
        let out = code_first("Which file implements the /memory status command?", RESULT)
            .expect("reordered");
        let paths: Vec<&str> = out.lines().map(|l| l.split(':').next().unwrap()).collect();
        assert_eq!(
            paths,
            [
                "src/repl/memory.rs",
                "src/sources.rs",
                "tests/suite/memory_recall.rs",
                "README.md",
                "docs/benchmarks.md"
            ]
        );
        assert_eq!(
            out.lines().count(),
            RESULT.lines().count(),
            "every line kept"
        );
    }

    #[test]
    fn other_questions_and_orders_that_stand_are_left_alone() {
        assert_eq!(
            code_first("What does the README say about /memory status?", RESULT),
            None
        );
        assert_eq!(
            code_first(
                "Which file implements it?",
                "src/a.rs:1: fn a()\ndocs/a.md:2: a"
            ),
            None
        );
        let with_note = "(3 matches)\ndocs/a.md:2: a\nsrc/a.rs:1: fn a()";
        assert_eq!(
            code_first("Which file implements a?", with_note).as_deref(),
            Some("(3 matches)\nsrc/a.rs:1: fn a()\ndocs/a.md:2: a")
        );
    }
}
