//! Where the memory index lives: `agents/memories/harvey-index.db`, a name of harvey's
//! own. `memories.db` in the same directory is the Go tool's index and is never opened
//! for writing. harvey before this name kept its index as `memories.db` too; such a
//! file (recognised by harvey's `meta.schema` row) is copied to the new name once and
//! removed, so its embeddings and token counts are kept.

use std::path::{Path, PathBuf};

/// The index file in `agents/memories/` (memories, sessions index, vectors).
pub const INDEX_FILE: &str = "harvey-index.db";

/// The Go tool's index, and harvey's own before it had a name of its own.
const SHARED_NAME: &str = "memories.db";

/// The index path in `dir`, after moving an index of an earlier harvey if there is one.
pub fn index_path(dir: &Path) -> PathBuf {
    let path = dir.join(INDEX_FILE);
    let old = dir.join(SHARED_NAME);
    if !path.exists() && old.exists() && written_by_harvey(&old) {
        if let Err(e) = crate::storage::relocate(&old, &path) {
            tracing::warn!(
                "cannot copy the index {} to {}: {e}; it is rebuilt from the files",
                old.display(),
                path.display()
            );
        }
    }
    path
}

/// Whether `path` is an index harvey wrote (the Go tool's has no `meta.schema` row).
fn written_by_harvey(path: &Path) -> bool {
    crate::storage::has_meta_value(path, "schema")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::fixtures::{read_text, write_foreign, write_harvey};

    #[test]
    fn the_go_tools_index_is_left_alone_and_an_old_harvey_index_is_moved() {
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join(SHARED_NAME);
        write_foreign(
            &go,
            "CREATE TABLE memories(id TEXT, body TEXT); INSERT INTO memories VALUES ('a', 'b');",
        );
        let before = std::fs::read(&go).unwrap();
        let path = index_path(dir.path());
        assert_eq!(path, dir.path().join(INDEX_FILE));
        assert!(!path.exists());
        assert_eq!(std::fs::read(&go).unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from(SHARED_NAME)],
            "nothing beside it"
        );

        std::fs::remove_file(&go).unwrap();
        write_harvey(&go, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', '4'); CREATE TABLE vectors(h TEXT); INSERT INTO vectors VALUES ('kept');");
        let path = index_path(dir.path());
        assert!(!go.exists(), "the old harvey index is moved");
        assert_eq!(read_text(&path, "SELECT h FROM vectors"), "kept");
    }
}
