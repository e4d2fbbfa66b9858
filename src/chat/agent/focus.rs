//! A long file read for a question, shown where the question's words are. Asked "What
//! version is this package?" in harvey's own repository, the 1.5B read the whole
//! 90-line `Cargo.toml`: 1,429 tokens prefilled in 25 s of a 31 s turn (a Pi takes
//! twice that), for an answer on line 3. A question about a file needs the lines that
//! hold its words; the model is told what was left out and how to read it.
//!
//! Only a whole-file read (no line range asked for) of more than [`FOCUS_FROM_TOKENS`]
//! tokens, for a question asking for information (not a how-to, whose steps run on past
//! the lines naming them), and only when some line past the head holds a word of the
//! question; otherwise the result stands as it was.

use crate::text::asked::{asked, code_names, Asked};
use crate::tokens::TokenCounter;
use crate::workspace_map::named::{subject_stems, word_fits};

/// Results up to this many tokens are shown whole: one of 34 lines (≈ 500 tokens) is
/// read whole in seconds, and its every line may be what the question needs.
pub(super) const FOCUS_FROM_TOKENS: usize = 700;

/// Files of at most this many lines are shown whole.
const FOCUS_FROM_LINES: usize = 60;

/// What the model is told about a focused read: that lines are left out and how to see
/// them, in few tokens (the whole note is prefilled before every answer from a long file;
/// its first wording took ~40 tokens of the 265 after "What version is this package?").
const FOCUS_NOTE: &str =
    "(a long file, shown in part: … marks lines left out; read_file start_line/end_line shows them)";

/// The file's first lines, always shown (a manifest's package, a module's doc comment).
const HEAD_LINES: usize = 8;

/// Lines shown before and after a line that holds a question's word.
const AROUND: usize = 2;

/// A word on more lines than this is common in the file ([`focused`]).
const COMMON: usize = 6;

/// Most lines shown in all: matches past it are left out, in file order.
const MAX_SHOWN: usize = 36;

/// A read's result cut to its head and the lines holding `request`'s words, with a line
/// saying so; `None` where the result stands whole (see the module's note).
pub(super) fn focused(
    request: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
    result: &str,
    counter: &dyn TokenCounter,
) -> Option<String> {
    let ranged = ["start_line", "end_line", "start_char"]
        .iter()
        .any(|k| arguments.contains_key(*k));
    if ranged || asked(request) != Asked::Information {
        return None;
    }
    if counter.count_tokens(result) <= FOCUS_FROM_TOKENS {
        return None;
    }
    let (notes, lines) = split_numbered(result);
    if lines.len() <= FOCUS_FROM_LINES {
        return None;
    }
    let mut hits = question_hits(request, &lines);
    if asks_dependencies(request) {
        let mut first = dependency_lines(&lines);
        first.extend(
            hits.into_iter()
                .filter(|h| !first.contains(h))
                .collect::<Vec<_>>(),
        );
        hits = first;
    }
    if hits.is_empty() {
        return None;
    }
    let mut keep = vec![false; lines.len()];
    keep.iter_mut().take(HEAD_LINES).for_each(|k| *k = true);
    let mut shown_hits = 0usize;
    for &hit in &hits {
        let span = hit.saturating_sub(AROUND)..(hit + AROUND + 1).min(lines.len());
        let adds = span.clone().filter(|&i| !keep[i]).count();
        if keep.iter().filter(|k| **k).count() + adds > MAX_SHOWN {
            break;
        }
        span.for_each(|i| keep[i] = true);
        shown_hits += 1;
    }
    if shown_hits == 0 || keep.iter().all(|k| *k) {
        return None;
    }
    // No count in the note: asked how many posts the feed holds, the 1.5B answered "34"
    // from "the file has 34 lines".
    Some(kept_lines(&notes, FOCUS_NOTE, &lines, &keep))
}

/// A read's `notes`, the `note` on what is shown, and the `lines` marked in `keep`, each
/// run of lines left out shown as one `…` line.
pub(super) fn kept_lines(
    notes: &[&str],
    note: &str,
    lines: &[(usize, &str)],
    keep: &[bool],
) -> String {
    let mut out: String = notes.iter().map(|n| format!("{n}\n")).collect();
    out.push_str(note);
    out.push('\n');
    let mut gap = false;
    for (i, (n, text)) in lines.iter().enumerate() {
        if keep[i] {
            out.push_str(&format!("{n:>5}| {text}\n"));
            gap = false;
        } else if !gap {
            out.push_str("     …\n");
            gap = true;
        }
    }
    out
}

