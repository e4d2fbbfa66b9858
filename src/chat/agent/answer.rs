//! How a turn's reply is made to be an answer: its first token kept from opening a
//! call, a tool result cut to leave room for the reply, the round cap's note, and the
//! answer begun for a model that keeps calling past it.

use crate::engine::{Completion, Engine, GenerateOptions, Role, SamplingParams, TurnStats};
use crate::tools::formats;

use super::super::Conversation;
use super::{ToolSet, TurnEvent, NO_ANSWER};

/// The reply's first token where it must be an answer, under a grammar that admits no
/// call's first character (`{`, `<`, a fence's backtick) nor a header's `[`; streamed like
/// the rest. Empty when the model ends at once.
///
/// Chosen greedily whatever the sampling settings: a model given tools puts nearly all
/// its weight on the call's opener here, so what the grammar leaves is the flat tail of
/// its distribution, and a draw at temperature picks noise from it (the 1.5B began
/// "What is 17 times 3?" with "3" and answered "31", "34"). Its best answer token is
/// the start it would write; the rest of the reply is sampled as configured.
pub(super) fn answer_lead(
    engine: &mut dyn Engine,
    conversation: &Conversation,
    opts: &GenerateOptions,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<(String, TurnStats), crate::engine::EngineError> {
    let mut o = opts.clone();
    o.grammar = Some(ANSWER_START.to_string());
    o.max_tokens = Some(1);
    o.sampling = SamplingParams::greedy();
    o.stop = Vec::new();
    o.stop_finder = None;
    let c = engine.generate(&conversation.messages(), &o, &mut |_| {})?;
    tracing::debug!("answer lead: {:?}", c.text);
    if !c.text.is_empty() {
        on_event(TurnEvent::Text(c.text.clone()));
    }
    Ok((c.text, c.stats))
}

/// Said to the model (after the user's message, for that reply only) where the router
/// chose no tool. Held off its call opener alone, a tool-primed model still reaches for
/// a tool in words: in a workspace with no memories the 1.5B began "What is 17 times 3?"
/// with "To calculate 17 times 3, I'll use the multiplication function…" and wrote a
/// shell call for 28 s; with this note it answered "51" (and "Bonjour", "42", a haiku,
/// where without it 1 of those 3 came out right).
pub(super) const NO_TOOL_NOTE: &str =
    "This request needs no tool: answer it yourself, directly and briefly, in plain text.";

/// [`NO_TOOL_NOTE`] where a memory shown with the request answers it. Told only to be
/// brief, the 1.5B answered "Are we going to keep supporting Windows?" with "Yes, we are
/// going to keep supporting Windows." beside the decision to drop it in 2.0.
pub(super) const KNOWN_NOTE: &str = "What is already known (the line after the request) \
answers this: answer from it in plain text, keeping what it says, with its names, versions \
and numbers.";

/// Said after a tool result where the reply must answer, for that reply only: the
/// user's request again, nearest the reply. With the request only above the call and its
/// result, the 1.5B answered "Is there anything I have not committed yet?" with "No"
/// right after a status that listed three changed files. After several results it asks
/// for all of them, and names the files read (`read`) when there were several: having
/// read `LICENSE-MIT` and then `LICENSE-APACHE`, the 1.5B said the project was under the
/// Apache licence.
pub(super) fn result_note(request: &str, results: usize, read: &[String]) -> String {
    let request: String = request.trim().chars().take(MAX_NOTED_REQUEST).collect();
    let from = match (results, read) {
        (0 | 1, _) => "the tool result above".to_string(),
        (_, [_, _, ..]) => format!("all the tool results above ({})", read.join(" and ")),
        _ => "all the tool results above".to_string(),
    };
    format!("Answer the user's request from {from}, in plain text: {request}")
}

/// The request is cut to this many characters in [`result_note`].
const MAX_NOTED_REQUEST: usize = 400;

/// A reply that does not start a call: its first character is no `{`, `<` or backtick;
/// nor `[`, which opens the header of a tool result (`[command: git status → exit 0]`)
/// or of the memory block (`[project facts]`): small models copy those as their answer.
const ANSWER_START: &str = "root ::= [^{<`[\\x00] [^\\x00]*";

/// Room kept for the reply after a tool result, in tokens (at most a quarter of the
/// context).
const REPLY_ROOM: usize = 256;

/// Tokens kept for the round cap's note (`limit_rounds`), added after a result fits.
const NOTE_ROOM: usize = 32;

/// The least of a tool result worth showing, in tokens: a result cut shorter than this
/// says nothing, and its round is dropped instead.
const MIN_RESULT: usize = 48;

/// Whether this turn's tool rounds still fit beside room for the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    /// Everything fits (the newest result may have been cut, and older rounds of this
    /// turn dropped, to make it so).
    Left,
    /// The turn's tokens are spent (`tools.turn_tokens`): the newest result fits (cut,
    /// maybe) and the model answers from the results it has, without calling again.
    Spent,
    /// Not even a short result fits: the turn's rounds were taken out and the model must
    /// answer without calling again.
    None,
}

