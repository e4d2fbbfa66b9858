//! The messages of one session: the system prompt, the pinned `[memory context]`, the
//! user's pinned context (`/context add|pin`), the rolling summary of compressed turns,
//! then the turns themselves, append-only.
//!
//! That order keeps the stable part first so the KV cache survives: compressing replaces
//! old turns by a summary that sits right after the pinned messages, which are never
//! folded into it, and `/clear` drops only the summary and the turns. Pinning text
//! changes the prompt after the memory context only, so the system prompt and the
//! memory context stay cached.

use crate::engine::{Message, Role};

/// Prefix of the message that replaces compressed turns.
pub const SUMMARY_PREFIX: &str = "[Session history compressed — summary: ";

/// First line of the message that holds the user's pinned context.
pub const PINNED_HEADER: &str = "[pinned context — kept for the whole session]";

/// One piece of pinned context: what it is (for `/context`) and its text as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub label: String,
    pub text: String,
}

/// What precedes the memory block when it is a system turn of its own: the model reads
/// it as its notes, not as something the user said (a user turn made the 0.5B Qwen model
/// repeat the block back).
pub const CONTEXT_PREFACE: &str = "Your notes from earlier sessions in this workspace follow. They are fallible: the user and the workspace files win. Use them silently; never repeat, list or quote them unless asked.\n";

/// What follows the memory block in a system turn: small models follow the last thing
/// they read, so it says only what holds for every message: the notes are not to be
/// repeated. (An earlier "now answer the user's message" made small models answer
/// workspace questions from the notes instead of calling a tool.)
pub const CONTEXT_CLOSER: &str = "(End of notes. Do not repeat them to the user.)";

#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    system: String,
    context: Option<String>,
    /// The role the memory block is sent in: a second system turn where the template
    /// renders one, else a user turn.
    context_role: Role,
    pins: Vec<Pin>,
    /// What the summary message says: the newest model-written summary, followed by a
    /// short list of the turns folded since without the model.
    summary: Option<String>,
    /// The newest summary the model wrote (what the next one builds on).
    written: Option<String>,
    /// Turns taken out to make room without the model (oldest first): the summary of
    /// them is written later, while the user reads or types.
    folded: Vec<Message>,
    messages: Vec<Message>,
}

impl Conversation {
    pub fn new(system: impl Into<String>) -> Self {
        Self {
            system: system.into(),
            context: None,
            context_role: Role::User,
            pins: Vec::new(),
            summary: None,
            written: None,
            folded: Vec::new(),
            messages: Vec::new(),
        }
    }

    /// Everything the model sees, in prompt order.
    pub fn messages(&self) -> Vec<Message> {
        let mut all = self.pinned();
        all.extend(self.messages.iter().cloned());
        all
    }

    /// System prompt, memory context, pinned context and summary: what precedes the turns.
    pub fn pinned(&self) -> Vec<Message> {
        let mut all = Vec::with_capacity(4);
        all.push(Message::new(Role::System, self.system.clone()));
        if let Some(context) = &self.context {
            all.push(self.context_message(context));
        }
        if let Some(pins) = self.pins_message() {
            all.push(pins);
        }
        if let Some(summary) = &self.summary {
            all.push(Message::new(
                Role::User,
                format!("{SUMMARY_PREFIX}{summary}]"),
            ));
        }
        all
    }

    pub fn system(&self) -> &str {
        &self.system
    }

    /// Replaces the system prompt (a model switch: the new template may list the tools).
    pub fn set_system(&mut self, system: String) {
        self.system = system;
    }

    /// The message that carries a memory block (see [`CONTEXT_PREFACE`]).
    pub fn context_message(&self, context: &str) -> Message {
        match self.context_role {
            Role::System => Message::new(
                Role::System,
                format!("{CONTEXT_PREFACE}{}\n{CONTEXT_CLOSER}", context.trim_end()),
            ),
            role => Message::new(role, context),
        }
    }

    /// Sends the memory block as a system turn (`true`, for templates that render a
    /// second system message) or a user turn.
    pub fn set_context_as_system(&mut self, as_system: bool) {
        self.context_role = if as_system { Role::System } else { Role::User };
    }

