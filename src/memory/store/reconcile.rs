//! Reconcile: the index brought in line with the memory files at a session start (new
//! and changed files read, rows of deleted ones dropped, stale copies and superseded or
//! expired memories tidied). At 100k memories this is most of a session start, so the
//! files and rows are compared as two sorted lists.

use super::*;

impl MemoryStore {
    /// Brings the index in line with the files: new and changed files are (re)read,
    /// rows of deleted files dropped. Unreadable files are skipped with a warning. Then
    /// the files are tidied as harvey's own writes would have: the stale copy of an
    /// interrupted type change is deleted, and expired memories and the ones listed in a
    /// (re)read file's `supersedes:` (a file written by hand or by the Go tool) are
    /// archived.
    pub fn reconcile(&mut self) -> Result<Reconciled, StoreError> {
        let mut report = Reconciled::default();
        let mut supersedes: Vec<(String, Vec<String>)> = Vec::new();
        let dir = self.dir.clone();
        let result = self.index.batch(|index| {
            // Rows and files, both read under the write lock (the files on a second
            // thread meanwhile): no other process can add a row until this batch ends,
            // so a memory written in between is a new file here at worst, never a row
            // whose file looks deleted.
            let (known, mut files) = std::thread::scope(|s| {
                let scanning = s.spawn(|| upkeep::scan(&dir));
                let known = index.stamps().map(|mut known| {
                    known.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    known
                });
                tracing::debug!("phase: reconcile: index rows read");
                (
                    known,
                    scanning.join().unwrap_or_else(|_| upkeep::scan(&dir)),
                )
            });
            let known = known?;
            tracing::debug!(
                "phase: reconcile: {} rows, {} files scanned",
                known.len(),
                files.len()
            );
            report.stale_copies = upkeep::drop_stale_copies(&dir, &mut files);
            let diff = compare(&files, &known);
            report.unchanged = diff.unchanged.len();
            tracing::debug!("phase: reconcile: compared");
            if !diff.changed.is_empty() {
                // Which file holds each id, for the duplicates among the (re)read ones.
                let mut ids: HashMap<String, String> = diff
                    .unchanged
                    .iter()
                    .map(|&(f, k)| (known[k].1.clone(), files[f].rel.clone()))
                    .collect();
                for &i in &diff.changed {
                    let f = &files[i];
                    let Some(memory) = read_changed(index, &dir, f, &ids, &mut report)? else {
                        continue;
                    };
                    ids.insert(memory.id.clone(), f.rel.clone());
                    index.upsert(&memory, &placement(&memory, &f.rel, f.stamp, f.archived))?;
                    if !f.archived && !memory.supersedes.is_empty() {
                        supersedes.push((memory.id.clone(), memory.supersedes.clone()));
                    }
                    report.indexed += 1;
                }
            }
            for &k in &diff.gone {
                index.remove_path(&known[k].0)?;
                report.removed += 1;
            }
            Ok(())
        });
        result.map_err(|e| self.db_err(e))?;
        self.archive_stale(&supersedes, &mut report)?;
        let changed = report.indexed > 0 || report.removed > 0 || !report.archived.is_empty();
        if changed || !self.dir.join(overview::FILE_NAME).exists() {
            self.write_overview()?;
        }
        Ok(report)
    }

    /// Archives what reconcile found out of date: memories superseded by a (re)read
    /// file, then expired ones. One that cannot be moved stays active with a warning.
    fn archive_stale(
        &mut self,
        supersedes: &[(String, Vec<String>)],
        report: &mut Reconciled,
    ) -> Result<(), StoreError> {
        let mut stale: Vec<(String, &'static str)> = Vec::new();
        for (by, ids) in supersedes {
            for id in ids.iter().filter(|id| *id != by) {
                let row = self.index.get(id).map_err(|e| self.db_err(e))?;
                if row.is_some_and(|r| !r.archived) && !stale.iter().any(|(s, _)| s == id) {
                    stale.push((id.clone(), "superseded"));
                }
            }
        }
        let expired = self.index.expired(now_unix()).map_err(|e| self.db_err(e))?;
        let expired: Vec<(String, &'static str)> = expired
            .into_iter()
            .filter(|id| !stale.iter().any(|(s, _)| s == id))
            .map(|id| (id, "expired"))
            .collect();
        stale.extend(expired);
        for (id, why) in stale {
            match self.archive(&id) {
                Ok(()) => report.archived.push((id, why)),
                Err(e) => report.warnings.push(Warning {
                    path: self
                        .dir
                        .join(self.row(&id).map(|r| r.path).unwrap_or_default()),
                    problem: format!("{why} but not archived: {e}"),
                }),
            }
        }
        Ok(())
    }
}

/// How the scanned files (sorted by path) stand against the index rows (sorted by path):
/// pairs of (file, row) with equal stamps, files new or changed, rows whose file is gone.
/// A merge of two sorted lists: no hashing of 100k paths at a session start.
struct Diff {
    unchanged: Vec<(usize, usize)>,
    changed: Vec<usize>,
    gone: Vec<usize>,
}

fn compare(files: &[upkeep::Found], known: &[(String, String, FileStamp)]) -> Diff {
    let mut diff = Diff {
        unchanged: Vec::with_capacity(files.len()),
        changed: Vec::new(),
        gone: Vec::new(),
    };
    let (mut f, mut k) = (0, 0);
    loop {
        match (files.get(f), known.get(k)) {
            (Some(file), Some(row)) => match file.rel.as_str().cmp(row.0.as_str()) {
                std::cmp::Ordering::Equal => {
                    match file.stamp == row.2 {
                        true => diff.unchanged.push((f, k)),
                        false => diff.changed.push(f),
                    }
                    f += 1;
                    k += 1;
                }
                std::cmp::Ordering::Less => {
                    diff.changed.push(f);
                    f += 1;
                }
                std::cmp::Ordering::Greater => {
                    diff.gone.push(k);
                    k += 1;
                }
            },
            (Some(_), None) => {
                diff.changed.push(f);
                f += 1;
            }
            (None, Some(_)) => {
                diff.gone.push(k);
                k += 1;
            }
            (None, None) => return diff,
        }
    }
}

/// Reads a new or changed file: `None` (with a warning) when it does not parse, its row
/// then dropped, or when its id is already another file's (`ids`).
fn read_changed(
    index: &Index,
    dir: &Path,
    f: &upkeep::Found,
    ids: &HashMap<String, String>,
    report: &mut Reconciled,
) -> crate::storage::Result<Option<Memory>> {
    let path = dir.join(&f.rel);
    let parsed = std::fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|bytes| file::parse(&bytes, f.dir_type).map_err(|e| e.to_string()));
    let memory = match parsed {
        Ok(m) => m,
        Err(problem) => {
            index.remove_path(&f.rel)?;
            report.warnings.push(Warning { path, problem });
            return Ok(None);
        }
    };
    if let Some(other) = ids.get(&memory.id).filter(|p| **p != f.rel) {
        let problem = format!(
            "duplicate id {} (already used by {})",
            memory.id,
            dir.join(other).display()
        );
        report.warnings.push(Warning { path, problem });
        return Ok(None);
    }
    Ok(Some(memory))
}
