//! The session summary (map-reduce over a whole transcript) and its tags: the closing
//! work of a session, run aside like the rolling summary, and sharing its prompt.

use crate::engine::gbnf::{self, GrammarBoundError};
use crate::engine::{AbortFlag, Engine, EngineError, Message, Role, StopReason};
use crate::text::chunk_lines;

use super::{speaker, summary_options, summary_prompt, SUMMARY_MAX_TOKENS};

/// A session summary by map-reduce: each chunk of the transcript that fits the context
/// is summarized on its own (map), then the chunk summaries are merged into one (reduce,
/// repeated while the merged input is still too big). Never one oversized prompt.
pub fn summarize_map_reduce(
    engine: &mut dyn Engine,
    turns: &[Message],
    abort: &AbortFlag,
) -> Result<String, EngineError> {
    let lines: Vec<String> = turns
        .iter()
        .map(|m| format!("{}: {}", speaker(m.role), m.content.trim()))
        .collect();
    let room = engine.aside_room();
    let overhead = engine.count_prompt(&summary_prompt(None, "", None))?;
    let limit = room
        .saturating_sub(overhead + SUMMARY_MAX_TOKENS + 8)
        .max(16);
    let mut pieces = {
        let counter = |t: &str| engine.count_tokens(t);
        chunk_lines(&lines, limit, &counter)
    };
    loop {
        let mut summaries = Vec::with_capacity(pieces.len());
        for chunk in &pieces {
            if abort.is_raised() {
                break;
            }
            let done = engine.generate_aside(
                &summary_prompt(None, chunk, None),
                &summary_options(abort),
                &mut |_| {},
            )?;
            let text = done.text.split_whitespace().collect::<Vec<_>>().join(" ");
            if !text.is_empty() {
                summaries.push(format!("Part {}: {text}", summaries.len() + 1));
            }
        }
        if summaries.len() <= 1 || abort.is_raised() {
            let last = summaries.pop().unwrap_or_default();
            return Ok(last
                .split_once(": ")
                .map_or(last.clone(), |(_, t)| t.to_string()));
        }
        // Reduce: the part summaries, chunked again, become the next round's input.
        let counter = |t: &str| engine.count_tokens(t);
        let next = chunk_lines(&summaries, limit, &counter);
        if next.len() >= pieces.len() && pieces.len() > 1 {
            // No progress (pathological sizes): keep the first part's summary.
            return Ok(summaries.remove(0));
        }
        pieces = next;
    }
}

/// Tags per session, from the model.
pub const TAGS: (usize, usize) = (3, 5);
/// Longest tag, in characters (`[a-z][a-z0-9-]*`, so one byte each).
pub const TAG_MAX_CHARS: usize = 20;

/// Where a session's tags came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TagSource {
    /// The model's answer, complete and parsed (topped up from keywords if it repeated
    /// itself).
    Model,
    /// Keywords of the transcript: the model was skipped, failed, or was cut off.
    Fallback,
}

/// Why the model gave no tags.
#[derive(Debug, thiserror::Error)]
pub enum TagError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("the tag grammar is unbounded: {0}")]
    Grammar(#[from] GrammarBoundError),
    /// Stopped before the grammar completed; never parsed.
    #[error("the tags were cut off ({stop})", stop = .0.as_str())]
    Cut(StopReason),
    /// Cannot happen under the grammar; reported rather than hidden if it does.
    #[error("the tags did not parse as a JSON list ({0}): {1}")]
    Parse(String, String),
}

/// The tag grammar: a JSON list of 3–5 strings `[a-z][a-z0-9-]{0,19}`. In GBNF a quote
/// inside a literal is `"\""`; `"""` would be an empty literal followed by literal text.
pub fn tag_grammar() -> String {
    let (min, max) = TAGS;
    let first = vec!["tag"; min].join(" \", \" ");
    let optional = " (\", \" tag)?".repeat(max - min);
    format!(
        "root ::= \"[\" {first}{optional} \"]\"\ntag ::= \"\\\"\" [a-z] [a-z0-9-]{{0,{}}} \"\\\"\"\n",
        TAG_MAX_CHARS - 1
    )
}

/// 3–5 short lowercase tags for a summary, from the model under a JSON grammar whose
/// worst case fits the generation's `max_tokens`, so the output always ends and parses.
/// Returns the distinct tags (1–5: the model may repeat one).
pub fn tags(
    engine: &mut dyn Engine,
    summary: &str,
    abort: &AbortFlag,
) -> Result<Vec<String>, TagError> {
    let prompt = vec![
        Message::new(
            Role::System,
            "You label conversations with short topic tags.",
        ),
        Message::new(
            Role::User,
            format!(
                "Summary: {summary}

Give 3 to 5 short lowercase topic tags as a JSON list."
            ),
        ),
    ];
    let grammar = tag_grammar();
    let mut opts = summary_options(abort);
    opts.max_tokens = Some(gbnf::max_tokens(&grammar)?);
    opts.grammar = Some(grammar);
    let done = engine.generate_aside(&prompt, &opts, &mut |_| {})?;
    let text = done.grammar_output().map_err(TagError::Cut)?;
    let tags: Vec<String> = serde_json::from_str(text.trim())
        .map_err(|e| TagError::Parse(e.to_string(), done.text.clone()))?;
    let mut unique: Vec<String> = Vec::new();
    for t in tags {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    Ok(unique)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_grammar_is_json_and_its_worst_case_fits() {
        let g = tag_grammar();
        assert!(!g.contains("\"\"\""), "{g}");
        assert!(
            g.contains("tag ::= \"\\\"\" [a-z] [a-z0-9-]{0,19} \"\\\"\""),
            "{g}"
        );
        // The longest list: five tags of TAG_MAX_CHARS, one byte (token) a character.
        let tag = format!("\"{}\"", "a".repeat(TAG_MAX_CHARS));
        let longest = format!("[{}]", vec![tag; TAGS.1].join(", "));
        assert!(serde_json::from_str::<Vec<String>>(&longest).is_ok());
        assert_eq!(gbnf::max_bytes(&g), Ok(longest.len()));
        assert_eq!(gbnf::max_tokens(&g), Ok(longest.len() + 1));
    }

    #[test]
    fn cut_off_tags_are_an_error_not_parsed() {
        use crate::engine::scripted::ScriptedEngine;
        let mut e = ScriptedEngine::new(4096, [r#"["a", "b", "c"]"#]);
        assert_eq!(
            tags(&mut e, "s", &AbortFlag::new()).unwrap(),
            ["a", "b", "c"]
        );
        let long = format!("[{}", "\"x\", ".repeat(200));
        let mut e = ScriptedEngine::new(4096, [long]);
        let err = tags(&mut e, "s", &AbortFlag::new()).unwrap_err();
        assert!(matches!(err, TagError::Cut(StopReason::MaxTokens)), "{err}");
    }
}
