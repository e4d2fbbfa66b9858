//! Code-aware terms: what a chunk is found by, and what a question searches for.
//!
//! An identifier is kept whole (`MAX_RETRIES`, `--dry-run`, `parse_args`) and also split
//! into its words (`max retries`, `dry run`, `parse args`; `RetryPolicy` → `retry
//! policy`), so a question in plain words finds the name and a question that quotes the
//! name finds it exactly. The index's tokenizer keeps `_` and `-` inside a token (see
//! `storage::evidence`), so the whole form stays one term there. Pure: no I/O.

use crate::text::words::name_words;

/// A compound token: letters, digits, `_` and `-` (a leading `--` included).
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|t| t.trim_end_matches('-'))
        .filter(|t| !t.trim_start_matches('-').is_empty())
}

/// Whether `token` is a compound name whose parts are worth indexing apart: it holds a
/// `_` or `-` between letters, or a lower-to-upper case change.
fn is_compound(token: &str) -> bool {
    let inner = token.trim_start_matches('-');
    inner.contains(['_', '-'])
        || inner
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// The split forms of the compound names in `text`, each once, space-separated: appended
/// to a chunk's searchable text beside the text itself.
pub fn split_forms(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out = String::new();
    for token in tokens(text).filter(|t| is_compound(t)) {
        if !seen.insert(token) {
            continue;
        }
        for word in name_words(token) {
            out.push_str(&word);
            out.push(' ');
        }
    }
    out.trim_end().to_string()
}

/// Most terms one question searches for.
const MAX_QUERY_TERMS: usize = 16;

/// Words of a question that carry no topic in any project: the memory recall's
/// stopwords and the words every question about code is phrased in.
fn is_filler(word: &str) -> bool {
    const FILLER: &[&str] = &[
        "file",
        "files",
        "project",
        "repo",
        "repository",
        "code",
        "here",
        "used",
        "show",
        "find",
        "give",
        "say",
        "says",
        "mean",
        "means",
        "look",
        "happen",
        "happens",
        "set",
        "never",
        "first",
        "kind",
        "actually",
        "exactly",
        "currently",
    ];
    !crate::memory::query::is_topic(word) || FILLER.contains(&word)
}

/// The terms a question searches for: each compound name whole and split, each other
/// topic word once, in the question's order (so the first terms survive the cap).
pub fn query_terms(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |t: String, out: &mut Vec<String>| {
        if !out.contains(&t) && out.len() < MAX_QUERY_TERMS {
            out.push(t);
        }
    };
    for token in tokens(question) {
        if is_compound(token) {
            push(token.to_lowercase(), &mut out);
        }
        for word in name_words(token) {
            if !is_filler(&word) {
                push(word, &mut out);
            }
        }
    }
    out
}

/// The FTS5 query for `terms`: each quoted (so no operator or punctuation of the user's
/// reaches `MATCH`), OR-ed; `None` when nothing is left to search for.
pub fn fts_query(terms: &[String]) -> Option<String> {
    let quoted: Vec<String> = terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "")))
        .filter(|q| q.len() > 2)
        .collect();
    (!quoted.is_empty()).then(|| quoted.join(" OR "))
}

/// Words that open a definition in some language: not names of the project's own.
const KEYWORDS: &[&str] = &[
    "pub",
    "crate",
    "fn",
    "struct",
    "enum",
    "impl",
    "trait",
    "type",
    "mod",
    "const",
    "static",
    "let",
    "mut",
    "async",
    "def",
    "class",
    "func",
    "function",
    "export",
    "default",
    "var",
    "interface",
    "public",
    "private",
    "protected",
    "final",
    "abstract",
    "void",
    "int",
    "char",
    "unsigned",
    "extern",
    "inline",
    "module",
    "package",
    "self",
    "return",
    "for",
    "where",
];

/// The identifiers of a definition's first line (its `names` column, weighted above the
/// body): every name on it but the language's keywords.
pub fn names_in(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tokens(line).filter(|t| t.len() > 1 && !t.starts_with('-')) {
        if !KEYWORDS.contains(&t) && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_split_on_case_underscore_and_dash() {
        assert_eq!(split_forms("let MAX_RETRIES = 3;"), "max retries");
        assert_eq!(split_forms("RetryPolicy::new()"), "retry policy");
        assert_eq!(split_forms("pass --dry-run here"), "dry run");
        assert_eq!(
            split_forms("APP_LOG_LEVEL and parse_args"),
            "app log level parse args"
        );
        assert_eq!(split_forms("plain words only"), "");
    }

    #[test]
    fn a_question_searches_names_whole_and_split() {
        let t = query_terms("What does the --dry-run flag do?");
        assert!(t.contains(&"--dry-run".to_string()), "{t:?}");
        assert!(t.contains(&"dry".to_string()) && t.contains(&"run".to_string()));
        assert!(t.contains(&"flag".to_string()));
        assert!(!t.contains(&"the".to_string()) && !t.contains(&"what".to_string()));
        let t = query_terms("Where is RetryPolicy defined?");
        assert_eq!(t, ["retrypolicy", "retry", "policy", "defined"]);
        let t = query_terms("which env var sets APP_LOG_LEVEL");
        assert!(t.contains(&"app_log_level".to_string()), "{t:?}");
    }

    #[test]
    fn punctuation_never_reaches_match() {
        let q = fts_query(&query_terms("what's \"retry\": (policy) ? b* OR c")).unwrap();
        assert!(
            !q.contains('?') && !q.contains('(') && !q.contains('*'),
            "{q}"
        );
        assert_eq!(fts_query(&query_terms("what is the?")), None);
    }

    #[test]
    fn a_long_question_is_capped() {
        let long: String = (0..100).map(|i| format!("word{i} ")).collect();
        assert_eq!(query_terms(&long).len(), MAX_QUERY_TERMS);
    }
}
