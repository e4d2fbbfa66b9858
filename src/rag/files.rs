//! Which file a RAG store name means. harvey's own stores are `agents/rag/NAME.harvey.db`,
//! a name of their own, so they never collide with the Go tool's `agents/rag/NAME.db`
//! (the Go tool finds its stores through the `memory.rag.stores` list of its config, by
//! that path). A store harvey wrote under the Go tool's name, before its stores had one
//! of their own, is recognised by its `meta` table and moved to the new name once.
//!
//! A name can have both files: the Go store was imported (`/rag import NAME`). Then the
//! imported copy is used and the Go file is no longer opened.

use std::path::{Path, PathBuf};

/// What harvey's own store files end with.
pub const OWN_SUFFIX: &str = ".harvey.db";

/// `agents/rag`
pub fn rag_dir(agents_dir: &Path) -> PathBuf {
    agents_dir.join("rag")
}

pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The Go tool's file for `name`: `agents/rag/NAME.db`.
pub fn go_path(agents_dir: &Path, name: &str) -> PathBuf {
    rag_dir(agents_dir).join(format!("{name}.db"))
}

/// harvey's file for `name`, `agents/rag/NAME.harvey.db`, after moving a store harvey
/// kept under the Go tool's name before.
pub fn own_path(agents_dir: &Path, name: &str) -> PathBuf {
    let path = rag_dir(agents_dir).join(format!("{name}{OWN_SUFFIX}"));
    let old = go_path(agents_dir, name);
    if !path.exists() && old.is_file() && crate::storage::written_by_harvey(&old) {
        if let Err(e) = crate::storage::relocate(&old, &path) {
            tracing::warn!(
                "cannot move the RAG store {} to {}: {e}; it stays where it is",
                old.display(),
                path.display()
            );
            return old;
        }
    }
    path
}

/// Where a store name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// harvey's own store (made here, or imported from the Go tool's when `imported`).
    Own {
        path: PathBuf,
        imported: bool,
    },
    /// The Go tool's store, not imported: searched in memory, never written.
    Go(PathBuf),
    Missing,
}

/// The file `name` opens.
pub fn locate(agents_dir: &Path, name: &str) -> Located {
    let own = own_path(agents_dir, name);
    let go = go_path(agents_dir, name);
    let go_exists = go.is_file() && own != go;
    if own.is_file() {
        Located::Own {
            path: own,
            imported: go_exists,
        }
    } else if go_exists {
        Located::Go(go)
    } else {
        Located::Missing
    }
}

/// Whether the store `name` is the Go tool's, not imported (searched, never written).
pub fn written_by_go(agents_dir: &Path, name: &str) -> bool {
    matches!(locate(agents_dir, name), Located::Go(_))
}

/// Whether the store `name` is a copy harvey imported from the Go tool's store.
pub fn is_imported(agents_dir: &Path, name: &str) -> bool {
    matches!(
        locate(agents_dir, name),
        Located::Own { imported: true, .. }
    )
}

/// The stores under `agents/rag`, by name: harvey's and the Go tool's, each name once.
pub fn list(agents_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(rag_dir(agents_dir))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let file = e.file_name().to_str()?.to_string();
                    let name = file
                        .strip_suffix(OWN_SUFFIX)
                        .or_else(|| file.strip_suffix(".db"))?;
                    valid_name(name).then(|| name.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::fixtures::{write_foreign, write_harvey};

    #[test]
    fn an_old_harvey_store_moves_to_its_own_name_and_a_go_store_stays() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path();
        std::fs::create_dir_all(rag_dir(agents)).unwrap();
        let old = go_path(agents, "mine");
        write_harvey(
            &old,
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema', '1');",
        );
        let go = go_path(agents, "theirs");
        write_foreign(
            &go,
            "CREATE TABLE chunks(id INTEGER PRIMARY KEY, content TEXT)",
        );
        let before = std::fs::read(&go).unwrap();

        assert_eq!(list(agents), vec!["mine", "theirs"]);
        assert_eq!(
            locate(agents, "mine"),
            Located::Own {
                path: rag_dir(agents).join("mine.harvey.db"),
                imported: false
            }
        );
        assert!(!old.exists(), "moved, not kept twice");
        assert_eq!(locate(agents, "theirs"), Located::Go(go.clone()));
        assert!(written_by_go(agents, "theirs") && !written_by_go(agents, "mine"));
        assert_eq!(locate(agents, "none"), Located::Missing);
        assert_eq!(std::fs::read(&go).unwrap(), before);
        assert_eq!(list(agents), vec!["mine", "theirs"]);
    }
}
