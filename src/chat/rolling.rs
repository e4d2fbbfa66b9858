//! The rolling summary: when the conversation reaches `warn_at_pct × n_ctx`, all but the
//! last `keep_turns` turns are replaced by one summary message right after the pinned
//! messages. A turn is a user message and everything that answered it, so a turn is never
//! split and a tool result is never orphaned.
//!
//! The summary is generated aside (the chat KV cache is not disturbed), bounded to
//! `SUMMARY_MAX_TOKENS`, with the old turns chunked to fit `Engine::aside_room`. Before
//! it, the chat cache keeps only the pinned messages: everything after them is rewritten
//! anyway, and the freed cells let the summary run in the chat context.

use crate::engine::gbnf::{self, GrammarBoundError};
use crate::engine::{
    AbortFlag, Engine, EngineError, GenerateOptions, Message, Role, SamplingParams, StopReason,
};

use super::Conversation;
use crate::text::chunk_lines;

/// Upper bound on one summary, in tokens.
pub const SUMMARY_MAX_TOKENS: usize = 150;

/// Index of the first message of every turn (each user message starts one).
pub fn turn_starts(messages: &[Message]) -> Vec<usize> {
    let mut starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect();
    // Leading non-user messages (rare) belong to the first turn.
    if let Some(first) = starts.first_mut() {
        *first = 0;
    }
    starts
}

/// How many turns to fold: all but `keep_turns`, and more while what stays is still at
/// or over `threshold` (`fixed` = tokens of the pinned part plus a summary). The newest
/// turn is never folded.
pub fn turns_to_fold(
    turn_costs: &[usize],
    fixed: usize,
    threshold: usize,
    keep_turns: usize,
) -> usize {
    let n = turn_costs.len();
    if n <= 1 {
        return 0;
    }
    let mut fold = n.saturating_sub(keep_turns.max(1));
    while fold < n - 1 && fixed + turn_costs[fold..].iter().sum::<usize>() >= threshold {
        fold += 1;
    }
    fold
}

/// Message count covered by the first `turns` turns.
pub fn messages_in_turns(starts: &[usize], total: usize, turns: usize) -> usize {
    starts.get(turns).copied().unwrap_or(total)
}

/// What a compression did, for the user line and the session record.
#[derive(Debug, Clone, PartialEq)]
pub struct Compression {
    pub folded_turns: usize,
    pub tokens_before: usize,
    pub tokens_after: usize,
    pub summary: String,
}

/// Compresses when the conversation is at or over `threshold` tokens.
pub fn compress_if_needed(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    threshold: usize,
    keep_turns: usize,
    abort: &AbortFlag,
) -> Result<Option<Compression>, EngineError> {
    let before = engine.count_prompt(&conversation.messages())?;
    if before < threshold {
        return Ok(None);
    }
    let turns = conversation.turns().to_vec();
    let starts = turn_starts(&turns);
    let costs = turn_costs(engine, &turns, &starts);
    let fixed = engine.count_prompt(&conversation.pinned())? + SUMMARY_MAX_TOKENS;
    let fold = turns_to_fold(&costs, fixed, threshold, keep_turns);
    if fold == 0 {
        return Ok(None);
    }
    let n_messages = messages_in_turns(&starts, turns.len(), fold);
    engine.keep_chat_prefix(&conversation.pinned());
    let summary = summarize(
        engine,
        conversation.summary(),
        &turns[..n_messages],
        None,
        abort,
    )?;
    conversation.fold(n_messages, summary.clone());
    let after = engine.count_prompt(&conversation.messages())?;
    Ok(Some(Compression {
        folded_turns: fold,
        tokens_before: before,
        tokens_after: after,
        summary,
    }))
}

/// `/compact [FOCUS]`: folds every turn into the summary now, whatever the fill level;
/// `focus` (what the user wants kept) goes into the summary prompt. `None` when there
/// is no turn to fold.
pub fn compact(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    focus: Option<&str>,
    abort: &AbortFlag,
) -> Result<Option<Compression>, EngineError> {
    let turns = conversation.turns().to_vec();
    let folded_turns = turn_starts(&turns).len();
    if folded_turns == 0 {
        return Ok(None);
    }
    let before = engine.count_prompt(&conversation.messages())?;
    engine.keep_chat_prefix(&conversation.pinned());
    let summary = summarize(engine, conversation.summary(), &turns, focus, abort)?;
    conversation.fold(turns.len(), summary.clone());
    let after = engine.count_prompt(&conversation.messages())?;
    Ok(Some(Compression {
        folded_turns,
        tokens_before: before,
        tokens_after: after,
        summary,
    }))
}