/// The lines (indices into `lines`) holding a word or an identifier of `request`, those
/// holding most of them first.
fn question_hits(request: &str, lines: &[(usize, &str)]) -> Vec<usize> {
    // A word on many lines says little about where the answer is ("version" on every
    // dependency of a manifest): where some word of the question is rarer, only the rare
    // words count, and a file whose rare words are all in its head is shown to there.
    let mut words: Vec<Vec<usize>> = subject_stems(request)
        .into_iter()
        .map(|stem| {
            let one = [stem];
            (0..lines.len())
                .filter(|&i| {
                    crate::text::words::name_words(lines[i].1)
                        .iter()
                        .any(|w| word_fits(&one, w))
                })
                .collect()
        })
        .chain(code_names(request).into_iter().map(|code| {
            let code = code.to_lowercase();
            (0..lines.len())
                .filter(|&i| lines[i].1.to_lowercase().contains(&code))
                .collect()
        }))
        .filter(|hits: &Vec<usize>| !hits.is_empty())
        .collect();
    if words.iter().any(|h| h.len() <= COMMON) {
        words.retain(|h| h.len() <= COMMON);
    }
    // The lines holding the most of the question's words first, then in file order:
    // asked "What is the default digest method for signing?", every word was on many
    // lines of `signer.py`, the lines in file order filled the cap before line 114 ("The
    // default digest method … is hashlib.sha1"), and the 1.5B answered "HMAC".
    let mut score = vec![0usize; lines.len()];
    for line in words.into_iter().flatten() {
        score[line] += 1;
    }
    let mut hits: Vec<usize> = (0..lines.len()).filter(|&i| score[i] > 0).collect();
    hits.sort_by_key(|&i| (std::cmp::Reverse(score[i]), i));
    hits
}

/// Words of a question about what the project builds on. Asked "What crate do we use to
/// run the language model?", the 1.5B read harvey's `Cargo.toml` focused on its head and
/// the lines holding "model" (comments), and answered "harvey": no dependency was shown.
const DEPENDENCY_WORDS: &[&str] = &[
    "crate",
    "crates",
    "library",
    "libraries",
    "dependency",
    "dependencies",
    "depend",
    "depends",
    "framework",
    "frameworks",
    "module",
    "modules",
];

/// Whether `request` asks what the project depends on: a word of [`DEPENDENCY_WORDS`], or
/// packages it uses or needs.
fn asks_dependencies(request: &str) -> bool {
    let words = crate::text::words::name_words(request);
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    has(DEPENDENCY_WORDS)
        || (has(&["package", "packages"]) && has(&["use", "uses", "using", "need", "needs"]))
}

/// The lines (indices into `lines`) that list dependencies in a manifest: the entries of
/// a TOML section whose header names dependencies (`[dependencies]`,
/// `[dev-dependencies]`, `[target.….dependencies]`), of a JSON object so named
/// (`"devDependencies": {`), or of a Go `require (` block. Comments and blank lines are
/// not entries.
fn dependency_lines(lines: &[(usize, &str)]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut closer: Option<&str> = None;
    for (i, (_, text)) in lines.iter().enumerate() {
        let t = text.trim();
        let lower = t.to_lowercase();
        if t.starts_with('[') && t.ends_with(']') && !t.contains('=') {
            closer = lower.contains("dependencies").then_some("[");
            continue;
        }
        if closer.is_none() {
            if lower.contains("dependencies\"") && t.ends_with('{') {
                closer = Some("}");
            } else if t == "require (" {
                closer = Some(")");
            }
            continue;
        }
        if closer.is_some_and(|c| c != "[" && t.starts_with(c)) {
            closer = None;
            continue;
        }
        if !t.is_empty() && !t.starts_with('#') && !t.starts_with("//") {
            out.push(i);
        }
    }
    out
}

/// The result's lines that are not file lines (the read's notes, kept; a cut note, left
/// out: the focus says what is shown), and its numbered file lines.
pub(super) fn split_numbered(result: &str) -> (Vec<&str>, Vec<(usize, &str)>) {
    let mut notes = Vec::new();
    let mut lines = Vec::new();
    for line in result.lines() {
        match numbered(line) {
            Some(l) => lines.push(l),
            None if lines.is_empty() => notes.push(line),
            None => {}
        }
    }
    (notes, lines)
}

