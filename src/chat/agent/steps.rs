//! A turn of more than one step: after the call the router chose, whether the request is
//! still open (the call failed, found nothing, or only located what the user asked to
//! see), and the one-line note the router gets for choosing the next step; and the
//! previous exchange the first step's choice sees, so a follow-up ("show me the first
//! lines of it") is read against the conversation, not alone.
//!
//! Pure: reads records and messages, runs nothing.

use crate::engine::{Message, Role};
use crate::tools::{call::clip, formats, ToolInfo};

use super::CallRecord;

/// Tools whose result locates something (a file, a line) rather than holding it.
const LOCATING: &[&str] = &["list_files", "search_files"];

/// Words of a request that is answered by where something is, or by a listing.
const ASKS_WHERE: &[&str] = &[
    "which file",
    "what file",
    "which files",
    "what files",
    "which folder",
    "where is",
    "where are",
    "list ",
    "find ",
    "defined",
    "defines",
];

/// Results that say nothing was there (the read and git tools' own wording).
const EMPTY: &[&str] = &[
    "no lines match",
    "(empty directory)",
    "(empty file)",
    "(no output)",
    "no memories",
];

/// Longest part of a result or a message quoted in a note, in characters.
const GIST_CHARS: usize = 160;

/// Why the turn should choose again after `record` (a note for the router), or `None`
/// when its result may answer `request`. A call answered from an earlier identical one
/// never asks for more: the model answers from what it has.
pub(super) fn open_after(request: &str, record: &CallRecord) -> Option<String> {
    if record.reused {
        return None;
    }
    let Some(call) = &record.call else {
        return Some("the last call could not be read".into());
    };
    let what = call.summary();
    match &record.result {
        Err(e) => Some(format!("{what} failed: {}", gist(&e.to_string()))),
        Ok(text) if is_empty(text) && !answers_itself(text) => {
            Some(format!("{what} found nothing"))
        }
        Ok(text) if LOCATING.contains(&call.name.as_str()) && !asks_where(request) => {
            Some(format!("{what} showed: {}", gist(text)))
        }
        Ok(_) if call.name == "read_file" => unread_documents(request, call).map(|rest| {
            format!(
                "{what} read the first of the files named like the request; not read yet: {rest}"
            )
        }),
        Ok(_) => None,
    }
}

/// After a read of the first file the request's hint names, the others, when every one
/// is a document in the same folder (`LICENSE-MIT, LICENSE-APACHE`): asked which
/// licence the project is under, the 1.5B read `LICENSE-MIT` and answered "MIT". Code files named alike are not
/// read on (`src/render/feed.rs` then `tests/feed.rs` had led to a wrong answer), and
/// only the first file leads on, so a turn reads on at most once this way.
fn unread_documents(request: &str, call: &crate::tools::ToolCall) -> Option<String> {
    use crate::workspace_map::named::named_in;
    let named = named_in(request);
    let path = call.arguments.get("path")?.as_str()?.trim();
    let path = path.strip_prefix("./").unwrap_or(path);
    let first = named.first()?;
    (named.len() > 1 && first == path && documents_side_by_side(&named))
        .then(|| named[1..].join(", "))
}

/// Whether every one of `named` is a document in the first one's folder. Only those are
/// read on: `docs/changes.rst` (an include of the root `CHANGES.rst`) read after it left
/// the 0.5B answering "Changes".
pub(super) fn documents_side_by_side(named: &[String]) -> bool {
    use crate::workspace_map::named::is_document;
    let folder = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let first = named.first().map(|f| folder(f)).unwrap_or_default();
    named.iter().all(|n| is_document(n) && folder(n) == first)
}

