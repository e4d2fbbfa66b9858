//! The call the router chose: its tool's entry fitted to the request ([`fit_call`]),
//! opened for the model with the tool's name prefilled, and run.

use crate::engine::{Engine, GenerateOptions};

use super::calls::one_call;
use super::{fit_call, steps, CallRecord, Conversation, Opening, Seen, ToolSet, TurnEvent};

/// The call the router chose, and the turn's calls before it.
pub(super) struct Chosen<'a> {
    pub(super) name: &'a str,
    pub(super) calls: &'a [CallRecord],
}

/// The paths of `calls` that were read.
fn read_paths(calls: &[CallRecord]) -> Vec<String> {
    calls
        .iter()
        .filter(|c| c.result.is_ok())
        .filter_map(|c| c.call.as_ref())
        .filter(|c| c.name == "read_file")
        .filter_map(|c| c.arguments.get("path")?.as_str().map(str::to_string))
        .collect()
}

/// Opens the call the router chose for the model, which writes its arguments under that
/// tool's grammar, fitted to the request ([`fit_call`]); then runs it.
pub(super) fn chosen_call(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    opts: &GenerateOptions,
    set: &ToolSet<'_>,
    Chosen { name, calls }: Chosen<'_>,
    seen: &mut Seen,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<CallRecord, crate::engine::EngineError> {
    let (opener, form) = &set.forms.chosen;
    let mut tool: Vec<_> = set
        .registry
        .list()
        .into_iter()
        .filter(|t| t.name == name)
        .collect();
    let defined = super::definition::definition_found(set.request, calls).map(|(path, line)| {
        let span = super::definition::definition_span(set.registry, &path, line);
        (path, span)
    });
    // The file of the exchange before this turn's message.
    let turns = conversation.turns();
    let earlier = turns
        .iter()
        .rposition(|m| m.role == crate::engine::Role::User)
        .and_then(|at| steps::previous_path(&turns[..at], &set.registry.list()));
    let asking = fit_call::Asking {
        words: set.request,
        hinted: set.route.unwrap_or(set.request),
        read: &read_paths(calls),
        found: &steps::found_lines(calls),
        defined: defined.as_ref().map(|(path, span)| (path.as_str(), *span)),
        earlier: earlier.as_deref(),
    };
    fit_call::fit_to_request(&mut tool, &asking);
    // One tool: its name and arguments key are prefilled, not decoded a token at a time;
    // where the request fixed every argument, the rest is written too.
    let opening = match tool.as_slice() {
        [one] => {
            let split = crate::tools::grammar::chosen_split(one, *form);
            Opening {
                before: String::new(),
                opener: opener.clone(),
                head: split.head,
                grammar: split.rest,
                fixed: crate::tools::grammar::fixed_rest(one, *form),
            }
        }
        _ => Opening {
            before: String::new(),
            opener: opener.clone(),
            head: String::new(),
            grammar: crate::tools::grammar::call_grammar_for(&tool, *form),
            fixed: None,
        },
    };
    one_call(engine, conversation, opts, set, opening, seen, on_event)
}
