//! What a reconcile repairs in the memory files before and after indexing them.
//!
//! * **Interrupted type changes.** Changing a memory's type writes the file into the new
//!   type directory first and removes the old one after, so a crash in between leaves two
//!   copies of one id, with the same file stem, in two type directories. The copy with
//!   the newer `updated_at` is kept (ties: the one whose `type:` matches its directory,
//!   then the newer file); the stale copy is deleted — it is an older version of the same
//!   memory, which the interrupted write was about to delete anyway.
//! * Expired and superseded memories are archived by the store after indexing (see
//!   `MemoryStore::reconcile`); this module only finds them.
//!
//! File I/O only (no index): the store calls these with its directory. The scan of the
//! memory files lives here too.

use std::path::{Path, PathBuf};

use super::clock::{parse_time, stamp_from, stamp_of};
use super::file::{self, EXTENSIONS};
use super::types::{Memory, MemoryType};

/// A memory file found by the scan.
pub(crate) struct Found {
    pub rel: String,
    pub stamp: super::index::FileStamp,
    pub dir_type: Option<MemoryType>,
    pub archived: bool,
}

/// Memory files under `<type>/` and `archive/<type>/`, sorted (first path wins an id).
/// Stale temp files of killed writes are removed on the way (see `file::STALE_TEMP`).
/// One directory read each; a file is stat'ed through its directory entry (no path walk
/// per file: at 100k memories the scan is most of a session start).
pub(crate) fn scan(dir: &Path) -> Vec<Found> {
    let (mut listed, mut dirents) = (Vec::new(), Vec::new());
    file::remove_stale_temps(dir);
    for (prefix, archived) in [("", false), ("archive/", true)] {
        for t in MemoryType::ALL {
            let sub = format!("{prefix}{}", t.as_str());
            let Ok(entries) = std::fs::read_dir(dir.join(&sub)) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                if name.starts_with('.') {
                    file::remove_if_stale_temp(&entry);
                    continue;
                }
                let ext_ok = Path::new(name)
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| EXTENSIONS.contains(&e));
                if ext_ok {
                    listed.push((format!("{sub}/{name}"), t, archived));
                    dirents.push(entry);
                }
            }
        }
    }
    let mut found: Vec<Found> = listed
        .into_iter()
        .zip(stamps(&dirents))
        .filter_map(|((rel, t, archived), stamp)| {
            Some(Found {
                rel,
                stamp: stamp?,
                dir_type: Some(t),
                archived,
            })
        })
        .collect();
    found.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    found
}

/// Files from which the scan stats on two threads. The stats are the scan's cost (one
/// system call each); at 10k files they take about as long as the embedder's load that
/// runs beside them, so a second thread would only slow that down; at 100k they are
/// most of a session start.
const PARALLEL_FROM: usize = 30_000;

/// Each entry's stamp (`None`: it vanished or cannot be stat'ed), on two threads when
/// there are many.
fn stamps(entries: &[std::fs::DirEntry]) -> Vec<Option<super::index::FileStamp>> {
    stamps_from(entries, PARALLEL_FROM)
}

fn stamps_from(
    entries: &[std::fs::DirEntry],
    parallel_from: usize,
) -> Vec<Option<super::index::FileStamp>> {
    let stamp = |part: &[std::fs::DirEntry]| -> Vec<_> {
        part.iter().map(|e| entry_stamp(e).ok()).collect()
    };
    if entries.len() < parallel_from {
        return stamp(entries);
    }
    let (first, second) = entries.split_at(entries.len() / 2);
    std::thread::scope(|s| {
        let other = s.spawn(|| stamp(second));
        let mut found = stamp(first);
        found.extend(other.join().unwrap_or_else(|_| stamp(second)));
        found
    })
}

/// A directory entry's stamp: from the entry itself, or through the link it is.
fn entry_stamp(entry: &std::fs::DirEntry) -> std::io::Result<super::index::FileStamp> {
    match entry.file_type()?.is_symlink() {
        true => stamp_of(&entry.path()),
        false => stamp_from(&entry.metadata()?),
    }
}

/// Deletes the stale copies an interrupted type change left behind and drops them from
/// `files` (`files` keeps its order). Returns the deleted paths.
pub(crate) fn drop_stale_copies(dir: &Path, files: &mut Vec<Found>) -> Vec<PathBuf> {
    // Stems of the active files, sorted so that copies of one id sit side by side.
    let mut stems: Vec<(&str, usize)> = files
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.archived)
        .map(|(i, f)| (stem(&f.rel), i))
        .collect();
    stems.sort_unstable();
    let mut stale: Vec<usize> = Vec::new();
    for group in stems.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        let group: Vec<usize> = group.iter().map(|(_, i)| *i).collect();
        stale.extend(stale_in_group(dir, files, &group));
    }
    let mut removed = Vec::new();
    for &i in &stale {
        let path = dir.join(&files[i].rel);
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(path),
            Err(e) => tracing::warn!("cannot remove stale copy {}: {e}", path.display()),
        }
    }
    // A copy that could not be deleted is still not indexed: the newer one is.
    stale.sort_unstable();
    for i in stale.into_iter().rev() {
        files.remove(i);
    }
    removed
}

