//! Requests about harvey's own memory: their words name what the assistant remembers
//! ("What do you know about my preferences?", "Delete that memory.", "List all memory
//! files."), and some of them ask for a remembered note to change or go. Such a request
//! is answered from the memories that rank for it, by the memory steps alone: the
//! workspace's files cannot list, change or forget a memory, and the 1.5B, offered them,
//! read a file named `profile` for "Read the details" and wrote one for "Update my
//! preferences".
//!
//! The words here are the product's own (memory, remember, forget, a preference, what
//! the user told it), not a question kind of any project.

use crate::tools::Registry;

/// Words that name the assistant's memory wherever they stand.
const REMEMBERING: &[&str] = &["remember", "remembered", "remembers", "forget", "forgotten"];

/// Words that name a memory, the assistant's only beside [`WHOSE`] or before [`PARTS`]:
/// "How much memory does the server use?" is about the server, "my saved editor
/// preference" is a memory.
const MEMORY: &[&str] = &["memory", "memories", "preference", "preferences"];

/// Words near a memory word (three either side) that make it the assistant's: "your
/// memory", "that memory", "all memory files", "what memories do you have".
const WHOSE: &[&str] = &[
    "your", "you", "my", "our", "that", "this", "these", "those", "all", "saved", "stored",
];

/// Words right after a memory word that name a part of the assistant's memory.
const PARTS: &[&str] = &[
    "index", "file", "files", "note", "notes", "entry", "entries", "id",
];

/// Phrases that ask what the assistant knows of the user (lowercase, whole words).
const ABOUT_THE_USER: &[&str] = &[
    "you know about me",
    "you know about my",
    "do you know my",
    "i told you",
    "did i tell you",
    "have i told you",
];

/// Verbs by which a request asks for a remembered note to change or go.
const CHANGING: &[&str] = &[
    "update", "change", "correct", "fix", "edit", "replace", "amend", "revise",
];
const FORGETTING: &[&str] = &[
    "forget", "delete", "remove", "drop", "archive", "erase", "discard",
];

/// Lowercase words; a hyphenated compound stays one ("memory-mapped" is no memory).
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether the phrase `phrase` occurs in `words` as whole words.
fn says_phrase(words: &[String], phrase: &str) -> bool {
    let parts: Vec<&str> = phrase.split(' ').collect();
    words
        .windows(parts.len())
        .any(|w| w.iter().zip(&parts).all(|(a, b)| a == b))
}

/// Whether the user's own `words` speak of what the assistant remembers.
pub fn speaks_of_memory(words: &str) -> bool {
    let w = self::words(words);
    let is = |i: usize, list: &[&str]| w.get(i).is_some_and(|x| list.contains(&x.as_str()));
    let assistants = |i: usize| {
        let near = i.saturating_sub(3)..(i + 4).min(w.len());
        near.clone().any(|j| j != i && is(j, WHOSE)) || is(i + 1, PARTS)
    };
    (0..w.len()).any(|i| is(i, REMEMBERING) || (is(i, MEMORY) && assistants(i)))
        || ABOUT_THE_USER.iter().any(|p| says_phrase(&w, p))
}

/// What a request about the memory asks to be done to a remembered note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Rewrite it (`memory_update`).
    Update,
    /// Archive it (`memory_forget`).
    Forget,
}

/// The change the user's own `words` ask for, when they speak of the memory and say a
/// verb of changing or forgetting ("Update my preferences: …", "The auth decision is
/// outdated. Delete that memory."); `None` for anything else, a question included ("Did
/// you forget my preference?").
pub fn asks_to_change(words: &str) -> Option<Change> {
    if !speaks_of_memory(words) || words.trim_end().ends_with('?') {
        return None;
    }
    let w = self::words(words);
    let says = |list: &[&str]| w.iter().any(|x| list.contains(&x.as_str()));
    // "Don't forget that …" keeps something: it asks for no change.
    let keeps = says_phrase(&w, "don't forget")
        || says_phrase(&w, "do not forget")
        || says_phrase(&w, "dont forget");
    // "Please remember our plan: drop PyPy support" keeps a note whose words say "drop":
    // what comes after the asking verb is the note, not a change to the memory.
    let verbs = [REMEMBERING, CHANGING, FORGETTING];
    let first = w
        .iter()
        .find(|x| verbs.iter().any(|list| list.contains(&x.as_str())));
    if first.is_some_and(|x| x.starts_with("remember")) {
        return None;
    }
    if says(FORGETTING) && !keeps {
        Some(Change::Forget)
    } else if says(CHANGING) {
        Some(Change::Update)
    } else {
        None
    }
}

