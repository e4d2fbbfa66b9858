//! Whether a request points back at the previous exchange ("Show me the first lines of
//! it", "Who wrote that?"), told apart from the same words used otherwise: a relative
//! "that" ("the commit that dropped Python 3.8"), "this" naming the workspace ("the
//! oldest Python this project supports"), an existential "there" ("Are there tests?").
//! In a REPL conversation every later question holding one of those words was taken for
//! a follow-up and got no evidence block, so the 1.5B answered "Who wrote the commit that
//! dropped support for Python 3.8?" from a made-up commit hash.
//!
//! Grammar only (articles, auxiliaries, prepositions): no question kind, no project word.

/// Words that always point back.
const ALWAYS: &[&str] = &["it", "its", "them", "those", "same"];

/// Nouns that "this" or "that" name the workspace by.
const WORKSPACE: &[&str] = &[
    "project",
    "repo",
    "repository",
    "checkout",
    "workspace",
    "codebase",
    "package",
    "library",
    "crate",
    "module",
    "app",
    "application",
    "program",
    "tool",
];

/// Words that open a noun phrase: a "that" after one of them (within three words) and
/// before more words is a relative pronoun ("the flag that enables colours").
const ARTICLES: &[&str] = &[
    "the", "a", "an", "each", "every", "any", "some", "which", "what",
];

/// Auxiliaries and prepositions: the word right before a "that" that stands for a thing
/// ("What does that do?", "more about that file").
const FUNCTION_WORDS: &[&str] = &[
    "is", "was", "are", "were", "be", "does", "did", "do", "can", "could", "will", "would",
    "should", "has", "have", "had", "of", "in", "on", "for", "to", "from", "with", "about", "at",
    "by", "into", "under", "and", "or", "but", "like",
];

/// Forms of "to be" that make "there" existential ("Is there …", "there are …").
const BE: &[&str] = &["is", "are", "was", "were", "be", "been", "isn", "aren"];

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `text` points back at what came before it (see the module's doc).
pub fn points_back(text: &str) -> bool {
    let w = words(text);
    (0..w.len()).any(|i| refers_back(&w, i))
}

/// Whether the word at `i` of `w` points back.
fn refers_back(w: &[String], i: usize) -> bool {
    let word = w[i].as_str();
    let before = |n: usize| i.checked_sub(n).map(|j| w[j].as_str());
    let next = w.get(i + 1).map(String::as_str);
    match word {
        _ if ALWAYS.contains(&word) => true,
        "there" => {
            !(before(1).is_some_and(|b| BE.contains(&b)) || next.is_some_and(|n| BE.contains(&n)))
        }
        "this" | "these" => !next.is_some_and(|n| WORKSPACE.contains(&n)),
        "that" => match next {
            None => true,
            Some(n) if WORKSPACE.contains(&n) => false,
            Some(_) => {
                let after_function_word = before(1).is_some_and(|b| FUNCTION_WORDS.contains(&b));
                let in_noun_phrase =
                    (1..=3).any(|n| before(n).is_some_and(|b| ARTICLES.contains(&b)));
                after_function_word || !in_noun_phrase
            }
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follow_ups_point_back() {
        for q in [
            "Show me the first lines of it.",
            "Who wrote that?",
            "What does that do?",
            "And what does this function return?",
            "Tell me more about that file.",
            "Is the same true for the tests?",
            "What's in there?",
            "Does the README mention that?",
            "Where are those defined?",
        ] {
            assert!(points_back(q), "{q}");
        }
    }

    #[test]
    fn relative_that_the_workspace_and_an_existential_there_do_not() {
        for q in [
            "Who wrote the commit that dropped support for Python 3.8?",
            "Which file did the commit that fixed the Content-Length header change?",
            "Who first added the environment variable that controls symlinks?",
            "In which file is the method that marks a flag as required defined?",
            "What's the oldest Python version this project supports?",
            "Which license does this repository use?",
            "Is that package on PyPI?",
            "Are there any uncommitted changes?",
            "Is there a test for the parser?",
            "How do I run the tests?",
        ] {
            assert!(!points_back(q), "{q}");
        }
    }
}
