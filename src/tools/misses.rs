//! What a miss of the read tools leads to, so a small model's guess still ends in an
//! answer. In the agent benchmark the 1.5B called `read_file` with a function's name as
//! the path and `search_files` for an identifier it made up (`find_highest_tide` for
//! `high_water_mark`), got "not found" twice and answered that the function does not
//! exist.
//!
//! - [`definition`]: a "path" that is a bare identifier is looked up as a definition
//!   (`fn NAME`, `struct NAME`, `def NAME`, …) and the lines from there are shown.
//! - [`definition_after_search`]: a search for an identifier that matched also shows
//!   where it is defined, the definition's lines.
//! - [`by_words`]: a search that matched nothing is tried again with the pattern's words
//!   (split at `_`, case changes and spaces, common suffixes dropped), best lines first.
//!
//! Both read only what `search_files` may read (the same walk: no secrets, no private
//! folders, no symlinks).

use std::path::Path;

use crate::sandbox::display;

/// Lines shown from a definition on.
const DEFINITION_LINES: usize = 25;
/// Lines shown for a search by words.
const WORD_MATCHES: usize = 20;
/// Words of a guessed name that say nothing about what is looked for.
const FILLER: &[&str] = &[
    "find", "get", "set", "the", "fn", "func", "function", "def", "file", "files", "src", "for",
    "and", "from", "with", "calc", "compute", "make", "new", "impl",
];
/// Keywords that introduce a definition in the languages a workspace usually holds.
const DEFINERS: &str =
    r"fn|struct|enum|trait|type|const|static|mod|def|class|function|func|interface|let|var";

/// What is done with each file: its path and text.
pub type Visit<'a> = dyn FnMut(&Path, &str) + 'a;

/// A file walk: calls its visitor for each readable text file under the root.
pub type Walk<'a> = dyn FnMut(&mut Visit<'_>) + 'a;

/// `requested` is an identifier (`moon_phase_factor`, `parse()`): where it is defined and
/// the lines from there, or `None` when it is no identifier or no definition was found.
pub fn definition(root: &Path, requested: &str, walk: &mut Walk<'_>) -> Option<String> {
    let name = requested.trim().trim_end_matches("()");
    // A guessed file named after an identifier (`tests/common/regression_issue_212.rs`
    // for the test `regression_issue_212`): the identifier is what was meant.
    let name = match Path::new(name).file_stem().and_then(|s| s.to_str()) {
        Some(stem) if name.contains(['/', '.']) && stem.contains('_') => stem,
        _ => name,
    };
    let found = defined(root, name, walk)?;
    Some(format!(
        "({name} is not a file: it is defined in {} at line {}; the definition:)\n{}",
        found.file, found.line, found.lines
    ))
}

/// After a search for an identifier written as code that matched: its definition, where the search found
/// one, so "What does the test regression_issue_212 check?" is answered by the search
/// alone. The 0.5B, shown only the matching line, searched again and described the test
/// from its name. `None` for a pattern that is no identifier, or without a definition.
pub fn definition_after_search(root: &Path, pattern: &str, walk: &mut Walk<'_>) -> Option<String> {
    // Only a name written as code (`regression_issue_212`, `renderPage`): a plain word
    // ("port") would show whatever `let port` comes first.
    let pattern = pattern.trim();
    if crate::text::asked::code_names(pattern) != [pattern] {
        return None;
    }
    let found = defined(root, pattern, walk)?;
    Some(format!(
        "({pattern} is defined in {} at line {}:)\n{}",
        found.file, found.line, found.lines
    ))
}

/// Where an identifier is defined: the file as shown, the definition's line (1-based)
/// and its lines numbered.
struct Defined {
    file: String,
    line: usize,
    lines: String,
}

/// The first definition of `name` (`fn NAME`, `struct NAME`, `def NAME`, …) the walk
/// finds; `None` when `name` is no identifier or nothing defines it.
fn defined(root: &Path, name: &str, walk: &mut Walk<'_>) -> Option<Defined> {
    let identifier = !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !identifier {
        return None;
    }
    let pattern = format!(r"\b({DEFINERS})\s+{}\b", regex::escape(name));
    let regex = regex::Regex::new(&pattern).ok()?;
    let mut found: Option<(String, usize, String)> = None;
    walk(&mut |path, text| {
        if found.is_some() {
            return;
        }
        if let Some(i) = text.lines().position(|l| regex.is_match(l)) {
            found = Some((display(root, path), i, text.to_string()));
        }
    });
    let (file, at, text) = found?;
    let all: Vec<&str> = text.lines().collect();
    let (first, last) = item_span(&all, at);
    let lines: Vec<String> = (first..=last)
        .map(|i| format!("{:>5}| {}", i + 1, all[i]))
        .collect();
    Some(Defined {
        file,
        line: at + 1,
        lines: lines.join("\n"),
    })
}

