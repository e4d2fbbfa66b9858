//! The rolling summary: when the conversation grows too big, all but the last
//! `keep_turns` turns leave the prompt for one summary message right after the pinned
//! messages. A turn is a user message and everything that answered it, so a turn is never
//! split and a tool result is never orphaned.
//!
//! Two steps, so no model call stands between a question and its answer:
//! - [`fold_for_room`], before a turn whose message would not fit: older turns go out
//!   at once, without the model; the summary message lists what they asked and called
//!   ([`digest::placeholder`]).
//! - [`compress_if_needed`], as idle work while the user reads or types: the model
//!   writes the summary of those turns (and of more, past `warn_at_pct`), from a digest
//!   of them (calls' summaries and answers, not whole tool results), generated aside and
//!   bounded to `SUMMARY_MAX_TOKENS`. Stopped by the abort flag, it changes nothing; the
//!   chat KV cache is left alone until the summary is in, then [`warm`] prefills the new
//!   prompt in small steps that also stop at the flag.

mod digest;
mod session;

pub use digest::{digest_lines, placeholder};
pub use session::{
    summarize_map_reduce, tag_grammar, tags, TagError, TagSource, TAGS, TAG_MAX_CHARS,
};

use crate::engine::{
    AbortFlag, Engine, EngineError, GenerateOptions, Message, Role, SamplingParams,
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
    /// Turns taken out of the prompt (with [`Self::pending`] false: also those an
    /// earlier fold took out, whose summary this one wrote).
    pub folded_turns: usize,
    pub tokens_before: usize,
    pub tokens_after: usize,
    /// What the summary message says now.
    pub summary: String,
    /// Folded without the model: the summary of these turns is still to be written.
    pub pending: bool,
    /// Tokens the summarizer read (its digest of the turns; 0 when pending).
    pub input_tokens: usize,
    /// Tokens of the summarized turns as they were in the prompt (0 when pending).
    pub turn_tokens: usize,
}

impl Compression {
    /// The line for the session record.
    pub fn note(&self) -> String {
        if self.pending {
            return format!(
                "rolling summary: {} turns folded without the model to make room, {} → {} tokens (their summary is written later)",
                self.folded_turns, self.tokens_before, self.tokens_after
            );
        }
        format!(
            "rolling summary: {} turns folded, {} → {} tokens (the summarizer read {} tokens for {} tokens of turns)",
            self.folded_turns,
            self.tokens_before,
            self.tokens_after,
            self.input_tokens,
            self.turn_tokens
        )
    }
}

/// Before a turn whose message does not fit (the conversation, the message just added,
/// and the reply's reserve at or over `threshold`): takes older turns out of the prompt
/// without the model — all but `keep_turns`, more while still over — and lets the summary
/// message list what they asked and called. The model's summary of them is written later
/// ([`compress_if_needed`]). The newest turn (the question) is never folded.
pub fn fold_for_room(
    engine: &dyn Engine,
    conversation: &mut Conversation,
    threshold: usize,
    keep_turns: usize,
) -> Result<Option<Compression>, EngineError> {
    let before = engine.count_prompt(&conversation.messages())?;
    if before < threshold {
        return Ok(None);
    }
    let turns = conversation.turns().to_vec();
    let starts = turn_starts(&turns);
    let costs = turn_costs(engine, &turns, &starts);
    let fixed = engine.count_prompt(&conversation.pinned())?;
    let mut fold = turns_to_fold(&costs, fixed, threshold, keep_turns);
    if fold == 0 {
        return Ok(None);
    }
    // The fold line grows with what it lists: fold more while the result is still over.
    loop {
        let mut trial = conversation.clone();
        fold_without_model(&mut trial, messages_in_turns(&starts, turns.len(), fold));
        let after = engine.count_prompt(&trial.messages())?;
        if after < threshold || fold + 1 >= starts.len() {
            let folded_turns = fold;
            *conversation = trial;
            return Ok(Some(Compression {
                folded_turns,
                tokens_before: before,
                tokens_after: after,
                summary: conversation.summary().unwrap_or_default().to_string(),
                pending: true,
                input_tokens: 0,
                turn_tokens: 0,
            }));
        }
        fold += 1;
    }
}

fn fold_without_model(conversation: &mut Conversation, n_messages: usize) {
    let mut folded = conversation.folded().to_vec();
    folded.extend_from_slice(&conversation.turns()[..n_messages]);
    let shown = placeholder(conversation.written_summary(), &folded);
    conversation.fold_unsummarized(n_messages, shown);
}

