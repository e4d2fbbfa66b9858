//! End-of-session mining: memory proposals extracted from a session by the model.
//!
//! Writes are dangerous (a stored memory is a premise for every later session), so the
//! output is constrained by a grammar (every answer parses, every string is bounded), the
//! transcript goes in chunks that fit the context (never one oversized prompt), and every
//! proposal quotes its `evidence` from the chunk it came from. A proposal is kept only
//! when [`grounding::check`] finds it grounded in what the user (or a tool, or the
//! assistant quoting a workspace file) said, complete and specific to this workspace,
//! and when it neither contains a secret nor duplicates a memory; the others are counted
//! by reason. Kept ones are saved with confidence 0.5 and their `source_session`,
//! visible and undoable with `/memory forget`.

use std::path::Path;

use serde::Deserialize;

use super::grounding::{self, Claim, DropReason, Drops, Said, Speaker, Workspace};
use crate::engine::gbnf::{self, GrammarBoundError};
use crate::engine::{
    AbortFlag, Engine, EngineError, GenerateOptions, Message, Role, SamplingParams, StopReason,
};
use crate::memory::guard::find_secret;
use crate::memory::types::normalize_description;
use crate::memory::{Draft, MemoryStore, MemoryType};
use crate::text::chunk_lines;

/// Most proposals kept per session.
pub const MAX_PROPOSALS: usize = 5;
/// Most proposals per chunk.
pub const PER_CHUNK: usize = 2;
/// Bounds of a proposal's fields, in characters (all printable ASCII, so one byte each).
pub const DESCRIPTION_CHARS: (usize, usize) = (3, 80);
pub const SUMMARY_MAX_CHARS: usize = 120;
pub const ACTION_MAX_CHARS: usize = 100;
/// The quote of the session that shows the fact.
pub const EVIDENCE_CHARS: (usize, usize) = (8, 120);
pub const MAX_TAGS: usize = 4;
pub const TAG_MAX_CHARS: usize = 20;
/// The kinds a proposal may have.
pub const KINDS: [&str; 4] = ["pitfall", "workaround", "recommendation", "pattern"];

/// The output grammar: `{"memories": [ … at most PER_CHUNK … ]}` with bounded strings,
/// each item opening with its evidence (quoting first keeps the rest close to the quote).
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
    let (evidence_min, evidence_max) = EVIDENCE_CHARS;
    format!(
        r#"root ::= "{{\"memories\": [" (item (", " item){{0,{more}}})? "]}}"
item ::= "{{\"evidence\": " evidence ", \"type\": " type ", \"kind\": " kind ", \"description\": " short ", \"summary\": " summary ", \"action\": " action ", \"tags\": [" tag (", " tag){{0,{more_tags}}} "]}}"
type ::= {types}
kind ::= {kinds}
evidence ::= "\"" char{{{evidence_min},{evidence_max}}} "\""
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
    memories: Vec<Item>,
}

#[derive(Debug, Deserialize)]
struct Item {
    evidence: String,
    #[serde(rename = "type")]
    mtype: String,
    kind: String,
    description: String,
    summary: String,
    action: String,
    tags: Vec<String>,
}

/// A kept proposal and the words of the session it quotes.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub draft: Draft,
    pub evidence: String,
}

/// A dropped proposal: why, and its description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub reason: DropReason,
    pub description: String,
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
    /// The proposals that passed every check, at most [`MAX_PROPOSALS`].
    pub proposals: Vec<Proposal>,
    /// The ones dropped, in the order they came.
    pub rejected: Vec<Rejected>,
    /// Chunks of the transcript the model was asked about.
    pub chunks: usize,
    /// Outputs that ended by the grammar completing and parsed (an empty list counts).
    pub parsed: usize,
    /// The `max_tokens` each chunk's generation had (the grammar's worst case).
    pub max_tokens: usize,
    /// The model's answer for each parsed chunk, as generated (for benchmarks).
    pub outputs: Vec<String>,
}

impl Mined {
    /// The dropped proposals counted by reason.
    pub fn drops(&self) -> Drops {
        let mut drops = Drops::default();
        for r in &self.rejected {
            drops.add(r.reason);
        }
        drops
    }

