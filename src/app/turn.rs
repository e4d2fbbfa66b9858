//! What a turn starts from (the session-start recall, the evidence block) and what it
//! leaves behind (a skill run instead, the stats, the record).

use super::App;
use crate::chat::agent::{AgentTurn, TurnEvent};
use crate::chat::TurnError;

impl App {
    /// What a turn starts from: the session-start recall's step (at the first message)
    /// and, for a `plain` turn (no skill), the evidence block with its step.
    pub(super) fn turn_context(
        &mut self,
        text: &str,
        plain: bool,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> (Vec<crate::chat::agent::Step>, Option<crate::evidence::Block>) {
        let mut steps: Vec<_> = self
            .first_message_recall(text, on_event)
            .into_iter()
            .collect();
        let evidence = plain
            .then(|| self.timed_evidence(text, &mut steps, on_event))
            .flatten();
        (steps, evidence)
    }

    /// After the turn loop: a failed turn keeps what was `attached` for the next
    /// message; a turn the router gave to a skill runs the skill instead; any other turn
    /// gets its `recall` steps first and is recorded.
    pub(super) fn settle_turn(
        &mut self,
        text: &str,
        turn: Result<AgentTurn, TurnError>,
        attached: Vec<crate::chat::attachment::Attachment>,
        recall: Vec<crate::chat::agent::Step>,
        skill: Option<(&crate::skills::Skill, &str)>,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Result<AgentTurn, TurnError> {
        let mut turn = match turn {
            Ok(t) => t,
            Err(e) => {
                // Not sent: what was attached waits for the next message.
                self.attachments.restore(attached);
                return Err(e);
            }
        };
        if let Some(crate::chat::route::Route::Skill(name)) = &turn.route {
            // Not sent either: the skill's turn takes the attachments.
            self.attachments.restore(attached);
            let earlier: Vec<_> = recall.into_iter().chain(turn.steps).collect();
            return self.run_chosen_skill(name, text, earlier, on_event);
        }
        self.pending_notes
            .extend(crate::chat::attachment::note(&attached));
        turn.steps.splice(0..0, recall);
        self.after_turn(text, &turn, skill);
        Ok(turn)
    }

    /// What a finished turn leaves behind: its compression, stats, steps and thought for
    /// `/status`, the skill's scene and the exchange in the record.
    fn after_turn(
        &mut self,
        text: &str,
        turn: &AgentTurn,
        skill: Option<(&crate::skills::Skill, &str)>,
    ) {
        if let Some(c) = &turn.compression {
            self.compressions.push(c.clone());
        }
        self.turns.push(turn.completion.stats.clone());
        self.last_steps.clone_from(&turn.steps);
        if turn.thought.is_some() {
            self.last_thought.clone_from(&turn.thought);
        }
        if let Some((skill, speech)) = skill {
            self.record_skill(skill, speech);
        }
        self.record(text, turn);
    }

    /// The session-start recall, once per session at its first message — also when the
    /// session continues a recorded one (`--resume`, `/session continue`), whose turns are
    /// already there. Returns its step (none after the first message).
    fn first_message_recall(
        &mut self,
        text: &str,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Option<crate::chat::agent::Step> {
        use crate::chat::agent::{Step, StepKind};
        if self.injection.is_some() {
            return None;
        }
        let started = std::time::Instant::now();
        if let Some(injection) = self.inject_memory(text) {
            on_event(TurnEvent::Notice(injection.summary_line()));
        }
        if let Some(note) = self.over_fixed_cap() {
            on_event(TurnEvent::Notice(note));
        }
        let step = Step::timed(StepKind::Recall, "", started);
        on_event(TurnEvent::Step(step.clone()));
        Some(step)
    }
}
