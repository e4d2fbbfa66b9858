//! A chosen call's arguments fitted to what the user asked: the router has picked the
//! tool, and its grammar now leaves out the choices the request gives no reason for.
//!
//! - `git`: only the actions the request names ([`crate::command::git::actions::named_by`]);
//!   asked about the first commit, `show_commit` of `first`: the 1.5B showed `HEAD`. Asked
//!   who or when someone changed a thing the named-files hint puts in one code file, that
//!   file's history: the 0.5B answered "Who last changed the markdown renderer?" from the
//!   last commit.
//! - `read_file`: no line range unless the request speaks of lines ("the first 15 lines",
//!   "line 40"). With its call head prefilled, the 1.5B wrote `"start_line": 1,
//!   "end_line": 2` in 6 of 8 chosen reads on the project fixture and answered from two
//!   lines (`harvey bench --agent --fixture project`): "How do I deploy the site?" read
//!   `src/site.rs` lines 1–2. A read without a range shows the whole file, or its start
//!   with the cut marked. After the first of several named documents, only the others:
//!   told "not read yet: LICENSE-APACHE", the 0.5B read `LICENSE-MIT` again.
//!   A question's first read, where the hint names one file, is of that file.
//! - `search_files`: a request that names one identifier (`slugify_heading`,
//!   `regression_issue_212`) searches for it, in the whole workspace: the 0.5B searched
//!   "brindle" in `src/main.rs` for what a test checks.
//!
//! The model's own later calls are not narrowed: after a search, reading around a match
//! is what a range is for.

use crate::tools::interned::interned;
use crate::tools::{ParamKind, ToolInfo};
use crate::workspace_map::named::{is_document, named_in};

/// `read_file`'s parameters that only a request about lines calls for.
const RANGE_PARAMS: &[&str] = &["start_line", "end_line", "start_char"];

/// Words that, followed by a number, ask for some lines: "the first 15", "last 20".
const COUNTED: &[&str] = &["first", "last", "top", "bottom"];

/// What a chosen call is fitted to.
#[derive(Debug, Clone, Copy)]
pub struct Asking<'a> {
    /// The user's own words.
    pub words: &'a str,
    /// The request as the router saw it: the words with the named-files hint line.
    pub hinted: &'a str,
    /// The paths this turn's reads returned so far.
    pub read: &'a [String],
    /// The code lines this turn's searches found, as (path, line), in their order.
    pub found: &'a [(String, i64)],
    /// Where this turn's searches found the definition of the one code name the words
    /// ask about, as its file and lines (first, last) ([`super::definition`]).
    pub defined: Option<(&'a str, (i64, i64))>,
    /// The file the previous exchange used ([`super::steps::previous_path`]).
    pub earlier: Option<&'a str>,
}

#[cfg(test)]
impl<'a> Asking<'a> {
    /// Words alone: no hint line, nothing read yet.
    pub fn words(words: &'a str) -> Self {
        Asking {
            words,
            hinted: words,
            read: &[],
            found: &[],
            defined: None,
            earlier: None,
        }
    }
}

