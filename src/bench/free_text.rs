//! A free-text workload for the decode-pace comparison: a long, varied conversation
//! record in the cache, then a request for a story that quotes none of it. Prompt
//! lookup finds short matches in such text ("of the", "in a") and little that the reply
//! keeps, so it shows what drafting costs where it cannot pay.

use crate::engine::{EngineError, LlamaEngine, Message, Role};
use crate::tokens::TokenCounter;

const WHO: &[&str] = &[
    "the harbour master",
    "a fisherman",
    "my sister",
    "the new engineer",
    "our neighbour",
    "the ferry captain",
    "a student",
    "the baker",
    "an old friend",
    "the night guard",
];
const DID: &[&str] = &[
    "repaired",
    "painted",
    "measured",
    "borrowed",
    "sold",
    "photographed",
    "cleaned",
    "carried",
    "described",
    "forgot",
];
const WHAT: &[&str] = &[
    "a blue rowing boat",
    "three copper lanterns",
    "the broken weather vane",
    "a crate of apples",
    "two wool blankets",
    "the station clock",
    "a map of the bay",
    "an iron kettle",
    "the garden gate",
    "a box of letters",
];
const WHEN: &[&str] = &[
    "before breakfast",
    "on Tuesday",
    "after the storm",
    "late at night",
    "in early spring",
    "during the market",
    "at low tide",
    "last winter",
    "around noon",
    "on the way home",
];
const WHY: &[&str] = &[
    "because the wind had changed",
    "so that nobody would worry",
    "for the festival",
    "while the children watched",
    "without saying a word",
    "to settle an old bet",
    "as the rain began",
    "for a reason no one remembers",
    "with great care",
    "although it was not needed",
];

/// A chat whose prompt is about `depth` tokens: a record of varied sentences, then a
/// story to write.
pub fn messages(engine: &LlamaEngine, depth: usize) -> Result<Vec<Message>, EngineError> {
    let with = |record: &str| {
        vec![Message::new(
            Role::User,
            format!(
                "Here is a record of small events in a coastal town:\n{record}\n\
Now write a new short story, in your own words, about a fox who learns to sail. \
Do not repeat the record."
            ),
        )]
    };
    let base = engine.tokenize_prompt(&with(""))?.len();
    let mut record = String::new();
    let mut state = 0x2545_f491_u64;
    loop {
        let sentence = sentence(&mut state);
        let longer = format!("{record}{sentence}\n");
        let tokens = base + engine.count_tokens(&longer);
        if tokens > depth {
            break;
        }
        record = longer;
    }
    Ok(with(&record))
}

/// One sentence of the record, its parts picked by a small deterministic generator.
fn sentence(state: &mut u64) -> String {
    let mut pick = |list: &[&'static str]| {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        list[(*state >> 33) as usize % list.len()]
    };
    let (who, did, what, when, why) = (pick(WHO), pick(DID), pick(WHAT), pick(WHEN), pick(WHY));
    let mut s = format!("{who} {did} {what} {when} {why}.");
    s[..1].make_ascii_uppercase();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_vary_and_start_with_a_capital() {
        let mut state = 7;
        let all: Vec<String> = (0..50).map(|_| sentence(&mut state)).collect();
        let distinct: std::collections::HashSet<&String> = all.iter().collect();
        assert!(distinct.len() >= 45, "{} distinct of 50", distinct.len());
        assert!(all
            .iter()
            .all(|s| s.starts_with(char::is_uppercase) && s.ends_with('.')));
    }
}
