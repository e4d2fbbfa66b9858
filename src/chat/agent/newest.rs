//! A changelog read for a release question, shown as its newest entry. Asked "What
//! changed in the latest release?" in cJSON, the 1.5B read `CHANGELOG.md` focused on the
//! question's words, which its older entries hold as often as the newest, and answered
//! with a fix from 1.7.14 for the changes of 1.7.19.

use crate::workspace_map::named::is_changelog;

/// Most lines shown: the file's head to the end of its newest entry, cut here.
const MAX_SHOWN: usize = 40;

/// `result` (a read of `path`) cut to its newest entry (from its first versioned heading to
/// the line before its second), when
/// `request` asks about a release and `path` is a changelog; `None` otherwise, or when the
/// file has no second versioned heading.
pub(super) fn newest_entry(request: &str, path: &str, result: &str) -> Option<String> {
    if !asks_about_release(request) || !is_changelog(path) {
        return None;
    }
    let (notes, lines) = super::focus::split_numbered(result);
    let heads: Vec<usize> = (0..lines.len())
        .filter(|&i| versioned_heading(&lines, i))
        .collect();
    if heads.len() < 2 {
        return None;
    }
    // What comes before the first version is a title or changes not released yet: asked
    // the same in express, whose `History.md` opens with "Unreleased Changes", the 1.5B
    // gave those as the latest release's. A version not released yet is passed over the
    // same way (itsdangerous' `CHANGES.rst` opens with "Version 2.3.0" over "Unreleased").
    let skip = usize::from(unreleased(&lines, heads[0]));
    let first = heads[skip];
    let end = heads
        .get(skip + 1)
        .copied()
        .unwrap_or(lines.len())
        .min(first + MAX_SHOWN);
    // No note on what is left out: the 0.5B answered "What changed in the latest
    // release?" with one ("The changelog's newest entry: read_file with start_line …").
    let mut out: String = notes.iter().map(|n| format!("{n}\n")).collect();
    for (n, text) in &lines[first..end] {
        out.push_str(&format!("{n:>5}| {text}\n"));
    }
    out.push_str("     …\n");
    Some(out)
}

/// Whether `request` asks what a release holds ("the latest release", "what's new").
fn asks_about_release(request: &str) -> bool {
    let lower = request.to_lowercase();
    crate::text::words::name_words(request)
        .iter()
        .any(|w| matches!(w.as_str(), "release" | "releases" | "released"))
        || ["what's new", "whats new", "what is new"]
            .iter()
            .any(|p| lower.contains(p))
}

/// Whether line `i` heads a version's entry: a Markdown heading (`## [1.2.0]`) or a line
/// underlined with `=` or `-` (`1.7.19 (Sep 9, 2025)` over `======`), holding a version
/// number. "Fixes:" over `------` heads a part of an entry, not an entry.
fn versioned_heading(lines: &[(usize, &str)], i: usize) -> bool {
    let text = lines[i].1.trim();
    let underlined = lines.get(i + 1).is_some_and(|(_, next)| {
        let next = next.trim();
        next.len() >= 3 && (next.chars().all(|c| c == '=') || next.chars().all(|c| c == '-'))
    });
    (text.starts_with('#') || underlined) && has_version(text)
}

/// Whether the entry headed at line `i` says it is not released: its heading
/// (`## [2.3.0] - Unreleased`) or the first line of text under it ("Unreleased").
fn unreleased(lines: &[(usize, &str)], i: usize) -> bool {
    let says = |text: &str| {
        let t = text
            .trim()
            .trim_start_matches(['(', '*', '_'])
            .to_lowercase();
        t.starts_with("unreleased")
            || t.starts_with("not released")
            || t.starts_with("not yet released")
    };
    let heading = lines[i].1.to_lowercase();
    let is_rule =
        |t: &str| t.len() >= 3 && (t.chars().all(|c| c == '=') || t.chars().all(|c| c == '-'));
    heading.contains("unreleased")
        || lines[i + 1..]
            .iter()
            .map(|(_, t)| t.trim())
            .find(|t| !t.is_empty() && !is_rule(t))
            .is_some_and(says)
}