/// Narrows `tools` (the chosen tool's entries) to what `asking` asks.
pub fn fit_to_request(tools: &mut [ToolInfo], asking: &Asking<'_>) {
    let request = asking.words;
    for tool in tools.iter_mut() {
        match tool.name {
            "git" if crate::command::git::actions::names_first_commit(request) => {
                narrow_enum(tool, "action", &["show_commit"]);
                force(tool, "rev", &["first"]);
            }
            "git" => {
                if let Some((path, line)) = line_found(asking) {
                    narrow_enum(tool, "action", &["who_changed"]);
                    tool.params
                        .retain(|p| matches!(p.name, "action" | "path" | "line"));
                    force(tool, "path", path);
                    force_int(tool, "line", line);
                } else if let Some(action) = crate::command::git::actions::named_by(request) {
                    narrow_enum(tool, "action", action);
                } else if let Some(file) = changed_in_file(asking) {
                    narrow_enum(tool, "action", &["file_history"]);
                    force(tool, "path", file);
                }
            }
            "read_file" if asking.defined.is_some() => {
                let Some((path, (first, last))) = asking.defined else {
                    continue;
                };
                if let Some(path) = interned(&[path.to_string()]) {
                    tool.params
                        .retain(|p| matches!(p.name, "path" | "start_line" | "end_line"));
                    force(tool, "path", path);
                    force_int(tool, "start_line", first);
                    force_int(tool, "end_line", last);
                }
            }
            "read_file" => {
                if !asks_for_lines(request) {
                    tool.params.retain(|p| !RANGE_PARAMS.contains(&p.name));
                }
                if let Some(unread) = unread_documents(asking) {
                    force(tool, "path", unread);
                } else if let Some(one) = the_one_named(asking) {
                    force(tool, "path", one);
                } else if let Some(earlier) = pointed_back(asking) {
                    force(tool, "path", earlier);
                }
            }
            "search_files" => {
                if let [one] = crate::text::asked::code_names(request).as_slice() {
                    if let Some(values) = interned(std::slice::from_ref(one)) {
                        force(tool, "pattern", values);
                        tool.params.retain(|p| p.name != "path");
                    }
                } else if let Some(values) = purpose_thing(asking) {
                    force(tool, "pattern", values);
                    tool.params.retain(|p| p.name != "path");
                }
            }
            _ => {}
        }
    }
}