fn turn_costs(engine: &dyn Engine, turns: &[Message], starts: &[usize]) -> Vec<usize> {
    (0..starts.len())
        .map(|i| {
            let end = messages_in_turns(starts, turns.len(), i + 1);
            turns[starts[i]..end]
                .iter()
                .map(|m| engine.count_tokens(&m.content) + 6)
                .sum()
        })
        .collect()
}

/// Folds `previous` and `turns` into one summary of at most `SUMMARY_MAX_TOKENS`,
/// feeding chunks that fit the context one after another; `focus` says what to keep.
pub fn summarize(
    engine: &mut dyn Engine,
    previous: Option<&str>,
    turns: &[Message],
    focus: Option<&str>,
    abort: &AbortFlag,
) -> Result<String, EngineError> {
    let lines: Vec<String> = turns
        .iter()
        .map(|m| format!("{}: {}", speaker(m.role), m.content.trim()))
        .collect();
    let room = engine.aside_room();
    let overhead = engine.count_prompt(&summary_prompt(
        Some(&"x ".repeat(SUMMARY_MAX_TOKENS)),
        "",
        focus,
    ))?;
    let limit = room
        .saturating_sub(overhead + SUMMARY_MAX_TOKENS + 8)
        .max(16);
    let counter = |t: &str| engine.count_tokens(t);
    let chunks = chunk_lines(&lines, limit, &counter);
    let mut summary = previous.map(str::to_string);
    for chunk in chunks {
        let opts = summary_options(abort);
        let done = engine.generate_aside(
            &summary_prompt(summary.as_deref(), &chunk, focus),
            &opts,
            &mut |_| {},
        )?;
        let text = done.text.trim().to_string();
        if !text.is_empty() {
            summary = Some(text);
        }
    }
    Ok(summary.unwrap_or_else(|| "(earlier turns omitted)".into()))
}

/// A session summary by map-reduce: each chunk of the transcript that fits the context
/// is summarized on its own (map), then the chunk summaries are merged into one (reduce,
/// repeated while the merged input is still too big). Never one oversized prompt.
pub fn summarize_map_reduce(
    engine: &mut dyn Engine,
    turns: &[Message],
    abort: &AbortFlag,
) -> Result<String, EngineError> {
    let lines: Vec<String> = turns
        .iter()
        .map(|m| format!("{}: {}", speaker(m.role), m.content.trim()))
        .collect();
    let room = engine.aside_room();
    let overhead = engine.count_prompt(&summary_prompt(None, "", None))?;
    let limit = room
        .saturating_sub(overhead + SUMMARY_MAX_TOKENS + 8)
        .max(16);
    let mut pieces = {
        let counter = |t: &str| engine.count_tokens(t);
        chunk_lines(&lines, limit, &counter)
    };
    loop {
        let mut summaries = Vec::with_capacity(pieces.len());
        for chunk in &pieces {
            if abort.is_raised() {
                break;
            }
            let done = engine.generate_aside(
                &summary_prompt(None, chunk, None),
                &summary_options(abort),
                &mut |_| {},
            )?;
            let text = done.text.split_whitespace().collect::<Vec<_>>().join(" ");
            if !text.is_empty() {
                summaries.push(format!("Part {}: {text}", summaries.len() + 1));
            }
        }
        if summaries.len() <= 1 || abort.is_raised() {
            let last = summaries.pop().unwrap_or_default();
            return Ok(last
                .split_once(": ")
                .map_or(last.clone(), |(_, t)| t.to_string()));
        }
        // Reduce: the part summaries, chunked again, become the next round's input.
        let counter = |t: &str| engine.count_tokens(t);
        let next = chunk_lines(&summaries, limit, &counter);
        if next.len() >= pieces.len() && pieces.len() > 1 {
            // No progress (pathological sizes): keep the first part's summary.
            return Ok(summaries.remove(0));
        }
        pieces = next;
    }
}

/// Tags per session, from the model.
pub const TAGS: (usize, usize) = (3, 5);
/// Longest tag, in characters (`[a-z][a-z0-9-]*`, so one byte each).
pub const TAG_MAX_CHARS: usize = 20;

