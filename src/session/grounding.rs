//! Whether a mined memory is grounded in the session, complete and specific: the check
//! every proposal from end-of-session mining must pass before it is saved.
//!
//! A proposal carries `evidence`, a short quote of the session chunk the model was given.
//! The rules, in the order they are applied:
//! - **incomplete**: the description, summary or action hit its grammar bound (the model
//!   was cut off) or ends mid-phrase: an open `(` or backtick, a trailing comma, colon or
//!   hyphen, or a last word such as "and", "the", "to".
//! - **not grounded**: the evidence does not occur in one message of the chunk (compared
//!   as words: case, whitespace and punctuation are ignored; the first and last word may be
//!   cut), or it occurs only in a question, or only in the assistant's words that do not
//!   quote the workspace. Who said it decides: the **user** and **tool results** state
//!   facts about their workspace; the **assistant** is a small model that gives generic
//!   advice and invents details, so its words count only when they quote a workspace file
//!   (the evidence occurs in one of the `workspace` texts the caller read, or every one of
//!   its two or more specific words does). Only the session's messages are searched, never the
//!   mining prompt, the system prompt or the injected `[memory context]`.
//! - **generic**: no topic word of the description or summary (stopwords and generic
//!   shell advice such as touch, ls, git status, file, run removed) occurs in the evidence:
//!   the memory says something the quote does not, or nothing specific to this workspace;
//!   or the evidence names exact values (a number, a path, a file name, an identifier) and
//!   the memory keeps none of them.
//!
//! Pure functions on strings: no engine, no I/O (the caller reads the workspace files).

use std::fmt;

use crate::memory::query::is_topic;

/// Who said a piece of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    User,
    Assistant,
    /// A tool's result (the session record does not keep them today; supported so a
    /// caller that has them can pass them).
    Tool,
}

impl Speaker {
    pub fn label(self) -> &'static str {
        match self {
            Speaker::User => "User",
            Speaker::Assistant => "Assistant",
            Speaker::Tool => "Tool",
        }
    }
}

/// One message, or one piece of an oversized message, of the chunk the model was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub speaker: Speaker,
    pub text: String,
}

impl Said {
    pub fn new(speaker: Speaker, text: impl Into<String>) -> Self {
        Said {
            speaker,
            text: text.into(),
        }
    }
}

/// What a proposal claims, with the limits its fields had in the grammar (a field of
/// exactly its limit was cut by it).
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    pub description: &'a str,
    pub summary: &'a str,
    pub action: &'a str,
    pub evidence: &'a str,
    /// Grammar bounds of description, summary and action, in characters.
    pub limits: (usize, usize, usize),
}

/// Why a proposal was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    NotGrounded,
    Incomplete,
    Generic,
    Duplicate,
    Secret,
}

impl DropReason {
    pub const ALL: [DropReason; 5] = [
        DropReason::NotGrounded,
        DropReason::Incomplete,
        DropReason::Generic,
        DropReason::Duplicate,
        DropReason::Secret,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::NotGrounded => "not_grounded",
            DropReason::Incomplete => "incomplete",
            DropReason::Generic => "generic",
            DropReason::Duplicate => "duplicate",
            DropReason::Secret => "secret",
        }
    }
}

/// Dropped proposals counted by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops {
    counts: [usize; 5],
}

impl Drops {
    pub fn add(&mut self, reason: DropReason) {
        self.counts[reason as usize] += 1;
    }

    pub fn count(&self, reason: DropReason) -> usize {
        self.counts[reason as usize]
    }

    pub fn total(&self) -> usize {
        self.counts.iter().sum()
    }
}

/// `2 not_grounded, 1 generic` (reasons with a count only); empty when nothing dropped.
impl fmt::Display for Drops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = DropReason::ALL
            .iter()
            .filter(|r| self.count(**r) > 0)
            .map(|r| format!("{} {}", self.count(*r), r.as_str()))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// Workspace texts (files the session names, the README), split into words once.
#[derive(Debug, Default)]
pub struct Workspace {
    docs: Vec<Vec<String>>,
}

impl Workspace {
    pub fn new(texts: &[String]) -> Self {
        Workspace {
            docs: texts.iter().map(|t| words(t)).collect(),
        }
    }

    /// Whether `evidence` quotes one of the texts: as a run of words, or by containing at
    /// least two specific words (topic words not in [`GENERIC`]: "you can add `--tz
    /// Europe/Oslo` to your command" quotes a README that says `--tz Europe/Oslo`), every
    /// one of which occurs in the same text.
    fn is_quoted(&self, evidence: &[String]) -> bool {
        let topics: Vec<&String> = evidence
            .iter()
            .filter(|w| is_topic(w) && !GENERIC.contains(&w.as_str()))
            .collect();
        self.docs.iter().any(|doc| {
            occurs(evidence, doc).is_some()
                || (topics.len() >= 2 && topics.iter().all(|t| doc.contains(t)))
        })
    }
}