/// The lines this turn's searches found (`path:line: text` in their results): lines
/// that set or define something first, lines under a tests folder last, else in order.
/// Asked who changed the line that sets the default port, the blame went to line 1 of
/// `tests/config.rs`, an import that names `DEFAULT_PORT`, found before
/// `src/config.rs:48: pub const DEFAULT_PORT: u16 = 4717;`.
pub(super) fn found_lines(calls: &[CallRecord]) -> Vec<(String, i64)> {
    let mut found: Vec<(String, i64, bool)> = calls
        .iter()
        .filter(|c| c.call.as_ref().is_some_and(|c| c.name == "search_files"))
        .filter_map(|c| c.result.as_ref().ok())
        .flat_map(|text| text.lines().filter_map(match_line))
        .collect();
    found.sort_by_key(|(path, _, sets)| (in_tests(path), !sets));
    found.into_iter().map(|(p, n, _)| (p, n)).collect()
}

/// Words that open or fill a line that sets or defines something.
const SETS: &[&str] = &[
    "const ", "static ", "let ", "fn ", "def ", "class ", "struct ", "enum ", " = ", ": ",
];

/// Whether `path` lies under a tests folder or is named as a test (`config_test.go`,
/// `test_config.py`, `config.test.js`).
pub(super) fn in_tests(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    lower
        .split('/')
        .rev()
        .skip(1)
        .any(|dir| matches!(dir, "tests" | "test" | "spec" | "__tests__"))
        || name.contains("_test.")
        || name.starts_with("test_")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// `"src/config.rs:12: pub const PORT = 1;"` as `("src/config.rs", 12, true)`, the
/// last saying whether the line sets or defines something ([`SETS`]).
fn match_line(line: &str) -> Option<(String, i64, bool)> {
    let (path, number, text) = match_parts(line)?;
    let sets = SETS.iter().any(|s| text.contains(s));
    Some((path.to_string(), number, sets))
}

/// A search result's `path:line: text` line as its three parts.
pub(super) fn match_parts(line: &str) -> Option<(&str, i64, &str)> {
    let (path, rest) = line.split_once(':')?;
    let (number, text) = rest.split_once(": ")?;
    let number = number.parse().ok()?;
    (!path.is_empty() && !path.contains(' ')).then_some((path, number, text))
}

/// Whether the turn goes from `record` (a search that found a code line) straight to
/// `git`'s blame of it: the words ask who changed a line ([`super::fit_call`]).
pub(super) fn blame_next(words: &str, record: &CallRecord) -> bool {
    super::fit_call::asks_line_author(words)
        && found_lines(std::slice::from_ref(record))
            .iter()
            .any(|(p, _)| !crate::workspace_map::named::is_document(p))
}

/// The router's request for the next step: the user's words, then what happened: the
/// turn's `earlier` calls by name, then the `note` on the last. With the last call
/// alone in view, the 1.5B repeated a failed `list_files` of a guessed file after a git
/// call that had answered.
pub(super) fn next_request(request: &str, earlier: &[CallRecord], note: &str) -> String {
    let before: Vec<String> = earlier
        .iter()
        .filter_map(|r| r.call.as_ref())
        .map(|c| c.summary())
        .collect();
    match before.is_empty() {
        true => format!("{request}\n(Done so far: {note}. Choose the next step.)"),
        false => format!(
            "{request}\n(Done so far: {}; then {note}. Choose the next step.)",
            before.join("; ")
        ),
    }
}

fn is_empty(text: &str) -> bool {
    let body = text
        .lines()
        .filter(|l| !(l.starts_with("[command: ") || (l.starts_with('(') && l.ends_with(')'))))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .count();
    let lower = text.to_lowercase();
    body == 0
        || EMPTY.iter().any(|e| lower.trim_start().starts_with(e))
        || lower.contains("\n(no output)")
}

/// Whether a result opens its answer with "Yes:" or "No:" (git's `uncommitted` action):
/// then it answers, whatever else in it came out empty. Asked "Is there anything
/// uncommitted?" in a clean checkout, the 1.5B was told its git call "found nothing"
/// (the status said "No: nothing is uncommitted", the diff after it had no output),
/// chose `list_files` of a guessed `main.go` twice and apologised for the missing file.
fn answers_itself(text: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("Yes: ") || l.starts_with("No: "))
}