/// Whether the user's own `words` ask for what a call of `tool` does to a memory:
/// `memory_update` for a change, `memory_forget` for a forget. Where nobody can answer
/// (`harvey run`), only such a call goes through without a yes.
pub fn asked_for(tool: &str, words: &str) -> bool {
    matches!(
        (tool, asks_to_change(words)),
        ("memory_update", Some(Change::Update)) | ("memory_forget", Some(Change::Forget))
    )
}

/// Whether the user's own `words` speak of the memory whose full text is `memory`: they
/// share a topic word (the first five letters of each, so "preferences" meets "prefer")
/// beyond the words of remembering, changing and whose. Unattended, a change goes only to
/// a memory the request names: a model that wrote another id is refused.
pub fn speaks_of(words: &str, memory: &str) -> bool {
    let own = |w: &String| {
        crate::memory::query::is_topic(w)
            && w.chars().count() >= 3
            && ![REMEMBERING, MEMORY, WHOSE, CHANGING, FORGETTING]
                .iter()
                .any(|list| list.contains(&w.as_str()))
    };
    let stem = |w: &String| w.chars().take(5).collect::<String>();
    let asked: Vec<String> = self::words(words)
        .iter()
        .filter(|w| own(w))
        .map(stem)
        .collect();
    // The values of `memory_read`'s `field: value` lines, not the field names.
    let values: Vec<&str> = memory
        .lines()
        .map(|l| l.split_once(": ").map_or(l, |(_, v)| v))
        .collect();
    self::words(&values.join("\n"))
        .iter()
        .filter(|w| own(w))
        .any(|w| asked.contains(&stem(w)))
}

/// The tools a request about the memory may take as its first step: the memory's own.
pub const MEMORY_STEPS: &[&str] = &[
    "memory_search",
    "memory_read",
    "memory_list",
    "memory_update",
    "memory_forget",
    "memory_write",
    "session_search",
    "session_read",
];

/// The tools that change or list the memory: held off every request that does not speak
/// of it, so "Update the README" is never a memory update.
pub const MEMORY_ONLY: &[&str] = &[
    "memory_list",
    "memory_read",
    "memory_update",
    "memory_forget",
];

/// The memory steps that would do the opposite of the `change` asked for: a request to
/// forget is never a rewrite or a new note, a request to change a note never archives it
/// and never writes another beside it.
fn contrary_to(change: Option<Change>) -> &'static [&'static str] {
    match change {
        Some(Change::Forget) => &["memory_update", "memory_write"],
        Some(Change::Update) => &["memory_forget", "memory_write"],
        None => &[],
    }
}

