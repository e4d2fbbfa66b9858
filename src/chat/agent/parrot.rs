//! A reply that repeats the note harvey gave the model for it, instead of answering: the
//! 0.5B answered "Are we going to keep supporting Windows?", with the decision to drop it
//! in view, by "Yes, the line after the request answers this: answer from it in plain
//! text, …" (`harvey bench --agent --fixture project`). Such a reply is replaced by what
//! the note pointed at: the memory shown with the request, or the last tool result.
//!
//! Pure: reads text and the conversation.

use crate::engine::Role;

use super::super::Conversation;
use super::answer::{from_results, KNOWN_NOTE};

/// Words in a row of the note that make a reply a copy of it.
const RUN: usize = 6;

/// How the memory line shown with a request begins ([`crate::memory::about`]).
const KNOWN_LEAD: &str = "(already known: ";

/// How the answer from a memory line begins where the model only repeated the note.
pub const KNOWN_INSTEAD: &str = "From what is already known: ";

/// Fewest words of a reply that can be an echo of the request ([`echoes_request`]).
const ECHO_WORDS: usize = 3;

fn words(t: &str) -> Vec<String> {
    t.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `reply` repeats [`RUN`] words in a row of `note`, other than a run of the
/// user's `request` (the result note ends with it): asked "Remember that we plan to drop
/// the Gemma test fixture next month.", the 1.5B saved it and confirmed "We plan to drop
/// the Gemma test fixture next month.", which is an answer.
pub(super) fn parrots(note: &str, request: &str, reply: &str) -> bool {
    let (note, request, reply) = (words(note), words(request), words(reply));
    note.windows(RUN)
        .filter(|run| !request.windows(RUN).any(|r| r == *run))
        .any(|run| reply.windows(RUN).any(|r| r == run))
}

/// Whether `reply` only says the user's request again (its first line): at least
/// [`ECHO_WORDS`] words, every one the request's, and either the request's words in its
/// order or a question again. After a status that listed an uncommitted file and two
/// listings, the 1.5B answered "Is there anything I have not committed yet?" with those
/// very words. "The README does mention tides" for "Does the README mention tides?" is an
/// answer, not an echo.
pub(super) fn echoes_request(conversation: &Conversation, reply: &str) -> bool {
    let Some(request) = conversation
        .turns()
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        // The user's words, not the block sent before them.
        .and_then(|m| crate::evidence::block::words_of(&m.content).lines().next())
    else {
        return false;
    };
    let asks_again = reply.trim_end().ends_with('?');
    let (request, reply) = (words(request), words(reply));
    reply.len() >= ECHO_WORDS
        && reply.iter().all(|w| request.contains(w))
        && (asks_again || reply == request)
}

/// What stands for a reply that repeated `note`: the memory line of the turn's request
/// where the note was [`KNOWN_NOTE`], else the last tool result ([`from_results`]) where
/// the turn has one; `None` where there is nothing to show instead.
pub(super) fn instead(note: &str, conversation: &Conversation) -> Option<String> {
    if note == KNOWN_NOTE {
        let request = conversation
            .turns()
            .iter()
            .rev()
            .find(|m| m.role == Role::User)?;
        let known = request
            .content
            .lines()
            .find_map(|l| l.trim().strip_prefix(KNOWN_LEAD)?.strip_suffix(')'))?;
        return Some(format!("{KNOWN_INSTEAD}{known}"));
    }
    let has_result = conversation
        .turns()
        .iter()
        .rev()
        .take_while(|m| m.role != Role::User)
        .any(|m| m.role == Role::Tool);
    has_result.then(|| from_results(conversation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_that_copies_six_words_of_the_note_parrots_it() {
        let copied = "Yes, the line after the request answers this: answer from it in plain text.";
        assert!(parrots(KNOWN_NOTE, "", copied));
        assert!(!parrots(
            KNOWN_NOTE,
            "",
            "No: Windows support is dropped in 2.0."
        ));
        assert!(
            !parrots(KNOWN_NOTE, "", "the line after the request"),
            "five words"
        );
        let request = "Remember that we plan to drop the Gemma test fixture next month.";
        let note = super::super::answer::result_note(request, 1, &[]);
        assert!(
            !parrots(
                &note,
                request,
                "We plan to drop the Gemma test fixture next month."
            ),
            "the request's own words confirmed"
        );
        assert!(parrots(
            &note,
            request,
            "Answer the user's request from the tool result above."
        ));
    }

    #[test]
    fn a_reply_made_of_the_request_s_words_echoes_it() {
        let mut c = Conversation::new("s");
        c.push_user("Is there anything I have not committed yet?\n(files named like this: x)");
        assert!(echoes_request(
            &c,
            "Is there anything I have not committed yet?"
        ));
        assert!(echoes_request(&c, "anything not committed yet?"));
        assert!(
            !echoes_request(&c, "anything not committed yet"),
            "not a question"
        );
        // Sent with a block of memories: the words after it are the request.
        let mut m = Conversation::new("s");
        let request = "The auth service decision is outdated. Delete that memory.";
        m.push_user(&format!(
            "{}\n--- memory project_fact_1\n- auth uses PostgreSQL\n\n{request}\n{}",
            crate::evidence::block::MEMORY_HEADER,
            crate::evidence::block::MEMORY_NOTE
        ));
        assert!(echoes_request(&m, request));
        let mut d = Conversation::new("s");
        d.push_user("Does the README mention tides?");
        assert!(!echoes_request(&d, "The README does mention tides."));
        assert!(!echoes_request(&c, "Yes."), "too short to tell");
        assert!(!echoes_request(
            &c,
            "Yes: notes/todo.md is not committed yet."
        ));
        assert!(!echoes_request(
            &Conversation::new("s"),
            "anything not committed yet"
        ));
    }

    #[test]
    fn instead_of_the_note_the_memory_or_the_last_result() {
        let mut c = Conversation::new("s");
        c.push_user(
            "Are we going to keep supporting Windows?\n(already known: windows: dropped in 2.0.)",
        );
        assert_eq!(
            instead(KNOWN_NOTE, &c).as_deref(),
            Some("From what is already known: windows: dropped in 2.0.")
        );
        let note = "Answer the user's request from the tool result above, in plain text: q";
        assert_eq!(instead(note, &c), None, "no result this turn");
        c.push_tool("25 posts");
        assert!(instead(note, &c).unwrap().ends_with("25 posts"));
        let mut plain = Conversation::new("s");
        plain.push_user("What is 2 + 2?");
        assert_eq!(instead(KNOWN_NOTE, &plain), None);
    }
}