/// Makes the prompt leave room for a reply after a tool result: a result that would
/// overflow the context otherwise ends the whole turn with "prompt too long". First the
/// newest result is cut (keeping its start, saying so); where that would leave less than
/// [`MIN_RESULT`], the turn's older rounds go first (oldest first); where even then no
/// result fits (the system prompt, tools and memory fill the context), every round of
/// the turn after `user_at` (the user's message) is taken out. Runs before the round
/// cap's short note is added, so it is always a result that is cut.
///
/// `turn_tokens` (when not 0) holds what the turn adds after the turns before it (the
/// request, its evidence, the calls and results) the same way: every token of it is
/// prefilled, and a small model that reads file after file otherwise spends a minute
/// before it answers. Where the newest result takes the turn to its last
/// [`MIN_RESULT`] × 2 tokens it is [`Room::Spent`]: no further result would fit.
pub(super) fn fit_turn(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    opts: &GenerateOptions,
    user_at: usize,
    turn_tokens: usize,
) -> Result<Room, crate::engine::EngineError> {
    let n_ctx = engine.info().n_ctx as usize;
    let reserve = opts
        .max_tokens
        .unwrap_or(REPLY_ROOM)
        .min(REPLY_ROOM)
        .min(n_ctx / 4);
    // The round cap's note may follow the result: room for it too.
    let context_limit = n_ctx.saturating_sub(reserve + NOTE_ROOM);
    let turn_limit = match turn_tokens {
        0 => usize::MAX,
        n => prompt_before(engine, conversation, user_at)? + n.saturating_sub(NOTE_ROOM),
    };
    let limit = context_limit.min(turn_limit);
    let spent = |used: usize| {
        if used + 2 * MIN_RESULT > turn_limit {
            Room::Spent
        } else {
            Room::Left
        }
    };
    loop {
        let used = engine.count_prompt(&conversation.messages())?;
        let Some(last) = conversation.turns().last().filter(|m| m.role == Role::Tool) else {
            return Ok(Room::Left);
        };
        if used <= limit {
            return Ok(spent(used));
        }
        let tokens = engine.count_tokens(&last.content);
        if tokens.saturating_sub(used - limit) >= MIN_RESULT.min(tokens / 2).max(1) {
            cut_last_result(engine, conversation, limit)?;
            let used = engine.count_prompt(&conversation.messages())?;
            return Ok(spent(used));
        }
        if !drop_oldest_round(conversation, user_at) {
            conversation.truncate(user_at + 1);
            return Ok(Room::None);
        }
    }
}

/// The prompt's tokens before the turn's user message (`user_at`): what the turn adds to.
fn prompt_before(
    engine: &mut dyn Engine,
    conversation: &Conversation,
    user_at: usize,
) -> Result<usize, crate::engine::EngineError> {
    let mut before = conversation.messages();
    let after = conversation.turns().len().saturating_sub(user_at);
    before.truncate(before.len().saturating_sub(after));
    engine.count_prompt(&before)
}

/// Cuts the newest result (a few passes: a cut changes how the text tokenizes).
fn cut_last_result(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    limit: usize,
) -> Result<(), crate::engine::EngineError> {
    for _ in 0..4 {
        let used = engine.count_prompt(&conversation.messages())?;
        let Some(last) = conversation.turns().last() else {
            return Ok(());
        };
        if used <= limit {
            return Ok(());
        }
        let chars = last.content.chars().count();
        let tokens = engine.count_tokens(&last.content).max(1);
        let keep = chars.saturating_sub(chars * (used - limit + 16) / tokens + 1);
        let cut: String = last.content.chars().take(keep).collect();
        conversation.replace_last_tool(&format!("{cut}… [result cut to fit the context]"));
    }
    Ok(())
}

/// Takes out this turn's oldest round (a call and its results) when a newer one follows;
/// `false` when only the newest round is left.
fn drop_oldest_round(conversation: &mut Conversation, user_at: usize) -> bool {
    let turns = conversation.turns();
    let first = user_at + 1;
    let next_call = turns
        .iter()
        .enumerate()
        .skip(first + 1)
        .find(|(_, m)| m.role == Role::Assistant)
        .map(|(i, _)| i);
    match next_call {
        Some(next) if turns.get(first).is_some_and(|m| m.role == Role::Assistant) => {
            conversation.remove(first..next);
            true
        }
        _ => false,
    }
}