/// The router's steps held off for the user's own `words`: every step but the memory's
/// when they speak of it, and of those the ones contrary to the change they ask for; the
/// memory's changes and listing when they do not speak of it.
pub fn held_off(registry: &Registry, words: &str) -> Vec<&'static str> {
    let about_memory = speaks_of_memory(words);
    let contrary = contrary_to(asks_to_change(words));
    registry
        .list()
        .into_iter()
        .map(|t| t.name)
        .filter(|name| {
            if about_memory {
                !MEMORY_STEPS.contains(name) || contrary.contains(name)
            } else {
                MEMORY_ONLY.contains(name)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_prompts_speak_of_memory_and_a_workspace_question_does_not() {
        for said in [
            "What do you know about my preferences? Read the details.",
            "Update my preferences: I also prefer dark theme in all editors.",
            "The auth service decision is outdated. Delete that memory.",
            "List all memory files and show me the current index.",
            "Do you remember which port we chose?",
        ] {
            assert!(speaks_of_memory(said), "{said}");
        }
        for other in [
            "How do I cut a release here?",
            "Update the README with the new flag.",
            "Which file implements the memory-mapped reader?",
            "How much memory does the server use at most?",
            "Reduce the memory footprint of the parser.",
        ] {
            assert!(!speaks_of_memory(other), "{other}");
        }
    }

    #[test]
    fn a_change_is_asked_by_a_verb_beside_the_memory_and_never_by_a_question() {
        let ask = asks_to_change;
        assert_eq!(
            ask("Update my preferences: I also prefer dark theme in all editors."),
            Some(Change::Update)
        );
        assert_eq!(
            ask("The auth service decision is outdated. Delete that memory."),
            Some(Change::Forget)
        );
        assert_eq!(ask("Forget what I said about tabs."), Some(Change::Forget));
        assert_eq!(ask("Don't forget that we deploy on Fridays."), None);
        let plan = "Please remember our plan: drop PyPy support before the next release.";
        assert_eq!(ask(plan), None, "the note's own verb changes no memory");
        assert_eq!(ask("Remember to update the changelog."), None);
        assert_eq!(
            ask("Update what you remember about my editor: I use helix."),
            Some(Change::Update)
        );
        assert_eq!(
            ask("List all memory files and show me the current index."),
            None
        );
        assert_eq!(ask("Did you forget my preference?"), None);
        assert_eq!(ask("Delete the build folder."), None, "no memory named");
        assert_eq!(ask("Update the README."), None);
        let forget = "The auth service decision is outdated. Delete that memory.";
        assert!(asked_for("memory_forget", forget));
        assert!(!asked_for("memory_update", forget), "a forget is no update");
        assert!(!asked_for("memory_forget", "What is in your memory?"));
    }

    #[test]
    fn a_request_speaks_of_the_memory_it_shares_a_topic_word_with() {
        let forget = "The auth service decision is outdated. Delete that memory.";
        assert!(speaks_of(
            forget,
            "description: We decided to use PostgreSQL for the auth service"
        ));
        assert!(!speaks_of(
            forget,
            "description: I prefer TypeScript over JavaScript"
        ));
        let update = "Update my preferences: I also prefer dark theme in all editors.";
        assert!(speaks_of(
            update,
            "type: user_preference\ndescription: I prefer TypeScript"
        ));
        assert!(!speaks_of(
            "Delete that memory.",
            "description: that memory of yours"
        ));
        // Field names are not what a memory says.
        assert!(!speaks_of(
            "The description is outdated; forget it.",
            "description: tabs"
        ));
    }

    #[test]
    fn a_request_to_forget_is_held_off_a_rewrite_and_a_change_off_an_archive() {
        use crate::tools::memory::*;
        let place = MemoryPlace {
            agents_dir: "agents".into(),
            workspace: ".".into(),
            embedder: None,
            config: crate::config::Config::default().memory,
        };
        let mut r = Registry::new();
        r.add(Box::new(MemorySearch(place.clone())));
        r.add(Box::new(MemoryRead(place.clone())));
        r.add(Box::new(MemoryWrite(place.clone())));
        r.add(Box::new(MemoryUpdate(place.clone())));
        r.add(Box::new(MemoryForget(place)));
        let forget = "Your memory about tide heights in feet is out of date. Please remove it.";
        let off = held_off(&r, forget);
        assert!(off.contains(&"memory_update") && off.contains(&"memory_write"));
        assert!(!off.contains(&"memory_forget") && !off.contains(&"memory_search"));
        let change = "Please change my editor preference: I use helix now.";
        let off = held_off(&r, change);
        assert!(off.contains(&"memory_forget") && off.contains(&"memory_write"));
        assert!(!off.contains(&"memory_update") && !off.contains(&"memory_read"));
        // Telling something to remember asks for no change: no memory step is held off.
        let off = held_off(&r, "Remember that we deploy with ./deploy.sh.");
        assert!(!off.contains(&"memory_write") && !off.contains(&"memory_forget"));
    }
}
