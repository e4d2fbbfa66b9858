//! Fit: the ranked units into one `[evidence]` block under an exact token budget, each
//! snippet headed by its source (`path:first-last`, a commit's short hash and date, a
//! memory's id, a session's record), so the model can answer from the block and name
//! what it used. A unit longer than its share is cut to the lines around those that hold
//! most of the question's terms; a snippet that does not fit is skipped, not a stop.
//! Pure: hits and a token counter in, text out.

use serde::Serialize;

use crate::storage::evidence::Hit;
use crate::tokens::TokenCounter;

use super::cut::{rarity, snippet_within};

/// The block's first line: what it holds.
pub const HEADER: &str = "[evidence: snippets of this workspace's files, git history and memory that match the question, best first]";

/// What the model is asked after the question: to answer from the block, briefly, with
/// its source. Last, next to where the answer begins (small models follow the nearest
/// instruction). Memories are named only where the block holds one ([`ANSWER_NOTE_MEMORY`]):
/// asked to "name the file, commit or memory" of a block of files and commits, the 1.5B
/// called `memory_read` with a made-up id and answered that it had no such memory. The
/// tool is left open: pointed to "the files", it no longer ran `git` for "Are there any
/// uncommitted changes?".
pub const ANSWER_NOTE: &str = "(Answer the question from the evidence above in one or two sentences, then name the file or commit the answer came from. If the evidence does not answer it, call a tool instead.)";

/// [`ANSWER_NOTE`] for a block that holds a memory or a session summary.
pub const ANSWER_NOTE_MEMORY: &str = "(Answer the question from the evidence above in one or two sentences, then name the file, commit or memory the answer came from. If the evidence does not answer it, call a tool instead.)";

/// The first line of a block drawn from the memory alone (a request about what the
/// assistant remembers).
pub const MEMORY_HEADER: &str =
    "[memory: what you remember that matches the request, best first, each under its id]";

/// What the model is told after a request about the memory: the ids are the block's.
pub const MEMORY_NOTE: &str = "(The memories above are the ones that match. To read, update or forget one, use its id from the block; otherwise answer from them.)";

/// The user's own words of a message sent with a block (`block`, a blank line, the words,
/// its note); any other message as it is.
pub fn words_of(message: &str) -> &str {
    let Some(rest) = [HEADER, MEMORY_HEADER]
        .iter()
        .find_map(|h| message.strip_prefix(h))
    else {
        return message;
    };
    let body = [ANSWER_NOTE, ANSWER_NOTE_MEMORY, MEMORY_NOTE]
        .iter()
        .find_map(|n| rest.strip_suffix(n))
        .unwrap_or(rest)
        .trim_end();
    body.rsplit_once("\n\n").map_or(body, |(_, words)| words)
}

/// A hit below this share of the best hit's score is not evidence for the question.
pub const MIN_RELATIVE: f64 = 0.4;

/// Most snippets from one source (a file's chunks).
const MAX_PER_SOURCE: usize = 2;

/// Most commits in one block.
const MAX_COMMITS: usize = 3;

/// A commit below this share of the best hit's score is left out: a commit speaks to a
/// question about history, and a file to one about the code as it is.
const COMMIT_RELATIVE: f64 = 0.6;

/// A commit, a tag or the working tree's state: few words each, weighed and capped
/// together.
pub fn is_history(hit: &Hit) -> bool {
    matches!(hit.kind.as_str(), "commit" | "tag" | "worktree")
}

/// What makes commits one series (version bumps, merges of numbered pull requests): their
/// subject without its numbers. Of a series only the newest is shown.
fn series(hit: &Hit) -> Option<String> {
    (hit.kind == "commit").then(|| {
        hit.heading
            .chars()
            .filter(|c| !c.is_ascii_digit() && *c != '.' && *c != '#')
            .collect::<String>()
            .to_lowercase()
    })
}

/// `hits` with each commit series reduced to its newest commit, in rank order.
fn newest_of_each_series(hits: &[Hit]) -> Vec<&Hit> {
    let mut newest: std::collections::HashMap<String, &Hit> = std::collections::HashMap::new();
    for h in hits {
        if let Some(key) = series(h) {
            let e = newest.entry(key).or_insert(h);
            if h.written > e.written {
                *e = h;
            }
        }
    }
    hits.iter()
        .filter(|h| series(h).is_none_or(|k| std::ptr::eq(newest[&k], *h)))
        .collect()
}

