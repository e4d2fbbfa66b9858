//! A chosen call's arguments fitted to what the user asked: the router has picked the
//! tool, and its grammar now leaves out the choices the request gives no reason for.
//!
//! - `git`: only the actions the request names ([`crate::command::git::actions::named_by`]);
//!   asked about the first commit, `show_commit` of `first`: the 1.5B showed `HEAD`.
//! - `read_file`: no line range unless the request speaks of lines ("the first 15 lines",
//!   "line 40"). With its call head prefilled, the 1.5B wrote `"start_line": 1,
//!   "end_line": 2` in 6 of 8 chosen reads on the project fixture and answered from two
//!   lines (`harvey bench --agent --fixture project`): "How do I deploy the site?" read
//!   `src/site.rs` lines 1–2. A read without a range shows the whole file, or its start
//!   with the cut marked.
//!
//! The model's own later calls are not narrowed: after a search, reading around a match
//! is what a range is for.

use crate::tools::{ParamKind, ToolInfo};

/// `read_file`'s parameters that only a request about lines calls for.
const RANGE_PARAMS: &[&str] = &["start_line", "end_line", "start_char"];

/// Words that, followed by a number, ask for some lines: "the first 15", "last 20".
const COUNTED: &[&str] = &["first", "last", "top", "bottom"];

/// Narrows `tools` (the chosen tool's entries) to what `request` (the user's own words)
/// asks.
pub fn fit_to_request(tools: &mut [ToolInfo], request: &str) {
    for tool in tools.iter_mut() {
        match tool.name {
            "git" if crate::command::git::actions::names_first_commit(request) => {
                narrow_enum(tool, "action", &["show_commit"]);
                for p in tool.params.iter_mut().filter(|p| p.name == "rev") {
                    p.kind = ParamKind::Enum { values: &["first"] };
                    p.required = true;
                }
            }
            "git" => {
                if let Some(action) = crate::command::git::actions::named_by(request) {
                    narrow_enum(tool, "action", action);
                }
            }
            "read_file" if !asks_for_lines(request) => {
                tool.params.retain(|p| !RANGE_PARAMS.contains(&p.name));
            }
            _ => {}
        }
    }
}

/// Whether `request` asks for particular lines of a file: it names a line ("line 40",
/// "lines 10 to 20") or counts from an end ("the first 15", "last ten").
pub fn asks_for_lines(request: &str) -> bool {
    let lower = request.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().enumerate().any(|(i, w)| {
        matches!(*w, "line" | "lines" | "head" | "tail")
            || (COUNTED.contains(w) && words.get(i + 1).is_some_and(|n| is_count(n)))
    })
}

/// A number written as digits or as a word up to twenty.
fn is_count(word: &str) -> bool {
    const WORDS: &[&str] = &[
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "fifteen", "twenty", "few",
    ];
    word.chars().all(|c| c.is_ascii_digit()) || WORDS.contains(&word)
}

/// Leaves only `values` in the enum parameter `param` of `tool`.
fn narrow_enum(tool: &mut ToolInfo, param: &str, values: &'static [&'static str]) {
    for p in tool.params.iter_mut() {
        if p.name == param && matches!(p.kind, ParamKind::Enum { .. }) {
            p.kind = ParamKind::Enum { values };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chosen(name: &str) -> Vec<ToolInfo> {
        crate::app::workspace_tools(std::path::Path::new("."))
            .list()
            .into_iter()
            .filter(|t| t.name == name)
            .collect()
    }

    fn param_names(tools: &[ToolInfo]) -> Vec<&'static str> {
        tools[0].params.iter().map(|p| p.name).collect()
    }

    #[test]
    fn a_read_the_request_gives_no_lines_for_has_no_range() {
        let mut tools = chosen("read_file");
        assert!(param_names(&tools).contains(&"start_line"));
        fit_to_request(&mut tools, "How do I deploy the site?");
        assert_eq!(param_names(&tools), vec!["path"]);
    }

    #[test]
    fn a_request_about_lines_keeps_the_range() {
        for request in [
            "Show me the first 15 lines of it",
            "What does line 40 of src/main.rs say?",
            "read the last ten of the changelog",
            "print the head of README.md",
        ] {
            let mut tools = chosen("read_file");
            fit_to_request(&mut tools, request);
            assert!(
                param_names(&tools).contains(&"start_line")
                    && param_names(&tools).contains(&"end_line"),
                "{request}"
            );
        }
    }

    #[test]
    fn counting_words_without_a_number_are_not_lines() {
        assert!(!asks_for_lines("What was the first commit?"));
        assert!(!asks_for_lines("Who is on top of the list?"));
        assert!(!asks_for_lines("Which license does the project use?"));
    }

    #[test]
    fn a_question_about_the_first_commit_can_only_show_the_first() {
        let mut tools = vec![ToolInfo {
            name: "git",
            description: "",
            writes: false,
            params: crate::tools::command::GIT_PARAMS.to_vec(),
        }];
        fit_to_request(&mut tools, "What did the first git commit change?");
        let kind = |name: &str| {
            let p = tools[0].params.iter().find(|p| p.name == name).unwrap();
            (p.kind, p.required)
        };
        assert_eq!(
            kind("action").0,
            ParamKind::Enum {
                values: &["show_commit"]
            }
        );
        assert_eq!(kind("rev"), (ParamKind::Enum { values: &["first"] }, true));
    }

    #[test]
    fn other_tools_keep_their_parameters() {
        let mut tools = chosen("list_files");
        let before = param_names(&tools);
        fit_to_request(&mut tools, "What is in src?");
        assert_eq!(param_names(&tools), before);
    }
}
