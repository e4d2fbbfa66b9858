//! `/skill suggest [SESSION]`: a skill drafted from a recorded session in which the user
//! went through the same steps more than once.
//!
//! The steps are what the record notes: each tool call (`[[tool: git({"action":
//! "last_commit"}) → ok]]`) and each command the user ran (`[[command (user): cargo
//! test → exit 0, …]]`), in order. A step's key is its tool (with a git action or a
//! program) or the command's first two words, so reading two different files is the same
//! step. [`repeated`] finds the longest run of at least two steps, not all the same, that
//! occurs at least twice without overlapping; nothing is suggested when none does. The
//! model then drafts a name, a description and the steps ([`messages`], under
//! [`grammar`], so every output parses), and [`super::new::draft`] checks what it wrote
//! reads back as a skill. Nothing here writes a file: the REPL shows the draft and writes
//! it only after a yes.

use serde::Deserialize;

use crate::engine::{Message, Role};
use crate::session::fountain::Record;

/// Longest run of steps looked for.
const MAX_RUN: usize = 6;

/// Bounds of the draft's fields (characters; steps).
const NAME_CHARS: (usize, usize) = (3, 40);
const DESCRIPTION_CHARS: (usize, usize) = (20, 200);
const STEP_CHARS: (usize, usize) = (8, 160);
const MAX_STEPS: usize = 6;

/// Requests shown to the model per occurrence, and their length.
const REQUEST_CHARS: usize = 200;

/// One step of a session: the exchange it was taken in (0-based), its key, and what the
/// record says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub exchange: usize,
    pub key: String,
    pub detail: String,
}

/// A run of steps that the session holds more than once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// The run's keys.
    pub keys: Vec<String>,
    /// Each occurrence: its steps (with their details), in order.
    pub occurrences: Vec<Vec<Step>>,
}

/// The steps of `record`, in order.
pub fn steps(record: &Record) -> Vec<Step> {
    let mut out = Vec::new();
    for (i, ex) in record.exchanges.iter().enumerate() {
        for note in &ex.notes {
            if let Some((key, detail)) = step_of(note) {
                out.push(Step {
                    exchange: i,
                    key,
                    detail,
                });
            }
        }
    }
    out
}

/// A note's step: a tool call or a command the user ran (not the model's: those are
/// its calls already).
fn step_of(note: &str) -> Option<(String, String)> {
    if let Some(rest) = note.strip_prefix("tool: ") {
        let call = rest.rsplit_once(" → ").map_or(rest, |(c, _)| c);
        let (name, args) = call.split_once('(')?;
        let args = args.strip_suffix(')').unwrap_or(args);
        let value: Option<serde_json::Value> = serde_json::from_str(args).ok();
        let which = value.as_ref().and_then(|v| {
            ["action", "program"]
                .iter()
                .find_map(|k| v.get(k).and_then(|x| x.as_str()))
                .map(str::to_string)
        });
        let key = match which {
            Some(w) => format!("{name} {w}"),
            None => name.to_string(),
        };
        return Some((key, call.to_string()));
    }
    let rest = note.strip_prefix("command (user): ")?;
    let command = rest.rsplit_once(" → ").map_or(rest, |(c, _)| c);
    let key: Vec<&str> = command.split_whitespace().take(2).collect();
    (!key.is_empty()).then(|| (format!("command {}", key.join(" ")), format!("!{command}")))
}

/// The longest run (at least two steps, not all one key) that occurs at least twice
/// without overlap; among runs as long, the one that occurs most, then the earliest.
pub fn repeated(steps: &[Step]) -> Option<Repeat> {
    let keys: Vec<&str> = steps.iter().map(|s| s.key.as_str()).collect();
    for len in (2..=MAX_RUN.min(keys.len() / 2)).rev() {
        let mut best: Option<(usize, Vec<usize>)> = None;
        for start in 0..=keys.len() - len {
            let run = &keys[start..start + len];
            if run.iter().all(|k| *k == run[0]) {
                continue;
            }
            let at = occurrences(&keys, run);
            let better = best.as_ref().is_none_or(|(_, b)| at.len() > b.len());
            if at.len() >= 2 && better {
                best = Some((start, at));
            }
        }
        if let Some((start, at)) = best {
            return Some(Repeat {
                keys: keys[start..start + len]
                    .iter()
                    .map(|k| k.to_string())
                    .collect(),
                occurrences: at.iter().map(|&s| steps[s..s + len].to_vec()).collect(),
            });
        }
    }
    None
}

