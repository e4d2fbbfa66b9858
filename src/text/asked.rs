//! What kind of question a request asks, from the user's own words: how to do something,
//! some other information, or no question at all (an instruction). The router keeps a
//! question off the steps that cannot answer it ([`crate::chat::route`]), and a how-to
//! question is pointed at the workspace's documents ([`crate::workspace_map::named`]).
//!
//! Pure: reads a string.

/// Words that open a question asking for information.
const ASKING: &[&str] = &[
    "who", "whom", "whose", "what", "which", "where", "when", "why", "how", "is", "are", "was",
    "were", "does", "do", "did", "has", "have", "had", "what's", "where's", "who's",
];

/// Openings of a question asking how the user would do something themselves.
const HOW_TO: &[&str] = &[
    "how do i ",
    "how do we ",
    "how can i ",
    "how can we ",
    "how should i ",
    "how should we ",
    "how would i ",
    "how would we ",
    "how to ",
];

/// The kind of request `words` (the user's own, no hint line) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Asks how the user would do something.
    HowTo,
    /// Asks for some other information.
    Information,
    /// Anything else: an instruction, a request ("Can you fix …?"), a statement.
    Other,
}

/// What `words` ask: only a question that opens with a question word and has a question
/// mark counts; "Can you run the tests?" asks for an action and is [`Asked::Other`].
pub fn asked(words: &str) -> Asked {
    let t = words.trim().to_lowercase();
    if !t.contains('?') {
        return Asked::Other;
    }
    let first = t
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .next()
        .unwrap_or("");
    if HOW_TO.iter().any(|h| t.starts_with(h)) {
        Asked::HowTo
    } else if ASKING.contains(&first) {
        Asked::Information
    } else {
        Asked::Other
    }
}

/// The identifiers `words` name as code writes them: a word with an inner underscore
/// (`slugify_heading`), an inner capital after a small letter (`renderPage`) or a
/// path separator (`feed::limit`). Plain words, `TODO` and `README` are none.
pub fn code_names(words: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for raw in words.split(|c: char| c.is_whitespace() || ",;()'\"`?!".contains(c)) {
        let word = raw.trim_end_matches(['.', ':']);
        let inner_underscore = word.trim_matches('_').contains('_');
        let camel = word
            .chars()
            .zip(word.chars().skip(1))
            .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
        let code = word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
            && word
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
            && (inner_underscore || camel || word.contains("::"));
        if code && !found.iter().any(|f| f == word) {
            found.push(word.to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_told_from_requests() {
        assert_eq!(asked("How do I deploy the site?"), Asked::HowTo);
        assert_eq!(asked("how to build it?"), Asked::HowTo);
        assert_eq!(
            asked("Who changed the line that sets the default port?"),
            Asked::Information
        );
        assert_eq!(asked("Do the tests pass?"), Asked::Information);
        assert_eq!(asked("How many commits are there?"), Asked::Information);
        assert_eq!(asked("Can you run the tests?"), Asked::Other);
        assert_eq!(asked("Fix the typo in src/net.rs?"), Asked::Other);
        assert_eq!(
            asked("Who made the last commit"),
            Asked::Other,
            "no question mark"
        );
        assert_eq!(asked("Whoever wrote this, fix it?"), Asked::Other);
    }

    #[test]
    fn identifiers_are_told_from_words() {
        assert_eq!(
            code_names("Which file defines slugify_heading? And renderPage, feed::limit."),
            vec!["slugify_heading", "renderPage", "feed::limit"]
        );
        assert!(code_names("Search for TODO in the README, my_ _x_ and 2_000?").is_empty());
    }
}
