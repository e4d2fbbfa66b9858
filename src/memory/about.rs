//! The memories a request is about, shown with it: `(already known: …)`.
//!
//! The `[memory context]` is recalled once, for a session's first message, and the
//! router never sees it: asked how the project is released, with the procedure in
//! memory, a small model sent the request to git and the answer never used the memory.
//! So each request is matched against the memories again (the memory silo of the one
//! recall path) and those that speak to it ride with the request, to the router and the
//! model alike: a memory close to it by embedding, or sharing most of its topic words
//! and close enough. Pure: the candidates and their similarities come from the caller.

use super::pack::{Candidate, Section};
use super::query::topic_stems;

/// Most memories shown with one request.
pub const MAX_SHOWN: usize = 2;

/// Words (stemmed) that say a question is about what was said or kept, not what it is
/// about: "What did I **say** about releases?" is about releases.
const ABOUT_SAYING: &[&str] = &[
    "say", "said", "decid", "decision", "agre", "agreed", "plan", "told", "note", "mention",
    "memory", "recall", "earlier", "last", "time", "again",
];

/// A memory this similar to the request (cosine of their embeddings, all-MiniLM-L6-v2)
/// is about it whatever words they share: "How do we cut a new release?" and the release
/// procedure, 0.51; "Which spelling should your answers use?" and the spelling
/// preference, 0.61. Unrelated pairs in the agent benchmark's workspace stay under 0.35.
const SIMILAR: f32 = 0.5;

/// Below [`SIMILAR`], a memory is about the request when it holds more than half of the
/// request's topic words and is at least this similar (when there are embeddings):
/// "What did I say about releases?" and the release procedure, 0.36 and 1 of 1; not
/// "What version is this package?", 0.41 but 1 of 2 ("Bump the version, …").
const SIMILAR_WITH_WORDS: f32 = 0.3;

/// The memories among `candidates` (typed memories; the workspace profile is not a
/// memory the user asked about) that are about `request`: similar enough by `cosine`
/// (`None`: no embedding, words alone decide), or sharing most of its topic words; most
/// shared words first, at most [`MAX_SHOWN`].
pub fn about<'c>(
    candidates: &'c [Candidate],
    cosine: impl Fn(&Candidate) -> Option<f32>,
    request: &str,
) -> Vec<&'c Candidate> {
    let wanted: Vec<String> = topic_stems(request)
        .into_iter()
        .filter(|w| !ABOUT_SAYING.contains(&w.as_str()))
        .collect();
    let mut scored: Vec<(usize, &Candidate)> = candidates
        .iter()
        .filter(|c| c.source == "memory" && c.section != Section::Profile)
        .filter_map(|c| {
            let have = topic_stems(&c.text);
            let shared = wanted.iter().filter(|w| have.contains(w)).count();
            let most = shared * 2 > wanted.len();
            let similar = cosine(c);
            let about = similar.is_some_and(|s| s >= SIMILAR)
                || (most && similar.is_none_or(|s| s >= SIMILAR_WITH_WORDS));
            about.then_some((shared, c))
        })
        .collect();
    // Stable: equal counts keep the silo's order (best recalled first).
    scored.sort_by_key(|(shared, _)| std::cmp::Reverse(*shared));
    let mut out: Vec<&Candidate> = Vec::new();
    for (_, c) in scored {
        if !out.iter().any(|o| o.id == c.id) && out.len() < MAX_SHOWN {
            out.push(c);
        }
    }
    out
}

/// The hint line for `memories` (`None` when there are none): each memory's block line
/// without its bullet, `; `-joined.
pub fn hint(memories: &[&Candidate]) -> Option<String> {
    if memories.is_empty() {
        return None;
    }
    let lines: Vec<&str> = memories
        .iter()
        .map(|c| c.text.trim().trim_start_matches("- "))
        .collect();
    Some(format!("(already known: {})", lines.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(id: &str, section: Section, text: &str) -> Candidate {
        Candidate {
            id: id.into(),
            source: "memory".into(),
            section,
            text: text.into(),
            score: 1.0,
            written: 0,
        }
    }

    fn release() -> Candidate {
        memory(
            "m1",
            Section::Facts,
            "- release procedure: Bump the version, tag vX.Y.Z, then cargo publish.",
        )
    }

    #[test]
    fn a_question_about_what_was_said_finds_the_memory_on_its_topic() {
        let all = [
            memory("m0", Section::Experience, "- answers in British English"),
            release(),
        ];
        let found = about(&all, |_| None, "What did I say about releases?");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, "m1");
        assert_eq!(
            hint(&found).unwrap(),
            "(already known: release procedure: Bump the version, tag vX.Y.Z, then cargo publish.)"
        );
    }

    #[test]
    fn half_the_words_is_not_enough_without_a_close_embedding() {
        let all = [release()];
        let version = "What version is this package?";
        assert!(about(&all, |_| None, version).is_empty());
        assert!(about(&all, |_| Some(0.41), version).is_empty());
        assert_eq!(about(&all, |_| Some(0.5), version).len(), 1);
        assert!(about(&all, |_| Some(0.2), "What is 17 times 3?").is_empty());
        assert!(hint(&[]).is_none());
    }

    #[test]
    fn a_close_embedding_needs_no_shared_word_and_most_words_need_some_closeness() {
        let all = [release()];
        assert_eq!(about(&all, |_| Some(0.51), "How do we ship it?").len(), 1);
        let said = "What did I say about releases?";
        assert_eq!(about(&all, |_| Some(0.36), said).len(), 1);
        assert!(about(&all, |_| Some(0.1), said).is_empty());
    }

    #[test]
    fn the_profile_and_other_silos_are_not_shown() {
        let mut rag = release();
        rag.source = "docs".into();
        let profile = memory(
            "p",
            Section::Profile,
            "- release procedure: see RELEASING.md",
        );
        assert!(about(&[rag, profile], |_| Some(0.9), "How do we release?").is_empty());
    }

    #[test]
    fn at_most_two_are_shown_the_best_covered_first() {
        let all = [
            memory("a", Section::Facts, "- deploy: never on Fridays"),
            memory(
                "b",
                Section::Facts,
                "- deploy to staging: make ship on kestrel",
            ),
            memory("c", Section::Facts, "- the staging box is kestrel"),
        ];
        let cosine = |c: &Candidate| match c.id.as_str() {
            "a" => Some(0.55),
            "b" => Some(0.4),
            _ => Some(0.6),
        };
        let found = about(&all, cosine, "How do we deploy to staging?");
        let ids: Vec<&str> = found.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["b", "a"]);
    }
}
