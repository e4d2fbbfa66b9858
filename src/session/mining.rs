//! End-of-session mining: memory proposals extracted from a session by the model.
//!
//! Writes are dangerous (a stored memory is a premise for every later session), so the
//! output is constrained by a grammar (every answer parses, every string is bounded), the
//! transcript goes in chunks that fit the context (never one oversized prompt), proposals
//! that duplicate a memory or contain a secret are dropped, and the rest are saved with
//! confidence 0.5 and their `source_session`, visible and undoable with `/memory forget`.

use serde::Deserialize;

use crate::engine::gbnf::{self, GrammarBoundError};
use crate::engine::{
    AbortFlag, Engine, EngineError, GenerateOptions, Message, Role, SamplingParams, StopReason,
};
use crate::memory::guard::find_secret;
use crate::memory::types::normalize_description;
use crate::memory::{Draft, MemoryStore, MemoryType};
use crate::text::chunk_lines;

/// Most proposals per session.
pub const MAX_PROPOSALS: usize = 5;
/// Most proposals per chunk.
pub const PER_CHUNK: usize = 2;
/// Bounds of a proposal's fields, in characters (all printable ASCII, so one byte each).
pub const DESCRIPTION_CHARS: (usize, usize) = (3, 80);
pub const SUMMARY_MAX_CHARS: usize = 160;
pub const ACTION_MAX_CHARS: usize = 120;
pub const MAX_TAGS: usize = 4;
pub const TAG_MAX_CHARS: usize = 20;
/// The kinds a proposal may have.
pub const KINDS: [&str; 4] = ["pitfall", "workaround", "recommendation", "pattern"];

