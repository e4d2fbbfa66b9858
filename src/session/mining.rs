//! End-of-session mining: memory proposals extracted from a session by the model.
//!
//! Writes are dangerous (a stored memory is a premise for every later session), so the
//! output is constrained by a grammar (every answer parses, every string is bounded), the
//! transcript goes in chunks that fit the context (never one oversized prompt), proposals
//! that duplicate a memory or contain a secret are dropped, and the rest are saved with
//! confidence 0.5 and their `source_session`, visible and undoable with `/memory forget`.

use serde::Deserialize;

use crate::chat::rolling::chunk_lines;
use crate::engine::{
    AbortFlag, Engine, EngineError, GenerateOptions, Message, Role, SamplingParams,
};
use crate::memory::guard::find_secret;
use crate::memory::types::normalize_description;
use crate::memory::{Draft, MemoryStore, MemoryType};

/// Most proposals per session.
pub const MAX_PROPOSALS: usize = 5;
/// Most proposals per chunk.
const PER_CHUNK: usize = 2;

/// The output grammar: `{"memories": [ … at most 2 … ]}` with bounded strings.
pub fn grammar() -> String {
    let types = MemoryType::ALL
        .iter()
        .map(|t| format!("\"\\\"{}\\\"\"", t.as_str()))
        .collect::<Vec<_>>()
        .join(" | ");
    format!(
        r#"root ::= "{{\"memories\": [" (item (", " item){{0,{more}}})? "]}}"
item ::= "{{\"type\": " type ", \"kind\": " kind ", \"description\": " short ", \"summary\": " long ", \"action\": " long ", \"tags\": [" tag (", " tag){{0,3}} "]}}"
type ::= {types}
kind ::= "\"pitfall\"" | "\"workaround\"" | "\"recommendation\"" | "\"pattern\""
short ::= "\"" char{{3,100}} "\""
long ::= "\"" char{{0,200}} "\""
tag ::= "\"" [a-z0-9-]{{1,20}} "\""
char ::= [^"\\\x7F\x00-\x1F]
"#,
        more = PER_CHUNK - 1
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
    /// Cannot happen under the grammar; reported rather than hidden if it does.
    #[error("the model's output did not parse as JSON ({0}): {1}")]
    Parse(String, String),
}

/// Proposals for the exchanges `(user, reply)`, at most [`MAX_PROPOSALS`].
pub fn mine(
    engine: &mut dyn Engine,
    exchanges: &[(String, String)],
    abort: &AbortFlag,
) -> Result<Vec<Draft>, MineError> {
    let lines: Vec<String> = exchanges
        .iter()
        .flat_map(|(u, r)| {
            [
                format!("User: {}", u.trim()),
                format!("Assistant: {}", r.trim()),
            ]
        })
        .collect();
    let n_ctx = engine.info().n_ctx as usize;
    let overhead = engine.count_prompt(&prompt(""))?;
    let limit = n_ctx.saturating_sub(overhead + 400).max(32);
    let counter = |t: &str| engine.count_tokens(t);
    let chunks = chunk_lines(&lines, limit, &counter);
    let mut drafts = Vec::new();
    for chunk in chunks {
        if drafts.len() >= MAX_PROPOSALS || abort.is_raised() {
            break;
        }
        let opts = GenerateOptions {
            sampling: SamplingParams {
                temperature: 0.0,
                top_k: 0,
                top_p: 1.0,
                min_p: 0.0,
                repeat_penalty: 1.1,
                repeat_last_n: 64,
                seed: 0,
            },
            max_tokens: Some(380),
            abort: abort.clone(),
            grammar: Some(grammar()),
            stop: Vec::new(),
            assistant_prefix: None,
        };
        let out = engine.generate_aside(&prompt(&chunk), &opts, &mut |_| {})?;
        if abort.is_raised() {
            break;
        }
        let parsed: Output = serde_json::from_str(out.text.trim())
            .map_err(|e| MineError::Parse(e.to_string(), out.text.clone()))?;
        for p in parsed.memories {
            drafts.push(Draft {
                mtype: p.mtype,
                description: p.description,
                summary: p.summary,
                tags: p.tags,
                kind: Some(p.kind),
                action: Some(p.action).filter(|a| !a.trim().is_empty()),
                confidence: Some(0.5),
                ..Draft::default()
            });
        }
    }
    drafts.truncate(MAX_PROPOSALS);
    Ok(drafts)
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
