//! The sessions index and the per-session `memory_stats`, in the memory index file
//! (`agents/memories/harvey-index.db`). The session files are the truth for the index: at startup rows whose
//! file is gone are pruned, and a file changed since it was indexed (a summary edited by
//! hand) is read again, as memory files are.

use std::path::{Path, PathBuf};

use crate::memory::query::terms;
use crate::storage::sessions::SessionTables;
pub use crate::storage::sessions::{SessionEntry, SessionStats};
use crate::storage::Result as DbResult;

pub struct SessionIndex {
    tables: SessionTables,
    dir: PathBuf,
    /// Sessions the Go tool mined (its `manifest.yaml`, read at open, never written).
    go_mined: std::collections::HashSet<String>,
}

impl SessionIndex {
    /// Opens the index in `<agents>/memories/harvey-index.db`; sessions live in `<agents>/sessions`.
    pub fn open(agents_dir: &Path) -> DbResult<Self> {
        let db_dir = agents_dir.join("memories");
        let _ = std::fs::create_dir_all(&db_dir);
        let tables = SessionTables::open(&crate::memory::location::index_path(&db_dir))?;
        Ok(Self {
            tables,
            dir: agents_dir.join("sessions"),
            go_mined: super::go_manifest::mined_files(&db_dir),
        })
    }

    pub fn sessions_dir(&self) -> &Path {
        &self.dir
    }

    /// Brings the index in line with the session files: rows whose file is gone are
    /// dropped, a file whose size or mtime changed since it was indexed has its
    /// summary and tags read again from its closing notes, and a record with exchanges
    /// and no row (the Go tool's, or one whose session was killed) is added. Returns
    /// (pruned, re-read or added).
    pub fn reconcile(&self) -> DbResult<(usize, usize)> {
        let (pruned, reread) = self.reread()?;
        Ok((pruned, reread + self.discover()?))
    }

    fn reread(&self) -> DbResult<(usize, usize)> {
        let files = self.tables.files()?;
        let (mut pruned, mut reread) = (0, 0);
        for f in files {
            let path = self.dir.join(&f);
            let Some(stamp) = file_stamp(&path) else {
                self.tables.remove(&f)?;
                pruned += 1;
                continue;
            };
            if self.stamp(&f)? == Some(stamp) {
                continue;
            }
            self.tables.forget_terms(&f)?;
            if let Ok(text) = std::fs::read_to_string(&path) {
                let record = super::fountain::parse(&text);
                let note = |prefix: &str| {
                    record
                        .closing_notes
                        .iter()
                        .find_map(|n| n.strip_prefix(prefix).map(str::trim).map(str::to_string))
                };
                if let Some(summary) = note("Summary: ") {
                    self.tables.set_summary(&f, &summary)?;
                }
                if let Some(tags) = note("Tags: ") {
                    let tags: Vec<&str> = tags
                        .split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .collect();
                    self.tables.set_tags(&f, &tags.join(","))?;
                }
                reread += 1;
            }
            self.set_stamp(&f, stamp)?;
        }
        Ok((pruned, reread))
    }

