//! What older turns become when they leave the prompt: the summarizer's input (the
//! user's words, each call's one-line summary, a tool result's first line and size, the
//! answers) and the short line that stands for turns folded without the model until
//! their summary is written. Whole tool results never go in: a 146-line file read costs
//! the summarizer its first line, not its 2,000 tokens. Pure functions on messages.

use crate::engine::{Message, Role};
use crate::tools::call::{clip, parse_call};

/// Longest user message or answer the summarizer reads, in characters: a bound on what
/// one message brings, not a budget (the chunks are measured in tokens).
const MESSAGE_CHARS: usize = 600;

/// Longest tool-result line the summarizer reads, in characters.
const RESULT_CHARS: usize = 120;

/// Longest question the fold line quotes, in characters.
const QUESTION_CHARS: usize = 100;

/// Turns the fold line lists (the newest); older ones are counted.
const LISTED_TURNS: usize = 6;

/// One line per message for the summarizer.
pub fn digest_lines(turns: &[Message]) -> Vec<String> {
    turns
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let is_call =
                m.role == Role::Assistant && turns.get(i + 1).is_some_and(|n| n.role == Role::Tool);
            match m.role {
                Role::Assistant if is_call => format!("Assistant called {}", call_line(m)),
                Role::Tool => format!("Tool result: {}", result_line(&m.content)),
                Role::User => format!("User: {}", one_line(&m.content, MESSAGE_CHARS)),
                Role::Assistant => format!("Assistant: {}", one_line(&m.content, MESSAGE_CHARS)),
                Role::System => format!("System: {}", one_line(&m.content, MESSAGE_CHARS)),
            }
        })
        .collect()
}

/// What the summary message says after turns were folded without the model: the
/// newest written summary, then the folded turns' questions and calls (the newest
/// [`LISTED_TURNS`]), so the model still knows what was asked and done.
pub fn placeholder(written: Option<&str>, folded: &[Message]) -> String {
    let mut turns: Vec<String> = Vec::new();
    for (i, m) in folded.iter().enumerate() {
        match m.role {
            Role::User => turns.push(format!("\"{}\"", one_line(&m.content, QUESTION_CHARS))),
            Role::Assistant if folded.get(i + 1).is_some_and(|n| n.role == Role::Tool) => {
                if let Some(last) = turns.last_mut() {
                    last.push_str(&format!(" ({})", call_line(m)));
                }
            }
            _ => {}
        }
    }
    let hidden = turns.len().saturating_sub(LISTED_TURNS);
    let mut listed = turns[hidden..].join("; ");
    if hidden > 0 {
        listed = format!("{hidden} earlier requests; then {listed}");
    }
    let asked = format!("earlier the user asked: {listed}.");
    match written.map(str::trim).filter(|w| !w.is_empty()) {
        Some(w) => format!("{w} Since then (not summarized yet) {asked}"),
        None => format!("not summarized yet; {asked}"),
    }
}

/// `name({"arg":…})` for a call message, else its text on one line.
fn call_line(m: &Message) -> String {
    m.content
        .find('{')
        .and_then(|at| parse_call(&m.content[at..]).ok())
        .map_or_else(|| one_line(&m.content, RESULT_CHARS), |c| c.summary())
}

/// A tool result's first non-empty line and its size.
fn result_line(text: &str) -> String {
    let lines = text.lines().count();
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first = clip(first.trim(), RESULT_CHARS);
    match lines {
        0 | 1 => first,
        n => format!("{first} … ({n} lines)"),
    }
}

fn one_line(text: &str, max: usize) -> String {
    clip(&text.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_turn() -> Vec<Message> {
        let file: String = (1..=146)
            .map(|i| format!("line {i} of the file\n"))
            .collect();
        vec![
            Message::new(Role::User, "Read src/quant.rs"),
            Message::new(
                Role::Assistant,
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/quant.rs\"}}</tool_call>",
            ),
            Message::new(Role::Tool, format!("[file src/quant.rs]\n{file}")),
            Message::new(Role::Assistant, "It quantizes vectors\nto int8."),
        ]
    }

    #[test]
    fn the_digest_keeps_calls_and_answers_not_whole_results() {
        let lines = digest_lines(&read_turn());
        assert_eq!(
            lines,
            [
                "User: Read src/quant.rs",
                "Assistant called read_file({\"path\":\"src/quant.rs\"})",
                "Tool result: [file src/quant.rs] … (147 lines)",
                "Assistant: It quantizes vectors to int8.",
            ]
        );
        let long = "word ".repeat(400);
        let clipped = &digest_lines(&[Message::new(Role::User, long)])[0];
        assert!(clipped.chars().count() <= "User: ".len() + MESSAGE_CHARS + 1);
    }

    #[test]
    fn the_fold_line_lists_questions_and_calls_after_the_written_summary() {
        let turn = read_turn();
        assert_eq!(
            placeholder(None, &turn),
            "not summarized yet; earlier the user asked: \"Read src/quant.rs\" (read_file({\"path\":\"src/quant.rs\"}))."
        );
        let mut many = Vec::new();
        for i in 0..8 {
            many.push(Message::new(Role::User, format!("question {i}")));
            many.push(Message::new(Role::Assistant, "answer"));
        }
        assert_eq!(
            placeholder(Some("They met."), &many),
            "They met. Since then (not summarized yet) earlier the user asked: 2 earlier requests; then \"question 2\"; \"question 3\"; \"question 4\"; \"question 5\"; \"question 6\"; \"question 7\"."
        );
    }
}