    fn reject(&mut self, reason: DropReason, description: &str) {
        self.rejected.push(Rejected {
            reason,
            description: description.to_string(),
        });
    }
}

/// Proposals for the exchanges `(user, reply)`: at most [`MAX_PROPOSALS`] kept, the
/// others counted by reason. `workspace` holds the texts of workspace files (see
/// [`workspace_texts`]) the assistant's words may quote.
pub fn mine_report(
    engine: &mut dyn Engine,
    exchanges: &[(String, String)],
    workspace: &[String],
    abort: &AbortFlag,
) -> Result<Mined, MineError> {
    let grammar = grammar();
    let max_tokens = gbnf::max_tokens(&grammar)?;
    let room = engine.aside_room();
    let overhead = engine.count_prompt(&prompt(""))?;
    // The transcript chunk, the prompt and the longest possible answer all fit.
    let limit = room.saturating_sub(overhead + max_tokens + 16).max(32);
    let counter = |t: &str| engine.count_tokens(t);
    let chunks = chunk_said(&said(exchanges), limit, &counter);
    let workspace = Workspace::new(workspace);
    let mut mined = Mined {
        max_tokens,
        ..Mined::default()
    };
    for chunk in chunks {
        if mined.proposals.len() >= MAX_PROPOSALS || abort.is_raised() {
            break;
        }
        let opts = options(&grammar, max_tokens, abort);
        mined.chunks += 1;
        let out = engine.generate_aside(&prompt(&render(&chunk)), &opts, &mut |_| {})?;
        let text = match out.grammar_output() {
            Ok(text) => text,
            Err(StopReason::Aborted) => break,
            Err(stop) => return Err(MineError::Cut(stop, out.text)),
        };
        let parsed: Output = serde_json::from_str(text.trim())
            .map_err(|e| MineError::Parse(e.to_string(), out.text.clone()))?;
        mined.parsed += 1;
        mined.outputs.push(text.trim().to_string());
        for item in parsed.memories {
            admit(&mut mined, item, &chunk, &workspace);
        }
    }
    mined.proposals.truncate(MAX_PROPOSALS);
    Ok(mined)
}

/// Keeps `item` when it passes every check, or counts why not.
fn admit(mined: &mut Mined, mut item: Item, chunk: &[Said], workspace: &Workspace) {
    item.summary = grounding::to_last_sentence(&item.summary, SUMMARY_MAX_CHARS);
    item.action = grounding::to_last_sentence(&item.action, ACTION_MAX_CHARS);
    let claim = Claim {
        description: &item.description,
        summary: &item.summary,
        action: &item.action,
        evidence: &item.evidence,
        limits: (DESCRIPTION_CHARS.1, SUMMARY_MAX_CHARS, ACTION_MAX_CHARS),
    };
    let text = format!(
        "{} {} {} {} {}",
        item.description,
        item.summary,
        item.action,
        item.evidence,
        item.tags.join(" ")
    );
    let norm = normalize_description(&item.description);
    let verdict = if find_secret(&text).is_some() {
        Err(DropReason::Secret)
    } else if let Err(reason) = grounding::check(&claim, chunk, workspace) {
        Err(reason)
    } else if mined
        .proposals
        .iter()
        .any(|p| normalize_description(&p.draft.description) == norm)
    {
        Err(DropReason::Duplicate)
    } else {
        Ok(())
    };
    if let Err(reason) = verdict {
        return mined.reject(reason, &item.description);
    }
    mined.proposals.push(Proposal {
        draft: Draft {
            mtype: item.mtype,
            description: item.description,
            summary: item.summary,
            tags: item.tags,
            kind: Some(item.kind),
            action: Some(item.action).filter(|a| !a.trim().is_empty()),
            confidence: Some(0.5),
            ..Draft::default()
        },
        evidence: item.evidence,
    });
}

/// The session's messages, each with who said it.
fn said(exchanges: &[(String, String)]) -> Vec<Said> {
    exchanges
        .iter()
        .flat_map(|(u, r)| {
            [
                Said::new(Speaker::User, u.trim()),
                Said::new(Speaker::Assistant, r.trim()),
            ]
        })
        .collect()
}