/// Idle work: when the conversation is at or over `threshold` tokens, or turns were
/// folded without the model, the model writes the summary of those turns and of all but
/// the last `keep_turns` (more while what stays is still over). `Ok(None)` when there is
/// nothing to do or the abort flag stopped it — then the conversation is exactly as it
/// was. The chat KV cache is not touched: the summary runs aside ([`warm`] follows).
pub fn compress_if_needed(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    threshold: usize,
    keep_turns: usize,
    abort: &AbortFlag,
) -> Result<Option<Compression>, EngineError> {
    let before = engine.count_prompt(&conversation.messages())?;
    let turns = conversation.turns().to_vec();
    let starts = turn_starts(&turns);
    let fold = match before >= threshold {
        true => {
            let costs = turn_costs(engine, &turns, &starts);
            let fixed = engine.count_prompt(&conversation.pinned())? + SUMMARY_MAX_TOKENS;
            turns_to_fold(&costs, fixed, threshold, keep_turns)
        }
        false => 0,
    };
    let pending = turn_starts(conversation.folded()).len();
    if fold == 0 && pending == 0 {
        return Ok(None);
    }
    let n_messages = messages_in_turns(&starts, turns.len(), fold);
    let mut input = conversation.folded().to_vec();
    input.extend_from_slice(&turns[..n_messages]);
    let written = summarize_digest(engine, conversation.written_summary(), &input, None, abort)?;
    let Some((summary, input_tokens)) = written else {
        return Ok(None);
    };
    conversation.fold(n_messages, summary.clone());
    let after = engine.count_prompt(&conversation.messages())?;
    Ok(Some(Compression {
        folded_turns: fold + pending,
        tokens_before: before,
        tokens_after: after,
        summary,
        pending: false,
        input_tokens,
        turn_tokens: message_tokens(engine, &input),
    }))
}

/// Tokens the chat prefills per step in [`warm`]: small enough that the abort flag is
/// seen within a fraction of a second on a Pi.
pub const WARM_STEP: usize = 64;

/// Idle work after a compression: makes the chat KV cache hold the new prompt, so the
/// next message costs only its own tokens. Prefills [`WARM_STEP`] tokens at a time and
/// stops at the abort flag (what was prefilled stays; the next turn does the rest).
/// Returns the tokens prefilled.
pub fn warm(
    engine: &mut dyn Engine,
    conversation: &Conversation,
    abort: &AbortFlag,
) -> Result<usize, EngineError> {
    let ids = engine.prompt_ids(&conversation.messages())?;
    let mut done = 0;
    let mut end = 0;
    while end < ids.len() && !abort.is_raised() {
        end = (end + WARM_STEP).min(ids.len());
        done += engine.warm_prefix(&ids[..end])?;
    }
    Ok(done)
}

/// `/compact [FOCUS]`: folds every turn into the summary now, whatever the fill level;
/// `focus` (what the user wants kept) goes into the summary prompt. `None` when there
/// is no turn to fold, or the abort flag stopped it (nothing changed).
pub fn compact(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    focus: Option<&str>,
    abort: &AbortFlag,
) -> Result<Option<Compression>, EngineError> {
    let turns = conversation.turns().to_vec();
    let folded_turns = turn_starts(&turns).len() + turn_starts(conversation.folded()).len();
    if folded_turns == 0 {
        return Ok(None);
    }
    let before = engine.count_prompt(&conversation.messages())?;
    let mut input = conversation.folded().to_vec();
    input.extend_from_slice(&turns);
    // Asked for: the chat keeps only the pinned part, so the summary runs in its cells.
    engine.keep_chat_prefix(&conversation.pinned());
    let written = summarize_digest(engine, conversation.written_summary(), &input, focus, abort)?;
    let Some((summary, input_tokens)) = written else {
        return Ok(None);
    };
    conversation.fold(turns.len(), summary.clone());
    let after = engine.count_prompt(&conversation.messages())?;
    Ok(Some(Compression {
        folded_turns,
        tokens_before: before,
        tokens_after: after,
        summary,
        pending: false,
        input_tokens,
        turn_tokens: message_tokens(engine, &input),
    }))
}

fn turn_costs(engine: &dyn Engine, turns: &[Message], starts: &[usize]) -> Vec<usize> {
    (0..starts.len())
        .map(|i| {
            let end = messages_in_turns(starts, turns.len(), i + 1);
            message_tokens(engine, &turns[starts[i]..end])
        })
        .collect()
}

/// Tokens of `messages` in the prompt (their text and the template's few per message).
fn message_tokens(engine: &dyn Engine, messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| engine.count_tokens(&m.content) + 6)
        .sum()
}

