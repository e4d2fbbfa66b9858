//! Reasoning models (DeepSeek-R1 distills, Qwen3, …) write `<think>…</think>` before the
//! answer. The thought is shown apart and never stored: not in the conversation history,
//! so not in summaries or mined memories, and not in the session record's reply text
//! (the record keeps it as a note).
//!
//! Pure text handling: [`split`] for a finished reply, [`ThinkStream`] for streamed
//! pieces (a tag split across pieces is held back until it is clear).

pub const OPEN: &str = "<think>";
pub const CLOSE: &str = "</think>";

/// A reply split into its thought and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Split {
    /// The text between the tags (trimmed); `None` when the reply has no thought.
    pub thought: Option<String>,
    /// What the user was told: everything outside the thought, trimmed at the start.
    pub answer: String,
}

/// Splits a finished reply. A thought is recognised at the start of the reply (after
/// white space): `<think>…</think>`, or `…</think>` when the template already opened the
/// tag in the prompt. A thought that never closed (cut by `max_tokens`) is all thought.
pub fn split(reply: &str) -> Split {
    let start = reply.trim_start();
    let opened_in_prompt = reply
        .find(CLOSE)
        .is_some_and(|at| !reply[..at].contains(OPEN));
    let body = match start.strip_prefix(OPEN) {
        Some(rest) => rest,
        None if opened_in_prompt => start,
        None => {
            return Split {
                thought: None,
                answer: reply.to_string(),
            }
        }
    };
    let (thought, answer) = match body.find(CLOSE) {
        Some(at) => (&body[..at], body[at + CLOSE.len()..].trim_start()),
        None => (body, ""),
    };
    Split {
        thought: Some(thought.trim().to_string()),
        answer: answer.to_string(),
    }
}

/// The answer part of `reply` (the reply itself when it has no thought).
pub fn answer(reply: &str) -> String {
    split(reply).answer
}

/// One piece of streamed text, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Thought(String),
    Answer(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing but white space seen yet: a thought may still open.
    Start,
    Thinking,
    Answering,
}

/// Sorts streamed pieces into thought and answer as they arrive.
#[derive(Debug)]
pub struct ThinkStream {
    state: State,
    pending: String,
    /// White space right after a thought is dropped (the answer starts at its text).
    trim_lead: bool,
}

impl Default for ThinkStream {
    fn default() -> Self {
        Self {
            state: State::Start,
            pending: String::new(),
            trim_lead: false,
        }
    }
}

impl ThinkStream {
    /// Adds a piece; returns what can be shown now.
    pub fn push(&mut self, piece: &str) -> Vec<Part> {
        self.pending.push_str(piece);
        let mut parts = Vec::new();
        loop {
            let before = (self.state, self.pending.len());
            self.step(&mut parts);
            if (self.state, self.pending.len()) == before {
                break;
            }
        }
        parts
    }

    /// Releases what is held back (the reply ended).
    pub fn finish(&mut self) -> Vec<Part> {
        let rest = std::mem::take(&mut self.pending);
        match self.state {
            _ if rest.is_empty() => Vec::new(),
            State::Thinking => vec![Part::Thought(rest)],
            _ => vec![Part::Answer(rest)],
        }
    }

    /// Whether the reply is inside a thought now.
    pub fn is_thinking(&self) -> bool {
        self.state == State::Thinking
    }

    fn step(&mut self, parts: &mut Vec<Part>) {
        match self.state {
            State::Start => {
                let trimmed = self.pending.trim_start();
                if let Some(rest) = trimmed.strip_prefix(OPEN) {
                    self.pending = rest.to_string();
                    self.state = State::Thinking;
                } else if !OPEN.starts_with(trimmed)
                    || (trimmed.is_empty() && self.pending.len() > 64)
                {
                    self.state = State::Answering;
                }
            }
            State::Thinking => {
                if let Some(at) = self.pending.find(CLOSE) {
                    let thought = self.pending[..at].to_string();
                    self.pending = self.pending[at + CLOSE.len()..].to_string();
                    if !thought.is_empty() {
                        parts.push(Part::Thought(thought));
                    }
                    self.state = State::Answering;
                    self.trim_lead = true;
                } else {
                    let keep = held_back(&self.pending, CLOSE);
                    let shown = self.pending.len() - keep;
                    if shown > 0 {
                        parts.push(Part::Thought(self.pending[..shown].to_string()));
                        self.pending.drain(..shown);
                    }
                }
            }
            State::Answering => {
                if self.trim_lead {
                    let text = self.pending.trim_start();
                    if text.is_empty() {
                        self.pending.clear();
                        return;
                    }
                    self.pending = text.to_string();
                    self.trim_lead = false;
                }
                if !self.pending.is_empty() {
                    parts.push(Part::Answer(std::mem::take(&mut self.pending)));
                }
            }
        }
    }
}

/// Bytes at the end of `text` that could be the start of `tag`.
fn held_back(text: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| {
            text.len() >= n
                && text.is_char_boundary(text.len() - n)
                && tag.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(pieces: &[&str]) -> (String, String) {
        let mut s = ThinkStream::default();
        let mut thought = String::new();
        let mut answer = String::new();
        let mut parts: Vec<Part> = pieces.iter().flat_map(|p| s.push(p)).collect();
        parts.extend(s.finish());
        for p in parts {
            match p {
                Part::Thought(t) => thought.push_str(&t),
                Part::Answer(a) => answer.push_str(&a),
            }
        }
        (thought, answer)
    }

    #[test]
    fn split_finished_replies() {
        let s = split("<think>\nThe user greets me.\n</think>\n\nHello!");
        assert_eq!(s.thought.as_deref(), Some("The user greets me."));
        assert_eq!(s.answer, "Hello!");
        let s = split("  <think>cut off mid-thou");
        assert_eq!(s.thought.as_deref(), Some("cut off mid-thou"));
        assert_eq!(s.answer, "");
        // The template opened the tag in the prompt.
        let s = split("plan it</think>Done.");
        assert_eq!(s.thought.as_deref(), Some("plan it"));
        assert_eq!(s.answer, "Done.");
        let plain = split("No thought here, but <think> is mentioned.");
        assert_eq!(plain.thought, None);
        assert_eq!(plain.answer, "No thought here, but <think> is mentioned.");
        assert_eq!(answer("x <think>y</think> z"), "x <think>y</think> z");
    }

    #[test]
    fn streamed_tags_split_across_pieces() {
        let (t, a) = stream(&["<th", "ink>ste", "p one</th", "ink>", "\nThe answer."]);
        assert_eq!(t, "step one");
        assert_eq!(a, "The answer.");
        let (t, a) = stream(&["Just ", "an answer <thi", "nk>"]);
        assert_eq!(t, "");
        assert_eq!(a, "Just an answer <think>");
        let (t, a) = stream(&["<think>x</think>", "\n\n", " ", "Answer."]);
        assert_eq!((t.as_str(), a.as_str()), ("x", "Answer."));
        let (t, a) = stream(&["\n", "<think>", "never closed"]);
        assert_eq!(t, "never closed");
        assert_eq!(a, "");
    }

    #[test]
    fn stream_and_split_agree() {
        let reply = "<think>a < b, so </thin and more</think>  Yes: a < b.";
        let pieces: Vec<String> = reply.chars().map(String::from).collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let (t, a) = stream(&refs);
        let s = split(reply);
        assert_eq!(s.thought.as_deref(), Some(t.trim()));
        assert_eq!(s.answer, a);
    }
}
