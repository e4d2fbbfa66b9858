//! The rounds of a turn: a call the router chose, run with the router's next step, or
//! the model's own generation (a call it makes, or the reply that ends the turn).

use crate::chat::route::Route;
use crate::engine::{Completion, Engine, GenerateOptions, StopReason};

use super::answer::Room;
use super::calls::one_call;
use super::chosen::{chosen_call, Chosen};
use super::one_reply::reply;
use super::routing::next_step;
use super::timing::{Step, StepKind};
use super::{
    after_call, call_in_text, last_reply, opening, CallRecord, Conversation, Seen, Thoughts,
    ToolSet, TurnEvent,
};

/// What a round left: the next round's state, or the turn's last reply.
pub(super) enum Round {
    Next(Room),
    Done(Completion),
}

/// What the model may do in a generated round.
#[derive(Clone, Copy)]
pub(super) struct Asked<'s, 'a> {
    pub(super) tools: Option<&'s ToolSet<'a>>,
    pub(super) may_call: bool,
    pub(super) must_answer: bool,
    pub(super) routed_answer: bool,
}

/// A turn's state that each round works on.
pub(super) struct Turn<'t> {
    pub(super) engine: &'t mut dyn Engine,
    pub(super) conversation: &'t mut Conversation,
    pub(super) opts: &'t GenerateOptions,
    pub(super) calls: &'t mut Vec<CallRecord>,
    pub(super) seen: &'t mut Seen,
    pub(super) user_at: usize,
}

impl Turn<'_> {
    /// `record` kept with the turn's calls, and the room left for another round.
    fn after(
        &mut self,
        set: &ToolSet<'_>,
        record: CallRecord,
    ) -> Result<Room, crate::engine::EngineError> {
        after_call(
            self.engine,
            self.conversation,
            self.opts,
            set,
            self.calls,
            record,
            self.user_at,
        )
    }

    /// The call the router chose, run; then the router's next step: another tool, the
    /// answer from this result, or (a failed call it could not follow up) the model.
    pub(super) fn routed(
        &mut self,
        set: &ToolSet<'_>,
        name: &str,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Result<(Room, (Option<Route>, bool)), crate::engine::EngineError> {
        let chosen = Chosen {
            name,
            calls: self.calls,
        };
        let (engine, conversation, opts) = (&mut *self.engine, &mut *self.conversation, self.opts);
        let record = chosen_call(engine, conversation, opts, set, chosen, self.seen, on_event)?;
        let ok = record.result.is_ok();
        let next = if self.calls.len() + 1 < set.max_rounds {
            next_step(engine, set, opts, (self.calls, &record), on_event)?
        } else {
            None
        };
        let room = self.after(set, record)?;
        let next = match next.filter(|_| room == Room::Left) {
            Some(Route::Tool(name)) => (Some(Route::Tool(name)), false),
            Some(Route::Answer) => (None, true),
            // A skill is only ever a first step (the router proper names none).
            Some(Route::Skill(_)) | None => (None, ok),
        };
        Ok((room, next))
    }

    /// The model's own round: a call it makes (run, and the turn goes on) or the reply
    /// that ends the turn.
    pub(super) fn generated(
        &mut self,
        asked: Asked<'_, '_>,
        thoughts: &mut Thoughts,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Result<Round, crate::engine::EngineError> {
        let (engine, conversation, opts) = (&mut *self.engine, &mut *self.conversation, self.opts);
        let tools = asked.tools;
        let started = std::time::Instant::now();
        let (o, lead, found, mut c) = reply(
            engine,
            conversation,
            opts,
            tools,
            (asked.must_answer, asked.routed_answer),
            on_event,
        )?;
        c.text.insert_str(0, &lead);
        thoughts.take(engine, &mut c);
        let head = found.lock().ok().and_then(|mut h| h.take());
        let callable = tools.filter(|_| asked.may_call);
        let kind = match (callable, c.stop) {
            (Some(_), StopReason::StopString) => StepKind::Call,
            _ => StepKind::Answer,
        };
        Step::generation(kind, "", &c.stats, started).send(on_event);
        let record = match (callable, c.stop) {
            (Some(set), StopReason::EndOfGeneration) => {
                call_in_text(engine, conversation, set, &c.text, self.seen, on_event)
            }
            (Some(set), StopReason::StopString) => {
                let opening = opening(set.forms, std::mem::take(&mut c.text), head);
                let call = one_call(
                    engine,
                    conversation,
                    opts,
                    set,
                    opening,
                    self.seen,
                    on_event,
                );
                Some(call?)
            }
            _ => None,
        };
        match (record, callable.or(tools)) {
            (Some(record), Some(set)) => Ok(Round::Next(self.after(set, record)?)),
            _ => {
                let capped = tools.filter(|_| !asked.may_call);
                let c = last_reply(engine, conversation, &o, capped, c, on_event)?;
                Ok(Round::Done(c))
            }
        }
    }
}