/// [`summarize`] of the turns' digest; `None` when the abort flag stopped it. Also
/// returns the tokens of the digest the summarizer read.
fn summarize_digest(
    engine: &mut dyn Engine,
    previous: Option<&str>,
    turns: &[Message],
    focus: Option<&str>,
    abort: &AbortFlag,
) -> Result<Option<(String, usize)>, EngineError> {
    let lines = digest_lines(turns);
    let input_tokens = lines.iter().map(|l| engine.count_tokens(l) + 1).sum();
    let summary = summarize_lines(engine, previous, &lines, focus, abort)?;
    tracing::info!(
        input_tokens,
        turn_tokens = message_tokens(engine, turns),
        "rolling summary written from a digest"
    );
    Ok((!abort.is_raised()).then_some((summary, input_tokens)))
}

/// Folds `previous` and `turns` into one summary of at most `SUMMARY_MAX_TOKENS`,
/// feeding chunks that fit the context one after another; `focus` says what to keep.
/// The turns are read as their digest ([`digest_lines`]): calls and answers, not whole
/// tool results.
pub fn summarize(
    engine: &mut dyn Engine,
    previous: Option<&str>,
    turns: &[Message],
    focus: Option<&str>,
    abort: &AbortFlag,
) -> Result<String, EngineError> {
    summarize_lines(engine, previous, &digest_lines(turns), focus, abort)
}

fn summarize_lines(
    engine: &mut dyn Engine,
    previous: Option<&str>,
    lines: &[String],
    focus: Option<&str>,
    abort: &AbortFlag,
) -> Result<String, EngineError> {
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
    let chunks = chunk_lines(lines, limit, &counter);
    let mut summary = previous.map(str::to_string);
    for chunk in chunks {
        if abort.is_raised() {
            break;
        }
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

    fn long_conversation(turns: usize) -> Conversation {
        let mut c = Conversation::new("sys");
        for i in 0..turns {
            c.push_user(&format!("question {i} about the boat"));
            c.push_assistant("an answer of eight words about the boat");
        }
        c
    }

    #[test]
    fn a_fold_for_room_calls_no_model_and_lists_what_it_folded() {
        use crate::engine::scripted::ScriptedEngine;
        let e = ScriptedEngine::new(4096, ["never"]);
        let mut c = long_conversation(6);
        let before = e.count_prompt(&c.messages()).unwrap();
        assert_eq!(fold_for_room(&e, &mut c, before + 1, 2).unwrap(), None);
        let done = fold_for_room(&e, &mut c, before, 2).unwrap().unwrap();
        assert!(done.pending && done.folded_turns == 4, "{done:?}");
        assert!(done.tokens_after < before);
        assert_eq!(c.turn_count(), 2);
        assert_eq!(turn_starts(c.folded()).len(), 4);
        assert!(e.prompts.is_empty(), "no model call");
        let shown = c.summary().unwrap();
        assert!(shown.starts_with("not summarized yet;"), "{shown}");
        assert!(shown.contains("\"question 3 about the boat\""), "{shown}");
        assert_eq!(c.written_summary(), None);
    }

    #[test]
    fn the_idle_summary_covers_folded_turns_and_a_stopped_one_changes_nothing() {
        use crate::engine::scripted::ScriptedEngine;
        let mut e = ScriptedEngine::new(4096, ["they talked about the boat"]);
        let mut c = long_conversation(6);
        let all = e.count_prompt(&c.messages()).unwrap();
        fold_for_room(&e, &mut c, all, 4).unwrap().unwrap();
        // Under the threshold, but folded turns wait for their summary.
        let stopped = AbortFlag::new();
        stopped.raise();
        let before = c.clone();
        assert_eq!(
            compress_if_needed(&mut e, &mut c, all, 4, &stopped).unwrap(),
            None
        );
        assert_eq!(c, before);
        let done = compress_if_needed(&mut e, &mut c, all, 4, &AbortFlag::new())
            .unwrap()
            .unwrap();
        assert_eq!((done.folded_turns, done.pending), (2, false));
        assert!(done.input_tokens > 0 && done.input_tokens < done.turn_tokens + 8);
        assert_eq!(c.summary(), Some("they talked about the boat"));
        assert!(c.folded().is_empty());
        assert_eq!(c.turn_count(), 4);
        let prompt = &e.prompts.last().unwrap()[1].content;
        assert!(
            prompt.contains("User: question 1 about the boat"),
            "{prompt}"
        );
        // Nothing left to do.
        assert_eq!(
            compress_if_needed(&mut e, &mut c, all, 4, &AbortFlag::new()).unwrap(),
            None
        );
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
