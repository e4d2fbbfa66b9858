//! The tide fixture's tasks about harvey's own memory and the user's past sessions: what
//! it knows of the user, its list of memories, a workspace question that a memory sharing
//! only the project's name must not answer, what was decided in a past session (by topic,
//! by "last week", by "yesterday"), and two changes asked in plain words (an update and a
//! forget) that the bench, with nobody to ask, lets through only where the request names
//! that memory. The changes are checked by the memories after the task, not the reply.
//!
//! What they check is planted here ([`memories`], [`SESSIONS`]) and written by
//! [`super::fixture`]. The requests are in words of their own, unlike the router's
//! examples (`chat::route::EXAMPLES`) and the seed prompts.

use crate::memory::Draft;

use super::tasks::{task, Check, Expected, StateCheck, Task};

/// The planted editor preference (the update task rewrites it).
pub const EDITOR: &str = "preferred editor";

/// The planted decision the forget task archives.
pub const FEET: &str = "decision: tide heights in feet";

/// The planted decision that must stay.
pub const HOURLY: &str = "decision: one reading per hour";

/// The memory that shares only the project's name with the edition question.
pub const DEMO: &str = "tidepool demo";

/// The memories planted beside the fixture's first two (a style preference and the
/// release procedure).
pub fn memories() -> Vec<Draft> {
    let draft = |mtype: &str, description: &str, summary: &str, tag: &str| Draft {
        mtype: mtype.into(),
        description: description.into(),
        summary: summary.into(),
        tags: vec![tag.into()],
        ..Draft::default()
    };
    vec![
        draft(
            "user_preference",
            EDITOR,
            "The user edits code in vim.",
            "editor",
        ),
        draft(
            "project_fact",
            FEET,
            "We decided to report tide heights in feet for the harbour masters.",
            "decision",
        ),
        draft(
            "project_fact",
            HOURLY,
            "The tide tables hold one reading per hour; finer readings are averaged.",
            "decision",
        ),
        draft(
            "project_fact",
            DEMO,
            "tidepool was shown at the Falmouth maritime fair in June.",
            "demo",
        ),
    ]
}

/// A summarized session planted in `agents/sessions/`, dated `days_ago` before the run.
#[derive(Debug, Clone, Copy)]
pub struct PastSession {
    pub days_ago: i64,
    /// What the user said and what harvey replied, one exchange each.
    pub exchanges: &'static [(&'static str, &'static str)],
    pub summary: &'static str,
    pub tags: &'static [&'static str],
}

/// Six sessions, newest first. The three newest are the session start's `[recent
/// sessions]`; the older three are found only by asking: one about the compaction of
/// the tide tables (40 days back, outside "last week"), and two about malformed rows
/// (5 days back, inside "last week", and 24 days back, outside it, with the decision
/// the newer one replaced).
pub const SESSIONS: &[PastSession] = &[
    PastSession {
        days_ago: 1,
        exchanges: &[(
            "Can we run clippy on every push?",
            "Yes: I added a GitHub Actions workflow that runs cargo clippy -- -D warnings on every push.",
        )],
        summary: "We set up a GitHub Actions workflow that runs cargo clippy on every push.",
        tags: &["ci", "clippy"],
    },
    PastSession {
        days_ago: 2,
        exchanges: &[(
            "Should forecasts print more decimals?",
            "Two decimals are enough for a harbour; the forecast keeps {h:.2}.",
        )],
        summary: "We looked at rounding and kept two decimals in the printed forecast.",
        tags: &["output"],
    },
    PastSession {
        days_ago: 3,
        exchanges: &[(
            "Which Rust version should we support at least?",
            "Rust 1.74: it is in Debian's backports and has everything the crate uses.",
        )],
        summary: "We settled the minimum supported Rust version at 1.74.",
        tags: &["msrv"],
    },
    PastSession {
        days_ago: 5,
        exchanges: &[(
            "Silently dropping bad rows in tides.csv hid a broken export. What now?",
            "Report each malformed row on stderr with its line number, then skip it and go on.",
        )],
        summary: "We decided that malformed rows in data/tides.csv are reported on stderr with their line number, then skipped.",
        tags: &["csv", "errors"],
    },
    PastSession {
        days_ago: 24,
        exchanges: &[(
            "What should the parser do with rows it cannot read?",
            "Drop them quietly, as parse_tide_table does now: one bad row must not stop a forecast.",
        )],
        summary: "We decided to drop malformed rows in data/tides.csv quietly, as parse_tide_table does.",
        tags: &["csv"],
    },
    PastSession {
        days_ago: 40,
        exchanges: &[
            (
                "The tide tables are getting big. How could we make them smaller?",
                "Keep only the turning points, each high and low water, and interpolate between them with a cosine curve.",
            ),
            (
                "Good, let's do that.",
                "Agreed: the compaction keeps the turning points and drops the hourly rows in between.",
            ),
        ],
        summary: "We discussed the compaction of the tide tables and decided to keep only the turning points (each high and low water) and interpolate between them.",
        tags: &["compaction", "tide tables"],
    },
];

/// Answering from the memories shown with the request, or looking them up.
const FROM_MEMORY: Expected = Expected::NoToolOr(&["memory_search", "memory_read", "memory_list"]);