/// Lines shown above a definition at most: its doc comment and attributes.
pub const LEAD_LINES: usize = 12;

/// The lines (first, last; 0-based, inclusive) of the item defined at `at`: the comments
/// and attributes right above it (a test's `/// Issue 212: …` says what it checks), and
/// down to where its braces close, at most [`DEFINITION_LINES`] from `at`. Asked what the
/// test `regression_issue_212` checks, the 1.5B was shown 25 lines from the `fn` line on,
/// without the comment and with the next test in them, and described the next test.
pub fn item_span(lines: &[&str], at: usize) -> (usize, usize) {
    let lead = |l: &str| {
        let t = l.trim_start();
        ["///", "//", "#[", "#", "@", "/**", "*", "--"]
            .iter()
            .any(|p| t.starts_with(p))
    };
    let mut first = at;
    while first > 0 && at - first < LEAD_LINES && lead(lines[first - 1]) {
        first -= 1;
    }
    let cap = (at + DEFINITION_LINES - 1).min(lines.len().saturating_sub(1));
    let mut depth = 0i64;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().take(cap + 1).skip(at) {
        for c in line.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return (first, i);
        }
    }
    (first, cap)
}

/// The words of a search pattern that found nothing, as lowercase stems: `None` when the
/// pattern is a real regular expression (its author meant it) or has no usable word.
pub fn words_of(pattern: &str) -> Option<Vec<String>> {
    if pattern.chars().any(|c| "\\[](){}|*+?^$".contains(c)) {
        return None;
    }
    let words = crate::text::words::name_words(pattern);
    let mut stems: Vec<String> = words
        .into_iter()
        .filter(|w| w.len() >= 3 && !FILLER.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect();
    stems.dedup();
    (stems.len() > 1
        || stems
            .first()
            .is_some_and(|s| !pattern.eq_ignore_ascii_case(s)))
    .then_some(stems)
    .filter(|s| !s.is_empty())
}

/// A word without the suffix that makes `highest` miss `high_water_mark`.
fn stem(word: &str) -> String {
    crate::text::words::stem(word, &["est", "ing", "ed", "es", "er", "s"], 3).to_string()
}

/// Lines shown that mention a bare word read as a path.
const MENTIONS: usize = 16;

/// `requested` (a read's path) is a bare word (`salt`) that names no file and no
/// definition: the lines that mention it, a document's (not a changelog's) first, then in
/// file order; `None` for a path, a short word, or a word no line holds. Asked "What is
/// the salt for?" in itsdangerous, the 0.5B read `salt` twice, was told it does not
/// exist, and answered "3".
pub fn mentions(root: &Path, requested: &str, walk: &mut Walk<'_>) -> Option<String> {
    let word = requested.trim();
    let bare = word.chars().count() >= 3
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if !bare {
        return None;
    }
    let regex = regex::Regex::new(&format!(r"(?i)\b{}\b", regex::escape(word))).ok()?;
    let mut hits: Vec<(bool, usize, String)> = Vec::new();
    walk(&mut |path, text| {
        let shown_path = display(root, path);
        let prose = crate::workspace_map::named::is_document(&shown_path)
            && !crate::workspace_map::named::is_changelog(&shown_path);
        for (i, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                let shown: String = line.trim().chars().take(200).collect();
                let order = hits.len();
                hits.push((!prose, order, format!("{shown_path}:{}: {shown}", i + 1)));
            }
        }
    });
    if hits.is_empty() {
        return None;
    }
    let total = hits.len();
    hits.sort();
    let shown: Vec<String> = hits.into_iter().take(MENTIONS).map(|h| h.2).collect();
    let mut out = format!(
        "({word} is not a file in the workspace; lines that mention it:)\n{}",
        shown.join("\n")
    );
    if total > MENTIONS {
        out.push_str(&format!("\n[cut: showed {MENTIONS} of {total} lines]"));
    }
    Some(out)
}

