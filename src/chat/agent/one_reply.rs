//! One reply of a turn: its options (the family's openers as stops, the JSON call
//! watcher; where it must be an answer, the opener banned and its first token decoded),
//! and the note where the router chose no tool.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::engine::{Completion, Engine, GenerateOptions, StopReason, TurnStats};

use super::super::call_watch::{self, JsonHead};
use super::super::prompt_echo;
use super::super::Conversation;
use super::answer::{answer_lead, result_note, KNOWN_NOTE, NO_TOOL_NOTE};
use super::guard::{files_read_this_turn, results_this_turn};
use super::{generate_sorted, parrot, ToolSet, TurnEvent};

/// One reply of the turn with its options (see [`reply_options`]; `must_answer`, and
/// whether the router chose no tool). Where the router said no tool the model is told
/// so ([`NO_TOOL_NOTE`], or [`KNOWN_NOTE`] where a memory shown with the request answers
/// it) for this reply only: the note is not kept in the conversation.
pub(super) fn reply(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    opts: &GenerateOptions,
    tools: Option<&ToolSet<'_>>,
    (must_answer, routed_answer): (bool, bool),
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<(GenerateOptions, String, Found, Completion), crate::engine::EngineError> {
    let after_result = must_answer
        && conversation
            .turns()
            .last()
            .is_some_and(|m| m.role == crate::engine::Role::Tool);
    let note = match tools {
        Some(t) if routed_answer && t.remembered => Some(KNOWN_NOTE.to_string()),
        Some(_) | None if routed_answer => Some(NO_TOOL_NOTE.to_string()),
        Some(t) if after_result => {
            let read = files_read_this_turn(conversation, &t.registry.list());
            Some(result_note(
                t.request,
                results_this_turn(conversation),
                &read,
            ))
        }
        _ => None,
    };
    let noted = note.as_ref().map(|text| {
        conversation.push_note(text);
        conversation.turns().len() - 1
    });
    let reply = answered(engine, conversation, opts, tools, must_answer, on_event);
    if let Some(at) = noted {
        conversation.remove(at..at + 1);
    }
    let (o, lead, found, mut c) = reply?;
    let request = tools.map_or("", |t| t.request);
    let Some(note) = note.filter(|n| parrot::parrots(n, request, &format!("{lead}{}", c.text)))
    else {
        return Ok((o, lead, found, c));
    };
    // A reply that only repeated the note: what the note pointed at stands for it, else
    // the reply is asked for once more without the note.
    on_event(TurnEvent::Notice(PARROTED.into()));
    match parrot::instead(&note, conversation) {
        Some(text) => {
            on_event(TurnEvent::Text(text.clone()));
            c.text = text;
            Ok((o, String::new(), found, c))
        }
        None => answered(engine, conversation, opts, tools, must_answer, on_event),
    }
}

/// One generation under [`reply_options`], its stop said as [`StopReason::PromptEcho`]
/// where the reply ran on into harvey's prompt ([`prompt_echo`]).
fn answered(
    engine: &mut dyn Engine,
    conversation: &Conversation,
    opts: &GenerateOptions,
    tools: Option<&ToolSet<'_>>,
    must_answer: bool,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<(GenerateOptions, String, Found, Completion), crate::engine::EngineError> {
    let echoed = Arc::new(AtomicBool::new(false));
    let (mut o, lead, found, first) =
        reply_options(engine, conversation, opts, tools, must_answer, on_event)?;
    let echo = prompt_echo::finder(conversation.system());
    o.stop_finder = Some(prompt_echo::after(
        o.stop_finder.take(),
        echo,
        echoed.clone(),
    ));
    let mut c = generate_sorted(engine, conversation, &o, on_event)?;
    c.stats = c.stats.after(&first);
    if echoed.load(Ordering::Relaxed) {
        tracing::debug!("reply ended where it began to copy the prompt");
        c.stop = StopReason::PromptEcho;
    }
    Ok((o, lead, found, c))
}

/// Said where a reply repeated harvey's note and is replaced ([`parrot`]).
const PARROTED: &str =
    "(the model repeated harvey's instructions instead of answering; what they pointed at:)";

/// What the watcher found: the JSON head of a call that stopped the stream.
pub(super) type Found = Arc<Mutex<Option<JsonHead>>>;

/// One reply's options: the family's openers as stops and the JSON call watcher; where
/// the reply must be an answer (the router said so, or its chosen call has returned),
/// the opener banned and the first token already decoded as `lead` (the reply's start),
/// with that token's generation counters (default where there is no lead).
fn reply_options(
    engine: &mut dyn Engine,
    conversation: &Conversation,
    opts: &GenerateOptions,
    tools: Option<&ToolSet<'_>>,
    must_answer: bool,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<(GenerateOptions, String, Found, TurnStats), crate::engine::EngineError> {
    let mut o = opts.clone();
    let mut lead = String::new();
    let mut first = TurnStats::default();
    if let Some(set) = tools.filter(|_| must_answer) {
        // The family's own opener is held back and the reply may not open with JSON, so
        // the model answers (a call it still writes after some text is read as usual).
        o.banned = set.forms.openers.clone();
        (lead, first) = answer_lead(engine, conversation, &o, on_event)?;
        o.assistant_prefix = (!lead.is_empty()).then(|| lead.clone());
    }
    let found: Found = Arc::new(Mutex::new(None));
    if let Some(set) = tools {
        o.stop = set.forms.openers.clone();
        let names = set
            .registry
            .list()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        o.stop_finder = Some(call_watch::finder(names, found.clone()));
    }
    Ok((o, lead, found, first))
}
