//! What a hit's bm25 score is weighed by before the block is fitted: the question's
//! scope, where a file sits, whether a commit is asked about, how close a memory's
//! meaning is to the question (the embedder's cosine, as memory recall uses it), and
//! the date the question names ("last week", "in March 2024").
//!
//! Pure functions over the hits; the index reads them and [`super::block`] packs them.

use crate::memory::when::Window;
use crate::storage::evidence::Hit;

/// What a question may be answered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The workspace's files, its history, the memories and the session summaries.
    #[default]
    Workspace,
    /// The memories and session summaries only: a request about what the assistant
    /// remembers (`chat::route::memory`).
    Memory,
}

impl Scope {
    /// The unit kinds searched in one pool (commits have their own, in the workspace only).
    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            Scope::Workspace => &["code", "doc", "config", "text", "memory", "session"],
            Scope::Memory => &["memory", "session"],
        }
    }
}

/// One question as the index is asked it.
#[derive(Debug, Clone, Default)]
pub struct Ask<'a> {
    pub question: &'a str,
    pub scope: Scope,
    /// Memory ids nearest to the question by the embedder, with their cosine (empty when
    /// no embedder is loaded: then memories rank by their words alone).
    pub near: Vec<(String, f32)>,
    /// Unix seconds that relative dates ("yesterday") are read from.
    pub now: i64,
}

impl<'a> Ask<'a> {
    /// The workspace-wide question `question`, without vectors.
    pub fn workspace(question: &'a str) -> Self {
        Self {
            question,
            now: chrono::Utc::now().timestamp(),
            ..Self::default()
        }
    }
}

/// A commit's score against a file's: a commit is a few words, so each of its matches
/// weighs more under bm25 than the same match in a file's chunk. Lower still when the
/// question does not speak of history at all (a commit, a change, who or when): then the
/// files as they are answer it ("Which version is this?" was answered from a commit of
/// 2011 that bumped the version to 0.20).
pub(super) const COMMIT_PRIOR: f64 = 0.7;
const COMMIT_PRIOR_NO_HISTORY: f64 = 0.4;

/// Each folder between the workspace's top and a file costs its score this share: the
/// project's own top-level files over a vendored test suite's (cJSON's license question
/// found `tests/json-patch-tests/README.md`'s Apache license before `LICENSE`).
const DEPTH_PRIOR: f64 = 0.93;

/// A test's chunk against the code it tests: both match the code's names, and the code
/// says what it does.
const TEST_PRIOR: f64 = 0.8;

/// A memory found by its words rises by its cosine above this, when vectors are known;
/// it never falls for a low one. The embedder's cosines are weak evidence against: "How
/// do I cut a release here?" and "We deploy this project with ./deploy.sh" are 0.09
/// apart by all-MiniLM-L6-v2, while the bm25 of a word every file has (the project's
/// name) is already low.
const MEANING_FROM: f32 = 0.3;

/// The cosine from which a memory that shares no word with the question is evidence for
/// it all the same ("How do I cut a release here?" and "we deploy with ./deploy.sh").
pub const NEAR_FLOOR: f32 = 0.45;

/// A unit that defines a name the question writes as code (`cJSON`, `SignatureExpired`)
/// against the units that only use it: asked where the `cJSON` struct is defined, bm25
/// put an anonymous `typedef struct {` of `cJSON.c` above `typedef struct cJSON` in
/// `cJSON.h`, the project's name weighing little in a file that says it everywhere. A
/// commit's names are those its added lines define, so "who first wrote X" rises to the
/// commit that did.
const DEFINES_PRIOR: f64 = 2.0;

/// A unit that defines a compound name the question spells out in words ("which
/// function parses a number?" and `parse_number`, "the rust version" and `rust-version`)
/// against units that share one of its words: every word of the name is in the question.
const SPELLED_PRIOR: f64 = 1.5;

/// A memory or session dated outside the window the question names keeps this share of
/// its score; inside, up to `DATE_BASE + 1`.
const DATE_BASE: f64 = 0.5;