    /// Pins the `[memory context]` block right after the system prompt.
    pub fn set_context(&mut self, context: Option<String>) {
        self.context = context.filter(|c| !c.trim().is_empty());
    }

    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }

    /// Adds text to the pinned context (after what is pinned already).
    pub fn pin(&mut self, pin: Pin) {
        self.pins.push(pin);
    }

    /// Takes back the newest pin (one that did not fit).
    pub fn unpin_last(&mut self) -> Option<Pin> {
        self.pins.pop()
    }

    /// Drops the pinned context; returns what was pinned.
    pub fn unpin_all(&mut self) -> Vec<Pin> {
        std::mem::take(&mut self.pins)
    }

    pub fn pins(&self) -> &[Pin] {
        &self.pins
    }

    /// The one message holding every pin, `None` when nothing is pinned.
    pub fn pins_message(&self) -> Option<Message> {
        if self.pins.is_empty() {
            return None;
        }
        let texts: Vec<&str> = self.pins.iter().map(|p| p.text.trim_end()).collect();
        Some(Message::new(
            Role::User,
            format!("{PINNED_HEADER}\n{}", texts.join("\n\n")),
        ))
    }

    pub fn summary(&self) -> Option<&str> {
        self.summary.as_deref()
    }

    /// The newest summary the model wrote (without the list of turns folded since).
    pub fn written_summary(&self) -> Option<&str> {
        self.written.as_deref()
    }

    /// Turns taken out without the model whose summary is still to be written.
    pub fn folded(&self) -> &[Message] {
        &self.folded
    }

    /// The turns (everything after the pinned messages).
    pub fn turns(&self) -> &[Message] {
        &self.messages
    }

    pub fn push_user(&mut self, text: &str) {
        self.messages.push(Message::new(Role::User, text));
    }

    pub fn push_assistant(&mut self, text: &str) {
        self.messages.push(Message::new(Role::Assistant, text));
    }

    /// A note to the model among the turns, in the memory block's role (a system turn
    /// where the template renders a second one, else a user turn); taken out again with
    /// [`Conversation::remove`] when it is meant for one reply only.
    pub fn push_note(&mut self, text: &str) {
        self.messages.push(Message::new(self.context_role, text));
    }

    pub fn push_tool(&mut self, text: &str) {
        self.messages.push(Message::new(Role::Tool, text));
    }

    /// Replaces the text of the newest message when it is a tool result (cut to fit).
    pub fn replace_last_tool(&mut self, text: &str) {
        if let Some(m) = self.messages.last_mut().filter(|m| m.role == Role::Tool) {
            m.content = text.to_string();
        }
    }

    /// Drops turn messages after the first `len` (undoing a failed turn).
    pub fn truncate(&mut self, len: usize) {
        self.messages.truncate(len);
    }

    /// Takes out turn messages `range` (a tool round that no longer fits).
    pub fn remove(&mut self, range: std::ops::Range<usize>) {
        if range.start <= range.end && range.end <= self.messages.len() {
            self.messages.drain(range);
        }
    }

    /// Rewrites every user message but the newest `keep` ones as `words` of it (a message
    /// that `words` leaves as it is stays untouched); how many changed.
    pub fn shorten_older_user_messages(&mut self, keep: usize, words: fn(&str) -> &str) -> usize {
        let users: Vec<usize> = (0..self.messages.len())
            .filter(|&i| self.messages[i].role == Role::User)
            .collect();
        let older = users.len().saturating_sub(keep);
        let mut changed = 0;
        for &i in &users[..older] {
            let short = words(&self.messages[i].content);
            if short.len() < self.messages[i].content.len() {
                self.messages[i].content = short.to_string();
                changed += 1;
            }
        }
        changed
    }

    /// Removes the newest message if it is the user's (a turn that was never answered).
    pub fn pop_user(&mut self) {
        if self.messages.last().is_some_and(|m| m.role == Role::User) {
            self.messages.pop();
        }
    }

    /// Replaces the first `n_messages` turn messages, and the turns folded before
    /// without the model, by `summary` (the model's summary of all of them).
    pub fn fold(&mut self, n_messages: usize, summary: String) {
        let n = n_messages.min(self.messages.len());
        self.messages.drain(..n);
        self.folded.clear();
        self.written = Some(summary.clone());
        self.summary = Some(summary);
    }

    /// Takes the first `n_messages` turn messages out without a summary of them: the
    /// summary message says `shown` instead until the model's summary is written
    /// ([`Self::fold`]).
    pub fn fold_unsummarized(&mut self, n_messages: usize, shown: String) {
        let n = n_messages.min(self.messages.len());
        self.folded.extend(self.messages.drain(..n));
        self.summary = Some(shown);
    }

    /// Forgets the conversation and its summary; system prompt, memory context and the
    /// pinned context stay.
    pub fn clear(&mut self) {
        self.messages.clear();
        self.summary = None;
        self.written = None;
        self.folded.clear();
    }

    /// Number of user messages.
    pub fn turn_count(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_sit_after_the_memory_context_and_survive_clear() {
        let mut c = Conversation::new("sys");
        c.set_context(Some("[memory context] m".into()));
        c.pin(Pin {
            label: "text".into(),
            text: "always answer in French".into(),
        });
        c.pin(Pin {
            label: "file notes.md".into(),
            text: "[file notes.md]\nhello\n".into(),
        });
        c.push_user("hi");
        c.push_assistant("salut");
        let all = c.messages();
        assert_eq!(all.len(), 5);
        assert_eq!(all[1].content, "[memory context] m");
        assert_eq!(
            all[2].content,
            format!("{PINNED_HEADER}\nalways answer in French\n\n[file notes.md]\nhello")
        );
        c.fold(2, "they said hello".into());
        c.clear();
        assert_eq!(c.messages().len(), 3, "system, memory context, pins");
        assert_eq!(c.unpin_all().len(), 2);
        assert!(c.pins_message().is_none());
        assert_eq!(c.messages().len(), 2);
    }
}