pub(super) fn asks_where(request: &str) -> bool {
    let lower = format!("{} ", request.to_lowercase());
    ASKS_WHERE.iter().any(|w| lower.contains(w))
}

/// The first lines of a text, on one line, clipped.
fn gist(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("[command: "))
        .take(6)
        .collect();
    clip(&lines.join("; "), GIST_CHARS)
}

/// The previous exchange in `turns` (the conversation before this turn's message), in
/// one line for the router: the last request, the file its calls named, the start of
/// the answer. `None` in a conversation's first turn.
pub(super) fn previous_exchange(turns: &[Message], tools: &[ToolInfo]) -> Option<String> {
    let asked_at = turns.iter().rposition(|m| m.role == Role::User)?;
    let words = crate::evidence::block::words_of(&turns[asked_at].content);
    let asked = clip(words.trim(), GIST_CHARS / 2);
    let after = &turns[asked_at + 1..];
    let path = previous_path(turns, tools);
    let answer = after
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| clip(&gist(&m.content), GIST_CHARS / 2));
    let mut out = format!("(Earlier the user asked: \"{asked}\"");
    if let Some(path) = path {
        out.push_str(&format!("; that used the file {path}"));
    }
    if let Some(answer) = answer.filter(|a| !a.is_empty()) {
        out.push_str(&format!("; the answer began: \"{answer}\""));
    }
    out.push_str(".)");
    Some(out)
}

/// Tools whose `path` is a file (a search's or a listing's is a folder).
const FILE_TOOLS: &[&str] = &["read_file", "edit_file", "write_file"];

/// The file the previous exchange in `turns` used: the `path` of the last of its file
/// calls, or else the first path its answer names. Asked "Which file defines the Printer
/// struct?" in hexyl, the 1.5B searched `.` and answered `src/lib.rs`; "Show me the first
/// 10 lines of it." then read `.`, the search's folder. `None` in a conversation's first
/// turn, or where neither names a file.
pub(super) fn previous_path(turns: &[Message], tools: &[ToolInfo]) -> Option<String> {
    let asked_at = turns.iter().rposition(|m| m.role == Role::User)?;
    let after = &turns[asked_at + 1..];
    let read = after
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| formats::find_call(&m.content, tools))
        .filter(|f| FILE_TOOLS.contains(&f.call.name.as_str()))
        .filter_map(|f| {
            f.call
                .arguments
                .get("path")
                .and_then(|p| p.as_str())
                .map(str::to_string)
        })
        .next_back();
    read.or_else(|| {
        let answer = after.iter().rev().find(|m| {
            m.role == Role::Assistant && formats::find_call(&m.content, tools).is_none()
        })?;
        answer.content.split_whitespace().find_map(file_path)
    })
}

/// `word` as a relative file path (`src/lib.rs`, `` `Cargo.toml` ``): a name with an
/// extension, in folders or not, quotes and punctuation around it dropped; `None` for
/// other words, a URL or an absolute path.
fn file_path(word: &str) -> Option<String> {
    let around = |c: char| "`'\"*()[]<>,;:!?".contains(c);
    let w = word
        .trim_start_matches(around)
        .trim_end_matches(|c: char| around(c) || c == '.');
    let name = w.rsplit('/').next().unwrap_or(w);
    let (stem, ext) = name.rsplit_once('.')?;
    let plain = w.chars().all(|c| c.is_alphanumeric() || "/._-".contains(c));
    (plain
        && !w.starts_with('/')
        && !w.contains("..")
        && stem.chars().count() >= 2
        && (1..=5).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic()))
    .then(|| w.to_string())
}