/// Weighs `hits` for `ask` (see the constants), in place.
pub fn weigh(hits: &mut [Hit], ask: &Ask<'_>, dated: Option<&Window>) {
    let commit_prior = if crate::chat::route::asked::speaks_of_history(ask.question) {
        COMMIT_PRIOR
    } else {
        COMMIT_PRIOR_NO_HISTORY
    };
    let named = super::terms::code_names(ask.question);
    let asked = stems_of(ask.question);
    for h in hits.iter_mut() {
        if !named.is_empty() && defines_any(&h.names, &named) {
            h.score *= DEFINES_PRIOR;
        } else if spells_out(&h.names, &asked) {
            h.score *= SPELLED_PRIOR;
        }
        if super::block::is_history(h) {
            h.score *= commit_prior;
        } else if let Some(path) = h.source.strip_prefix("file:") {
            let depth = path.matches('/').count() as i32;
            h.score *= DEPTH_PRIOR.powi(depth);
            if is_test_path(path) {
                h.score *= TEST_PRIOR;
            }
        } else if let Some(id) = h.source.strip_prefix("memory:") {
            if !ask.near.is_empty() {
                h.score *= 1.0 + f64::from((cosine_of(&ask.near, id) - MEANING_FROM).max(0.0));
            }
        }
        if let (Some(w), "memory" | "session") = (dated, h.kind.as_str()) {
            h.score *= DATE_BASE + w.closeness(h.written);
        }
    }
}

/// The words of `text`, each cut to a rough stem (`parses` and `parse` → `pars`), so a
/// name's words meet the question's in another inflection.
fn stems_of(text: &str) -> Vec<String> {
    crate::text::words::name_words(text)
        .iter()
        .map(|w| rough_stem(w).to_string())
        .collect()
}

fn rough_stem(word: &str) -> &str {
    crate::text::words::stem(word, &["ing", "ed", "es", "s", "e"], 3)
}

/// Whether a question speaks of one of the states a working-tree unit names (its `names`
/// column: "uncommitted", "staged", "untracked", …). Only then is the tree's state
/// evidence: found by its paths' words, it took "List the files in the notes folder."
/// and the reply named only the untracked file.
pub fn speaks_of_state(names: &str, question: &str) -> bool {
    let asked = stems_of(question);
    names
        .split_whitespace()
        .any(|n| asked.iter().any(|a| a == rough_stem(n)))
}

/// Whether the `names` column holds a compound name of two words or more, each of them
/// among `asked` (the question's [`stems_of`]).
fn spells_out(names: &str, asked: &[String]) -> bool {
    super::terms::compound_names(names).iter().any(|name| {
        let words = crate::text::words::name_words(name);
        words.len() >= 2
            && words
                .iter()
                .all(|w| asked.iter().any(|a| a == rough_stem(w)))
    })
}

/// Whether the `names` column (names apart by spaces) holds one of `named` (lowercase).
pub(super) fn defines_any(names: &str, named: &[String]) -> bool {
    names
        .split_whitespace()
        .any(|n| named.iter().any(|w| n.eq_ignore_ascii_case(w)))
}

fn cosine_of(near: &[(String, f32)], id: &str) -> f32 {
    near.iter().find(|(n, _)| n == id).map_or(0.0, |(_, c)| *c)
}

/// The memory sources near enough to the question by meaning (at least [`NEAR_FLOOR`])
/// that no word of it found, with the score each enters at: the best hit's score times
/// its cosine, so the block's relative floor treats it as it would a word match of that
/// strength.
pub fn near_only(hits: &[Hit], ask: &Ask<'_>) -> Vec<(String, f64)> {
    let best = hits
        .iter()
        .filter(|h| !super::block::is_history(h))
        .map(|h| h.score)
        .fold(0.0, f64::max);
    let best = if best > 0.0 { best } else { 1.0 };
    ask.near
        .iter()
        .filter(|(_, c)| *c >= NEAR_FLOOR)
        .map(|(id, c)| (format!("memory:{id}"), best * f64::from(*c)))
        .filter(|(source, _)| !hits.iter().any(|h| &h.source == source))
        .collect()
}