/// One snippet in the block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snippet {
    /// `src/printer.rs:45-80`, `commit abc1234`, `memory project_fact_1a2b`.
    pub source: String,
    pub kind: String,
    pub score: f64,
    pub tokens: usize,
}

/// The assembled block.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Block {
    /// The exact text (empty when nothing was found).
    pub text: String,
    pub tokens: usize,
    pub budget: usize,
    pub snippets: Vec<Snippet>,
    /// Hits considered that did not fit or fell below the relative floor.
    pub skipped: usize,
    /// What the block was drawn from.
    pub scope: super::Scope,
}

impl Block {
    /// What follows the request in the message sent with this block.
    pub fn note(&self) -> &'static str {
        let remembered = self
            .snippets
            .iter()
            .any(|s| matches!(s.kind.as_str(), "memory" | "session"));
        match (self.scope, remembered) {
            (super::Scope::Workspace, false) => ANSWER_NOTE,
            (super::Scope::Workspace, true) => ANSWER_NOTE_MEMORY,
            (super::Scope::Memory, _) => MEMORY_NOTE,
        }
    }
}

/// How a hit is named in its snippet's head line.
pub fn source_label(hit: &Hit) -> String {
    let (kind, name) = hit.source.split_once(':').unwrap_or(("", &hit.source));
    match kind {
        "file" if hit.first > 0 => format!("{name}:{}-{}", hit.first, hit.last),
        "file" => name.to_string(),
        "commit" => format!("commit {}", &name[..name.len().min(7)]),
        "tag" => format!("tag {name}"),
        "worktree" => "git status, now".to_string(),
        "memory" => format!("memory {name}"),
        "session" => format!("session {name}"),
        _ => hit.source.clone(),
    }
}

/// The block for `hits` (best first) under `budget` tokens; `terms` are the question's,
/// used to keep the right lines of a long unit.
pub fn fit(hits: &[Hit], terms: &[String], budget: usize, counter: &dyn TokenCounter) -> Block {
    fit_in(super::Scope::Workspace, false, hits, terms, budget, counter)
}

/// [`fit`] for a block of `scope`, headed as that scope's blocks are. Where the question
/// speaks of history (`history`), its best commit is shown second, whatever its score
/// against the files': "Who added cJSON_SetBoolValue?" ranked the changelog line and two
/// tests that call it above the commit that added it, and the block filled before the
/// commit; "Who first wrote the TimestampSigner class?" found the class's every method
/// at four times the score of the first commit, the one that wrote it.
pub fn fit_in(
    scope: super::Scope,
    history: bool,
    hits: &[Hit],
    terms: &[String],
    budget: usize,
    counter: &dyn TokenCounter,
) -> Block {
    let mut block = Block {
        budget,
        scope,
        ..Block::default()
    };
    let Some(best) = hits.first().map(|h| h.score) else {
        return block;
    };
    let header = match scope {
        super::Scope::Workspace => format!("{HEADER}\n"),
        super::Scope::Memory => format!("{MEMORY_HEADER}\n"),
    };
    let mut used = counter.count_tokens(&header);
    let mut per_source: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut commits = 0;
    let mut text = header;
    let rarity = rarity(hits, terms);
    let mut candidates = newest_of_each_series(hits);
    if history {
        best_commit_second(&mut candidates);
    }
    let last = candidates.len().saturating_sub(1);
    for (i, hit) in candidates.into_iter().enumerate() {
        let seen = per_source.entry(hit.source.as_str()).or_default();
        let is_commit = is_history(hit);
        let over = *seen >= MAX_PER_SOURCE || (is_commit && commits >= MAX_COMMITS);
        let floor = match (is_commit, history && commits == 0) {
            (true, true) => 0.0,
            (true, false) => COMMIT_RELATIVE,
            (false, _) => MIN_RELATIVE,
        };
        if over || hit.score < best * floor {
            block.skipped += 1;
            continue;
        }
        // While other hits wait, one snippet takes at most a share of the budget: a long
        // function or workflow ranked first is cut to its best lines, and the settings
        // file or heading ranked next still fits.
        let share = if i < last {
            (budget as f64 * MAX_SHARE) as usize
        } else {
            budget
        };
        let room = budget.saturating_sub(used).min(share.max(MIN_SNIPPET));
        let Some((label, snippet, tokens)) = snippet_within(hit, (terms, &rarity), room, counter)
        else {
            block.skipped += 1;
            continue;
        };
        *seen += 1;
        commits += usize::from(is_commit);
        used += tokens;
        text.push_str(&snippet);
        block.snippets.push(Snippet {
            source: label,
            kind: hit.kind.clone(),
            score: hit.score,
            tokens,
        });
    }
    if block.snippets.is_empty() {
        return block;
    }
    block.tokens = counter.count_tokens(&text);
    block.text = text;
    block
}

