//! What files the workspace holds, as the model may use them: the `[workspace files]`
//! block of the session-start context ([`fit`]) and the nearest real paths for a path
//! the model got wrong ([`nearest`]).
//!
//! The listing ([`list`]) holds only what the read tools may open: files git does not
//! ignore (`git ls-files`, when the workspace is in a git work tree; otherwise a bounded
//! walk that skips hidden and build folders), never `agents/`, `.git/`, `target/`, a
//! secret-looking name (the sandbox's rules) or a path through a symlink. It is sorted,
//! so the same files always give the same map (the saved prompt prefix depends on it).
//! Nothing here prints or counts tokens itself: the caller's [`crate::tokens::TokenCounter`]
//! does.

pub mod fit;
pub mod named;
pub mod nearest;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::sandbox::check_relative;

/// One file the tools may read, relative to the workspace root (`/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileEntry {
    pub path: String,
    pub bytes: u64,
}

/// Most files listed; a bigger tree is listed up to here (the map says the rest exists
/// only as counts anyway).
pub const MAX_FILES: usize = 20_000;

/// Folders never listed, at any depth: build output and dependency caches.
const SKIP_DIRS: &[&str] = &["target", "node_modules", ".venv", "__pycache__"];

/// How long `git ls-files` may take before the walk is used instead.
const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The files of the workspace the tools may read, sorted by path.
pub fn list(root: &Path) -> Vec<FileEntry> {
    let Ok(root) = root.canonicalize() else {
        return Vec::new();
    };
    let candidates = git_files(&root).unwrap_or_else(|| walk(&root));
    let mut out: Vec<FileEntry> = candidates
        .into_iter()
        .filter_map(|rel| visible(&root, &rel))
        .collect();
    out.sort();
    out.dedup();
    out.truncate(MAX_FILES);
    out
}

/// `rel` as an entry when the tools may read it: a regular file reached through no
/// symlink, not in a private or skipped folder, not secret-looking.
fn visible(root: &Path, rel: &str) -> Option<FileEntry> {
    let rel = rel.trim_end_matches('/');
    if rel.is_empty()
        || rel
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return None;
    }
    let mut parts = rel.split('/');
    let first = parts.next()?;
    if rel.split('/').any(|p| SKIP_DIRS.contains(&p)) || first == "target" {
        return None;
    }
    check_relative(Path::new(rel), rel).ok()?;
    let joined = root.join(rel);
    let meta = std::fs::symlink_metadata(&joined).ok()?;
    if !meta.is_file() {
        return None;
    }
    // No symlinked folder on the way: the real path is the path itself.
    if joined.canonicalize().ok()? != joined {
        return None;
    }
    Some(FileEntry {
        path: rel.to_string(),
        bytes: meta.len(),
    })
}

/// Tracked and untracked-but-not-ignored files under `root`, from git; `None` when the
/// workspace is not in a git work tree or git is missing, fails or is slow.
fn git_files(root: &Path) -> Option<Vec<String>> {
    let args = [
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
    ];
    let all = crate::command::git::quiet(root, &args, GIT_TIMEOUT)?;
    let text = String::from_utf8_lossy(&all);
    Some(
        text.split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Every file under `root` (relative paths), depth first in name order, skipping hidden
/// folders, [`SKIP_DIRS`], `agents/` and symlinks; at most [`MAX_FILES`] files and ten
/// times as many entries looked at.
fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut stack: Vec<PathBuf> = vec![PathBuf::new()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
        for entry in entries {
            seen += 1;
            if out.len() >= MAX_FILES || seen > MAX_FILES * 10 {
                return out;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = dir.join(&name);
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let skipped = name.starts_with('.')
                    || SKIP_DIRS.contains(&name.as_str())
                    || (dir.as_os_str().is_empty() && name == "agents");
                if !skipped {
                    stack.push(rel);
                }
            } else if kind.is_file() {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A workspace with source, docs, private folders, secrets and a symlink out.
    pub(crate) fn sample() -> (tempfile::TempDir, PathBuf) {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("myproj");
        for dir in [
            "src/tools",
            "docs",
            "agents/memories",
            ".git",
            "target/debug",
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            "Cargo.toml",
            "README.md",
            "LICENSE-MIT",
            "LICENSE-APACHE",
            "src/main.rs",
            "src/lib.rs",
            "src/tools/mod.rs",
            "docs/deploy.md",
            "agents/memories/a.md",
            ".git/config",
            "target/debug/harvey",
            ".env",
            "server.key",
        ] {
            std::fs::write(root.join(file), "text\n").unwrap();
        }
        std::fs::write(outer.path().join("outside.rs"), "secret\n").unwrap();
        std::os::unix::fs::symlink(outer.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(outer.path().join("outside.rs"), root.join("main2.rs")).unwrap();
        (outer, root)
    }

    #[test]
    fn lists_only_what_the_tools_may_read_sorted() {
        let (_keep, root) = sample();
        let paths: Vec<String> = list(&root).into_iter().map(|e| e.path).collect();
        assert_eq!(
            paths,
            [
                "Cargo.toml",
                "LICENSE-APACHE",
                "LICENSE-MIT",
                "README.md",
                "docs/deploy.md",
                "src/lib.rs",
                "src/main.rs",
                "src/tools/mod.rs",
            ]
        );
    }

    #[test]
    fn git_ignored_files_are_left_out() {
        let (_keep, root) = sample();
        std::fs::remove_dir_all(root.join(".git")).unwrap();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap()
        };
        assert!(git(&["init", "-q"]).status.success());
        std::fs::write(root.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join("build/out.o"), "x").unwrap();
        std::fs::write(root.join("run.log"), "x").unwrap();
        let paths: Vec<String> = list(&root).into_iter().map(|e| e.path).collect();
        assert!(paths.contains(&"src/main.rs".to_string()), "{paths:?}");
        assert!(paths.contains(&".gitignore".to_string()), "{paths:?}");
        for gone in ["run.log", "build/out.o", ".env", "server.key", "main2.rs"] {
            assert!(!paths.contains(&gone.to_string()), "{gone}: {paths:?}");
        }
        assert!(paths.iter().all(|p| !p.starts_with("agents/")
            && !p.starts_with(".git/")
            && !p.starts_with("target/")
            && !p.starts_with("out/")));
    }
}