/// Whether `path` is a test's: under a `test`/`tests`/`spec`/`__tests__` folder, or named
/// as one (`test_x.py`, `x_test.go`, `x.test.js`, `x.spec.ts`).
pub fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    lower.split('/').rev().skip(1).any(|d| {
        matches!(
            d,
            "test" | "tests" | "spec" | "specs" | "__tests__" | "testing"
        )
    }) || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(source: &str, kind: &str, score: f64, written: i64) -> Hit {
        Hit {
            id: 0,
            source: source.into(),
            kind: kind.into(),
            first: 0,
            last: 0,
            heading: String::new(),
            text: String::new(),
            written,
            score,
            names: String::new(),
        }
    }

    #[test]
    fn a_memory_close_in_meaning_rises_and_a_far_one_keeps_its_words_score() {
        let mut hits = vec![
            hit("memory:workflow_a", "memory", 2.0, 0),
            hit("memory:project_fact_b", "memory", 2.0, 0),
            hit("file:README.md", "doc", 2.0, 0),
        ];
        let ask = Ask {
            question: "How do I cut a release here?",
            near: vec![("workflow_a".into(), 0.6), ("project_fact_b".into(), 0.05)],
            ..Ask::default()
        };
        weigh(&mut hits, &ask, None);
        assert!(hits[0].score > hits[2].score, "{hits:?}");
        assert_eq!(hits[1].score, hits[2].score, "{hits:?}");
        // Without vectors, words alone rank them.
        let mut plain = vec![hit("memory:workflow_a", "memory", 2.0, 0)];
        weigh(
            &mut plain,
            &Ask::workspace("How do I cut a release here?"),
            None,
        );
        assert_eq!(plain[0].score, 2.0);
    }

    #[test]
    fn a_memory_no_word_found_enters_by_meaning_above_the_floor_only() {
        let hits = vec![hit("file:README.md", "doc", 4.0, 0)];
        let ask = Ask {
            question: "How do I cut a release here?",
            near: vec![
                ("workflow_a".into(), 0.62),
                ("project_fact_b".into(), NEAR_FLOOR - 0.01),
            ],
            ..Ask::default()
        };
        let added = near_only(&hits, &ask);
        assert_eq!(added.len(), 1, "{added:?}");
        assert_eq!(added[0].0, "memory:workflow_a");
        assert!((added[0].1 - 4.0 * 0.62).abs() < 1e-6);
    }

    #[test]
    fn the_date_a_question_names_weighs_sessions_and_memories_only() {
        let now = chrono::NaiveDate::from_ymd_opt(2026, 12, 2)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp();
        let day = 86_400;
        let window = crate::memory::when::dated("what did we do last week", now)
            .unwrap()
            .window;
        let mut hits = vec![
            hit("session:a", "session", 1.0, now - 5 * day),
            hit("session:b", "session", 1.0, now - 60 * day),
            hit("file:a.rs", "code", 1.0, now - 60 * day),
        ];
        weigh(&mut hits, &Ask::workspace("what did we do"), Some(&window));
        assert!(hits[0].score > 1.0 && hits[1].score < 1.0, "{hits:?}");
        assert_eq!(hits[2].score, 1.0);
    }

    #[test]
    fn a_unit_that_defines_a_name_the_question_writes_as_code_rises() {
        let mut hits = vec![
            hit("file:cJSON.c", "code", 3.0, 0),
            hit("file:cJSON.h", "code", 2.0, 0),
        ];
        hits[1].names = "cJSON".into();
        let ask = Ask::workspace("In which file is the cJSON struct defined?");
        weigh(&mut hits, &ask, None);
        assert!(hits[1].score > hits[0].score, "{hits:?}");
        // A plain word is no name written as code: "json" weighs nothing extra.
        let mut plain = vec![hit("file:cJSON.h", "code", 2.0, 0)];
        plain[0].names = "json".into();
        weigh(&mut plain, &Ask::workspace("Where is json parsed?"), None);
        assert_eq!(plain[0].score, 2.0);
    }

    #[test]
    fn a_name_the_question_spells_out_in_words_rises() {
        let asked = stems_of("Which function parses a number out of the text?");
        assert!(spells_out("parse_number", &asked));
        assert!(spells_out("x parseNumber", &asked));
        assert!(
            !spells_out("parse_array", &asked),
            "one word is not in the question"
        );
        assert!(
            !spells_out("number", &asked),
            "a plain word is no compound name"
        );
    }

    #[test]
    fn test_paths_are_told_by_folder_and_name() {
        for t in ["tests/a.rs", "x_test.go", "src/a.test.js", "test_x.py"] {
            assert!(is_test_path(t), "{t}");
        }
        for f in ["src/testing_tools.rs", "contest.py", "latest.md"] {
            assert!(!is_test_path(f), "{f}");
        }
    }
}
