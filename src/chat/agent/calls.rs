//! Running one call of a turn: decoding it under its grammar, the questions a tool that
//! asks or writes puts to the user (with the turn's guard on writes), and its result
//! appended in the tool role.

use crate::engine::{Engine, GenerateOptions, TurnStats};
use crate::tools::{parse_call, Approval, ToolCall, ToolContext, ToolError};

use super::timing::{Step, StepKind};
use super::{focus, hits};
use super::{guard, CallRecord, Conversation, Opening, Seen, ToolSet, TurnEvent, MAX_RESULT_CHARS};

/// A call of a tool that asks: its preview (a refusal there ends it without asking),
/// the diff shown when someone can answer, the question, then the call.
fn ask_and_call(
    set: &ToolSet<'_>,
    conversation: &Conversation,
    call: &ToolCall,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<String, ToolError> {
    let writes_files = set
        .registry
        .get(&call.name)
        .is_some_and(|t| t.writes_files());
    let asker = if writes_files { set.ask_files } else { set.ask };
    if let (None, true) = (asker, writes_files) {
        if let Some(refusal) = guard::unattended_write_after_data(conversation) {
            return Err(refusal);
        }
    }
    let preview = set.registry.preview(&call.name, &call.arguments)?;
    let approval = match (asker, preview) {
        // Unattended, a memory change goes through only where the user's words ask for it.
        (None, _) if change_asked(set, call) => Approval::Allowed,
        (None, _) => Approval::NobodyToAsk,
        (Some(ask), Some(p)) => {
            on_event(TurnEvent::Diff(p.diff));
            yes(ask(&p.question))
        }
        (Some(ask), None) => yes(ask(&call.summary())),
    };
    set.registry
        .call_approved(&call.name, &call.arguments, approval)
}

/// Whether `call` changes or forgets a memory that the user's own words ask to change
/// or forget, and speak of ([`crate::chat::route::memory`]): read through `memory_read`.
fn change_asked(set: &ToolSet<'_>, call: &ToolCall) -> bool {
    use crate::chat::route::memory::{asked_for, speaks_of};
    let Some(id) = call
        .arguments
        .get("id")
        .filter(|_| asked_for(&call.name, set.request))
    else {
        return false;
    };
    let mut args = serde_json::Map::new();
    args.insert("id".into(), id.clone());
    set.registry
        .call("memory_read", &args)
        .is_ok_and(|text| speaks_of(set.request, &text))
}

fn yes(allowed: bool) -> Approval {
    if allowed {
        Approval::Allowed
    } else {
        Approval::Declined
    }
}

/// Decodes the call that `opening` began under its grammar (after its head, which is
/// prefilled), appends it to the conversation as the assistant's text, then runs it.
pub(super) fn one_call(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    opts: &GenerateOptions,
    set: &ToolSet<'_>,
    opening: Opening,
    seen: &mut Seen,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<CallRecord, crate::engine::EngineError> {
    let prefix = format!("{}{}{}", opening.before, opening.opener, opening.head);
    let mut o = opts.clone();
    o.stop = Vec::new();
    o.stop_finder = None;
    // The opening's own grammar bounds this call (one tool's worst case when the router
    // chose it): a smaller cap than every tool's leaves the router's kept prompt in place.
    let cap = crate::tools::grammar::call_max_tokens(&opening.grammar).min(set.max_call_tokens);
    o.grammar = Some(opening.grammar);
    o.assistant_prefix = Some(prefix.clone());
    o.max_tokens = Some(cap);
    let started = std::time::Instant::now();
    // A call the request fixed whole is written, not decoded: its text is prefilled with
    // the answer's prompt.
    let (text, stats) = match opening.fixed {
        Some(rest) => {
            conversation.push_assistant(&format!("{prefix}{rest}"));
            (Ok(rest), TurnStats::default())
        }
        None => {
            let out = engine.generate(&conversation.messages(), &o, &mut |_| {})?;
            conversation.push_assistant(&format!("{prefix}{}", out.text));
            (out.grammar_output().map(str::to_string), out.stats)
        }
    };
    // Only a call whose grammar completed is parsed; a cut-off one is an error result.
    let parsed = match &text {
        Ok(text) => parse_call(&format!("{}{text}", opening.head)),
        Err(stop) => Err(ToolError::CutOff(stop.as_str())),
    };
    let name = parsed.as_ref().map_or("", |c| c.name.as_str());
    Step::generation(StepKind::Call, name, &stats, started).send(on_event);
    let counter = Counting(&*engine);
    Ok(run_call(
        conversation,
        set,
        parsed,
        seen,
        &counter,
        on_event,
    ))
}

/// The engine's tokenizer as a tool call's token counter (the engine is idle while a
/// tool runs).
pub(super) struct Counting<'a>(pub(super) &'a dyn Engine);

impl crate::tokens::TokenCounter for Counting<'_> {
    fn count_tokens(&self, text: &str) -> usize {
        self.0.count_tokens(text)
    }
}