/// The output grammar: `{"memories": [ … at most PER_CHUNK … ]}` with bounded strings.
///
/// Strings are printable ASCII: a character outside ASCII can cost up to four tokens, and
/// the grammar's worst case in tokens must fit the `max_tokens` derived from it (see
/// [`crate::engine::gbnf`]) while leaving room in the context for the transcript.
pub fn grammar() -> String {
    let quoted = |values: &mut dyn Iterator<Item = &str>| {
        values
            .map(|v| format!("\"\\\"{v}\\\"\""))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let types = quoted(&mut MemoryType::ALL.iter().map(|t| t.as_str()));
    let kinds = quoted(&mut KINDS.iter().copied());
    let (short_min, short_max) = DESCRIPTION_CHARS;
    format!(
        r#"root ::= "{{\"memories\": [" (item (", " item){{0,{more}}})? "]}}"
item ::= "{{\"type\": " type ", \"kind\": " kind ", \"description\": " short ", \"summary\": " summary ", \"action\": " action ", \"tags\": [" tag (", " tag){{0,{more_tags}}} "]}}"
type ::= {types}
kind ::= {kinds}
short ::= "\"" char{{{short_min},{short_max}}} "\""
summary ::= "\"" char{{0,{SUMMARY_MAX_CHARS}}} "\""
action ::= "\"" char{{0,{ACTION_MAX_CHARS}}} "\""
tag ::= "\"" [a-z0-9-]{{1,{TAG_MAX_CHARS}}} "\""
char ::= [ !#-[\]-~]
"#,
        more = PER_CHUNK - 1,
        more_tags = MAX_TAGS - 1,
    )
}

#[derive(Debug, Deserialize)]
struct Output {
    memories: Vec<Proposal>,
}

#[derive(Debug, Deserialize)]
struct Proposal {
    #[serde(rename = "type")]
    mtype: String,
    kind: String,
    description: String,
    summary: String,
    action: String,
    tags: Vec<String>,
}

/// Why mining failed.
#[derive(Debug, thiserror::Error)]
pub enum MineError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The grammar has no finite worst case: a bug in [`grammar`], caught by its tests.
    #[error("the mining grammar is unbounded: {0}")]
    Grammar(#[from] GrammarBoundError),
    /// The output stopped before the grammar completed (the context filled up): it is
    /// not parsed, since a cut-off answer is not an answer.
    #[error("the model's output was cut off ({stop}) before it was complete: {1}", stop = .0.as_str())]
    Cut(StopReason, String),
    /// Cannot happen under the grammar; reported rather than hidden if it does.
    #[error("the model's output did not parse as JSON ({0}): {1}")]
    Parse(String, String),
}

/// What mining produced, and how many chunks went through the parser.
#[derive(Debug, Default)]
pub struct Mined {
    /// At most [`MAX_PROPOSALS`].
    pub drafts: Vec<Draft>,
    /// Chunks of the transcript the model was asked about.
    pub chunks: usize,
    /// Outputs that ended by the grammar completing and parsed (an empty list counts).
    pub parsed: usize,
    /// The `max_tokens` each chunk's generation had (the grammar's worst case).
    pub max_tokens: usize,
}

/// Proposals for the exchanges `(user, reply)`, at most [`MAX_PROPOSALS`].
pub fn mine(
    engine: &mut dyn Engine,
    exchanges: &[(String, String)],
    abort: &AbortFlag,
) -> Result<Vec<Draft>, MineError> {
    mine_report(engine, exchanges, abort).map(|m| m.drafts)
}

/// [`mine`], with the counts that show every chunk's output ended and parsed.
pub fn mine_report(
    engine: &mut dyn Engine,
    exchanges: &[(String, String)],
    abort: &AbortFlag,
) -> Result<Mined, MineError> {
    let lines: Vec<String> = exchanges
        .iter()
        .flat_map(|(u, r)| {
            [
                format!("User: {}", u.trim()),
                format!("Assistant: {}", r.trim()),
            ]
        })
        .collect();
    let grammar = grammar();
    let max_tokens = gbnf::max_tokens(&grammar)?;
    let room = engine.aside_room();
    let overhead = engine.count_prompt(&prompt(""))?;
    // The transcript chunk, the prompt and the longest possible answer all fit.
    let limit = room.saturating_sub(overhead + max_tokens + 16).max(32);
    let counter = |t: &str| engine.count_tokens(t);
    let chunks = chunk_lines(&lines, limit, &counter);
    let mut mined = Mined {
        max_tokens,
        ..Mined::default()
    };
    for chunk in chunks {
        if mined.drafts.len() >= MAX_PROPOSALS || abort.is_raised() {
            break;
        }
        let opts = options(&grammar, max_tokens, abort);
        mined.chunks += 1;
        let out = engine.generate_aside(&prompt(&chunk), &opts, &mut |_| {})?;
        let text = match out.grammar_output() {
            Ok(text) => text,
            Err(StopReason::Aborted) => break,
            Err(stop) => return Err(MineError::Cut(stop, out.text)),
        };
        let parsed: Output = serde_json::from_str(text.trim())
            .map_err(|e| MineError::Parse(e.to_string(), out.text.clone()))?;
        mined.parsed += 1;
        mined
            .drafts
            .extend(parsed.memories.into_iter().map(|p| Draft {
                mtype: p.mtype,
                description: p.description,
                summary: p.summary,
                tags: p.tags,
                kind: Some(p.kind),
                action: Some(p.action).filter(|a| !a.trim().is_empty()),
                confidence: Some(0.5),
                ..Draft::default()
            }));
    }
    mined.drafts.truncate(MAX_PROPOSALS);
    Ok(mined)
}

fn options(grammar: &str, max_tokens: usize, abort: &AbortFlag) -> GenerateOptions {
    GenerateOptions {
        max_tokens: Some(max_tokens),
        abort: abort.clone(),
        grammar: Some(grammar.to_string()),
        ..GenerateOptions::new(SamplingParams {
            repeat_penalty: 1.1,
            repeat_last_n: 64,
            ..SamplingParams::greedy()
        })
    }
}

fn prompt(chunk: &str) -> Vec<Message> {
    vec![
        Message::new(
            Role::System,
            "You pick out what is worth remembering from a conversation, as JSON. Only facts \
             stated in the conversation; never invent details.",
        ),
        Message::new(
            Role::User,
            format!(
                "Conversation:\n{chunk}\n\nList at most {PER_CHUNK} things worth remembering in \
                 future sessions: project facts, tool pitfalls and workarounds, workflows, user \
                 preferences. An empty list is fine."
            ),
        ),
    ]
}

/// Drops proposals that duplicate an active memory (or each other) or contain a secret;
/// returns the kept ones and a reason for each dropped one.
pub fn screen(store: &MemoryStore, drafts: Vec<Draft>) -> (Vec<Draft>, Vec<String>) {
    let existing: Vec<String> = store
        .list(None, None)
        .unwrap_or_default()
        .iter()
        .map(|r| normalize_description(&r.description))
        .collect();
    let mut kept: Vec<Draft> = Vec::new();
    let mut dropped = Vec::new();
    for d in drafts {
        let norm = normalize_description(&d.description);
        let text = format!(
            "{} {} {} {}",
            d.description,
            d.summary,
            d.action.clone().unwrap_or_default(),
            d.tags.join(" ")
        );
        if norm.is_empty() {
            dropped.push("empty description".to_string());
        } else if existing.contains(&norm)
            || kept
                .iter()
                .any(|k| normalize_description(&k.description) == norm)
        {
            dropped.push(format!("duplicate: {}", d.description));
        } else if let Some(what) = find_secret(&text) {
            dropped.push(format!("looks like {what}: {}", d.description));
        } else {
            kept.push(d);
        }
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::scripted::ScriptedEngine;

    /// The longest answer the grammar admits: every list and string at its maximum.
    fn longest_answer() -> String {
        let longest = |values: &mut dyn Iterator<Item = &str>| {
            values
                .max_by_key(|v| v.len())
                .unwrap_or_default()
                .to_string()
        };
        let mtype = longest(&mut MemoryType::ALL.iter().map(|t| t.as_str()));
        let kind = longest(&mut KINDS.iter().copied());
        let tag = format!("\"{}\"", "t".repeat(TAG_MAX_CHARS));
        let item = format!(
            r#"{{"type": "{mtype}", "kind": "{kind}", "description": "{}", "summary": "{}", "action": "{}", "tags": [{}]}}"#,
            "1.".repeat(DESCRIPTION_CHARS.1 / 2),
            "1.".repeat(SUMMARY_MAX_CHARS / 2),
            "1.".repeat(ACTION_MAX_CHARS / 2),
            vec![tag; MAX_TAGS].join(", ")
        );
        format!(r#"{{"memories": [{}]}}"#, vec![item; PER_CHUNK].join(", "))
    }

    #[test]
    fn the_worst_case_is_the_longest_answer_and_it_parses() {
        let answer = longest_answer();
        let bytes = gbnf::max_bytes(&grammar()).unwrap();
        assert_eq!(bytes, answer.len(), "{answer}");
        let parsed: Output = serde_json::from_str(&answer).unwrap();
        assert_eq!(parsed.memories.len(), PER_CHUNK);
        // One token a byte, plus the end token; still leaves most of a 2048 context.
        let max_tokens = gbnf::max_tokens(&grammar()).unwrap();
        assert_eq!(max_tokens, bytes + 1);
        assert!(max_tokens <= 1200, "{max_tokens}");
    }

    fn exchange() -> Vec<(String, String)> {
        vec![("How do I deploy?".into(), "Run ./deploy.sh.".into())]
    }

    #[test]
    fn an_empty_list_is_parsed_and_counted() {
        let mut e = ScriptedEngine::new(4096, [r#"{"memories": []}"#]);
        let mined = mine_report(&mut e, &exchange(), &AbortFlag::new()).unwrap();
        assert_eq!((mined.chunks, mined.parsed), (1, 1));
        assert!(mined.drafts.is_empty());
        assert_eq!(
            mined.max_tokens,
            gbnf::max_tokens(&grammar()).unwrap(),
            "max_tokens comes from the grammar"
        );
    }

    #[test]
    fn a_cut_off_answer_is_an_error_not_parsed() {
        // A reply longer than max_tokens (and the context): the scripted engine cuts it.
        let reply = format!(
            r#"{{"memories": [{{"type": "workflow", "description": "{}"#,
            "x ".repeat(2000)
        );
        let mut e = ScriptedEngine::new(1500, [reply]);
        let err = mine_report(&mut e, &exchange(), &AbortFlag::new()).unwrap_err();
        assert!(
            matches!(
                err,
                MineError::Cut(StopReason::MaxTokens | StopReason::ContextFull, _)
            ),
            "{err}"
        );
    }
}
