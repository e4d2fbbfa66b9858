//! Answers from evidence: one pipeline that finds what answers a question in the
//! workspace, its history and memory, and fits it to a budget for the model:
//! **retrieve → rank → fit → answer, with the source named.**
//!
//! - [`scan`]: which files are covered (what the read tools may open, less what is not
//!   text for a reader) and how a changed file is told (size and modification time).
//! - [`chunk`]: files cut by structure (definitions, headings, sections, versions,
//!   a task file's targets).
//! - [`terms`]: identifiers kept whole and split, so plain words find names.
//! - [`history`]: commits as units (subject, body, author, date, files), and tags.
//! - [`worktree`]: what `git status` says now, one unit beside the commits.
//! - memories and session summaries enter the same index as units of their own, so a
//!   word every file has (the project's name) weighs as little for a memory as for a file.
//! - `storage::evidence`: the one FTS5 table under `agents/evidence.db` (bm25, names and
//!   headings weighted above text), derived and rebuildable.
//! - [`block`]: the ranked hits packed under an exact token budget, each with its source.
//!
//! Kept fresh incrementally by [`Index::refresh`]: only changed files are chunked again,
//! and history is read on from the last commit indexed. Nothing here prints.

pub mod block;
pub mod chunk;
pub mod code;
mod cut;
pub mod history;
pub mod markup;
pub mod rank;
pub mod scan;
mod tasks;
pub mod terms;
pub mod worktree;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::memory::when::Window;
use crate::storage::evidence::{EvidenceTables, Hit, NewUnit};
use crate::tokens::TokenCounter;

pub use block::Block;
pub use rank::{Ask, Scope};

/// The index file under `agents/`.
pub const FILE: &str = "evidence.db";

/// Hits read from the index for one question before fitting: files, memories and
/// sessions in one pool, commits in their own (they are many and short, and bm25 favours
/// short units: in a repository with 6,000 commits they filled the whole pool).
const POOL: usize = 30;
const COMMIT_POOL: usize = 10;

/// The best units (if code) whose names lead a question about history to the commits
/// that first defined them ([`Index::pull_origins`]), and the names taken from each.
const ORIGIN_UNITS: usize = 2;
const ORIGIN_NAMES: usize = 4;

/// A hit found only by a word of the same step ([`terms::related`]) against one found by
/// the question's own words; not for a unit named by that word (the `[dependencies]`
/// section a question about a library finds), which is what the word stands for.
const RELATED_WEIGHT: f64 = 0.6;

/// A session in the window a question names, not found by its words, comes in at this
/// share of the best hit's score (before the date weighs it up to 1.5×).
const DATED_SESSION_SHARE: f64 = 0.5;

/// How many of the newest sessions are looked at for a date.
const DATED_SESSIONS_SCANNED: usize = 200;

/// The working tree's one unit.
const WORKTREE: &str = "worktree:now";

/// Why the index could not be used.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("evidence index {path}: {source} ({hint})", hint = crate::storage::hint(source, "delete it: it is rebuilt from the workspace"))]
    Index {
        path: PathBuf,
        source: crate::storage::Error,
    },
}

/// What a refresh did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Refreshed {
    pub files: usize,
    /// Files chunked again (new or changed).
    pub files_read: usize,
    pub files_removed: usize,
    pub commits_added: usize,
    pub units: usize,
    pub millis: u128,
}

/// A memory as the index takes it: its id, when it changed, and its block line.
pub struct MemoryUnit {
    pub id: String,
    pub updated: i64,
    pub text: String,
}

/// A session summary as the index takes it.
pub struct SessionUnit {
    pub file: String,
    pub started: String,
    pub text: String,
}

/// The workspace's evidence index.
pub struct Index {
    root: PathBuf,
    path: PathBuf,
    tables: EvidenceTables,
}