/// Runs a parsed call (or reports why it could not be parsed) and appends its result in
/// the tool role.
pub(super) fn run_call(
    conversation: &mut Conversation,
    set: &ToolSet<'_>,
    parsed: Result<ToolCall, ToolError>,
    seen: &mut Seen,
    counter: &Counting<'_>,
    on_event: &mut dyn FnMut(TurnEvent),
) -> CallRecord {
    let ctx = ToolContext {
        counter: Some(counter),
        provenance: None,
    };
    let (call, result, reused) = match parsed {
        Ok(call) => {
            on_event(TurnEvent::ToolCall(call.summary()));
            let key = call.key();
            let reused = seen.contains_key(&key);
            let result = match seen.get(&key) {
                Some(r) => r.clone(),
                None => {
                    let started = std::time::Instant::now();
                    let r = approve_and_call(set, conversation, &call, seen, ctx, on_event);
                    Step::timed(StepKind::Tool, call.name.as_str(), started).send(on_event);
                    r
                }
            };
            seen.entry(key).or_insert_with(|| result.clone());
            (Some(call), result, reused)
        }
        Err(e) => (None, Err(e), false),
    };
    let text = match (&result, &call) {
        (Ok(t), Some(c)) if c.name == "read_file" => {
            focus::focused(set.request, &c.arguments, t, counter)
                .unwrap_or_else(|| crate::tools::call::clip(t, MAX_RESULT_CHARS))
        }
        (Ok(t), Some(c)) if c.name == "search_files" => {
            let ordered = hits::code_first(set.request, t);
            crate::tools::call::clip(ordered.as_deref().unwrap_or(t), MAX_RESULT_CHARS)
        }
        (Ok(t), _) => crate::tools::call::clip(t, MAX_RESULT_CHARS),
        (Err(e), _) => format!("error: {e}"),
    };
    let shown = if reused {
        format!("{}{text}", super::answer::REUSED_PREFIX)
    } else {
        text
    };
    tracing::debug!("tool result the model reads:\n{shown}");
    on_event(TurnEvent::ToolResult {
        is_error: result.is_err(),
        text: shown.clone(),
        reused,
    });
    conversation.push_tool(&shown);
    CallRecord {
        call,
        result,
        reused,
    }
}

/// A first call: asked about where the tool asks or writes memory, then run. A memory
/// write passes the turn's guard first ([`guard::memory_write`]).
fn approve_and_call(
    set: &ToolSet<'_>,
    conversation: &Conversation,
    call: &ToolCall,
    seen: &Seen,
    ctx: ToolContext<'_>,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<String, ToolError> {
    let tool = set.registry.get(&call.name);
    let writes = tool.is_some_and(|t| t.writes());
    if tool.is_some_and(|t| t.asks()) {
        return ask_and_call(set, conversation, call, on_event);
    }
    let mut ctx = ctx;
    let cleared;
    let mut arguments = std::borrow::Cow::Borrowed(&call.arguments);
    let mut confirm = set.confirm;
    if tool.is_some_and(|t| t.remembers()) {
        cleared = guard::memory_write(set, conversation, call, seen)?;
        ctx.provenance = Some(&cleared.provenance);
        let args = arguments.to_mut();
        args.insert("type".into(), cleared.mtype.clone().into());
        if let Some(words) = &cleared.description {
            args.insert("description".into(), words.clone().into());
            args.remove("summary");
            args.remove("body");
        }
        if cleared.approved {
            confirm = None;
        }
    }
    match (confirm, writes) {
        (Some(None), true) => Err(ToolError::Refused(
            "memory writes need the user's confirmation (tools.confirm_memory_writes) and this session cannot ask; tell the user what you would save".into(),
        )),
        (Some(Some(ask)), true) if !ask(&call.summary()) => Err(ToolError::Refused(
            "the user declined this write; do not retry it".into(),
        )),
        _ => set
            .registry
            .call_in(&call.name, &arguments, Approval::NobodyToAsk, ctx),
    }
}