    /// Adds the records in the sessions directory that have no row yet.
    fn discover(&self) -> DbResult<usize> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Ok(0);
        };
        let mut added = 0;
        for path in dir.filter_map(|e| e.ok().map(|e| e.path())) {
            let Some(file) = path
                .file_name()
                .and_then(|n| n.to_str())
                .filter(|n| n.ends_with(".spmd"))
                .map(str::to_string)
            else {
                continue;
            };
            let Some(stamp) = file_stamp(&path) else {
                continue;
            };
            if self.get(&file)?.is_some() || self.stamp(&file)? == Some(stamp) {
                continue;
            }
            let record = match std::fs::read_to_string(&path) {
                Ok(text) => super::fountain::parse(&text),
                Err(_) => continue,
            };
            match entry_of(&file, &record) {
                Some(entry) => {
                    self.put(&entry)?;
                    added += 1;
                }
                // Nothing to list yet (a session that has just started): remember the
                // stamp so the file is read again only when it changes.
                None => self.set_stamp(&file, stamp)?,
            }
        }
        Ok(added)
    }

    fn stamp(&self, file: &str) -> DbResult<Option<(i64, i64)>> {
        self.tables.stamp(file)
    }

    fn set_stamp(&self, file: &str, stamp: (i64, i64)) -> DbResult<()> {
        self.tables.set_stamp(file, stamp)
    }

    pub fn put(&self, e: &SessionEntry) -> DbResult<()> {
        self.tables.put(e)?;
        // The file as indexed: a later change to it (a hand edit) is read at reconcile.
        match file_stamp(&self.dir.join(&e.file)) {
            Some(stamp) => self.set_stamp(&e.file, stamp),
            None => Ok(()),
        }
    }

    pub fn rename(&self, file: &str, name: &str) -> DbResult<bool> {
        self.tables.rename(file, name)
    }

    /// Newest first.
    pub fn recent(&self, n: usize) -> DbResult<Vec<SessionEntry>> {
        self.tables.recent(n, false)
    }

    /// Newest first, only sessions with a summary (what recall can show of them).
    pub fn recent_summarized(&self, n: usize) -> DbResult<Vec<SessionEntry>> {
        self.tables.recent(n, true)
    }

    pub fn get(&self, file: &str) -> DbResult<Option<SessionEntry>> {
        self.tables.get(file)
    }

    /// Sessions whose summary, tags or name share words with `query`, best first. A
    /// session without a summary (the Go tool's records have none) is searched by the
    /// words of its exchanges instead.
    pub fn search(&self, query: &str, k: usize) -> DbResult<Vec<(SessionEntry, usize)>> {
        let wanted = terms(query);
        let all = self.recent(10_000)?;
        let mut scored = Vec::new();
        for e in all {
            let have = terms(&format!(
                "{} {} {}",
                e.summary,
                e.tags.join(" "),
                e.name.clone().unwrap_or_default()
            ));
            // A short word of a whole session ("go") would match many a query word as its
            // prefix: exchange words match only when the query word begins them.
            let text = if e.summary.trim().is_empty() {
                self.exchange_terms(&e.file)?
            } else {
                Vec::new()
            };
            scored.push((e, have, text));
        }
        let mut scored: Vec<(SessionEntry, usize)> = scored
            .into_iter()
            .map(|(e, have, text)| {
                let score = wanted
                    .iter()
                    .filter(|w| {
                        have.iter()
                            .any(|h| h.starts_with(w.as_str()) || w.starts_with(h.as_str()))
                            || text.iter().any(|t| t.starts_with(w.as_str()))
                    })
                    .count();
                (e, score)
            })
            .filter(|(_, s)| *s > 0)
            .collect();
        scored.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.started.cmp(&a.0.started)));
        scored.truncate(k);
        Ok(scored)
    }

    /// The topic words of `file`'s exchanges, worked out once and kept until the file
    /// changes (see `reread`).
    fn exchange_terms(&self, file: &str) -> DbResult<Vec<String>> {
        let kept = self.tables.terms(file)?;
        let joined = match kept {
            Some(t) => t,
            None => {
                let Ok(text) = std::fs::read_to_string(self.dir.join(file)) else {
                    return Ok(Vec::new());
                };
                let record = super::fountain::parse(&text);
                let words: Vec<String> = record
                    .exchanges
                    .iter()
                    .flat_map(|x| {
                        crate::memory::query::all_terms(&format!("{}\n{}", x.user, x.reply))
                    })
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let joined = words.join(" ");
                self.tables.set_terms(file, &joined)?;
                joined
            }
        };
        Ok(joined.split_whitespace().map(String::from).collect())
    }

    /// Records that `file` was mined (the manifest `/memory mine` consults).
    pub fn mark_mined(&self, file: &str) -> DbResult<()> {
        self.tables
            .mark_mined(file, &crate::memory::store::now_rfc3339())
    }

    /// Whether `file` was mined, by harvey or (its manifest says) by the Go tool.
    pub fn is_mined(&self, file: &str) -> DbResult<bool> {
        if self.go_mined.contains(file) {
            return Ok(true);
        }
        self.tables.is_mined(file)
    }

    pub fn record_stats(&self, s: &SessionStats) -> DbResult<()> {
        self.tables.record_stats(s)
    }

    /// Every stats row, oldest first.
    pub fn stats(&self) -> DbResult<Vec<SessionStats>> {
        self.tables.stats()
    }
}

/// (mtime in ns, size) of a file, `None` when it is gone.
fn file_stamp(path: &Path) -> Option<(i64, i64)> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((
        i64::try_from(mtime).unwrap_or(i64::MAX),
        i64::try_from(meta.len()).unwrap_or(i64::MAX),
    ))
}

