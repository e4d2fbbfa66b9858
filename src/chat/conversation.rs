//! The messages of one session: the system prompt, the pinned `[memory context]`, the
//! rolling summary of compressed turns, then the turns themselves, append-only.
//!
//! That order keeps the stable part first so the KV cache survives: compressing replaces
//! old turns by a summary that sits right after the pinned messages, which are never
//! folded into it.

use crate::engine::{Message, Role};

/// Prefix of the message that replaces compressed turns.
pub const SUMMARY_PREFIX: &str = "[Session history compressed — summary: ";

#[derive(Debug, Clone)]
pub struct Conversation {
    system: String,
    context: Option<String>,
    summary: Option<String>,
    messages: Vec<Message>,
}

impl Conversation {
    pub fn new(system: impl Into<String>) -> Self {
        Self {
            system: system.into(),
            context: None,
            summary: None,
            messages: Vec::new(),
        }
    }

    /// Everything the model sees, in prompt order.
    pub fn messages(&self) -> Vec<Message> {
        let mut all = self.pinned();
        all.extend(self.messages.iter().cloned());
        all
    }

    /// System prompt, memory context and summary: what precedes the turns.
    pub fn pinned(&self) -> Vec<Message> {
        let mut all = Vec::with_capacity(3);
        all.push(Message::new(Role::System, self.system.clone()));
        if let Some(context) = &self.context {
            all.push(Message::new(Role::User, context.clone()));
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

    /// Pins the `[memory context]` block right after the system prompt.
    pub fn set_context(&mut self, context: Option<String>) {
        self.context = context.filter(|c| !c.trim().is_empty());
    }

    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }

    pub fn summary(&self) -> Option<&str> {
        self.summary.as_deref()
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

    pub fn push_tool(&mut self, text: &str) {
        self.messages.push(Message::new(Role::Tool, text));
    }

    /// Drops turn messages after the first `len` (undoing a failed turn).
    pub fn truncate(&mut self, len: usize) {
        self.messages.truncate(len);
    }

    /// Removes the newest message if it is the user's (a turn that was never answered).
    pub fn pop_user(&mut self) {
        if self.messages.last().is_some_and(|m| m.role == Role::User) {
            self.messages.pop();
        }
    }

    /// Replaces the first `n_messages` turn messages by `summary`.
    pub fn fold(&mut self, n_messages: usize, summary: String) {
        let n = n_messages.min(self.messages.len());
        self.messages.drain(..n);
        self.summary = Some(summary);
    }

    /// Forgets the conversation and its summary; system prompt and context stay.
    pub fn clear(&mut self) {
        self.messages.clear();
        self.summary = None;
    }

    /// Number of user messages.
    pub fn turn_count(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count()
    }
}
