//! How a turn's reply is made to be an answer: its first token kept from opening a
//! call, a tool result cut to leave room for the reply, the round cap's note, and the
//! answer begun for a model that keeps calling past it.

use crate::engine::{Completion, Engine, GenerateOptions, Role};
use crate::tools::formats;

use super::super::Conversation;
use super::{ToolSet, TurnEvent, NO_ANSWER};

/// The reply's first token where it must be an answer, under a grammar that admits no
/// call's first character (`{`, `<`, a fence's backtick); streamed like the rest. Empty
/// when the model ends at once.
pub(super) fn answer_lead(
    engine: &mut dyn Engine,
    conversation: &Conversation,
    opts: &GenerateOptions,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<String, crate::engine::EngineError> {
    let mut o = opts.clone();
    o.grammar = Some(ANSWER_START.to_string());
    o.max_tokens = Some(1);
    o.stop = Vec::new();
    o.stop_finder = None;
    let c = engine.generate(&conversation.messages(), &o, &mut |_| {})?;
    if !c.text.is_empty() {
        on_event(TurnEvent::Text(c.text.clone()));
    }
    Ok(c.text)
}

/// A reply that does not start a call: its first character is no `{`, `<` or backtick.
const ANSWER_START: &str = "root ::= [^{<`\\x00] [^\\x00]*";

/// Room kept for the reply after a tool result, in tokens (at most a quarter of the
/// context).
const REPLY_ROOM: usize = 256;

/// Cuts the newest tool result until the prompt leaves room for a reply: a result that
/// would overflow the context otherwise ends the whole turn with "prompt too long".
/// The cut keeps the result's start and says so. Runs before the round cap's short
/// note is added, so it is always the result that is cut.
pub(super) fn fit_last_result(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    opts: &GenerateOptions,
) -> Result<(), crate::engine::EngineError> {
    let n_ctx = engine.info().n_ctx as usize;
    let reserve = opts
        .max_tokens
        .unwrap_or(REPLY_ROOM)
        .min(REPLY_ROOM)
        .min(n_ctx / 4);
    let limit = n_ctx.saturating_sub(reserve);
    for _ in 0..4 {
        let used = engine.count_prompt(&conversation.messages())?;
        let Some(last) = conversation.turns().last().filter(|m| m.role == Role::Tool) else {
            return Ok(());
        };
        if used <= limit {
            return Ok(());
        }
        let chars = last.content.chars().count();
        let over = used - limit;
        let tokens = engine.count_tokens(&last.content).max(1);
        let keep = chars.saturating_sub(chars * (over + 16) / tokens + 1);
        let cut: String = last.content.chars().take(keep).collect();
        conversation.replace_last_tool(&format!("{cut}… [result cut to fit the context]"));
    }
    Ok(())
}

/// The reply started with [`ANSWER_LEAD`] so the model continues a sentence instead of
/// opening another call; a call it writes anyway is cut off, and [`NO_ANSWER`] stands
/// when nothing else is left.
pub(super) fn answer_begun(
    engine: &mut dyn Engine,
    conversation: &Conversation,
    opts: &GenerateOptions,
    set: &ToolSet<'_>,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<Completion, crate::engine::EngineError> {
    let mut o = opts.clone();
    o.assistant_prefix = Some(ANSWER_LEAD.to_string());
    // Held back, not streamed: an empty continuation must not leave the lead on screen.
    let mut c = engine.generate(&conversation.messages(), &o, &mut |_| {})?;
    let text = match formats::find_call(&c.text, &set.registry.list()) {
        Some(found) => found.before,
        None => c.text.clone(),
    };
    c.text = if text.trim().is_empty() {
        NO_ANSWER.to_string()
    } else {
        format!("{ANSWER_LEAD}{}", text.trim_start())
    };
    on_event(TurnEvent::Text(c.text.clone()));
    Ok(c)
}

/// How an answer is begun for a model that keeps calling past the cap.
const ANSWER_LEAD: &str = "From the tool results above: ";

/// Over the round cap, the model is told to answer now.
pub(super) fn limit_rounds(conversation: &mut Conversation, set: &ToolSet<'_>, calls: usize) {
    if calls >= set.max_rounds {
        conversation.push_tool(
            "(tool limit for this turn reached: answer the user now, without calling tools)",
        );
    }
}