/// Where `run` starts in `keys`, left to right, without overlapping.
fn occurrences(keys: &[&str], run: &[&str]) -> Vec<usize> {
    let mut at = Vec::new();
    let mut i = 0;
    while i + run.len() <= keys.len() {
        if keys[i..i + run.len()] == *run {
            at.push(i);
            i += run.len();
        } else {
            i += 1;
        }
    }
    at
}

/// The model's prompt: the requests and steps of each occurrence.
pub fn messages(record: &Record, repeat: &Repeat) -> Vec<Message> {
    let mut shown = String::new();
    for (n, occurrence) in repeat.occurrences.iter().enumerate() {
        shown.push_str(&format!("Time {}:\n", n + 1));
        let mut asked: Vec<usize> = occurrence.iter().map(|s| s.exchange).collect();
        asked.dedup();
        for i in asked {
            if let Some(ex) = record.exchanges.get(i) {
                let request: String = ex.user.chars().take(REQUEST_CHARS).collect();
                shown.push_str(&format!("- the user asked: {}\n", one_line(&request)));
            }
        }
        for step in occurrence {
            shown.push_str(&format!("- step: {}\n", step.detail));
        }
    }
    let system = "You turn a job a user of a coding assistant did more than once into a skill: \
instructions the assistant follows when the user asks for that job again. Write JSON: \
\"name\", two to four lowercase words joined by hyphens that name the job; \"description\", \
one sentence saying what the skill does, then \"Use when\" and when the user wants it; \
\"steps\", the steps in order, each one short instruction that says which tool or command it \
uses."
        .to_string();
    let user = format!(
        "The user did this {} times in one session:\n{shown}\nWrite the skill.",
        repeat.occurrences.len()
    );
    vec![
        Message::new(Role::System, system),
        Message::new(Role::User, user),
    ]
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The grammar of the draft: a JSON object with the three fields, each bounded.
pub fn grammar() -> String {
    let (name_min, name_max) = NAME_CHARS;
    let (desc_min, desc_max) = DESCRIPTION_CHARS;
    let (step_min, step_max) = STEP_CHARS;
    format!(
        r#"root ::= "{{\"name\": \"" [a-z] [a-z0-9-]{{{name_lo},{name_hi}}} "\", \"description\": \"" char{{{desc_min},{desc_max}}} "\", \"steps\": [" step (", " step){{1,{more}}} "]}}"
step ::= "\"" char{{{step_min},{step_max}}} "\""
char ::= [ !#-[\]-~]
"#,
        name_lo = name_min - 1,
        name_hi = name_max - 1,
        more = MAX_STEPS - 1,
    )
}

/// What the model wrote under [`grammar`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Draft {
    pub name: String,
    pub description: String,
    pub steps: Vec<String>,
}

/// Reads the model's output; the grammar makes it JSON, so an error here is a bug.
pub fn parse_draft(text: &str) -> Result<Draft, String> {
    let mut draft: Draft = serde_json::from_str(text.trim()).map_err(|e| e.to_string())?;
    draft.name = draft.name.trim_matches('-').to_string();
    while draft.name.contains("--") {
        draft.name = draft.name.replace("--", "-");
    }
    Ok(draft)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fountain::Exchange;

    fn exchange(user: &str, notes: &[&str]) -> Exchange {
        Exchange {
            when: String::new(),
            user: user.into(),
            reply: "ok".into(),
            notes: notes.iter().map(|n| n.to_string()).collect(),
        }
    }

    fn record(exchanges: Vec<Exchange>) -> Record {
        Record {
            exchanges,
            ..Record::default()
        }
    }

    /// Tool calls and the user's commands are steps; the model's commands (its calls
    /// already) and other notes are not; a git action and a program are part of the key.
    #[test]
    fn notes_become_steps() {
        let r = record(vec![exchange(
            "release",
            &[
                "tool: git({\"action\":\"last_commit\"}) → ok",
                "tool: read_file({\"path\":\"CHANGELOG.md\"}) → error",
                "stats: 10 prompt tokens",
                "command (user): cargo test --release → exit 0, 1200 bytes of output",
                "command (model): ls → exit 0",
            ],
        )]);
        let keys: Vec<String> = steps(&r).into_iter().map(|s| s.key).collect();
        assert_eq!(keys, ["git last_commit", "read_file", "command cargo test"]);
        assert_eq!(
            steps(&r)[1].detail,
            "read_file({\"path\":\"CHANGELOG.md\"})"
        );
        assert_eq!(steps(&r)[2].detail, "!cargo test --release");
    }

    fn keyed(keys: &[&str]) -> Vec<Step> {
        keys.iter()
            .enumerate()
            .map(|(i, k)| Step {
                exchange: i,
                key: k.to_string(),
                detail: format!("{k} #{i}"),
            })
            .collect()
    }

    #[test]
    fn the_longest_run_that_comes_twice_is_found() {
        let s = keyed(&["a", "b", "c", "x", "a", "b", "c", "y", "a", "b"]);
        let r = repeated(&s).expect("a repeat");
        assert_eq!(r.keys, ["a", "b", "c"]);
        assert_eq!(r.occurrences.len(), 2);
        assert_eq!(r.occurrences[1][0].detail, "a #4");
        // Shorter but more often: a longer one wins.
        let s = keyed(&["a", "b", "a", "b", "a", "b"]);
        let r = repeated(&s).unwrap();
        assert!(r.keys.len() >= 2 && r.occurrences.len() >= 2, "{r:?}");
    }

    #[test]
    fn nothing_repeats_or_one_step_over_and_over_is_no_workflow() {
        assert_eq!(repeated(&keyed(&["a", "b", "c", "d"])), None);
        assert_eq!(repeated(&keyed(&["a", "a", "a", "a"])), None);
        assert_eq!(repeated(&keyed(&["a", "b", "a"])), None);
        assert_eq!(repeated(&[]), None);
    }

    #[test]
    fn the_prompt_shows_each_time_with_its_requests_and_steps() {
        let r = record(vec![
            exchange(
                "What changed lately?",
                &["tool: git({\"action\":\"last_commit\"}) → ok"],
            ),
            exchange(
                "Add it to the changelog",
                &["tool: edit_file({\"path\":\"CHANGELOG.md\"}) → ok"],
            ),
            exchange(
                "And now?",
                &[
                    "tool: git({\"action\":\"last_commit\"}) → ok",
                    "tool: edit_file({\"path\":\"CHANGELOG.md\"}) → ok",
                ],
            ),
        ]);
        let rep = repeated(&steps(&r)).unwrap();
        assert_eq!(rep.keys, ["git last_commit", "edit_file"]);
        let m = messages(&r, &rep);
        let user = &m[1].content;
        assert!(user.starts_with("The user did this 2 times in one session:\nTime 1:\n- the user asked: What changed lately?\n- the user asked: Add it to the changelog\n- step: git({\"action\":\"last_commit\"})\n"), "{user}");
        assert!(
            user.contains("Time 2:\n- the user asked: And now?\n"),
            "{user}"
        );
    }

    #[test]
    fn a_draft_in_the_grammars_shape_parses_and_its_name_is_tidied() {
        let d = parse_draft(
            r#"{"name": "changelog-from-commits-", "description": "Adds the latest commit to CHANGELOG.md. Use when the user wants the changelog updated.", "steps": ["Ask git for the last commit.", "Edit CHANGELOG.md to add it."]}"#,
        )
        .unwrap();
        assert_eq!(d.name, "changelog-from-commits");
        assert_eq!(d.steps.len(), 2);
        assert!(parse_draft("{").is_err());
        let g = grammar();
        assert!(crate::engine::gbnf::max_tokens(&g).is_ok(), "bounded: {g}");
    }
}
