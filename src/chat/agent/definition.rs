//! A question about one thing in the code, after a search found where it is defined:
//! the next step reads the definition. Asked "What does the test regression_issue_212
//! check?", the 1.5B searched for the name, saw only its line (`fn
//! regression_issue_212() {`), searched again and answered from the name; the 0.5B
//! did the same. The read is fixed whole (path and lines), so it costs no decoding.

use crate::text::asked::{asked, code_names, Asked};
use crate::workspace_map::named::is_document;

use super::{fit_call, steps, CallRecord};

/// Lines read from the definition on: a function of a screen or so.
pub(super) const DEFINITION_LINES: i64 = 30;

/// Where `calls` (this turn's) found the definition of the one code name `words` ask
/// about, outside documents: `None` unless the words ask about exactly one such name
/// (`slugify_heading`, `Config::load`), for information rather than where it is or who
/// changed it.
pub(super) fn definition_found(words: &str, calls: &[CallRecord]) -> Option<(String, i64)> {
    if asked(words) == Asked::Other || steps::asks_where(words) || fit_call::asks_line_author(words)
    {
        return None;
    }
    let [name] = code_names(words).try_into().ok()?;
    let name = name.rsplit("::").next().unwrap_or(&name).to_string();
    calls
        .iter()
        .filter(|c| c.call.as_ref().is_some_and(|c| c.name == "search_files"))
        .filter_map(|c| c.result.as_ref().ok())
        .flat_map(|text| text.lines().filter_map(steps::match_parts))
        .find(|(path, _, text)| !is_document(path) && defines(text, &name))
        .map(|(path, line, _)| (path.to_string(), line))
}

/// The lines (first, last; 1-based) of the item defined at `line` of `path`: its comments
/// and attributes above, down to where its braces close ([`crate::tools::misses::item_span`]),
/// read through the sandboxed `read_file` of `registry`. Asked what the test
/// `regression_issue_212` checks, both models were shown the 31 lines from `#[test]` on:
/// not the `/// Issue 212: a title holding a colon…` above it, and the next tests below;
/// they answered "it checks that the title is parsed". From the line before, 31 lines,
/// where the file cannot be read.
pub(super) fn definition_span(
    registry: &crate::tools::Registry,
    path: &str,
    line: i64,
) -> (i64, i64) {
    use crate::tools::misses::{item_span, LEAD_LINES};
    let fallback = ((line - 1).max(1), line + DEFINITION_LINES);
    let from = (line - LEAD_LINES as i64).max(1);
    let mut args = serde_json::Map::new();
    args.insert("path".into(), path.into());
    args.insert("start_line".into(), from.into());
    args.insert("end_line".into(), (line + DEFINITION_LINES).into());
    let Ok(text) = registry.call("read_file", &args) else {
        return fallback;
    };
    let window: Vec<(i64, &str)> = text
        .lines()
        .filter_map(super::shown::numbered)
        .map(|(n, rest)| (n as i64, rest))
        .filter(|(n, _)| *n >= from)
        .collect();
    let Some(at) = window.iter().position(|(n, _)| *n == line) else {
        return fallback;
    };
    let lines: Vec<&str> = window.iter().map(|(_, l)| *l).collect();
    let (first, last) = item_span(&lines, at);
    (window[first].0, window[last].0)
}

/// Whether the line `text` defines `name`: a keyword, then the name as a whole word.
fn defines(text: &str, name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "fn ",
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "const ",
        "static ",
        "mod ",
        "def ",
        "class ",
        "func ",
        "function ",
        "interface ",
    ];
    KEYWORDS.iter().any(|k| {
        text.match_indices(&format!("{k}{name}")).any(|(at, m)| {
            let before = text[..at].chars().next_back();
            let after = text[at + m.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolCall;

    fn search(result: &str) -> CallRecord {
        CallRecord {
            call: Some(ToolCall {
                name: "search_files".into(),
                arguments: serde_json::json!({"pattern": "x"})
                    .as_object()
                    .unwrap()
                    .clone(),
            }),
            result: Ok(result.to_string()),
            reused: false,
        }
    }

    const FOUND: &str = "CHANGELOG.md:3: - fn regression_issue_212 added\n\
tests/front_matter.rs:121: fn regression_issue_212() {\n\
tests/other.rs:9: regression_issue_212();";

    #[test]
    fn a_question_about_one_name_reads_where_a_search_found_it_defined() {
        let calls = [search(FOUND)];
        assert_eq!(
            definition_found("What does the test regression_issue_212 check?", &calls),
            Some(("tests/front_matter.rs".to_string(), 121))
        );
        assert_eq!(
            definition_found(
                "What does render::slugify_heading do?",
                &[search(
                    "src/render/anchors.rs:4: pub fn slugify_heading(text: &str) -> String {"
                )]
            ),
            Some(("src/render/anchors.rs".to_string(), 4))
        );
    }

    #[test]
    fn the_definition_read_is_the_item_with_its_comment_and_no_more() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        let mut text = String::from(
            "use brindle::parse_page;\n\n#[test]\nfn before() {\n    assert!(true);\n}\n\n",
        );
        text.push_str("/// Issue 212: a title holding a colon lost everything after it.\n#[test]\nfn regression_issue_212() {\n    let page = parse_page(\"t\");\n    assert_eq!(page.title, \"Rust: the good parts\");\n}\n\n#[test]\nfn after() {}\n");
        std::fs::write(dir.path().join("tests/front_matter.rs"), &text).unwrap();
        let registry = crate::app::workspace_tools(dir.path());
        // Line 10 defines it; its comment is line 8, its closing brace line 13.
        assert_eq!(
            definition_span(&registry, "tests/front_matter.rs", 10),
            (8, 13)
        );
        assert_eq!(
            definition_span(&registry, "tests/missing.rs", 10),
            (9, 10 + DEFINITION_LINES),
            "a file that cannot be read: from the line before"
        );
    }

    #[test]
    fn where_who_and_other_names_are_left_to_the_router() {
        let calls = [search(FOUND)];
        for words in [
            "Which file defines regression_issue_212?",
            "Who changed the line of regression_issue_212?",
            "What does regression_issue_21 check?",
            "What do regression_issue_212 and other_test check?",
            "What does the feed hold?",
        ] {
            assert_eq!(definition_found(words, &calls), None, "{words}");
        }
        // A call of the name, a longer name, or a document's line is no definition.
        assert!(!defines("regression_issue_212();", "regression_issue_212"));
        assert!(!defines(
            "fn regression_issue_2120() {",
            "regression_issue_212"
        ));
        assert!(defines("pub(crate) struct Config {", "Config"));
        assert_eq!(
            definition_found(
                "What does regression_issue_212 check?",
                &[search(
                    "docs/notes.md:1: fn regression_issue_212 checks titles"
                )]
            ),
            None
        );
    }
}
