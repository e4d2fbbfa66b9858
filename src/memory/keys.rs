//! Keys a memory is found by besides its own words, chosen when it is written: cheap,
//! deterministic, no model, so they never delay a write.
//!
//! Context keys: a remark often answers what was said just before it and repeats none
//! of its words ("It taught me self-acceptance" after "What did you take from *Becoming
//! Nicole*?"). The topic words of that preceding message, stored as tags, let a later
//! question about the book find the answer. Tags weigh less than the description in
//! full-text ranking and are neither embedded nor shown in the memory block, so a key
//! can pull a memory up but never changes what it says.

use super::query::terms;

/// At most `n` topic words of `context` (the message a memory answers) that `own` (the
/// memory's text) lacks, lowercased, in order of first appearance.
pub fn context_keys(context: &str, own: &str, n: usize) -> Vec<String> {
    let own = super::query::all_terms(own);
    terms(context)
        .into_iter()
        .filter(|w| !own.contains(w) && !w.chars().all(|c| c.is_ascii_digit()))
        .take(n)
        .collect()
}

/// How many context keys a memory gets (measured on LoCoMo dev with the previous turn
/// as context: 12).
pub const CONTEXT_KEYS: usize = 12;

/// `tags` with the context keys of `context` added after them, each once.
pub fn with_context_keys(mut tags: Vec<String>, context: &str, own: &str) -> Vec<String> {
    for key in context_keys(context, own, CONTEXT_KEYS) {
        if !tags.iter().any(|t| t.eq_ignore_ascii_case(&key)) {
            tags.push(key);
        }
    }
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_context_words_the_memory_lacks() {
        let cases: &[(&str, &str, usize, &[&str])] = &[
            (
                "What did you take away from the book Becoming Nicole?",
                "It taught me self-acceptance and how to find support.",
                8,
                &["take", "away", "book", "becoming", "nicole"],
            ),
            (
                "Running again? How is it going?",
                "Great for my mental health",
                1,
                &["running"],
            ),
            ("See you at 10 on the 3rd", "Sure, see you", 8, &["3rd"]),
            ("", "anything", 8, &[]),
            ("The pump, the pump!", "the valve", 8, &["pump"]),
        ];
        for (context, own, n, want) in cases {
            assert_eq!(context_keys(context, own, *n), *want, "{context} / {own}");
        }
    }

    #[test]
    fn context_keys_follow_the_tags_once() {
        let tags = with_context_keys(
            vec!["Book".into(), "reading".into()],
            "Did you like the book Becoming Nicole?",
            "It taught me self-acceptance",
        );
        assert_eq!(tags, ["Book", "reading", "like", "becoming", "nicole"]);
    }
}
