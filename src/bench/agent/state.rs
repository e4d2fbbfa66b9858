//! What a task of the agent benchmark left behind: the memories (active and archived,
//! by id) and the workspace's files outside `agents/` and `.git/`, read before and after
//! a task whose [`super::tasks::StateCheck`] asks, and compared by
//! [`super::score::state_problems`]. Memories are read through the store, as the memory
//! tools read them; nothing here writes.

use std::collections::BTreeMap;
use std::path::Path;

use crate::memory::{MemoryStore, StoreError};

use super::tasks::StateCheck;

/// One memory as a task may change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryState {
    pub description: String,
    /// Description, summary, body and tags, one per line.
    pub text: String,
    pub archived: bool,
}

/// The memories by id and the files by path (relative, `/`-separated).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub memories: BTreeMap<String, MemoryState>,
    pub files: BTreeMap<String, Vec<u8>>,
}

impl Snapshot {
    /// Reads the workspace `dir` (its memories under `dir/agents`).
    pub fn take(dir: &Path) -> Result<Self, StoreError> {
        let (store, _) = MemoryStore::open(&dir.join("agents"), dir)?;
        let mut memories = BTreeMap::new();
        for archived in [false, true] {
            let rows = store
                .index()
                .list(archived)
                .map_err(|e| StoreError::Index {
                    path: store.dir().to_path_buf(),
                    source: e,
                })?;
            for row in rows {
                let m = store.get(&row.id)?;
                let text = [m.description.clone(), m.summary, m.body, m.tags.join(", ")];
                memories.insert(
                    row.id,
                    MemoryState {
                        description: m.description,
                        text: text.join("\n"),
                        archived,
                    },
                );
            }
        }
        let mut files = BTreeMap::new();
        read_files(dir, dir, &mut files);
        Ok(Self { memories, files })
    }
}

/// What is wrong with the workspace `dir` now against `check`, from `before` (read
/// before the task); a workspace that cannot be read is a problem too.
pub fn problems_after(
    check: StateCheck,
    before: Result<Snapshot, StoreError>,
    dir: &Path,
) -> Vec<String> {
    match (before, Snapshot::take(dir)) {
        (Ok(b), Ok(a)) => super::score::state_problems(check, &b, &a),
        (Err(e), _) | (_, Err(e)) => vec![format!("cannot read the workspace: {e}")],
    }
}

/// Every file under `dir` but `agents/` and `.git/` at the top, into `out`; what cannot
/// be read is left out on both sides alike.
fn read_files(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel == "agents" || rel == ".git" {
            continue;
        }
        if path.is_dir() {
            read_files(root, &path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.insert(rel, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::agent::fixture::Fixture;

    #[test]
    fn a_snapshot_holds_the_planted_memories_and_the_files_outside_agents() {
        let f = Fixture::create().unwrap();
        let before = Snapshot::take(&f.dir).unwrap();
        let editor = before
            .memories
            .values()
            .find(|m| m.description == super::super::memory_tasks::EDITOR)
            .unwrap();
        assert!(editor.text.contains("vim") && !editor.archived);
        assert!(before.files.contains_key("README.md"));
        assert!(before.files.contains_key("src/lib.rs"));
        assert!(before.files.contains_key(".gitignore"));
        assert!(before
            .files
            .keys()
            .all(|p| !p.starts_with("agents/") && !p.starts_with(".git/")));
        assert_eq!(
            Snapshot::take(&f.dir).unwrap(),
            before,
            "reading changes nothing"
        );

        let id = before.memories.keys().next().unwrap().clone();
        let (mut store, _) = MemoryStore::open(&f.dir.join("agents"), &f.dir).unwrap();
        store.forget(&id).unwrap();
        f.write("notes/new.md", "x").unwrap();
        let after = Snapshot::take(&f.dir).unwrap();
        assert!(after.memories[&id].archived);
        assert!(after.files.contains_key("notes/new.md"));
    }
}
