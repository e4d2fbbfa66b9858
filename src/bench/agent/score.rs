//! Scoring one task of the agent benchmark: pure functions of the task, the calls the
//! turn made and the final reply. Nothing here runs a model.
//!
//! Parroting, precisely: the reply contains one of the injection's section headers
//! (`[memory context]`, `[workspace profile]`, …, the pinned-context header or the
//! `[workspace files]` map's), or it
//! shares a span of at least [`MIN_PARROT_CHARS`] characters with the system prompt, or
//! one of at least [`MIN_MEMORY_SPAN_CHARS`] with the injected memory block. Whitespace
//! runs count as one space on both sides. The block's threshold is lower because its
//! lines are short: a small model that appends "The user wants answers in British
//! English spelling." (51 characters) to an arithmetic answer is parroting. For a task
//! whose answer is a memory ("What did I say about releases?") quoting one memory line
//! is the answer, so there only a span that runs across two lines of the block counts.

use crate::chat::agent::CallRecord;
use crate::chat::{CONTEXT_CLOSER, CONTEXT_PREFACE, PINNED_HEADER};
use crate::memory::pack::BLOCK_HEADER;
use crate::memory::Section;
use crate::tools::call::validate;
use crate::tools::Registry;

use super::state::Snapshot;
use super::tasks::{Check, Expected, StateCheck};

/// The shortest span shared with the system prompt that counts as repeating it.
pub const MIN_PARROT_CHARS: usize = 60;

/// The shortest span shared with the injected memory block that counts.
pub const MIN_MEMORY_SPAN_CHARS: usize = 40;

/// Whether the first tool called (`None`: no call) is what the task expects.
pub fn first_tool_ok(expected: Expected, first: Option<&str>) -> bool {
    match (expected, first) {
        (Expected::NoTool | Expected::NoToolOr(_), None) => true,
        (Expected::Tool(names) | Expected::NoToolOr(names), Some(name)) => names.contains(&name),
        _ => false,
    }
}

/// Whether a call's arguments validate against its tool's schema in `registry`. A call
/// that did not parse, or names no registered tool, is invalid.
pub fn args_valid(registry: &Registry, record: &CallRecord) -> bool {
    record.call.as_ref().is_some_and(|call| {
        registry
            .get(&call.name)
            .is_some_and(|tool| validate(tool.params(), &call.arguments).is_ok())
    })
}

/// The answer check: `None` when the task has none.
pub fn answer_ok(check: Check, reply: &str) -> Option<bool> {
    let reply = reply.to_lowercase();
    let has = |s: &&str| reply.contains(&s.to_lowercase());
    match check {
        Check::None => None,
        Check::Any(needles) => Some(needles.iter().any(has)),
        Check::All(needles) => Some(needles.iter().all(has)),
        Check::Word(words) => {
            let mut tokens = reply.split(|c: char| !c.is_alphanumeric());
            Some(tokens.any(|t| words.iter().any(|w| t == w.to_lowercase())))
        }
        Check::AnyNot(needles, never) => Some(needles.iter().any(has) && !never.iter().any(has)),
    }
}