/// Where a session's tags came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TagSource {
    /// The model's answer, complete and parsed (topped up from keywords if it repeated
    /// itself).
    Model,
    /// Keywords of the transcript: the model was skipped, failed, or was cut off.
    Fallback,
}

/// Why the model gave no tags.
#[derive(Debug, thiserror::Error)]
pub enum TagError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("the tag grammar is unbounded: {0}")]
    Grammar(#[from] GrammarBoundError),
    /// Stopped before the grammar completed; never parsed.
    #[error("the tags were cut off ({stop})", stop = .0.as_str())]
    Cut(StopReason),
    /// Cannot happen under the grammar; reported rather than hidden if it does.
    #[error("the tags did not parse as a JSON list ({0}): {1}")]
    Parse(String, String),
}

/// The tag grammar: a JSON list of 3–5 strings `[a-z][a-z0-9-]{0,19}`. In GBNF a quote
/// inside a literal is `"\""`; `"""` would be an empty literal followed by literal text.
pub fn tag_grammar() -> String {
    let (min, max) = TAGS;
    let first = vec!["tag"; min].join(" \", \" ");
    let optional = " (\", \" tag)?".repeat(max - min);
    format!(
        "root ::= \"[\" {first}{optional} \"]\"\ntag ::= \"\\\"\" [a-z] [a-z0-9-]{{0,{}}} \"\\\"\"\n",
        TAG_MAX_CHARS - 1
    )
}

/// 3–5 short lowercase tags for a summary, from the model under a JSON grammar whose
/// worst case fits the generation's `max_tokens`, so the output always ends and parses.
/// Returns the distinct tags (1–5: the model may repeat one).
pub fn tags(
    engine: &mut dyn Engine,
    summary: &str,
    abort: &AbortFlag,
) -> Result<Vec<String>, TagError> {
    let prompt = vec![
        Message::new(
            Role::System,
            "You label conversations with short topic tags.",
        ),
        Message::new(
            Role::User,
            format!(
                "Summary: {summary}

Give 3 to 5 short lowercase topic tags as a JSON list."
            ),
        ),
    ];
    let grammar = tag_grammar();
    let mut opts = summary_options(abort);
    opts.max_tokens = Some(gbnf::max_tokens(&grammar)?);
    opts.grammar = Some(grammar);
    let done = engine.generate_aside(&prompt, &opts, &mut |_| {})?;
    let text = done.grammar_output().map_err(TagError::Cut)?;
    let tags: Vec<String> = serde_json::from_str(text.trim())
        .map_err(|e| TagError::Parse(e.to_string(), done.text.clone()))?;
    let mut unique: Vec<String> = Vec::new();
    for t in tags {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    Ok(unique)
}

fn speaker(role: Role) -> &'static str {
    match role {
        Role::User => "User",
        Role::Assistant => "Assistant",
        Role::System => "System",
        Role::Tool => "Tool result",
    }
}

fn summary_prompt(previous: Option<&str>, chunk: &str, focus: Option<&str>) -> Vec<Message> {
    let mut user = String::new();
    if let Some(p) = previous {
        user.push_str(&format!("Summary so far: {p}\n\n"));
    }
    user.push_str(&format!(
        "Conversation:\n{chunk}\n\nWrite one short paragraph (at most 80 words) that summarizes the conversation so far: the user's goals, facts stated and decisions made."
    ));
    if let Some(f) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        user.push_str(&format!(" Keep above all what concerns: {f}."));
    }
    user.push_str(" Output only the summary.");
    vec![
        Message::new(
            Role::System,
            "You write brief, factual summaries of conversations.",
        ),
        Message::new(Role::User, user),
    ]
}