/// The router's request for a turn's first step: the previous exchange, then the words.
pub(super) fn with_previous(request: &str, previous: Option<&str>) -> String {
    match previous {
        Some(p) => format!("{p}\n{request}"),
        None => request.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{ToolCall, ToolError};

    fn record(name: &str, args: serde_json::Value, result: Result<&str, ToolError>) -> CallRecord {
        CallRecord {
            call: Some(ToolCall {
                name: name.into(),
                arguments: args.as_object().cloned().unwrap_or_default(),
            }),
            result: result.map(str::to_string),
            reused: false,
        }
    }

    #[test]
    fn a_search_s_code_line_leads_a_line_author_question_to_git() {
        let search = record(
            "search_files",
            serde_json::json!({"pattern": "default port"}),
            Ok("CHANGELOG.md:7: - default port is now 4717\ntests/config.rs:1: use demo::config::DEFAULT_PORT;\nsrc/config.rs:12: pub const DEFAULT_PORT: u16 = 4717;\nsrc/config.rs:30:     port(DEFAULT_PORT)\n(4 matches)"),
        );
        assert_eq!(
            found_lines(std::slice::from_ref(&search)),
            [
                ("src/config.rs".to_string(), 12),
                ("CHANGELOG.md".to_string(), 7),
                ("src/config.rs".to_string(), 30),
                ("tests/config.rs".to_string(), 1),
            ]
        );
        let words = "Who changed the line that sets the default port?";
        assert!(blame_next(words, &search));
        assert!(!blame_next("What is the default port?", &search));
        let docs_only = record(
            "search_files",
            serde_json::json!({"pattern": "default port"}),
            Ok("CHANGELOG.md:7: - default port is now 4717"),
        );
        assert!(!blame_next(words, &docs_only));
        let read = record(
            "read_file",
            serde_json::json!({"path": "x"}),
            Ok("x.rs:1: y"),
        );
        assert!(!blame_next(words, &read));
    }

    #[test]
    fn a_miss_or_a_listing_for_content_leaves_the_request_open() {
        let failed = record(
            "read_file",
            serde_json::json!({"path": "tidepool/src/main.rs"}),
            Err(ToolError::NotFound("tidepool/src/main.rs".into())),
        );
        let note = open_after("What does main do?", &failed).unwrap();
        assert!(
            note.starts_with("read_file(") && note.contains("failed: not found"),
            "{note}"
        );
        let nothing = record(
            "search_files",
            serde_json::json!({"pattern": "tide_data"}),
            Ok("no lines match \"tide_data\""),
        );
        assert!(open_after("Where is tide data read?", &nothing)
            .unwrap()
            .ends_with("found nothing"));
        let listing = record(
            "list_files",
            serde_json::json!({}),
            Ok("Cargo.toml\nREADME.md\nnotes/\nsrc/"),
        );
        let note = open_after("What ideas have I written down?", &listing).unwrap();
        assert!(
            note.contains("showed: Cargo.toml; README.md; notes/; src/"),
            "{note}"
        );
        let git_empty = record(
            "git",
            serde_json::json!({"action": "diff"}),
            Ok("(changes)\n[command: git diff → exit 0]\n(no output)"),
        );
        assert!(open_after("What changed?", &git_empty).is_some());
        let clean = record(
            "git",
            serde_json::json!({"action": "uncommitted"}),
            Ok("(what is not committed)\n[command: git status --short --branch → exit 0]\nNo: nothing is uncommitted; every file matches the last commit.\n[command: git diff --stat HEAD → exit 0]\n(no output)"),
        );
        assert_eq!(open_after("Is there anything uncommitted?", &clean), None);
    }

    #[test]
    fn reading_the_first_of_several_named_documents_leads_on_to_the_others() {
        let request = "Which license is this project under?\n(files named like this: LICENSE-MIT, LICENSE-APACHE)";
        let read = |path: &str| {
            record(
                "read_file",
                serde_json::json!({ "path": path }),
                Ok("MIT License"),
            )
        };
        let note = open_after(request, &read("LICENSE-MIT")).unwrap();
        assert!(note.ends_with("not read yet: LICENSE-APACHE"), "{note}");
        assert_eq!(
            open_after(request, &read("LICENSE-APACHE")),
            None,
            "only the first leads on"
        );
        let apart = "What changed in the latest release?\n(files named like this: CHANGES.rst, docs/changes.rst)";
        assert_eq!(
            open_after(apart, &read("CHANGES.rst")),
            None,
            "a document in another folder is not read on"
        );
        let code = "How many posts does the feed hold?\n(files named like this: src/render/feed.rs, tests/feed.rs)";
        assert_eq!(open_after(code, &read("src/render/feed.rs")), None);
        assert_eq!(
            open_after("Which license?", &read("LICENSE-MIT")),
            None,
            "no hint line"
        );
    }

    #[test]
    fn a_found_answer_or_a_listing_asked_for_closes_the_request() {
        let listing = record(
            "list_files",
            serde_json::json!({"path": "src"}),
            Ok("main.rs\nlib.rs"),
        );
        assert_eq!(open_after("List the files in src.", &listing), None);
        let found = record(
            "search_files",
            serde_json::json!({"pattern": "high_water_mark"}),
            Ok("src/lib.rs:25: pub fn high_water_mark"),
        );
        assert_eq!(
            open_after("Which file defines high_water_mark?", &found),
            None
        );
        let read = record(
            "read_file",
            serde_json::json!({"path": "README.md"}),
            Ok("# tidepool"),
        );
        assert_eq!(open_after("What does the project do?", &read), None);
        let mut reused = record(
            "read_file",
            serde_json::json!({"path": "x"}),
            Err(ToolError::NotFound("x".into())),
        );
        reused.reused = true;
        assert_eq!(
            open_after("Read x", &reused),
            None,
            "no identical call twice"
        );
    }

    #[test]
    fn the_previous_exchange_names_the_request_the_file_and_the_answer() {
        let tools = crate::app::workspace_tools(std::path::Path::new(".")).list();
        let turns = vec![
            Message::new(Role::User, "What does src/main.rs do?"),
            Message::new(
                Role::Assistant,
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/main.rs\"}}</tool_call>",
            ),
            Message::new(Role::Tool, "fn main() {}"),
            Message::new(Role::Assistant, "It prints the forecast.\nMore."),
        ];
        let p = previous_exchange(&turns, &tools).unwrap();
        assert_eq!(
            p,
            "(Earlier the user asked: \"What does src/main.rs do?\"; that used the file src/main.rs; the answer began: \"It prints the forecast.; More.\".)"
        );
        assert_eq!(
            with_previous("Show me the first 15 lines of it.", Some(&p)),
            format!("{p}\nShow me the first 15 lines of it.")
        );
        assert_eq!(previous_exchange(&[], &tools), None);
        assert_eq!(with_previous("Hi", None), "Hi");
    }

    #[test]
    fn after_a_search_the_previous_file_is_the_one_the_answer_named() {
        let tools = crate::app::workspace_tools(std::path::Path::new(".")).list();
        let turns = vec![
            Message::new(Role::User, "Which file defines the Printer struct?"),
            Message::new(
                Role::Assistant,
                "<tool_call>\n{\"name\": \"search_files\", \"arguments\": {\"pattern\": \"Printer\", \"path\": \".\"}}</tool_call>",
            ),
            Message::new(Role::Tool, "src/lib.rs:404: pub struct Printer"),
            Message::new(Role::Assistant, "It is defined in `src/lib.rs`."),
        ];
        assert_eq!(previous_path(&turns, &tools).as_deref(), Some("src/lib.rs"));
        // A read's file wins over a path the answer mentions.
        let read = vec![
            Message::new(Role::User, "What does main do?"),
            Message::new(
                Role::Assistant,
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/main.rs\"}}</tool_call>",
            ),
            Message::new(Role::Tool, "fn main() {}"),
            Message::new(Role::Assistant, "It calls parse from src/lib.rs."),
        ];
        assert_eq!(previous_path(&read, &tools).as_deref(), Some("src/main.rs"));
        for (word, path) in [
            ("Cargo.toml.", Some("Cargo.toml")),
            ("`docs/a_b.md`,", Some("docs/a_b.md")),
            ("1.88", None),
            ("https://x.org/a.md", None),
            ("/etc/passwd.txt", None),
            ("e.g.", None),
        ] {
            assert_eq!(file_path(word).as_deref(), path, "{word}");
        }
    }
}