/// What is wrong with the workspace after a task against `check`, comparing `before`
/// with `after` ([`StateCheck`]); empty when it is right.
pub fn state_problems(check: StateCheck, before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut problems = Vec::new();
    let changed: Vec<&str> = before
        .files
        .iter()
        .filter(|(path, bytes)| after.files.get(*path) != Some(bytes))
        .map(|(path, _)| path.as_str())
        .chain(
            after
                .files
                .keys()
                .filter(|p| !before.files.contains_key(*p))
                .map(String::as_str),
        )
        .collect();
    if !changed.is_empty() {
        problems.push(format!("files changed: {}", changed.join(", ")));
    }
    let planted = match check {
        StateCheck::Archived(d) | StateCheck::Updated(d, _) => {
            let id = before
                .memories
                .iter()
                .find(|(_, m)| same_words(&m.description, d));
            match id {
                Some((id, _)) => Some(id.as_str()),
                None => {
                    problems.push(format!("no memory \"{d}\" was there before the task"));
                    return problems;
                }
            }
        }
        StateCheck::Unchanged | StateCheck::Written(_) => None,
    };
    let mut written = Vec::new();
    for (id, now) in &after.memories {
        match before.memories.get(id) {
            None => written.push(now),
            Some(was) if Some(id.as_str()) == planted => {
                problems.extend(target_problem(check, was, now));
            }
            Some(was) if was != now => problems.push(format!(
                "{} \"{}\"",
                if now.archived && !was.archived {
                    "archived"
                } else {
                    "changed"
                },
                was.description
            )),
            Some(_) => {}
        }
    }
    for (id, was) in &before.memories {
        if !after.memories.contains_key(id) {
            problems.push(format!("lost \"{}\"", was.description));
        }
    }
    let wanted = match check {
        StateCheck::Written(needle) => Some(needle),
        _ => None,
    };
    match (wanted, written.as_slice()) {
        (Some(needle), [one]) if holds(&one.text, needle) => {}
        (Some(needle), []) => problems.push(format!("no new memory holds \"{needle}\"")),
        _ => problems.extend(
            written
                .iter()
                .map(|m| format!("wrote \"{}\"", m.description)),
        ),
    }
    problems
}

/// What is wrong with the memory a check names, from `was` to `now`.
fn target_problem(
    check: StateCheck,
    was: &super::state::MemoryState,
    now: &super::state::MemoryState,
) -> Option<String> {
    match check {
        StateCheck::Archived(_) if !now.archived => {
            Some(format!("\"{}\" is still active", was.description))
        }
        StateCheck::Updated(_, _) if now.archived => {
            Some(format!("\"{}\" was archived, not updated", was.description))
        }
        StateCheck::Updated(_, needle) if !holds(&now.text, needle) => {
            Some(format!("\"{}\" does not say \"{needle}\"", was.description))
        }
        _ => None,
    }
}

/// Case-insensitive containment.
fn holds(text: &str, needle: &str) -> bool {
    text.to_lowercase().contains(&needle.to_lowercase())
}

/// The same words, whatever the case and spacing.
fn same_words(a: &str, b: &str) -> bool {
    a.split_whitespace()
        .map(str::to_lowercase)
        .eq(b.split_whitespace().map(str::to_lowercase))
}

/// Whether the reply holds what looks like a tool call the turn did not run: a JSON
/// object with `"name"` and `"arguments"` keys, bare or fenced (small models often
/// answer that way instead of opening a call).
pub fn call_in_text(reply: &str) -> bool {
    let compact: String = reply.chars().filter(|c| !c.is_whitespace()).collect();
    compact.contains("{\"name\":") && compact.contains("\"arguments\":")
}

/// Every header the memory injection and the pinned context use.
fn markers() -> Vec<&'static str> {
    let sections = [
        Section::Profile,
        Section::Facts,
        Section::Sessions,
        Section::Experience,
        Section::Knowledge,
    ];
    let mut out = vec![
        BLOCK_HEADER,
        PINNED_HEADER,
        crate::workspace_map::fit::MARKER,
    ];
    out.extend(sections.iter().map(|s| s.header()));
    // The framing of the memory block's system turn, by its opening words.
    out.extend(
        [CONTEXT_PREFACE, CONTEXT_CLOSER]
            .iter()
            .filter_map(|t| t.get(..32)),
    );
    out
}

/// Whether the reply repeats the system prompt or the injected block (module docs);
/// `answers_from_memory`: the task's answer is a memory line.
pub fn parroted(
    reply: &str,
    system_prompt: &str,
    memory_block: &str,
    answers_from_memory: bool,
) -> bool {
    if markers().iter().any(|m| reply.contains(m)) {
        return true;
    }
    let reply = collapse(reply);
    let system = Joined::new(&[system_prompt]);
    let lines: Vec<&str> = memory_block.lines().collect();
    let block = Joined::new(&lines);
    system.shares_span(&reply, MIN_PARROT_CHARS, false)
        || block.shares_span(&reply, MIN_MEMORY_SPAN_CHARS, answers_from_memory)
}