/// A memory file's name without its directory and extension.
fn stem(rel: &str) -> &str {
    Path::new(rel)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
}

/// Of files sharing a stem: the stale copies (same id, other type directories, older).
fn stale_in_group(dir: &Path, files: &[Found], group: &[usize]) -> Vec<usize> {
    let parsed: Vec<(usize, Memory)> = group
        .iter()
        .filter_map(|&i| {
            let bytes = std::fs::read(dir.join(&files[i].rel)).ok()?;
            file::parse(&bytes, files[i].dir_type).ok().map(|m| (i, m))
        })
        .collect();
    let Some((_, first)) = parsed.first() else {
        return Vec::new();
    };
    let same_id = parsed.iter().all(|(_, m)| m.id == first.id);
    let dirs: std::collections::HashSet<_> =
        parsed.iter().map(|(i, _)| files[*i].dir_type).collect();
    if parsed.len() < 2 || !same_id || dirs.len() != parsed.len() {
        // Not the trace of a type change: reconcile warns about duplicate ids as before.
        return Vec::new();
    }
    let key = |(i, m): &(usize, Memory)| {
        (
            parse_time(&m.updated_at).unwrap_or(i64::MIN),
            files[*i].dir_type == Some(m.mtype),
            files[*i].stamp.mtime_ns,
        )
    };
    let keep = parsed
        .iter()
        .max_by_key(|p| key(p))
        .map(|(i, _)| *i)
        .unwrap_or(group[0]);
    parsed
        .iter()
        .map(|(i, _)| *i)
        .filter(|i| *i != keep)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::index::FileStamp;

    fn put(dir: &Path, rel: &str, text: &str, mtime_ns: i64) -> Found {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        let t = rel.split('/').next().and_then(MemoryType::parse);
        Found {
            rel: rel.into(),
            stamp: FileStamp { mtime_ns, size: 0 },
            dir_type: t,
            archived: false,
        }
    }

    fn memory(id: &str, mtype: &str, updated: &str) -> String {
        format!("---\nid: {id}\ntype: {mtype}\nupdated_at: \"{updated}\"\ndescription: d\n---\n")
    }

    #[test]
    fn stamps_on_two_threads_are_each_entrys_own_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..9 {
            std::fs::write(dir.path().join(format!("m{i}.spmd")), "x".repeat(i)).unwrap();
        }
        let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        let alone = stamps_from(&entries, usize::MAX);
        assert_eq!(stamps_from(&entries, 2), alone);
        for (entry, stamp) in entries.iter().zip(&alone) {
            let size = entry.metadata().unwrap().len() as i64;
            assert_eq!(stamp.map(|s| s.size), Some(size), "{:?}", entry.path());
        }
    }

    #[test]
    fn the_newer_copy_of_an_interrupted_move_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut files = vec![
            put(
                d,
                "tool_use/x1.spmd",
                &memory("x1", "tool_use", "2026-01-01T00:00:00Z"),
                2,
            ),
            put(
                d,
                "workflow/x1.spmd",
                &memory("x1", "workflow", "2026-02-01T00:00:00Z"),
                1,
            ),
            put(
                d,
                "workflow/y.spmd",
                &memory("y", "workflow", "2026-01-01T00:00:00Z"),
                1,
            ),
        ];
        let removed = drop_stale_copies(d, &mut files);
        assert_eq!(removed, vec![d.join("tool_use/x1.spmd")]);
        let left: Vec<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(left, vec!["workflow/x1.spmd", "workflow/y.spmd"]);
        assert!(!d.join("tool_use/x1.spmd").exists());
    }

    #[test]
    fn equal_times_keep_the_copy_in_its_own_type_directory() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let same = "2026-01-01T00:00:00Z";
        // The stale copy says workflow but sits (after a hand move) in tool_use.
        let mut files = vec![
            put(d, "tool_use/x.md", &memory("x", "workflow", same), 9),
            put(d, "workflow/x.spmd", &memory("x", "workflow", same), 1),
        ];
        drop_stale_copies(d, &mut files);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].rel, "workflow/x.spmd");
    }

    #[test]
    fn different_ids_or_one_directory_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let t = "2026-01-01T00:00:00Z";
        let mut files = vec![
            put(d, "tool_use/a.spmd", &memory("a", "tool_use", t), 1),
            put(d, "workflow/a.spmd", &memory("other", "workflow", t), 1),
            put(d, "workflow/b.md", &memory("b", "workflow", t), 1),
            put(d, "workflow/b.spmd", &memory("b", "workflow", t), 1),
        ];
        assert!(drop_stale_copies(d, &mut files).is_empty());
        assert_eq!(files.len(), 4);
    }
}