/// Answering from the sessions shown with the question, or looking them up.
const FROM_SESSIONS: Expected =
    Expected::NoToolOr(&["session_search", "session_read", "memory_search"]);

/// A request about the memory: answered from it, and the workspace after it checked
/// (`None`: nothing may change).
const fn about_memory(state: Option<StateCheck>, task: Task) -> Task {
    Task {
        answers_from_memory: true,
        state: match state {
            Some(s) => Some(s),
            None => Some(StateCheck::Unchanged),
        },
        ..task
    }
}

/// The questions, run before any change.
pub const MEMORY_QUESTIONS: &[Task] = &[
    about_memory(
        None,
        task(
            "prefs_known",
            "Which of my preferences have you kept?",
            FROM_MEMORY,
            Check::Any(&["British", "vim"]),
        ),
    ),
    about_memory(
        None,
        task(
            "list_memories",
            "Show me everything you have remembered so far.",
            Expected::NoToolOr(&["memory_list"]),
            // The list shows descriptions (the editor's is "preferred editor").
            Check::All(&["British", "release", "editor"]),
        ),
    ),
    // The demo memory shares "tidepool" with the question and nothing else.
    Task {
        state: Some(StateCheck::Unchanged),
        ..task(
            "edition_not_memory",
            "Which Rust edition is tidepool written in?",
            Expected::NoToolOr(&["read_file", "search_files", "list_files"]),
            Check::AnyNot(&["2021"], &["Falmouth", "maritime"]),
        )
    },
    about_memory(
        None,
        task(
            "past_compaction",
            "What was the outcome of our tide table compaction work?",
            FROM_SESSIONS,
            Check::Any(&["turning point", "high and low"]),
        ),
    ),
    about_memory(
        None,
        task(
            "past_last_week",
            "Last week we talked about malformed rows in tides.csv; what did we settle on?",
            FROM_SESSIONS,
            Check::Any(&["line number"]),
        ),
    ),
    about_memory(
        None,
        task(
            "past_yesterday",
            "What were we working on yesterday?",
            FROM_SESSIONS,
            Check::Any(&["clippy", "github actions"]),
        ),
    ),
];

/// The changes, asked in plain words; after the questions, before [`super::tasks::LAST`].
pub const MEMORY_CHANGES: &[Task] = &[
    about_memory(
        Some(StateCheck::Updated(EDITOR, "helix")),
        task(
            "update_editor",
            "I have moved to helix, so please change my editor preference to say so.",
            Expected::Tool(&["memory_update", "memory_search", "memory_read"]),
            Check::None,
        ),
    ),
    about_memory(
        Some(StateCheck::Archived(FEET)),
        task(
            "forget_feet",
            "Your memory about tide heights in feet is out of date: we went back to metres. Please remove it.",
            Expected::Tool(&["memory_forget", "memory_search", "memory_read"]),
            Check::None,
        ),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::route::memory::{asked_for, speaks_of, speaks_of_memory};

    /// The requests are read as the turn reads them: the two questions about the memory
    /// and the changes speak of it, the workspace and past-session questions do not;
    /// each change is asked for and names the memory it changes, not the demo.
    #[test]
    fn the_requests_speak_of_the_memories_they_are_about() {
        // The past sessions are asked about as the workspace is (its evidence ranks the
        // session summaries too).
        for t in MEMORY_QUESTIONS {
            let about = matches!(t.id, "prefs_known" | "list_memories");
            assert_eq!(speaks_of_memory(t.prompt), about, "{}", t.prompt);
        }
        let text = |d: &str| {
            let m = memories().into_iter().find(|m| m.description == d).unwrap();
            format!("description: {}\nsummary: {}", m.description, m.summary)
        };
        let [update, forget] = MEMORY_CHANGES else {
            panic!("two changes")
        };
        assert_eq!(update.state, Some(StateCheck::Updated(EDITOR, "helix")));
        assert_eq!(forget.state, Some(StateCheck::Archived(FEET)));
        assert!(speaks_of_memory(update.prompt) && speaks_of_memory(forget.prompt));
        assert!(asked_for("memory_update", update.prompt));
        assert!(speaks_of(update.prompt, &text(EDITOR)));
        assert!(asked_for("memory_forget", forget.prompt));
        assert!(speaks_of(forget.prompt, &text(FEET)));
        assert!(!speaks_of(forget.prompt, &text(DEMO)));
    }

    #[test]
    fn the_old_sessions_are_older_than_the_three_newest_and_dated_around_last_week() {
        let mut days: Vec<i64> = SESSIONS.iter().map(|s| s.days_ago).collect();
        days.sort_unstable();
        assert_eq!(
            days,
            SESSIONS.iter().map(|s| s.days_ago).collect::<Vec<_>>()
        );
        assert!(SESSIONS.len() >= 5);
        // "Last week" is 7 to 1 days back (two days' slack): the 5-day one in it, the
        // 24- and 40-day ones well out.
        assert!((1..=7).contains(&SESSIONS[3].days_ago));
        assert!(SESSIONS[4..].iter().all(|s| s.days_ago > 14));
        assert!(SESSIONS[5]
            .summary
            .contains("compaction of the tide tables"));
    }
}