/// Whether `text` holds a version number: digits, a dot, digits.
fn has_version(text: &str) -> bool {
    let b = text.as_bytes();
    (1..b.len().saturating_sub(1))
        .any(|i| b[i] == b'.' && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::chat::agent::focus::as_read as numbered;

    const CJSON: &str = "1.7.19 (Sep 9, 2025)\n======\nFixes:\n------\n* Fix indentation\n* Check for NULL\n\n1.7.18 (May 13, 2024)\n======\nFixes:\n------\n* Add NULL check\n";

    #[test]
    fn a_release_question_sees_the_newest_entry_alone() {
        let shown = newest_entry(
            "What changed in the latest release?",
            "CHANGELOG.md",
            &numbered(CJSON),
        )
        .unwrap();
        assert!(shown.contains("Check for NULL"), "{shown}");
        assert!(!shown.contains("1.7.18"), "{shown}");
        assert!(!shown.contains("Add NULL check"), "{shown}");
        assert!(shown.ends_with("     …\n"), "{shown}");
        assert!(shown.contains("    1| 1.7.19 (Sep 9, 2025)"), "{shown}");
    }

    #[test]
    fn markdown_headings_and_an_unreleased_part_come_before_the_first_version() {
        let md = "# Changelog\n\n## [Unreleased]\n- nothing yet\n\n## [2.1.0] - 2024-03-01\n- new flag\n\n## [2.0.0] - 2023-01-01\n- rewrite\n";
        let shown = newest_entry(
            "What's new in the last release?",
            "docs/CHANGES.md",
            &numbered(md),
        )
        .unwrap();
        assert!(
            shown.contains("new flag") && !shown.contains("rewrite"),
            "{shown}"
        );
        // Changes not released yet are not the latest release's.
        assert!(!shown.contains("nothing yet"), "{shown}");
        assert!(shown.starts_with("    6| ## [2.1.0]"), "{shown}");
    }

    #[test]
    fn a_version_not_released_yet_is_passed_over() {
        let rst = "Version 2.3.0\n-------------\n\nUnreleased\n\n-   Drop support for Python 3.8.\n\n\nVersion 2.2.0\n-------------\n\nReleased 2024-04-16\n\n-   Drop support for Python 3.7.\n\n\nVersion 2.1.2\n-------------\n\n-   Fix a typo.\n";
        let shown = newest_entry(
            "What changed in the most recent release?",
            "CHANGES.rst",
            &numbered(rst),
        )
        .unwrap();
        assert!(
            shown.contains("Python 3.7") && shown.contains("Released 2024-04-16"),
            "{shown}"
        );
        assert!(
            !shown.contains("Python 3.8") && !shown.contains("2.1.2"),
            "{shown}"
        );
        // In the heading, and with only one released entry after it (shown to the end).
        let md = "## [1.1.0] - Unreleased\n- soon\n\n## [1.0.0] - 2024-01-01\n- first\n";
        let shown = newest_entry(
            "What is in the latest release?",
            "CHANGELOG.md",
            &numbered(md),
        )
        .unwrap();
        assert!(
            shown.contains("first") && !shown.contains("soon"),
            "{shown}"
        );
        // A released entry that mentions the word later is kept.
        let md = "## 2.0.0\n- Released the unreleased parser\n\n## 1.0.0\n- first\n";
        let shown = newest_entry(
            "What is in the latest release?",
            "CHANGELOG.md",
            &numbered(md),
        )
        .unwrap();
        assert!(
            shown.contains("unreleased parser") && !shown.contains("first"),
            "{shown}"
        );
    }

    #[test]
    fn other_questions_files_and_single_entries_are_left_alone() {
        let text = numbered(CJSON);
        assert_eq!(
            newest_entry("Who wrote the fixes?", "CHANGELOG.md", &text),
            None
        );
        assert_eq!(
            newest_entry("What changed in the latest release?", "src/cjson.c", &text),
            None
        );
        let one = numbered("1.0.0 (2020)\n=====\n* first\n");
        assert_eq!(
            newest_entry("What changed in the latest release?", "CHANGES", &one),
            None,
            "one entry: the whole file stands"
        );
        assert_eq!(
            newest_entry(
                "What is new in release 2?",
                "CHANGELOG.md",
                &numbered("Fixes:\n------\n* x\n")
            ),
            None,
            "no version in a heading"
        );
    }
}