/// The last sessions' summaries as a recall silo (`[recent sessions]`, query-independent).
pub struct SessionSilo<'a> {
    pub index: &'a SessionIndex,
    pub recent: usize,
}

impl crate::memory::Silo for SessionSilo<'_> {
    fn name(&self) -> &str {
        "sessions"
    }

    fn candidates(
        &self,
        _query: &str,
        _k: usize,
    ) -> Result<Vec<crate::memory::Candidate>, crate::memory::StoreError> {
        if self.recent == 0 {
            return Ok(Vec::new());
        }
        let rows = self
            .index
            .recent_summarized(self.recent)
            .map_err(|source| crate::memory::StoreError::Index {
                path: self
                    .index
                    .dir
                    .with_file_name("memories")
                    .join(crate::memory::location::INDEX_FILE),
                source,
            })?;
        let n = rows.len();
        Ok(rows
            .into_iter()
            .enumerate()
            .map(|(i, e)| crate::memory::Candidate {
                id: e.file.clone(),
                source: "sessions".into(),
                section: crate::memory::Section::Sessions,
                text: format!(
                    "- {}: {}",
                    e.started.get(..10).unwrap_or(&e.started),
                    // Summaries written before they were screened may still hold one.
                    first_sentence(&crate::memory::guard::redact_secrets(&e.summary).0)
                ),
                // Newest first; below every fact (facts score ≥ 0.5 × 0.8).
                score: 0.1 * (n - i) as f64 / n as f64,
                // Listed oldest first (the rows come newest first).
                written: -(i as i64),
            })
            .collect())
    }
}

/// The summary's first sentence, at most 200 characters.
fn first_sentence(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = flat.find(". ").map(|i| i + 1).unwrap_or(flat.len());
    flat.chars().take(end.min(200)).collect()
}

/// The row for a record found on disk: its start (title date, else the first scene),
/// the time between its first and last scene, its closing summary and tags.
fn entry_of(file: &str, record: &super::fountain::Record) -> Option<SessionEntry> {
    let first = record.exchanges.first()?;
    let last = record.exchanges.last()?;
    let time = |t: &str| chrono::NaiveDateTime::parse_from_str(t.trim(), "%Y-%m-%d %H:%M:%S").ok();
    let started = Some(record.title.date.as_str())
        .filter(|d| time(d).is_some())
        .unwrap_or(&first.when)
        .to_string();
    let duration_s = match (time(&started), time(&last.when)) {
        (Some(a), Some(b)) => (b - a).num_seconds().max(0),
        _ => 0,
    };
    let note = |prefix: &str| {
        record
            .closing_notes
            .iter()
            .find_map(|n| n.strip_prefix(prefix).map(|v| v.trim().to_string()))
    };
    Some(SessionEntry {
        file: file.to_string(),
        started,
        duration_s,
        turns: record.exchanges.len() as i64,
        summary: note("Summary: ").unwrap_or_default(),
        tags: note("Tags: ")
            .map(|t| {
                t.split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        name: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GO_SESSION: &str = include_str!("../../tests/fixtures/go-session.spmd");

    #[test]
    fn a_record_without_a_summary_is_found_by_its_exchanges_as_they_stand() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let file = "harvey-session-20260525-120000.spmd";
        std::fs::write(sessions.join(file), GO_SESSION).unwrap();
        let index = SessionIndex::open(dir.path()).unwrap();
        index.reconcile().unwrap();
        let found = |q: &str| -> Vec<String> {
            index
                .search(q, 3)
                .unwrap()
                .into_iter()
                .map(|(e, _)| e.file)
                .collect()
        };
        assert_eq!(found("publish a release"), vec![file]);
        assert!(found("kubernetes").is_empty());
        // An exchange word matches when the query word begins it, not the other way round.
        assert!(found("generate").len() == 1 && found("generatedness").is_empty());

        std::fs::write(
            sessions.join(file),
            GO_SESSION.replace("publish a release", "rotate the signing keys of the mirror"),
        )
        .unwrap();
        index.reconcile().unwrap();
        assert_eq!(found("signing keys"), vec![file]);
        assert!(
            found("release").is_empty(),
            "the words of the old text are gone"
        );
    }
}