/// What the user is told when no tool result fits: the model answers without it.
pub(super) fn no_room_notice(n_ctx: u32) -> String {
    format!(
        "no room left in the context (n_ctx {n_ctx}) for the tool's result: the model answers \
without it; a larger engine.n_ctx, fewer tools or /clear makes room"
    )
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
        from_results(conversation)
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
        conversation.push_tool(LIMIT_NOTE);
    }
}

/// Said after the last result a turn may have (its round cap, or its tokens spent).
pub(super) const LIMIT_NOTE: &str =
    "(tool limit for this turn reached: answer the user now, without calling tools)";

/// The reply where the model wrote none past the cap: what the last successful tool
/// result showed (its start), so the user gets what the turn found; [`NO_ANSWER`] when
/// no call succeeded.
pub(super) fn from_results(conversation: &Conversation) -> String {
    // This turn's results only (after its user message), a repeated one by its text.
    let last = conversation
        .turns()
        .iter()
        .rev()
        .take_while(|m| m.role != Role::User)
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            m.content
                .strip_prefix(REUSED_PREFIX)
                .unwrap_or(&m.content)
                .trim()
        })
        .find(|text| {
            !text.starts_with("error: ") && !text.starts_with("(tool limit") && !text.is_empty()
        });
    match last {
        Some(shown) => format!(
            "{FOUND_LEAD}\n{}",
            crate::tools::call::clip(shown, FOUND_CHARS)
        ),
        None => NO_ANSWER.to_string(),
    }
}

/// How [`from_results`] introduces the result it shows.
pub const FOUND_LEAD: &str = "(the model wrote no answer; the last tool result was:)";

/// How much of that result is shown, in characters.
const FOUND_CHARS: usize = 600;

/// What a reused result starts with (see `run_call`).
pub(super) const REUSED_PREFIX: &str =
    "(same call as before; answer the user now from this result) ";

/// Template text a small model may copy at the start of its reply (the tool result's
/// wrapper, our own result header): taken off, with the whitespace after it.
const TEMPLATE_STARTS: &[&str] = &[
    "<tool_response>",
    "</tool_response>",
    "<|im_start|>assistant",
    "[tool result]",
    "[tool_result]",
];

/// The reply without template text at its start (repeatedly: `<tool_response>\n</tool_response>`).
pub(super) fn without_template(text: &str) -> String {
    let mut rest = text.trim_start();
    while let Some(after) = TEMPLATE_STARTS.iter().find_map(|t| rest.strip_prefix(t)) {
        rest = after.trim_start();
    }
    if rest.len() == text.trim_start().len() {
        return text.to_string();
    }
    rest.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_after_several_reads_names_the_files() {
        let read = ["LICENSE-MIT".to_string(), "LICENSE-APACHE".to_string()];
        assert_eq!(
            result_note("Which license?", 2, &read),
            "Answer the user's request from all the tool results above (LICENSE-MIT and LICENSE-APACHE), in plain text: Which license?"
        );
        assert!(result_note("q", 2, &read[..1]).contains("all the tool results above, in"));
        assert!(result_note("q", 1, &read).contains("the tool result above, in"));
    }

    #[test]
    fn template_text_at_the_start_of_a_reply_is_taken_off() {
        assert_eq!(without_template("<tool_response>\nParis"), "Paris");
        assert_eq!(
            without_template(" [tool result] <tool_response></tool_response> 51"),
            "51"
        );
        assert_eq!(
            without_template("Paris <tool_response>"),
            "Paris <tool_response>"
        );
        assert_eq!(without_template("  Paris"), "  Paris");
    }

    #[test]
    fn past_the_cap_the_last_good_result_stands_for_a_missing_answer() {
        let mut c = Conversation::new("s");
        c.push_user("q");
        assert_eq!(from_results(&c), NO_ANSWER);
        c.push_tool("error: not found: x");
        assert_eq!(from_results(&c), NO_ANSWER);
        c.push_tool(&format!("{REUSED_PREFIX}fn main() {{}}"));
        c.push_tool("error: not found: y");
        c.push_tool(
            "(tool limit for this turn reached: answer the user now, without calling tools)",
        );
        assert_eq!(from_results(&c), format!("{FOUND_LEAD}\nfn main() {{}}"));
        // A repeated failure is still a failure; an earlier turn's result is not this one's.
        c.push_user("next");
        c.push_tool(&format!("{REUSED_PREFIX}error: not found: docs/README.md"));
        assert_eq!(from_results(&c), NO_ANSWER);
    }
}