/// Lines that hold words of `pattern` (a search that matched nothing): those with the
/// most of them first, then in file order; `None` when the pattern gives no words or no
/// line holds one.
pub fn by_words(root: &Path, pattern: &str, walk: &mut Walk<'_>) -> Option<String> {
    let stems = words_of(pattern)?;
    let regexes: Vec<regex::Regex> = stems
        .iter()
        .filter_map(|s| regex::Regex::new(&format!(r"(?i)\b{}", regex::escape(s))).ok())
        .collect();
    let mut hits: Vec<(usize, usize, String)> = Vec::new();
    walk(&mut |path, text| {
        for (i, line) in text.lines().enumerate() {
            let n = regexes.iter().filter(|r| r.is_match(line)).count();
            if n > 0 {
                let shown: String = line.trim().chars().take(200).collect();
                let order = hits.len();
                hits.push((
                    n,
                    order,
                    format!("{}:{}: {shown}", display(root, path), i + 1),
                ));
            }
        }
    });
    if hits.is_empty() {
        return None;
    }
    let total = hits.len();
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let shown: Vec<String> = hits.into_iter().take(WORD_MATCHES).map(|h| h.2).collect();
    let mut out = format!(
        "(no lines match {pattern:?}; lines with its words {}:)\n{}",
        stems.join(", "),
        shown.join("\n")
    );
    if total > WORD_MATCHES {
        out.push_str(&format!("\n[cut: showed {WORD_MATCHES} of {total} lines]"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk_over<'a>(files: &'a [(&'a str, &'a str)], root: &'a Path) -> Box<Walk<'a>> {
        Box::new(move |visit: &mut Visit<'_>| {
            for (name, text) in files {
                visit(&root.join(name), text);
            }
        })
    }

    const LIB: &str = "//! Tides.\n\npub fn high_water_mark(r: &[f64]) -> f64 {\n    r[0]\n}\n\npub fn moon_phase_factor(day: u32) -> f64 {\n    1.0\n}\n";

    #[test]
    fn a_bare_word_read_as_a_path_shows_the_lines_that_mention_it_documents_first() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("CHANGES.rst", "- Fix the salt default.\n"),
            (
                "src/signer.py",
                "def sign(self, salt=None):\n    salted = 1\n",
            ),
            (
                "docs/concepts.rst",
                "The salt is combined with the secret key.\n",
            ),
        ];
        let found = mentions(dir.path(), "salt", &mut walk_over(&files, dir.path())).unwrap();
        let lines: Vec<&str> = found.lines().collect();
        assert_eq!(
            lines,
            [
                "(salt is not a file in the workspace; lines that mention it:)",
                "docs/concepts.rst:1: The salt is combined with the secret key.",
                "CHANGES.rst:1: - Fix the salt default.",
                "src/signer.py:1: def sign(self, salt=None):",
            ]
        );
        for not_bare in ["docs/salt.md", "sa", "salt.txt"] {
            assert_eq!(
                mentions(dir.path(), not_bare, &mut walk_over(&files, dir.path())),
                None
            );
        }
        assert_eq!(
            mentions(dir.path(), "pepper", &mut walk_over(&files, dir.path())),
            None
        );
    }

    #[test]
    fn a_guessed_file_named_after_an_identifier_shows_its_definition() {
        let dir = tempfile::tempdir().unwrap();
        let files = [("src/lib.rs", LIB)];
        let found = definition(
            dir.path(),
            "src/moon/moon_phase_factor.rs",
            &mut walk_over(&files, dir.path()),
        )
        .unwrap();
        assert!(found.contains("pub fn moon_phase_factor"), "{found}");
        let plain = definition(
            dir.path(),
            "src/moon.rs",
            &mut walk_over(&files, dir.path()),
        );
        assert!(
            plain.is_none(),
            "a stem without `_` is a file name, not an identifier"
        );
    }

    #[test]
    fn an_identifier_for_a_path_shows_its_definition() {
        let root = Path::new("/ws");
        let files = [
            ("src/main.rs", "fn main() { moon_phase_factor(3); }\n"),
            ("src/lib.rs", LIB),
        ];
        let found = definition(root, "moon_phase_factor", &mut walk_over(&files, root)).unwrap();
        assert!(
            found.starts_with(
                "(moon_phase_factor is not a file: it is defined in src/lib.rs at line 7; the definition:)"
            ),
            "{found}"
        );
        assert!(
            found.contains("    7| pub fn moon_phase_factor(day: u32) -> f64 {"),
            "{found}"
        );
        assert!(
            !found.contains("high_water_mark"),
            "from the definition on: {found}"
        );
        assert_eq!(
            definition(root, "src/nope.rs", &mut walk_over(&files, root)),
            None
        );
        assert_eq!(
            definition(root, "no_such_thing", &mut walk_over(&files, root)),
            None
        );
    }

    #[test]
    fn a_search_for_an_identifier_shows_its_definition_and_a_phrase_none() {
        let root = Path::new("/ws");
        let files = [
            ("src/main.rs", "fn main() { moon_phase_factor(3); }\n"),
            ("src/lib.rs", LIB),
        ];
        let found =
            definition_after_search(root, "moon_phase_factor", &mut walk_over(&files, root))
                .unwrap();
        assert!(
            found.starts_with("(moon_phase_factor is defined in src/lib.rs at line 7:)\n"),
            "{found}"
        );
        assert!(found.contains("    7| pub fn moon_phase_factor(day: u32) -> f64 {"));
        for pattern in ["default port", "moon.*factor", "main_calls", "main"] {
            assert_eq!(
                definition_after_search(root, pattern, &mut walk_over(&files, root)),
                None,
                "{pattern}"
            );
        }
    }

    #[test]
    fn a_definition_is_shown_with_its_comment_and_ends_where_it_closes() {
        let root = Path::new("/ws");
        let suite = "use x::y;\n\n/// Issue 212: a title holding a colon lost the rest.\n#[test]\nfn regression_issue_212() {\n    let t = parse(\"a: b\");\n    assert_eq!(t, \"a: b\");\n}\n\n#[test]\nfn unknown_keys_are_ignored() {\n}\n";
        let files = [("tests/front_matter.rs", suite)];
        let found = definition(
            root,
            "tests/common/regression_issue_212.rs",
            &mut walk_over(&files, root),
        )
        .unwrap();
        let lines: Vec<&str> = found.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "    3| /// Issue 212: a title holding a colon lost the rest.",
                "    4| #[test]",
                "    5| fn regression_issue_212() {",
                "    6|     let t = parse(\"a: b\");",
                "    7|     assert_eq!(t, \"a: b\");",
                "    8| }",
            ]
        );
        // A definition without braces shows the capped window.
        let py: String = std::iter::once("def f(x):\n".to_string())
            .chain((0..40).map(|i| format!("    y = {i}\n")))
            .collect();
        let files = [("m.py", py.as_str())];
        let found = definition(root, "f", &mut walk_over(&files, root)).unwrap();
        assert_eq!(found.lines().count(), 1 + DEFINITION_LINES);
    }

    #[test]
    fn a_guessed_name_is_split_into_stems() {
        assert_eq!(words_of("find_highest_tide").unwrap(), ["high", "tide"]);
        assert_eq!(
            words_of("parseTideTable").unwrap(),
            ["parse", "tide", "table"]
        );
        assert_eq!(words_of("tide data").unwrap(), ["tide", "data"]);
        assert_eq!(words_of(r"fn\s+main"), None, "a real regex is left alone");
        assert_eq!(words_of("tide"), None, "one word that was searched already");
        assert_eq!(words_of("fn"), None);
    }

    #[test]
    fn a_search_that_missed_finds_lines_by_its_words_best_first() {
        let root = Path::new("/ws");
        let files = [
            ("README.md", "Predicts tide heights.\n"),
            ("src/lib.rs", LIB),
            ("src/main.rs", "// the highest tide of the day\n"),
        ];
        let found = by_words(root, "find_highest_tide", &mut walk_over(&files, root)).unwrap();
        let lines: Vec<&str> = found.lines().collect();
        assert_eq!(
            lines[0],
            "(no lines match \"find_highest_tide\"; lines with its words high, tide:)"
        );
        assert_eq!(
            lines[1], "src/main.rs:1: // the highest tide of the day",
            "both words first"
        );
        assert!(
            found.contains("src/lib.rs:3: pub fn high_water_mark"),
            "{found}"
        );
        assert!(
            found.contains("README.md:1: Predicts tide heights."),
            "{found}"
        );
        assert_eq!(
            by_words(root, "zebra_crossing", &mut walk_over(&files, root)),
            None
        );
    }
}