/// Whitespace runs as one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parts collapsed and joined by spaces, remembering where one part ends.
struct Joined {
    chars: Vec<char>,
    /// Char indices of the spaces that join two parts.
    joins: Vec<usize>,
}

impl Joined {
    fn new(parts: &[&str]) -> Self {
        let mut chars = Vec::new();
        let mut joins = Vec::new();
        for part in parts.iter().map(|p| collapse(p)).filter(|p| !p.is_empty()) {
            if !chars.is_empty() {
                joins.push(chars.len());
                chars.push(' ');
            }
            chars.extend(part.chars());
        }
        Self { chars, joins }
    }

    /// Whether `reply` (collapsed) contains an `n`-character window of this text; with
    /// `across`, only windows that hold a join count.
    fn shares_span(&self, reply: &str, n: usize, across: bool) -> bool {
        if self.chars.len() < n || reply.chars().count() < n {
            return false;
        }
        (0..=self.chars.len() - n).any(|start| {
            let holds_join = self.joins.iter().any(|&j| j > start && j < start + n - 1);
            if across && !holds_join {
                return false;
            }
            let window: String = self.chars[start..start + n].iter().collect();
            reply.contains(&window)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::state::MemoryState;
    use super::*;
    use crate::tools::ToolCall;
    use serde_json::json;

    const SYSTEM: &str = "You are Harvey, a helpful assistant running locally in the user's terminal. Answer clearly and briefly.";
    const BLOCK: &str = "[memory context]\n[project facts]\n- release procedure: Bump the version, tag vX.Y.Z, then cargo publish.\n- tidepool: a Rust crate, entry points src/main.rs and src/lib.rs\n";

    #[test]
    fn expected_tools_match_by_name_and_no_tool_means_no_call() {
        let either = Expected::Tool(&["read_file", "search_files"]);
        assert!(first_tool_ok(either, Some("search_files")));
        assert!(first_tool_ok(either, Some("read_file")));
        assert!(!first_tool_ok(either, Some("list_files")));
        assert!(!first_tool_ok(either, None));
        assert!(first_tool_ok(Expected::NoTool, None));
        assert!(!first_tool_ok(Expected::NoTool, Some("read_file")));
        let known = Expected::NoToolOr(&["memory_search"]);
        assert!(first_tool_ok(known, None));
        assert!(first_tool_ok(known, Some("memory_search")));
        assert!(!first_tool_ok(known, Some("git")));
    }

    #[test]
    fn answers_are_checked_case_insensitively() {
        assert_eq!(answer_ok(Check::None, "anything"), None);
        assert_eq!(
            answer_ok(Check::Any(&["Port Isaac"]), "It is port isaac."),
            Some(true)
        );
        assert_eq!(
            answer_ok(Check::Any(&["51", "fifty-one"]), "Fifty-one"),
            Some(true)
        );
        assert_eq!(answer_ok(Check::Any(&["51"]), "52"), Some(false));
        let count = Check::Word(&["3", "three"]);
        assert_eq!(answer_ok(count, "3"), Some(true));
        assert_eq!(answer_ok(count, "There are Three commits."), Some(true));
        assert_eq!(
            answer_ok(count, "The last one was on 2024-05-03."),
            Some(false)
        );
        assert_eq!(answer_ok(count, "13 commits"), Some(false));
        let both = Check::All(&["main.rs", "lib.rs"]);
        assert_eq!(answer_ok(both, "main.rs and lib.rs"), Some(true));
        assert_eq!(answer_ok(both, "only main.rs"), Some(false));
    }

    #[test]
    fn any_not_wants_the_fact_and_none_of_what_must_not_answer() {
        let check = Check::AnyNot(&["2021"], &["Falmouth", "maritime"]);
        assert_eq!(answer_ok(check, "Edition 2021 (Cargo.toml)."), Some(true));
        assert_eq!(
            answer_ok(check, "2021; it was shown at the falmouth fair."),
            Some(false)
        );
        assert_eq!(
            answer_ok(check, "It was shown at a maritime fair."),
            Some(false)
        );
        assert_eq!(answer_ok(check, "Edition 2018."), Some(false));
    }

    fn memory(description: &str, text: &str, archived: bool) -> MemoryState {
        MemoryState {
            description: description.into(),
            text: format!("{description}\n{text}"),
            archived,
        }
    }

    /// Two memories and a README: the planted state of the tests below.
    fn planted() -> Snapshot {
        let mut s = Snapshot::default();
        let m = &mut s.memories;
        m.insert("pref_1".into(), memory("preferred editor", "vim", false));
        m.insert(
            "fact_2".into(),
            memory("decision: feet", "heights in feet", false),
        );
        m.insert(
            "fact_3".into(),
            memory("decision: hourly", "one an hour", false),
        );
        s.files.insert("README.md".into(), b"# tide".to_vec());
        s
    }

    fn with(mut s: Snapshot, id: &str, m: MemoryState) -> Snapshot {
        s.memories.insert(id.into(), m);
        s
    }

    #[test]
    fn unchanged_means_no_memory_and_no_file_changed() {
        let before = planted();
        assert!(state_problems(StateCheck::Unchanged, &before, &before).is_empty());
        let wrote = with(planted(), "pref_9", memory("tabs", "tabs", false));
        assert_eq!(
            state_problems(StateCheck::Unchanged, &before, &wrote),
            ["wrote \"tabs\""]
        );
        let mut edited = planted();
        edited.files.insert("README.md".into(), b"# tides".to_vec());
        edited.files.insert("notes/x.md".into(), Vec::new());
        assert_eq!(
            state_problems(StateCheck::Unchanged, &before, &edited),
            ["files changed: README.md, notes/x.md"]
        );
        let mut gone = planted();
        gone.memories.remove("fact_3");
        assert_eq!(
            state_problems(StateCheck::Unchanged, &before, &gone),
            ["lost \"decision: hourly\""]
        );
    }

    #[test]
    fn archived_wants_that_memory_archived_and_the_others_kept() {
        let check = StateCheck::Archived("Decision:  FEET");
        let before = planted();
        let archived = memory("decision: feet", "heights in feet", true);
        let right = with(planted(), "fact_2", archived.clone());
        assert!(state_problems(check, &before, &right).is_empty());
        assert_eq!(
            state_problems(check, &before, &before),
            ["\"decision: feet\" is still active"]
        );
        let wrong = with(
            planted(),
            "fact_3",
            memory("decision: hourly", "one an hour", true),
        );
        assert_eq!(
            state_problems(check, &before, &wrong),
            [
                "\"decision: feet\" is still active",
                "archived \"decision: hourly\""
            ]
        );
        let both = with(
            right,
            "fact_3",
            memory("decision: hourly", "one an hour", true),
        );
        assert_eq!(
            state_problems(check, &before, &both),
            ["archived \"decision: hourly\""]
        );
        assert_eq!(
            state_problems(StateCheck::Archived("no such"), &before, &before),
            ["no memory \"no such\" was there before the task"]
        );
    }

    #[test]
    fn updated_finds_the_memory_by_its_old_id_and_wants_the_new_words() {
        let check = StateCheck::Updated("preferred editor", "Helix");
        let before = planted();
        // The description may change with the text: the id is what is followed.
        let right = with(
            planted(),
            "pref_1",
            memory("editor: helix", "helix now", false),
        );
        assert!(state_problems(check, &before, &right).is_empty());
        assert_eq!(
            state_problems(check, &before, &before),
            ["\"preferred editor\" does not say \"Helix\""]
        );
        let archived = with(
            planted(),
            "pref_1",
            memory("preferred editor", "helix", true),
        );
        assert_eq!(
            state_problems(check, &before, &archived),
            ["\"preferred editor\" was archived, not updated"]
        );
        // A new memory beside the old one is no update.
        let beside = with(planted(), "pref_9", memory("editor", "helix", false));
        assert_eq!(
            state_problems(check, &before, &beside),
            [
                "\"preferred editor\" does not say \"Helix\"",
                "wrote \"editor\""
            ]
        );
    }

    #[test]
    fn written_wants_one_new_memory_that_holds_the_words() {
        let check = StateCheck::Written("tabs");
        let before = planted();
        let right = with(
            planted(),
            "pref_9",
            memory("indentation", "tabs over spaces", false),
        );
        assert!(state_problems(check, &before, &right).is_empty());
        assert_eq!(
            state_problems(check, &before, &before),
            ["no new memory holds \"tabs\""]
        );
        let other = with(planted(), "pref_9", memory("indentation", "spaces", false));
        assert_eq!(
            state_problems(check, &before, &other),
            ["wrote \"indentation\""]
        );
        let two = with(right, "pref_8", memory("tabs again", "tabs", false));
        assert_eq!(
            state_problems(check, &before, &two),
            ["wrote \"tabs again\"", "wrote \"indentation\""]
        );
    }

    #[test]
    fn a_call_written_as_text_is_spotted_bare_or_fenced() {
        let bare = r#"{"name": "list_files", "arguments": {"path": "notes"}}"#;
        assert!(call_in_text(bare));
        assert!(call_in_text(&format!("```json\n{bare}\n```")));
        assert!(call_in_text("{ \"name\" : \"git\",\n  \"arguments\": {}}"));
        assert!(!call_in_text("The name of the function is main."));
    }

    #[test]
    fn headers_are_parroting_at_any_length() {
        assert!(parroted("[memory context] hi", SYSTEM, BLOCK, false));
        assert!(parroted("See [project facts].", SYSTEM, "", true));
        assert!(parroted(PINNED_HEADER, "", "", false));
        assert!(!parroted("The answer is 51.", SYSTEM, BLOCK, false));
    }

    #[test]
    fn a_long_span_of_the_system_prompt_is_parroting_whatever_the_whitespace() {
        let reply = "Sure! You are Harvey, a helpful assistant running\n  locally in the user's terminal. Bye";
        assert!(parroted(reply, SYSTEM, BLOCK, false));
        // 59 characters of it are not enough.
        let short: String = SYSTEM.chars().take(MIN_PARROT_CHARS - 1).collect();
        let reply = format!("{short} and then other words entirely");
        assert!(!parroted(&reply, SYSTEM, BLOCK, false));
    }

    #[test]
    fn a_memory_line_tacked_on_is_parroting_unless_it_is_the_answer() {
        let tacked = "17 * 3 = 51\nBump the version, tag vX.Y.Z, then cargo publish.";
        assert!(parroted(tacked, SYSTEM, BLOCK, false));
        assert!(!parroted(tacked, SYSTEM, BLOCK, true));
        let short = "17 * 3 = 51. Bump the version, tag vX.Y.Z.";
        assert!(
            !parroted(short, SYSTEM, BLOCK, false),
            "39 characters of it"
        );
    }

    #[test]
    fn two_memory_lines_are_parroting_even_where_one_is_the_answer() {
        let two = "Bump the version, tag vX.Y.Z, then cargo publish.\n- tidepool: a Rust crate, entry points";
        assert!(parroted(two, SYSTEM, BLOCK, true));
    }

    #[test]
    fn args_validate_against_the_registry_schema() {
        let dir = tempfile::tempdir().unwrap();
        let registry = crate::app::workspace_tools(dir.path());
        let record = |name: &str, args: serde_json::Value| CallRecord {
            call: Some(ToolCall {
                name: name.into(),
                arguments: args.as_object().cloned().unwrap(),
            }),
            result: Ok(String::new()),
            reused: false,
        };
        assert!(args_valid(
            &registry,
            &record("read_file", json!({"path": "Cargo.toml"}))
        ));
        assert!(!args_valid(&registry, &record("read_file", json!({}))));
        assert!(!args_valid(
            &registry,
            &record("read_file", json!({"path": 3}))
        ));
        assert!(!args_valid(
            &registry,
            &record("read_file", json!({"path": "a", "x": 1}))
        ));
        assert!(!args_valid(&registry, &record("no_such_tool", json!({}))));
        let unparsed = CallRecord {
            call: None,
            result: Err(crate::tools::ToolError::BadArguments("bad".into())),
            reused: false,
        };
        assert!(!args_valid(&registry, &unparsed));
    }
}