fn summary_options(abort: &AbortFlag) -> GenerateOptions {
    GenerateOptions {
        max_tokens: Some(SUMMARY_MAX_TOKENS),
        abort: abort.clone(),
        ..GenerateOptions::new(SamplingParams {
            repeat_penalty: 1.15,
            repeat_last_n: 64,
            ..SamplingParams::greedy()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(roles: &str) -> Vec<Message> {
        roles
            .chars()
            .map(|c| match c {
                'u' => Message::new(Role::User, "q"),
                _ => Message::new(Role::Assistant, "a"),
            })
            .collect()
    }

    #[test]
    fn turns_start_at_user_messages_and_keep_their_answers() {
        // u a | u a a (a tool result and the follow-up answer) | u
        let m = msgs("uauaau");
        assert_eq!(turn_starts(&m), vec![0, 2, 5]);
        assert_eq!(messages_in_turns(&[0, 2, 5], 6, 2), 5);
        assert_eq!(messages_in_turns(&[0, 2, 5], 6, 3), 6);
        // A leading non-user message belongs to the first turn.
        assert_eq!(turn_starts(&msgs("aua")), vec![0]);
        assert!(turn_starts(&[]).is_empty());
    }

    #[test]
    fn fold_count_table() {
        // (costs, fixed, threshold, keep, want)
        let cases: &[(&[usize], usize, usize, usize, usize)] = &[
            (&[10, 10, 10, 10], 0, 100, 2, 2),  // all but keep_turns
            (&[10, 10], 0, 100, 6, 0),          // keep_turns larger than the history
            (&[10], 0, 5, 1, 0),                // the newest turn is never folded
            (&[50, 50, 50, 50], 0, 100, 3, 3),  // still too big: fold more, keep the last
            (&[10, 10, 10, 10], 85, 100, 2, 3), // pinned part counts against the threshold
            (&[10, 10, 10], 0, 100, 0, 2),      // keep_turns 0 behaves as 1
        ];
        for (costs, fixed, threshold, keep, want) in cases {
            assert_eq!(
                turns_to_fold(costs, *fixed, *threshold, *keep),
                *want,
                "{costs:?} keep {keep}"
            );
        }
    }

    #[test]
    fn tag_grammar_is_json_and_its_worst_case_fits() {
        let g = tag_grammar();
        assert!(!g.contains("\"\"\""), "{g}");
        assert!(
            g.contains("tag ::= \"\\\"\" [a-z] [a-z0-9-]{0,19} \"\\\"\""),
            "{g}"
        );
        // The longest list: five tags of TAG_MAX_CHARS, one byte (token) a character.
        let tag = format!("\"{}\"", "a".repeat(TAG_MAX_CHARS));
        let longest = format!("[{}]", vec![tag; TAGS.1].join(", "));
        assert!(serde_json::from_str::<Vec<String>>(&longest).is_ok());
        assert_eq!(gbnf::max_bytes(&g), Ok(longest.len()));
        assert_eq!(gbnf::max_tokens(&g), Ok(longest.len() + 1));
    }

    #[test]
    fn cut_off_tags_are_an_error_not_parsed() {
        use crate::engine::scripted::ScriptedEngine;
        let mut e = ScriptedEngine::new(4096, [r#"["a", "b", "c"]"#]);
        assert_eq!(
            tags(&mut e, "s", &AbortFlag::new()).unwrap(),
            ["a", "b", "c"]
        );
        let long = format!("[{}", "\"x\", ".repeat(200));
        let mut e = ScriptedEngine::new(4096, [long]);
        let err = tags(&mut e, "s", &AbortFlag::new()).unwrap_err();
        assert!(matches!(err, TagError::Cut(StopReason::MaxTokens)), "{err}");
    }

    #[test]
    fn compact_folds_every_turn_with_the_focus_in_the_prompt() {
        use crate::engine::scripted::ScriptedEngine;
        let mut e = ScriptedEngine::new(4096, ["the sky is blue today", "it is a", "they talked"]);
        let mut c = Conversation::new("sys");
        let abort = AbortFlag::new();
        assert!(compact(&mut e, &mut c, None, &abort).unwrap().is_none());
        for (q, a) in [("what colour is the sky", "blue"), ("and grass", "green")] {
            c.push_user(q);
            c.push_assistant(a);
        }
        let done = compact(&mut e, &mut c, Some("colours"), &abort)
            .unwrap()
            .unwrap();
        assert_eq!(done.folded_turns, 2);
        assert!(c.turns().is_empty());
        assert_eq!(c.summary(), Some("the sky is blue today"));
        assert_eq!(done.tokens_after, e.count_prompt(&c.messages()).unwrap());
        let prompt = &e.prompts.last().unwrap()[1].content;
        assert!(
            prompt.contains("Keep above all what concerns: colours."),
            "{prompt}"
        );
        assert!(prompt.contains("User: and grass"), "{prompt}");
    }
}