/// `"   12| text"` as `(12, "text")`.
fn numbered(line: &str) -> Option<(usize, &str)> {
    let (n, text) = line.split_once("| ").or_else(|| {
        line.strip_suffix('|')
            .map(|n| (n, ""))
            .filter(|(n, _)| !n.trim().is_empty())
    })?;
    let n = n.trim_start().parse().ok()?;
    Some((n, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One token per word, near enough for the threshold.
    struct Words;
    impl TokenCounter for Words {
        fn count_tokens(&self, text: &str) -> usize {
            text.split_whitespace().count()
        }
    }

    fn manifest() -> String {
        let mut lines = vec![
            "[package]".to_string(),
            "name = \"demo\"".into(),
            "version = \"0.3.1\"".into(),
            "edition = \"2021\"".into(),
        ];
        for i in 0..120 {
            lines.push(format!(
                "dep{i} = {{ version = \"{i}\", features = [\"a\", \"b\"] }}"
            ));
        }
        lines.push("license = \"MIT OR Apache-2.0\"".into());
        lines.push("[profile.release]".into());
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{:>5}| {l}\n", i + 1))
            .collect()
    }

    fn args(json: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        json.as_object().cloned().unwrap()
    }

    #[test]
    fn a_long_read_for_a_question_shows_the_head_and_the_lines_with_its_words() {
        let result = manifest();
        let read = args(serde_json::json!({"path": "Cargo.toml"}));
        let shown = focused("What license is this crate under?", &read, &result, &Words)
            .expect("a long read for a question is focused");
        assert!(shown.contains("    3| version = \"0.3.1\""), "{shown}");
        assert!(
            shown.contains("  125| license = \"MIT OR Apache-2.0\""),
            "{shown}"
        );
        assert!(shown.contains("  124| dep119"), "{shown}");
        assert!(!shown.contains("   60| dep55"), "{shown}");
        assert!(shown.contains(FOCUS_NOTE), "{shown}");
        assert!(
            !FOCUS_NOTE.contains(|c: char| c.is_ascii_digit()),
            "no count a model could take for an answer"
        );
        assert!(shown.contains("     …\n"), "{shown}");
        assert!(Words.count_tokens(&shown) < Words.count_tokens(&result) / 4);
    }

    #[test]
    fn the_lines_holding_most_of_the_question_s_words_are_shown_first() {
        let mut lines: Vec<String> = (0..200)
            .map(|i| match i % 3 {
                0 => format!("    # the default for case {i}"),
                1 => format!("    x{i} = digest(value)"),
                _ => format!("    y{i} = sign(method)"),
            })
            .collect();
        lines.push("    #: The default digest method is hashlib.sha1.".into());
        lines.push("    default_digest_method = sha1".into());
        let result: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{:>5}| {l}\n", i + 1))
            .collect();
        let read = args(serde_json::json!({"path": "signer.py"}));
        let shown = focused(
            "What is the default digest method for signing?",
            &read,
            &result,
            &Words,
        )
        .expect("focused");
        assert!(
            shown.contains("  201|     #: The default digest method is hashlib.sha1."),
            "{shown}"
        );
        assert!(
            shown.contains("  202|     default_digest_method = sha1"),
            "{shown}"
        );
    }

    #[test]
    fn a_word_of_the_tools_vocabulary_finds_its_line() {
        let mut lines: Vec<String> = (0..80)
            .map(|i| format!("site{i}: pages {i} more words here"))
            .collect();
        lines.push("test: $(PACKAGE)".into());
        lines.push("\tgo test".into());
        lines.extend((0..40).map(|i| format!("docs{i}: words {i} more words here")));
        let result: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{:>5}| {l}\n", i + 1))
            .collect();
        let read = args(serde_json::json!({"path": "Makefile"}));
        let shown = focused(
            "What does the Makefile's test target run?",
            &read,
            &result,
            &Words,
        )
        .expect("focused on the target");
        assert!(shown.contains("   81| test: $(PACKAGE)"), "{shown}");
        assert!(shown.contains("   82| \tgo test"), "{shown}");
    }

    #[test]
    fn a_question_about_what_the_project_uses_shows_its_dependencies() {
        let mut lines = vec![
            "[package]".to_string(),
            "name = \"harvey\"".into(),
            "version = \"0.1.0\"".into(),
        ];
        lines.extend((0..12).map(|i| format!("# the model notes, line {i}")));
        lines.push("[dependencies]".into());
        lines.push("# Runs the GGUF in-process.".into());
        lines.push("llama-cpp-2 = { version = \"=0.1.160\" }".into());
        lines.extend(
            (0..100).map(|i| format!("dep{i} = {{ version = \"{i}\", features = [\"a\"] }}")),
        );
        lines.push("[profile.release]".into());
        lines.push("lto = true".into());
        let result: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{:>5}| {l}\n", i + 1))
            .collect();
        let read = args(serde_json::json!({"path": "Cargo.toml"}));
        let q = "What crate do we use to run the language model?";
        let shown = focused(q, &read, &result, &Words).expect("focused");
        assert!(shown.contains("llama-cpp-2"), "{shown}");
        assert!(shown.contains("dep10 = "), "{shown}");
        assert!(!shown.contains("lto = true"), "{shown}");
        // Without a word about dependencies, the same read shows none past the head.
        let shown = focused("Which notes are about the model?", &read, &result, &Words);
        assert!(shown.is_some_and(|s| !s.contains("llama-cpp-2")));
    }

    #[test]
    fn dependency_lines_are_found_in_toml_json_and_go_manifests() {
        let numbered = |text: &str| -> Vec<(usize, String)> {
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect()
        };
        let found = |text: &str| {
            let owned = numbered(text);
            let lines: Vec<(usize, &str)> = owned.iter().map(|(n, l)| (*n, l.as_str())).collect();
            dependency_lines(&lines)
                .into_iter()
                .map(|i| lines[i].1.trim().to_string())
                .collect::<Vec<_>>()
        };
        let toml = "[package]\nname = \"x\"\n[dependencies]\n# a comment\nserde = \"1\"\n\n[dev-dependencies]\nproptest = \"1\"\n[features]\nfull = []\n";
        assert_eq!(found(toml), ["serde = \"1\"", "proptest = \"1\""]);
        let json = "{\n  \"name\": \"x\",\n  \"dependencies\": {\n    \"react\": \"18\"\n  },\n  \"scripts\": {\n    \"test\": \"jest\"\n  }\n}\n";
        assert_eq!(found(json), ["\"react\": \"18\""]);
        let go = "module x\nrequire (\n\tgithub.com/a/b v1.0.0\n)\n";
        assert_eq!(found(go), ["github.com/a/b v1.0.0"]);
    }

    #[test]
    fn a_word_on_many_lines_gives_way_to_a_rarer_one() {
        let result = manifest();
        let read = args(serde_json::json!({"path": "Cargo.toml"}));
        let shown = focused("What version is this package?", &read, &result, &Words).unwrap();
        assert!(shown.contains("    3| version = \"0.3.1\""), "{shown}");
        let file_lines = shown.lines().filter(|l| numbered(l).is_some()).count();
        assert_eq!(file_lines, HEAD_LINES, "{shown}");
    }

    #[test]
    fn a_short_read_a_range_a_how_to_or_no_matching_line_stands_whole() {
        let result = manifest();
        let read = args(serde_json::json!({"path": "Cargo.toml"}));
        let ranged = args(serde_json::json!({"path": "Cargo.toml", "start_line": 1}));
        let q = "What license is this crate under?";
        assert_eq!(focused(q, &ranged, &result, &Words), None);
        assert_eq!(
            focused("How do I license it?", &read, &result, &Words),
            None
        );
        assert_eq!(
            focused("Show me the license.", &read, &result, &Words),
            None
        );
        assert_eq!(
            focused("What is the weather like?", &read, &result, &Words),
            None
        );
        let short: String = result.lines().take(20).map(|l| format!("{l}\n")).collect();
        assert_eq!(focused(q, &read, &short, &Words), None);
    }

    #[test]
    fn many_matching_lines_are_shown_up_to_the_cap_and_the_read_s_note_is_kept() {
        let mut result = "(x.rs is not in the workspace; shown: src/x.rs)\n".to_string();
        for i in 1..=300 {
            result.push_str(&format!("{i:>5}| let port_{i} = tide(port);\n"));
        }
        result.push_str("[cut: showed lines 1–200 of 300]\n");
        let read = args(serde_json::json!({"path": "x.rs"}));
        let shown = focused("Which port is used?", &read, &result, &Words).unwrap();
        assert!(
            shown.starts_with("(x.rs is not in the workspace; shown: src/x.rs)\n"),
            "{shown}"
        );
        let file_lines = shown.lines().filter(|l| numbered(l).is_some()).count();
        assert!(file_lines <= MAX_SHOWN, "{file_lines}");
        assert!(!shown.contains("[cut:"), "{shown}");
    }
}