/// Checks one proposal against the chunk it came from.
pub fn check(claim: &Claim, chunk: &[Said], workspace: &Workspace) -> Result<(), DropReason> {
    let (d, s, a) = claim.limits;
    let complete = is_complete(claim.description, d)
        && (claim.summary.trim().is_empty() || is_complete(claim.summary, s))
        && (claim.action.trim().is_empty() || is_complete(claim.action, a));
    if !complete {
        return Err(DropReason::Incomplete);
    }
    if !is_grounded(claim.evidence, chunk, workspace) {
        return Err(DropReason::NotGrounded);
    }
    if is_generic(claim) {
        return Err(DropReason::Generic);
    }
    Ok(())
}

/// Words that end a phrase that goes on: a text ending with one was cut.
const DANGLING: &[&str] = &[
    "a", "an", "and", "as", "at", "because", "but", "by", "e", "eg", "for", "from", "if", "in",
    "into", "is", "are", "of", "on", "or", "so", "than", "that", "the", "then", "to", "via",
    "when", "which", "while", "with", "without",
];

/// An optional field (summary, action) cut at its grammar bound `limit`, ended at its last
/// full sentence instead: "Port 8080. The proxy forwards to the ap" → "Port 8080.". A
/// text that is already complete comes back as is; one with no full sentence before the
/// cut comes back empty (the memory keeps its description). The description has no
/// such rescue: it is the memory.
pub fn to_last_sentence(text: &str, limit: usize) -> String {
    if is_complete(text, limit) {
        return text.to_string();
    }
    let t = text.trim_end();
    let mut ends = t
        .char_indices()
        .filter(|(i, c)| {
            matches!(c, '.' | '!' | '?')
                && t[i + 1..].chars().next().is_some_and(char::is_whitespace)
        })
        .map(|(i, _)| i + 1);
    ends.rfind(|&end| is_complete(&t[..end], limit))
        .map(|end| t[..end].to_string())
        .unwrap_or_default()
}

/// Whether `text` is a finished phrase: shorter than its grammar bound `limit` (a text
/// of exactly the bound was cut there), no open bracket or backtick, and no trailing
/// comma, colon, hyphen or word such as "and".
pub fn is_complete(text: &str, limit: usize) -> bool {
    let t = text.trim();
    if t.is_empty() || text.chars().count() >= limit {
        return false;
    }
    let opens = |o: char, c: char| t.matches(o).count() > t.matches(c).count();
    if opens('(', ')') || opens('[', ']') || opens('{', '}') || t.matches('`').count() % 2 == 1 {
        return false;
    }
    if t.ends_with([',', ':', ';', '-', '/', '\\', '&', '|', '+', '=', '\'', '<']) {
        return false;
    }
    let last = words(t).pop().unwrap_or_default();
    !DANGLING.contains(&last.as_str()) || t.ends_with(['.', '!', '?', ')', '`', '"'])
}

/// Whether `evidence` occurs in one message of the chunk said by someone who counts
/// (see the module comment), outside a question.
pub fn is_grounded(evidence: &str, chunk: &[Said], workspace: &Workspace) -> bool {
    let quote = words(strip_label(evidence));
    if quote.is_empty() || !quote.iter().any(|w| is_topic(w)) {
        return false;
    }
    chunk.iter().any(|said| {
        let (said_words, in_question) = words_and_questions(&said.text);
        let Some(at) = occurs(&quote, &said_words) else {
            return false;
        };
        let is_question = in_question[at..at + quote.len()].iter().all(|q| *q);
        !is_question
            && match said.speaker {
                Speaker::User | Speaker::Tool => true,
                Speaker::Assistant => workspace.is_quoted(&quote),
            }
    })
}

/// Topic words that say nothing about a particular workspace: generic shell and file
/// advice a small model offers whatever the question.
const GENERIC: &[&str] = &[
    "add",
    "always",
    "apt",
    "ask",
    "asked",
    "assistant",
    "cat",
    "cd",
    "change",
    "changes",
    "check",
    "clone",
    "code",
    "command",
    "commands",
    "commit",
    "conversation",
    "cp",
    "create",
    "details",
    "diff",
    "directory",
    "echo",
    "edit",
    "example",
    "file",
    "filename",
    "files",
    "folder",
    "git",
    "good",
    "help",
    "information",
    "install",
    "log",
    "ls",
    "make",
    "mkdir",
    "mv",
    "new",
    "open",
    "practice",
    "project",
    "pull",
    "push",
    "pwd",
    "question",
    "rm",
    "run",
    "running",
    "save",
    "session",
    "shell",
    "status",
    "sudo",
    "sure",
    "terminal",
    "tip",
    "touch",
    "txt",
    "user",
];

