//! Text attached to the next user message only: command output (`!prog`, `/run`,
//! `/git`), knowledge-base observations (`/kb inject`), a file (`/read`).
//!
//! Each attachment has a label (what it is, for the screen and the session record), its
//! text (already formatted for the model, header included) and its size in tokens of
//! the loaded model. They ride on the next user message, before its text, and are then
//! gone: the cached prefix stays untouched and later turns do not repeat them.

/// One piece of text for the next message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub label: String,
    pub text: String,
    pub tokens: usize,
}

/// What waits for the next user message, in the order it was attached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attachments {
    pending: Vec<Attachment>,
}

impl Attachments {
    pub fn push(&mut self, attachment: Attachment) {
        self.pending.push(attachment);
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    pub fn list(&self) -> &[Attachment] {
        &self.pending
    }

    /// Tokens of everything pending.
    pub fn tokens(&self) -> usize {
        self.pending.iter().map(|a| a.tokens).sum()
    }

    /// Takes everything pending (for one message).
    pub fn take(&mut self) -> Vec<Attachment> {
        std::mem::take(&mut self.pending)
    }

    /// Puts taken attachments back in front (the message they rode on was not sent).
    pub fn restore(&mut self, mut taken: Vec<Attachment>) {
        taken.append(&mut self.pending);
        self.pending = taken;
    }
}

/// The user message as sent: the attachments' texts, then the user's text.
pub fn message_with(attachments: &[Attachment], text: &str) -> String {
    let mut out = String::new();
    for a in attachments {
        out.push_str(a.text.trim_end());
        out.push_str("\n\n");
    }
    out.push_str(text);
    out
}

/// `attached LABEL (N tokens); attached …` for the session record.
pub fn note(attachments: &[Attachment]) -> Option<String> {
    if attachments.is_empty() {
        return None;
    }
    let parts: Vec<String> = attachments
        .iter()
        .map(|a| format!("attached {} ({} tokens)", a.label, a.tokens))
        .collect();
    Some(parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(label: &str, text: &str, tokens: usize) -> Attachment {
        Attachment {
            label: label.into(),
            text: text.into(),
            tokens,
        }
    }

    #[test]
    fn attachments_ride_on_one_message_in_order() {
        let mut pending = Attachments::default();
        pending.push(a("ls", "[command: ls → exit 0]\nsrc\n", 9));
        pending.push(a("cat", "[command: cat x → exit 0]\nhi", 8));
        assert_eq!(pending.tokens(), 17);
        let taken = pending.take();
        assert!(pending.is_empty());
        assert_eq!(
            message_with(&taken, "what now?"),
            "[command: ls → exit 0]\nsrc\n\n[command: cat x → exit 0]\nhi\n\nwhat now?"
        );
        assert_eq!(
            note(&taken).unwrap(),
            "attached ls (9 tokens); attached cat (8 tokens)"
        );
        pending.push(a("later", "x", 1));
        pending.restore(taken);
        let labels: Vec<&str> = pending.list().iter().map(|a| a.label.as_str()).collect();
        assert_eq!(labels, ["ls", "cat", "later"]);
        assert_eq!(note(&[]), None);
    }
}