/// The thing a question asks the purpose of ("What is the salt for?": `salt`), as the
/// one pattern a turn's first search may take, in the whole workspace: asked that in
/// itsdangerous, the 0.5B searched "salt" in the git remote's path (from its notes),
/// was refused twice and gave no answer. `None` after a search or read, or for another
/// question.
fn purpose_thing(asking: &Asking<'_>) -> Option<&'static [&'static str]> {
    if !asking.read.is_empty() || !asking.found.is_empty() {
        return None;
    }
    let lower = asking.words.trim().to_lowercase().replace('’', "'");
    let thing = crate::chat::route::purpose_of(&lower)?;
    interned(&[thing.to_string()])
}

/// Whether `request` asks for particular lines of a file: it names a line ("line 40",
/// "lines 10 to 20") or counts from an end ("the first 15", "last ten").
pub fn asks_for_lines(request: &str) -> bool {
    let words = lower_words(request);
    words.iter().enumerate().any(|(i, w)| {
        matches!(w.as_str(), "line" | "lines" | "head" | "tail")
            || (COUNTED.contains(&w.as_str()) && words.get(i + 1).is_some_and(|n| is_count(n)))
    })
}

fn lower_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// A number written as digits or as a word up to twenty.
fn is_count(word: &str) -> bool {
    const WORDS: &[&str] = &[
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "fifteen", "twenty", "few",
    ];
    word.chars().all(|c| c.is_ascii_digit()) || WORDS.contains(&word)
}

/// After a read of one of several named documents, the ones not read yet (see
/// [`super::steps`]): `None` before any was read, or when a name is no document.
fn unread_documents(asking: &Asking<'_>) -> Option<&'static [&'static str]> {
    let named = named_in(asking.hinted);
    let was_read = |n: &String| asking.read.iter().any(|r| r.trim_start_matches("./") == n);
    if named.len() < 2
        || !super::steps::documents_side_by_side(&named)
        || !named.iter().any(was_read)
    {
        return None;
    }
    let unread: Vec<String> = named.iter().filter(|n| !was_read(n)).cloned().collect();
    interned(&unread)
}

/// The first file the hint names (the best fit), for a question's first read: the router
/// chose to read, and the hint says which file (the call is then written whole, not
/// decoded: [`crate::tools::grammar::fixed_rest`]); documents named beside it are read
/// next ([`unread_documents`]). Asked "What does the Makefile's test target run?" with
/// `Makefile, make.ps1` named, the 0.5B read `docs/context-management.md`; given the
/// choice of `CHANGES.rst, docs/changes.rst`, the 1.5B read the second (an include
/// line). An instruction ("Show me …", "Fix …") is left to the model, which may mean
/// another file.
fn the_one_named(asking: &Asking<'_>) -> Option<&'static [&'static str]> {
    use crate::text::asked::{asked, Asked};
    if !asking.read.is_empty() || asked(asking.words) == Asked::Other {
        return None;
    }
    named_in(asking.hinted)
        .first()
        .and_then(|first| interned(std::slice::from_ref(first)))
}

/// The previous exchange's file, where the words point back at it ("Show me its first
/// three lines") and name no file of their own, for the turn's first read: the 0.5B read
/// `data/tides.csv`, a path in the file it had read for the question before.
fn pointed_back(asking: &Asking<'_>) -> Option<&'static [&'static str]> {
    let earlier = asking.earlier?;
    if !asking.read.is_empty() || !named_in(asking.hinted).is_empty() {
        return None;
    }
    let words = lower_words(asking.words);
    let points = words
        .iter()
        .any(|w| matches!(w.as_str(), "it" | "its" | "that" | "this"));
    let names_a_path = asking.words.split_whitespace().any(|w| {
        let w = w.trim_end_matches(|c: char| !c.is_alphanumeric());
        w.contains('/') || w.contains('.')
    });
    (points && !names_a_path)
        .then(|| interned(&[earlier.to_string()]))
        .flatten()
}

/// Words that ask who or when.
const WHO_WHEN: &[&str] = &["who", "whom", "when"];

/// Words that ask about a change.
const CHANGED: &[&str] = &[
    "changed", "change", "wrote", "written", "added", "modified", "touched", "edited", "rewrote",
    "updated",
];

/// The one code file the hint names, where the words ask who or when something there
/// changed, without naming a commit or a line (those have actions of their own).
fn changed_in_file(asking: &Asking<'_>) -> Option<&'static [&'static str]> {
    let words = lower_words(asking.words);
    let says = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let other = ["commit", "commits", "line", "lines"];
    if !says(WHO_WHEN) || !says(CHANGED) || says(&other) {
        return None;
    }
    match named_in(asking.hinted).as_slice() {
        [one] if !is_document(one) => interned(std::slice::from_ref(one)),
        _ => None,
    }
}

/// Whether `words` ask who changed or wrote a line ("Who changed the line that sets the
/// default port?"): a question for a search, then a blame of the line it finds.
pub fn asks_line_author(words: &str) -> bool {
    let words = lower_words(words);
    let says = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    says(&["who", "whom"]) && says(&["line", "lines"]) && says(CHANGED)
}

/// The first code line this turn's searches found, where the words ask who changed a
/// line: asked "Who changed the line that sets the default port?", the 1.5B searched
/// "default port", then read the changelog line it found and never asked git. A
/// document's line (a changelog entry) is no line a question like that is about.
fn line_found(asking: &Asking<'_>) -> Option<(&'static [&'static str], i64)> {
    if !asks_line_author(asking.words) {
        return None;
    }
    let (path, line) = asking.found.iter().find(|(p, _)| !is_document(p))?;
    Some((interned(std::slice::from_ref(path))?, *line))
}

/// Makes the integer `param` of `tool` required and exactly `value`.
fn force_int(tool: &mut ToolInfo, param: &str, value: i64) {
    for p in tool.params.iter_mut().filter(|p| p.name == param) {
        p.kind = ParamKind::Int {
            min: value,
            max: value,
        };
        p.required = true;
    }
}

/// Leaves only `values` in the enum parameter `param` of `tool`.
fn narrow_enum(tool: &mut ToolInfo, param: &str, values: &'static [&'static str]) {
    for p in tool.params.iter_mut() {
        if p.name == param && matches!(p.kind, ParamKind::Enum { .. }) {
            p.kind = ParamKind::Enum { values };
        }
    }
}

/// Makes `param` of `tool` required and one of `values`, whatever its kind was.
fn force(tool: &mut ToolInfo, param: &str, values: &'static [&'static str]) {
    for p in tool.params.iter_mut().filter(|p| p.name == param) {
        p.kind = ParamKind::Enum { values };
        p.required = true;
    }
}

#[cfg(test)]
mod tests;