/// One message a line, labelled with its speaker: what the model reads.
fn render(chunk: &[Said]) -> String {
    chunk
        .iter()
        .map(|s| format!("{}: {}", s.speaker.label(), s.text))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Consecutive messages grouped so each group's rendering stays within `limit` (by
/// `cost`); an oversized message is cut into pieces, each keeping its speaker.
fn chunk_said(said: &[Said], limit: usize, cost: &dyn Fn(&str) -> usize) -> Vec<Vec<Said>> {
    let pieces = said.iter().flat_map(|s| {
        let line = format!("{}: {}", s.speaker.label(), s.text);
        let parts = if cost(&line) <= limit {
            vec![s.text.clone()]
        } else {
            chunk_lines(
                std::slice::from_ref(&s.text),
                limit.saturating_sub(8).max(1),
                cost,
            )
        };
        parts.into_iter().map(|t| Said::new(s.speaker, t))
    });
    let mut chunks: Vec<Vec<Said>> = Vec::new();
    let mut current: Vec<Said> = Vec::new();
    for piece in pieces {
        current.push(piece);
        if current.len() > 1 && cost(&render(&current)) > limit {
            let piece = current.pop();
            chunks.push(std::mem::take(&mut current));
            current.extend(piece);
        }
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// Most workspace files read for [`workspace_texts`], and the largest one read.
const MAX_WORKSPACE_FILES: usize = 16;
const MAX_WORKSPACE_BYTES: u64 = 256 * 1024;

/// The texts of the workspace files the session names (words such as `README.md` or
/// `src/main.rs` that resolve to a file inside the workspace, through the sandbox:
/// never `agents/`, `.git/` or secret-looking files) and of the README, at most
/// [`MAX_WORKSPACE_FILES`]: what the assistant may be quoting.
pub fn workspace_texts(root: &Path, exchanges: &[(String, String)]) -> Vec<String> {
    let mut names: Vec<String> = ["README.md", "README", "README.txt", "readme.md"]
        .map(String::from)
        .to_vec();
    for (u, r) in exchanges {
        for word in format!("{u} {r}")
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_' | '-')))
        {
            let word = word.trim_matches('.');
            if (word.contains('.') || word.contains('/')) && !names.iter().any(|n| n == word) {
                names.push(word.to_string());
            }
        }
    }
    let mut texts = Vec::new();
    let mut seen = Vec::new();
    for name in names {
        let Ok(path) = crate::sandbox::resolve(root, &name) else {
            continue;
        };
        let small =
            std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= MAX_WORKSPACE_BYTES);
        if !small || seen.contains(&path) {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(&path) {
            texts.push(text);
            seen.push(path);
        }
        if texts.len() == MAX_WORKSPACE_FILES {
            break;
        }
    }
    texts
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
            "You pick out durable facts about the user's workspace from a conversation, as \
             JSON. Only facts stated in the conversation; never invent details, never give \
             general advice.",
        ),
        Message::new(
            Role::User,
            format!(
                "Conversation:\n{chunk}\n\nList at most {PER_CHUNK} facts about this workspace \
                 worth remembering in future sessions: how it is built, run, tested or \
                 deployed, its files and tools, their pitfalls and workarounds, the user's \
                 preferences. For each, first copy into \"evidence\" the exact words of the \
                 conversation that state the fact (one short quote); then describe the fact \
                 in one complete short sentence. Advice that fits any project is not a fact \
                 about this workspace. If the conversation states no such fact, answer \
                 {{\"memories\": []}}."
            ),
        ),
    ]
}

/// The session record's closing note: `Mined: 1 saved (id), 2 dropped (2 not_grounded)`.
pub fn mined_note(saved: &[String], drops: &Drops) -> String {
    let why = if drops.total() > 0 {
        format!(" ({drops})")
    } else {
        String::new()
    };
    format!(
        "Mined: {} saved ({}), {} dropped{why}",
        saved.len(),
        saved.join(", "),
        drops.total()
    )
}

/// Moves the proposals that duplicate an active memory from `mined.proposals` to its
/// rejected ones.
pub fn screen(store: &MemoryStore, mined: &mut Mined) {
    let existing: Vec<String> = store
        .list(None, None)
        .unwrap_or_default()
        .iter()
        .map(|r| normalize_description(&r.description))
        .collect();
    let proposals = std::mem::take(&mut mined.proposals);
    for p in proposals {
        let norm = normalize_description(&p.draft.description);
        if existing.contains(&norm) {
            mined.reject(DropReason::Duplicate, &p.draft.description);
        } else {
            mined.proposals.push(p);
        }
    }
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
            r#"{{"evidence": "{}", "type": "{mtype}", "kind": "{kind}", "description": "{}", "summary": "{}", "action": "{}", "tags": [{}]}}"#,
            "1.".repeat(EVIDENCE_CHARS.1 / 2),
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
        // One token a byte, plus the end token; leaves over 700 tokens of a 2048 context
        // for the prompt and the chunk (and most of the default 4096).
        let max_tokens = gbnf::max_tokens(&grammar()).unwrap();
        assert_eq!(max_tokens, bytes + 1);
        assert!(max_tokens <= 1320, "{max_tokens}");
    }

    fn exchange() -> Vec<(String, String)> {
        vec![("How do I deploy?".into(), "Run ./deploy.sh.".into())]
    }

    #[test]
    fn an_empty_list_is_parsed_and_counted() {
        let mut e = ScriptedEngine::new(4096, [r#"{"memories": []}"#]);
        let mined = mine_report(&mut e, &exchange(), &[], &AbortFlag::new()).unwrap();
        assert_eq!((mined.chunks, mined.parsed), (1, 1));
        assert!(mined.proposals.is_empty() && mined.rejected.is_empty());
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
        let err = mine_report(&mut e, &exchange(), &[], &AbortFlag::new()).unwrap_err();
        assert!(
            matches!(
                err,
                MineError::Cut(StopReason::MaxTokens | StopReason::ContextFull, _)
            ),
            "{err}"
        );
    }

    #[test]
    fn only_grounded_complete_specific_proposals_are_kept_the_rest_counted() {
        let exchanges = vec![(
            "We deploy with ./deploy.sh, which refuses a dirty tree.".to_string(),
            "If you need to create a new file, use `touch filename.txt`.".to_string(),
        )];
        let item = |evidence: &str, description: &str| {
            format!(
                r#"{{"evidence": "{evidence}", "type": "workflow", "kind": "pattern", "description": "{description}", "summary": "", "action": "", "tags": ["deploy"]}}"#
            )
        };
        let first = format!(
            r#"{{"memories": [{}, {}]}}"#,
            item("deploy with ./deploy.sh", "Deploy with ./deploy.sh"),
            item("use `touch filename.txt`", "Create files with touch"),
        );
        let mut e = ScriptedEngine::new(4096, [first]);
        let mined = mine_report(&mut e, &exchanges, &[], &AbortFlag::new()).unwrap();
        let kept: Vec<&str> = mined
            .proposals
            .iter()
            .map(|p| p.draft.description.as_str())
            .collect();
        assert_eq!(kept, ["Deploy with ./deploy.sh"]);
        assert_eq!(mined.proposals[0].evidence, "deploy with ./deploy.sh");
        assert_eq!(mined.drops().to_string(), "1 not_grounded");
    }

    #[test]
    fn chunks_keep_each_speaker_and_fit_the_limit() {
        let words = |t: &str| t.split_whitespace().count();
        let said = vec![
            Said::new(Speaker::User, "one two three"),
            Said::new(Speaker::Assistant, "w ".repeat(30)),
            Said::new(Speaker::User, "four five"),
        ];
        let chunks = chunk_said(&said, 12, &words);
        assert!(chunks.len() >= 4, "{chunks:?}");
        assert!(chunks.iter().all(|c| words(&render(c)) <= 12), "{chunks:?}");
        assert_eq!(chunks[0][0], said[0]);
        let middle: Vec<&Said> = chunks.iter().flatten().skip(1).collect();
        assert!(middle[..middle.len() - 1]
            .iter()
            .all(|s| s.speaker == Speaker::Assistant));
        assert_eq!(chunks.last().unwrap().last(), said.last());
    }
}
