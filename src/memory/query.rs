//! Natural-language text → a safe FTS5 query.
//!
//! User text never reaches `MATCH` raw (a `?`, a `:` or an unbalanced quote is an FTS5
//! syntax error, and a multi-word phrase rarely matches): the text is split into words,
//! stopwords are dropped, each word is quoted (so FTS5 operators are plain words), longer
//! words become prefix terms, and the terms are OR-ed. bm25 ranks documents matching
//! more (and rarer) terms first.

/// Words that carry no topic.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "but", "by", "can", "could", "did", "do", "does",
    "doing", "done", "for", "from", "get", "got", "had", "has", "have", "having", "he", "her",
    "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "let", "me",
    "might", "more", "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only",
    "or", "other", "our", "out", "over", "please", "s", "same", "she", "should", "so", "some",
    "such", "t", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "too", "up", "us", "very", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "ll",
    "re", "ve", "d", "m", "tell", "know", "remember", "want", "need", "use", "using", "way",
    "thing", "things", "there's", "what's",
];

/// Longest query kept, in terms (a pasted paragraph must not become a huge query).
pub const MAX_TERMS: usize = 24;

/// Whether the lowercased word `w` is a topic word: not a stopword, and longer than
/// one character unless it is a digit.
pub fn is_topic(w: &str) -> bool {
    !w.is_empty()
        && (w.chars().count() > 1 || w.chars().all(|c| c.is_ascii_digit()))
        && !STOPWORDS.contains(&w)
}

/// Every topic word of a long `text` (a session's exchanges), each once, uncapped.
pub fn all_terms(text: &str) -> std::collections::BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| is_topic(w))
        .collect()
}

/// The topic words of `text`: lowercased, stopwords dropped, in order, deduplicated.
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let w = word.to_lowercase();
        let keep = is_topic(&w);
        if keep && !out.contains(&w) {
            out.push(w);
        }
        if out.len() == MAX_TERMS {
            break;
        }
    }
    out
}

/// The topic words of `text`, stemmed ("releases" and "release" are one word, `releas`) and
/// without bare numbers: what two short texts are compared by when one must be about
/// the other (a request and a skill, a request and a memory).
pub fn topic_stems(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in terms(text) {
        if w.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        // A final `e` goes too, so "release", "releases" and "released" meet.
        let s = crate::text::words::stem(&w, &["ing", "es", "s", "ed", "e"], 4).to_string();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The FTS5 query for `text`, or `None` when nothing searchable is left (then recall
/// returns no relevance hits rather than an error).
pub fn fts_query(text: &str) -> Option<String> {
    let parts: Vec<String> = terms(text)
        .into_iter()
        .map(|t| {
            // Terms are alphanumeric only, so quoting is enough to make them literal.
            if t.chars().count() >= 4 {
                format!("\"{t}\"*")
            } else {
                format!("\"{t}\"")
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_stems_meet_across_plural_and_tense() {
        assert_eq!(topic_stems("releases released"), ["releas"]);
        assert_eq!(topic_stems("the release procedure"), ["releas", "procedur"]);
        assert_eq!(topic_stems("17 colours"), ["colour"]);
    }

    #[test]
    fn punctuation_and_operators_become_plain_terms() {
        assert_eq!(
            fts_query("How do I fix git?").as_deref(),
            Some("\"fix\" OR \"git\"")
        );
        assert_eq!(
            fts_query("\"quoted\" (parens) AND OR NOT *").as_deref(),
            Some("\"quoted\"* OR \"parens\"*")
        );
        assert_eq!(
            fts_query("git: error").as_deref(),
            Some("\"git\" OR \"error\"*")
        );
        assert_eq!(fts_query("what's the ?!"), None);
        assert_eq!(fts_query(""), None);
    }

    #[test]
    fn terms_are_deduplicated_and_capped() {
        assert_eq!(terms("Git git GIT"), vec!["git"]);
        let long = (0..100)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(terms(&long).len(), MAX_TERMS);
    }
}
