//! The messages of one session, system prompt first, append-only.

use crate::engine::{Message, Role};

#[derive(Debug, Clone)]
pub struct Conversation {
    system: String,
    messages: Vec<Message>,
}

impl Conversation {
    pub fn new(system: impl Into<String>) -> Self {
        Self {
            system: system.into(),
            messages: Vec::new(),
        }
    }

    /// Everything the model sees, system prompt first.
    pub fn messages(&self) -> Vec<Message> {
        let mut all = Vec::with_capacity(self.messages.len() + 1);
        all.push(Message::new(Role::System, self.system.clone()));
        all.extend(self.messages.iter().cloned());
        all
    }

    pub fn push_user(&mut self, text: &str) {
        self.messages.push(Message::new(Role::User, text));
    }

    pub fn push_assistant(&mut self, text: &str) {
        self.messages.push(Message::new(Role::Assistant, text));
    }

    /// Removes the newest message if it is the user's (a turn that was never answered).
    pub fn pop_user(&mut self) {
        if self.messages.last().is_some_and(|m| m.role == Role::User) {
            self.messages.pop();
        }
    }

    /// Forgets the conversation; the system prompt stays.
    pub fn clear(&mut self) {
        self.messages.clear();
    }

    /// Number of user messages.
    pub fn turn_count(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count()
    }
}