/// Whether the memory says nothing specific the quote says: no specific topic word of the
/// description or summary occurs in the evidence, or the evidence names an exact value (a
/// number, a path or file name, an identifier: see [`exact_values`]) and the memory keeps
/// none of them. Sharing a topic word is not stating the quote's fact: the 1.5B turned "The
/// web service listens on port 8080 behind nginx." into "This setup is common for deploying
/// web services using Nginx as a reverse proxy.", which shares "nginx" and loses the port.
pub fn is_generic(claim: &Claim) -> bool {
    let exact = exact_values(claim.evidence);
    if !exact.is_empty() {
        let memory =
            format!("{} {} {}", claim.description, claim.summary, claim.action).to_lowercase();
        // A path also counts by its last part (`./deploy.sh` kept as `deploy.sh`).
        let kept = |v: &String| {
            let last = v.rsplit('/').next().unwrap_or(v);
            memory.contains(v.as_str()) || (!last.is_empty() && memory.contains(last))
        };
        if !exact.iter().any(kept) {
            return true;
        }
    }
    shares_no_topic(claim)
}

/// The words of `text` that name an exact value, lowercased, their surrounding
/// punctuation trimmed: one with a digit (`8080`, `v1.2`), a path (`./deploy.sh`,
/// `src/main.rs`), a dotted file name (`server.toml`) or an identifier with `_`.
pub fn exact_values(text: &str) -> Vec<String> {
    let edge = |c: char| !(c.is_alphanumeric() || c == '.' || c == '/' || c == '_');
    text.split_whitespace()
        .map(|w| w.trim_matches(edge).trim_end_matches('.').to_lowercase())
        .filter(|w| {
            let dotted = w
                .trim_start_matches('.')
                .split('.')
                .filter(|p| !p.is_empty())
                .count()
                >= 2;
            w.chars().any(|c| c.is_ascii_digit()) || w.contains('/') || w.contains('_') || dotted
        })
        .collect()
}

/// Whether no specific topic word of the description or summary occurs in the evidence.
fn shares_no_topic(claim: &Claim) -> bool {
    let specific = |text: &str| -> Vec<String> {
        words(text)
            .into_iter()
            .filter(|w| is_topic(w) && !GENERIC.contains(&w.as_str()))
            .map(|w| stem(&w))
            .collect()
    };
    let evidence = specific(claim.evidence);
    let claimed = specific(&format!("{} {}", claim.description, claim.summary));
    !claimed.iter().any(|w| evidence.contains(w))
}

/// `building`, `builds`, `built`… close enough to compare: common suffixes cut.
fn stem(word: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(base) = word.strip_suffix(suffix) {
            if base.len() >= 3 {
                return base.to_string();
            }
        }
    }
    word.to_string()
}

/// A leading `User:` / `Assistant:` / `Tool:` the model may copy from the chunk.
fn strip_label(evidence: &str) -> &str {
    let t = evidence.trim();
    for s in [Speaker::User, Speaker::Assistant, Speaker::Tool] {
        let label = s.label();
        if t.len() > label.len()
            && t[..label.len()].eq_ignore_ascii_case(label)
            && t[label.len()..].starts_with(':')
        {
            return &t[label.len() + 1..];
        }
    }
    t
}

/// The lowercased words of `text` (runs of letters and digits).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The words of `text`, each with whether its sentence is a question (ends with `?`).
/// Sentences end at `?`, `!`, a line break, or a `.` followed by a space or the end (so
/// `./deploy.sh` stays one sentence).
fn words_and_questions(text: &str) -> (Vec<String>, Vec<bool>) {
    let (mut all, mut flags) = (Vec::new(), Vec::new());
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        let next_is_space = chars.get(i + 1).is_none_or(|(_, n)| n.is_whitespace());
        let ends = matches!(c, '?' | '!' | '\n') || (c == '.' && next_is_space);
        let is_last = i + 1 == chars.len();
        if ends || is_last {
            let end = at + c.len_utf8();
            let sentence = &text[start..end];
            let w = words(sentence);
            flags.extend(std::iter::repeat_n(
                sentence.trim_end().ends_with('?'),
                w.len(),
            ));
            all.extend(w);
            start = end;
        }
    }
    (all, flags)
}

/// Where `quote` occurs in `text` as a run of words; its first word may be the end of a
/// word and its last the start of one (a quote cut at its bound, or starting mid-word).
fn occurs(quote: &[String], text: &[String]) -> Option<usize> {
    let n = quote.len();
    if n == 0 || n > text.len() {
        return None;
    }
    (0..=text.len() - n).find(|&i| {
        quote.iter().enumerate().all(|(k, q)| {
            let w = &text[i + k];
            match (k == 0, k == n - 1) {
                _ if w == q => true,
                (true, true) => w.contains(q.as_str()),
                (true, false) => w.ends_with(q.as_str()),
                (false, true) => w.starts_with(q.as_str()),
                (false, false) => false,
            }
        })
    })
}

#[cfg(test)]
mod tests;