impl Index {
    /// Opens (creating) the index of `workspace` at `agents/evidence.db`.
    pub fn open(workspace: &Path) -> Result<Self, EvidenceError> {
        let path = workspace.join("agents").join(FILE);
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tables = EvidenceTables::open(&path).map_err(|source| EvidenceError::Index {
            path: path.clone(),
            source,
        })?;
        Ok(Self {
            root: workspace.to_path_buf(),
            path,
            tables,
        })
    }

    fn err(&self) -> impl Fn(crate::storage::Error) -> EvidenceError + '_ {
        |source| EvidenceError::Index {
            path: self.path.clone(),
            source,
        }
    }

    /// Brings the index up to date with the workspace's files and history; `progress`
    /// hears (done, total) while files are read.
    pub fn refresh(
        &mut self,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Refreshed, EvidenceError> {
        let started = Instant::now();
        let listed = crate::workspace_map::list(&self.root);
        let scanned = scan::scan(&self.root, &listed);
        let old = self.tables.stamps("file:").map_err(self.err())?;
        let mut report = Refreshed {
            files: scanned.len(),
            ..Refreshed::default()
        };
        let wanted: HashMap<String, &str> = scanned
            .iter()
            .map(|s| (format!("file:{}", s.path), s.stamp.as_str()))
            .collect();
        let changed: Vec<&scan::Scanned> = scanned
            .iter()
            .filter(|s| {
                old.get(&format!("file:{}", s.path)).map(String::as_str) != Some(s.stamp.as_str())
            })
            .collect();
        let gone: Vec<&String> = old.keys().filter(|k| !wanted.contains_key(*k)).collect();
        let root = self.root.clone();
        let total = changed.len();
        let (read, units) = self
            .tables
            .write(|w| {
                let mut units = 0;
                for (i, s) in changed.iter().enumerate() {
                    let found = file_units(&root, &s.path);
                    units += found.len();
                    w.replace(&format!("file:{}", s.path), &s.stamp, &found)?;
                    if i % 50 == 0 {
                        progress(i, total);
                    }
                }
                for source in &gone {
                    w.remove(source)?;
                }
                Ok((changed.len(), units))
            })
            .map_err(self.err())?;
        progress(total, total);
        report.files_read = read;
        report.files_removed = gone.len();
        report.units = units;
        report.commits_added = self.refresh_history()?;
        self.refresh_tags()?;
        self.refresh_worktree()?;
        report.millis = started.elapsed().as_millis();
        Ok(report)
    }

    /// Reads the commits after the last one indexed (all, the first time or after a
    /// rewritten history); how many were added.
    fn refresh_history(&mut self) -> Result<usize, EvidenceError> {
        let Some(head) = history::head(&self.root) else {
            return Ok(0);
        };
        let last = self.tables.meta("head").map_err(self.err())?;
        if last.as_deref() == Some(head.as_str()) {
            return Ok(0);
        }
        let since = last.filter(|l| history::is_ancestor(&self.root, l, &head));
        if since.is_none() {
            let old: Vec<String> = self
                .tables
                .stamps("commit:")
                .map_err(self.err())?
                .into_keys()
                .collect();
            self.tables
                .write(|w| old.iter().try_for_each(|s| w.remove(s)))
                .map_err(self.err())?;
        }
        let Some(commits) = history::commits(&self.root, since.as_deref(), &head) else {
            return Ok(0);
        };
        let n = commits.len();
        self.tables
            .write(|w| {
                for c in &commits {
                    w.replace(&format!("commit:{}", c.hash), "", &[commit_unit(c)])?;
                }
                w.set_meta("head", &head)
            })
            .map_err(self.err())?;
        Ok(n)
    }

    /// Makes the index's tags the repository's (a new tag moves the latest release).
    fn refresh_tags(&mut self) -> Result<(), EvidenceError> {
        let Some(tags) = history::tags(&self.root) else {
            return Ok(());
        };
        let units: Vec<(String, String, NewUnit)> = tags
            .iter()
            .map(|t| {
                let unit = tag_unit(t);
                let stamp = format!("{}:{}:{}", t.commit, t.date, t.newest);
                (format!("tag:{}", t.name), stamp, unit)
            })
            .collect();
        self.sync("tag:", units)
    }

    /// Makes the index's working-tree unit what `git status` says now (none outside git).
    fn refresh_worktree(&mut self) -> Result<(), EvidenceError> {
        let units = match worktree::status(&self.root) {
            Some(entries) => {
                let text = worktree::text(&entries);
                let mut unit = text_unit("worktree", &text, 0);
                unit.names = worktree::STATES.join(" ");
                let stamp = short_hash(&format!("{}\n{text}", unit.names));
                vec![(WORKTREE.to_string(), stamp, unit)]
            }
            None => Vec::new(),
        };
        self.sync("worktree:", units)
    }

    /// Makes the index's memories those given (the active ones): changed ones are
    /// replaced, forgotten ones removed.
    pub fn sync_memories(&mut self, memories: &[MemoryUnit]) -> Result<(), EvidenceError> {
        let units: Vec<(String, String, NewUnit)> = memories
            .iter()
            .map(|m| {
                let unit = text_unit("memory", &m.text, m.updated);
                (
                    format!("memory:{}", m.id),
                    format!("{}:{}", m.updated, short_hash(&m.text)),
                    unit,
                )
            })
            .collect();
        self.sync("memory:", units)
    }

    /// Makes the index's session summaries those given (a hand-edited summary is read
    /// again by its new text).
    pub fn sync_sessions(&mut self, sessions: &[SessionUnit]) -> Result<(), EvidenceError> {
        let units: Vec<(String, String, NewUnit)> = sessions
            .iter()
            .filter(|s| !s.text.trim().is_empty())
            .map(|s| {
                let mut unit = text_unit(
                    "session",
                    &format!("session of {}: {}", s.started, s.text),
                    midday_of(&s.started),
                );
                unit.heading = s.started.clone();
                (format!("session:{}", s.file), short_hash(&s.text), unit)
            })
            .collect();
        self.sync("session:", units)
    }

    fn sync(
        &mut self,
        prefix: &str,
        units: Vec<(String, String, NewUnit)>,
    ) -> Result<(), EvidenceError> {
        let old = self.tables.stamps(prefix).map_err(self.err())?;
        let keep: std::collections::HashSet<&str> = units.iter().map(|u| u.0.as_str()).collect();
        let gone: Vec<&String> = old.keys().filter(|k| !keep.contains(k.as_str())).collect();
        let fresh: Vec<&(String, String, NewUnit)> = units
            .iter()
            .filter(|u| old.get(&u.0) != Some(&u.1))
            .collect();
        if gone.is_empty() && fresh.is_empty() {
            return Ok(());
        }
        self.tables
            .write(|w| {
                for s in &gone {
                    w.remove(s)?;
                }
                for (source, stamp, unit) in fresh {
                    w.replace(source, stamp, std::slice::from_ref(unit))?;
                }
                Ok(())
            })
            .map_err(self.err())
    }

    /// The evidence block for `question` under `budget` tokens, from the whole workspace
    /// and without vectors.
    pub fn gather(
        &self,
        question: &str,
        budget: usize,
        counter: &dyn TokenCounter,
    ) -> Result<Block, EvidenceError> {
        self.gather_for(&Ask::workspace(question), budget, counter)
    }

    /// The evidence block for `ask` under `budget` tokens: hits by words, weighed
    /// ([`rank::weigh`]), memories near by meaning that no word found ([`rank::near_only`]),
    /// then fitted.
    pub fn gather_for(
        &self,
        ask: &Ask<'_>,
        budget: usize,
        counter: &dyn TokenCounter,
    ) -> Result<Block, EvidenceError> {
        let dated = crate::memory::when::dated(ask.question, ask.now);
        let words = dated.as_ref().map_or(ask.question, |d| d.rest.as_str());
        let mut terms = terms::query_terms(words);
        let mut hits = match terms::fts_query(&terms) {
            Some(query) => self.search(&query, ask.scope)?,
            None => Vec::new(),
        };
        let related = terms::related(&terms);
        if let Some(query) = terms::fts_query(&related) {
            for mut h in self.search(&query, ask.scope)? {
                if !hits.iter().any(|x| x.id == h.id) {
                    if !rank::defines_any(&h.names, &related) {
                        h.score *= RELATED_WEIGHT;
                    }
                    hits.push(h);
                }
            }
        }
        terms.extend(related);
        if let Some(d) = &dated {
            self.pull_dated_sessions(&mut hits, &d.window)?;
        }
        hits.retain(|h| h.kind != "worktree" || rank::speaks_of_state(&h.names, ask.question));
        rank::weigh(&mut hits, ask, dated.as_ref().map(|d| &d.window));
        for (source, score) in rank::near_only(&hits, ask) {
            let units = self.tables.units_of(&source).map_err(self.err())?;
            hits.extend(units.into_iter().map(|mut u| {
                u.score = score;
                u
            }));
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        let history = crate::chat::route::asked::speaks_of_history(ask.question);
        if history && ask.scope == Scope::Workspace {
            self.pull_origins(&mut hits)?;
        }
        Ok(block::fit_in(
            ask.scope, history, &hits, &terms, budget, counter,
        ))
    }

    /// The sessions held in the window a question names ("what did we do yesterday?"),
    /// added to `hits` when its words found none of them: a question of a date alone has
    /// no words to find its sessions by. Each comes in at half the best hit's score (1 when
    /// nothing else was found), so within the window they rank by how close they are.
    fn pull_dated_sessions(
        &self,
        hits: &mut Vec<Hit>,
        window: &Window,
    ) -> Result<(), EvidenceError> {
        let best = hits.iter().map(|h| h.score).fold(0.0, f64::max);
        let score = if best > 0.0 {
            best * DATED_SESSION_SHARE
        } else {
            1.0
        };
        let sessions = self
            .tables
            .newest_of_kind("session", DATED_SESSIONS_SCANNED)
            .map_err(self.err())?;
        for mut s in sessions.into_iter().filter(|s| window.contains(s.written)) {
            if !hits.iter().any(|h| h.id == s.id) {
                s.score = score;
                hits.push(s);
            }
        }
        Ok(())
    }

    /// For a question about history, the commit that first defined each name of the best
    /// units where they are code (not a manifest that ranked first: "Which Rust edition is
    /// it written in?" speaks of history by its "written", and the commits that defined
    /// the code ranked third had pushed the manifest's answer out), added to `hits` (or
    /// raised) at that unit's score weighed as a commit's:
    /// "Who first added filtering tree traversal, where a callback can skip a node's
    /// children?" finds `NodeFilter`, and its subject ("Add new NodeFilter interface")
    /// shares no word with the question, so only the names lead to the commit. `hits`
    /// stay sorted best first.
    fn pull_origins(&self, hits: &mut Vec<Hit>) -> Result<(), EvidenceError> {
        let units: Vec<(f64, Vec<String>)> = hits
            .iter()
            .take(ORIGIN_UNITS)
            .filter(|h| h.kind == "code")
            .map(|h| {
                let names = terms::names_in(&h.names)
                    .into_iter()
                    .filter(|n| n.len() >= 3)
                    .take(ORIGIN_NAMES)
                    .collect();
                (h.score, names)
            })
            .collect();
        for (score, names) in units {
            let Some(query) = terms::fts_query(&names) else {
                continue;
            };
            let found = self
                .tables
                .search(&format!("names : ({query})"), &["commit"], COMMIT_POOL)
                .map_err(self.err())?;
            let score = score * rank::COMMIT_PRIOR;
            for name in &names {
                let named = [name.to_lowercase()];
                let Some(first) = found
                    .iter()
                    .filter(|c| rank::defines_any(&c.names, &named))
                    .min_by_key(|c| c.written)
                else {
                    continue;
                };
                match hits.iter_mut().find(|h| h.id == first.id) {
                    Some(h) => h.score = h.score.max(score),
                    None => hits.push(Hit {
                        score,
                        ..first.clone()
                    }),
                }
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(())
    }

    /// The hits for the FTS5 `query` in `scope`: one pool, and commits in their own.
    fn search(
        &self,
        query: &str,
        scope: Scope,
    ) -> Result<Vec<crate::storage::evidence::Hit>, EvidenceError> {
        let mut hits = self
            .tables
            .search(query, scope.kinds(), POOL)
            .map_err(self.err())?;
        if scope == Scope::Workspace {
            hits.extend(
                self.tables
                    .search(query, &["commit", "tag", "worktree"], COMMIT_POOL)
                    .map_err(self.err())?,
            );
        }
        Ok(hits)
    }

    /// Units per kind (for `harvey evidence --stats`).
    pub fn counts(&self) -> Result<Vec<(String, i64)>, EvidenceError> {
        self.tables.counts().map_err(self.err())
    }

    /// Every source the index holds (`file:…`, `commit:…`, `memory:…`, `session:…`).
    pub fn sources(&self) -> Result<Vec<String>, EvidenceError> {
        self.tables.sources().map_err(self.err())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The units of the file at `path` (none when it is not text for a reader).
fn file_units(root: &Path, path: &str) -> Vec<NewUnit> {
    let Some(text) = scan::read_text(root, path) else {
        return Vec::new();
    };
    chunk::chunks(path, &text)
        .into_iter()
        .map(|c| NewUnit {
            kind: c.kind.as_str().into(),
            first: c.first as i64,
            last: c.last as i64,
            extra: {
                let split = terms::split_forms(&format!("{} {} {}", c.names, c.heading, c.text));
                if terms::raises_message(&c.text) {
                    format!("{split} error message")
                } else {
                    split
                }
            },
            heading: c.heading,
            names: c.names,
            path: format!("{path} {}", crate::text::words::name_words(path).join(" ")),
            text: c.text,
            written: 0,
        })
        .collect()
}

/// A commit as a unit: its subject as the heading, its author and the names it defined
/// as its names; the files it touched are in its text (the body column), not the path
/// column, so a commit is not found by the project's file names alone.
fn commit_unit(c: &history::Commit) -> NewUnit {
    NewUnit {
        kind: "commit".into(),
        first: 0,
        last: 0,
        heading: c.subject.clone(),
        names: std::iter::once(c.author.as_str())
            .chain(c.defined.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        path: String::new(),
        extra: format!("{} {}", terms::split_forms(&c.body), c.added.join(" ")),
        text: c.text(),
        // `YYYYMMDD`: orders commits by day.
        written: c.date.replace('-', "").parse().unwrap_or(0),
    }
}

/// A tag as a unit: its name as the heading, dated by its day like a commit.
fn tag_unit(t: &history::Tag) -> NewUnit {
    NewUnit {
        kind: "tag".into(),
        first: 0,
        last: 0,
        heading: t.name.clone(),
        // `v1.2.0` and `release-1.2.0` are searched as `1.2.0`, the way questions say it.
        names: t
            .name
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .to_string(),
        path: String::new(),
        extra: String::new(),
        text: t.text(),
        written: t.date.replace('-', "").parse().unwrap_or(0),
    }
}

fn text_unit(kind: &str, text: &str, written: i64) -> NewUnit {
    NewUnit {
        kind: kind.into(),
        first: 0,
        last: 0,
        heading: String::new(),
        names: String::new(),
        path: String::new(),
        extra: terms::split_forms(text),
        text: text.to_string(),
        written,
    }
}

/// Unix seconds of noon (UTC) on `date` (`YYYY-MM-DD`); 0 when it is no date.
fn midday_of(date: &str) -> i64 {
    chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(12, 0, 0))
        .map_or(0, |t| t.and_utc().timestamp())
}

fn short_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests;