/// `candidates` (best first) with the best commit or tag moved up to second place.
fn best_commit_second(candidates: &mut Vec<&Hit>) {
    if let Some(at) = candidates
        .iter()
        .position(|h| is_history(h))
        .filter(|&at| at > 1)
    {
        let commit = candidates.remove(at);
        candidates.insert(1, commit);
    }
}

/// The most of the budget one snippet takes while other hits are left to show.
const MAX_SHARE: f64 = 0.5;

/// Smallest snippet worth showing, in tokens (a head line and a few lines).
pub(super) const MIN_SNIPPET: usize = 24;

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tokens::WordCounter as Words;

    fn hit(source: &str, kind: &str, text: &str, score: f64) -> Hit {
        Hit {
            id: 0,
            source: source.into(),
            kind: kind.into(),
            first: 10,
            last: 10 + text.lines().count() as i64 - 1,
            heading: String::new(),
            text: text.into(),
            written: 0,
            score,
            names: String::new(),
        }
    }

    #[test]
    fn the_block_is_counted_exactly_and_stays_in_its_budget() {
        let long: String = (0..200).map(|i| format!("line {i} words here\n")).collect();
        let hits = [
            hit("file:src/a.rs", "code", "fn retry() {}\n", 9.0),
            hit("file:docs/big.md", "doc", &long, 8.0),
            hit(
                "commit:abcdef0123",
                "commit",
                "commit abcdef0 by Ann, 2024-01-02: Add retry",
                7.0,
            ),
        ];
        for budget in [40, 90, 300, 2000] {
            let b = fit(&hits, &["retry".into()], budget, &Words);
            assert!(b.tokens <= budget, "{budget}: {}", b.tokens);
            assert_eq!(b.tokens, Words.count_tokens(&b.text));
            assert!(b.text.starts_with(HEADER) || (b.text.is_empty() && b.snippets.is_empty()));
        }
        let b = fit(&hits, &["retry".into()], 300, &Words);
        let sources: Vec<&str> = b.snippets.iter().map(|s| s.source.as_str()).collect();
        assert_eq!(sources[0], "src/a.rs:10-10");
        assert!(sources.contains(&"commit abcdef0"), "{sources:?}");
    }

    #[test]
    fn a_question_about_history_keeps_a_place_for_its_best_commit() {
        let body: String = (0..30)
            .map(|i| format!("cJSON_SetBoolValue(x, {i});\n"))
            .collect();
        let hits = [
            hit("file:CHANGELOG.md", "doc", &body, 14.0),
            hit("file:tests/misc.c", "code", &body, 13.5),
            hit("file:tests/more.c", "code", &body, 13.0),
            hit(
                "commit:a6424b85dd",
                "commit",
                "commit a6424b8 by Stoian Ivanov, 2022-01-26: add cJSON_SetBoolValue",
                3.0,
            ),
        ];
        let terms = ["cjson_setboolvalue".to_string()];
        let sources = |history| {
            let b = fit_in(
                super::super::Scope::Workspace,
                history,
                &hits,
                &terms,
                120,
                &Words,
            );
            assert!(b.tokens <= 120, "{}", b.tokens);
            b.snippets.into_iter().map(|s| s.source).collect::<Vec<_>>()
        };
        let asked = sources(true);
        assert_eq!(asked[1], "commit a6424b8", "{asked:?}");
        // Not asked about history, the commit stays under its own floor.
        assert!(!sources(false).iter().any(|s| s.starts_with("commit")));
    }

    #[test]
    fn a_long_first_hit_leaves_room_for_the_next() {
        let long: String = (0..80)
            .map(|i| format!("step {i} of the build\n"))
            .collect();
        let hits = [
            hit("file:.github/ci.yml", "config", &long, 9.0),
            hit(
                "file:Cargo.toml",
                "config",
                "[package]\nversion = \"0.1.0\"\n",
                8.0,
            ),
        ];
        let b = fit(&hits, &["build".into()], 200, &Words);
        assert_eq!(b.snippets.len(), 2, "{}", b.text);
        assert!(b.snippets[0].tokens <= 100, "{:?}", b.snippets[0]);
        assert!(b.text.contains("version = \"0.1.0\""), "{}", b.text);
        // Alone, a hit may fill the budget.
        let b = fit(&hits[..1], &["build".into()], 200, &Words);
        assert!(b.snippets[0].tokens > 100, "{:?}", b.snippets[0]);
    }

    #[test]
    fn a_long_unit_keeps_the_lines_with_the_question_terms() {
        let mut text: String = (0..100).map(|i| format!("filler {i}\n")).collect();
        text.push_str("the default timeout is 30 seconds\n");
        text.extend((0..100).map(|i| format!("more {i}\n")));
        let hits = [hit("file:docs/conf.md", "doc", &text, 5.0)];
        let b = fit(&hits, &["timeout".into(), "default".into()], 80, &Words);
        assert!(b.text.contains("default timeout is 30"), "{}", b.text);
        let label = &b.snippets[0].source;
        assert!(
            label.starts_with("docs/conf.md:") && label != "docs/conf.md:10-210",
            "{label}"
        );
    }

    #[test]
    fn a_cut_unit_keeps_the_lines_of_the_rare_terms() {
        // "default" and "value" are in every hit; "etag" only in the first.
        let mut set: String = (0..30).map(|i| format!("  step({i});\n")).collect();
        set.insert_str(
            0,
            "  case 'etag':\n    this.set('etag fn', compile(val));\n",
        );
        set.push_str("  define(obj, defaultSymbol, { value: false });\n");
        set.extend((0..30).map(|i| format!("  more({i});\n")));
        let other = |i: usize| {
            let text = format!("the default value of option {i}\n");
            hit(&format!("file:docs/o{i}.md"), "doc", &text, 1.0)
        };
        let mut hits = vec![hit("file:lib/app.js", "code", &set, 9.0)];
        hits.extend((0..6).map(other));
        let terms = ["default", "value", "etag", "setting"].map(String::from);
        let b = fit(&hits, &terms, 60, &Words);
        assert!(b.text.contains("case 'etag'"), "{}", b.text);
    }

    #[test]
    fn weak_hits_and_too_many_of_one_source_are_skipped() {
        let hits = [
            hit("file:a", "code", "x", 10.0),
            hit("file:a", "code", "y", 9.0),
            hit("file:a", "code", "z", 8.0),
            hit("file:b", "code", "w", 1.0),
        ];
        let b = fit(&hits, &[], 1000, &Words);
        assert_eq!(b.snippets.len(), 2);
        assert_eq!(b.skipped, 2);
    }

    #[test]
    fn a_series_of_like_commits_shows_its_newest() {
        let mut old = hit(
            "commit:aaaaaaa1",
            "commit",
            "commit aaaaaaa: Update version to 1.7.13",
            9.0,
        );
        old.heading = "Update version to 1.7.13".into();
        old.written = 20200402;
        let mut new = hit(
            "commit:bbbbbbb2",
            "commit",
            "commit bbbbbbb: Update version to 1.7.14",
            8.5,
        );
        new.heading = "Update version to 1.7.14".into();
        new.written = 20200903;
        let b = fit(
            &[
                old,
                new,
                hit("file:CMakeLists.txt", "config", "VERSION 1.7.19", 8.0),
            ],
            &[],
            500,
            &Words,
        );
        let sources: Vec<&str> = b.snippets.iter().map(|s| s.source.as_str()).collect();
        assert_eq!(sources, ["commit bbbbbbb", "CMakeLists.txt:10-10"]);
    }

    #[test]
    fn the_words_of_a_message_sent_with_a_block_are_the_users() {
        let hits = [hit("file:src/a.rs", "code", "fn retry() {}\n\nmore", 9.0)];
        let b = fit(&hits, &["retry".into()], 300, &Words);
        let sent = format!("{}\n\nHow does it retry?\n{}", b.text.trim_end(), b.note());
        assert_eq!(b.note(), ANSWER_NOTE);
        assert_eq!(words_of(&sent), "How does it retry?");
        let with_memory = [
            hit("memory:workflow_a1", "memory", "We retry three times.", 9.0),
            hits[0].clone(),
        ];
        let b = fit(&with_memory, &["retry".into()], 300, &Words);
        assert_eq!(b.note(), ANSWER_NOTE_MEMORY);
        let sent = format!("{}\n\nHow does it retry?\n{}", b.text.trim_end(), b.note());
        assert_eq!(words_of(&sent), "How does it retry?");
        assert_eq!(words_of("plain words"), "plain words");
    }

    #[test]
    fn nothing_found_is_no_block() {
        let b = fit(&[], &[], 100, &Words);
        assert!(b.text.is_empty() && b.snippets.is_empty());
    }
}
