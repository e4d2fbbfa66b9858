//! The paths a git read may name: the same rules as the read tools'
//! ([`crate::sandbox`]), applied to every argument that could be a path.
//!
//! git takes paths in many places: bare words (a revision or a path, git decides), after
//! `--`, as `REV:PATH` (and `:N:PATH`, `-L1,5:PATH`), and as option values
//! (`--ignore-revs-file=F`). A word that names an existing file must resolve inside the
//! workspace and not onto `agents/`, `.git/` or a secret-looking file; a word that does
//! not exist may still name one in history (`log -p -- .env`, `show HEAD:.env`), so its
//! names are checked too. A path outside the workspace is what makes `git diff` switch
//! to `--no-index` on its own (`diff /dev/null .env`), so refusing those closes that door
//! as well. Pathspec magic and globs are off (`--literal-pathspecs`, set by the caller),
//! so `'.e*'` cannot match `.env` by pattern.

use std::path::{Component, Path};

use crate::sandbox;

/// Checks every argument after the subcommand; the error says which one and why.
pub fn check(workspace: &Path, args: &[String]) -> Result<(), String> {
    // A `.git` here: the workspace is the repository's top, where git's tree paths and
    // the workspace's paths agree. Otherwise it is a folder inside a larger repository.
    let at_top = workspace.join(".git").exists();
    let mut only_paths = false;
    for arg in args {
        if !only_paths && arg == "--" {
            only_paths = true;
            continue;
        }
        if !only_paths && arg.starts_with('-') {
            check_option(workspace, arg)?;
            continue;
        }
        check_existing(workspace, arg)?;
        check_names(arg)?;
        if !only_paths {
            check_rev_path(arg)?;
            check_tree_path(arg, at_top)?;
        }
    }
    Ok(())
}

/// `--name=VALUE` and `-xVALUE`: the value may be a file (`--ignore-revs-file=F`,
/// `-O F`) or a `RANGE:PATH` (`-L1,5:F`).
fn check_option(workspace: &Path, arg: &str) -> Result<(), String> {
    let value = if arg.starts_with("--") {
        arg.split_once('=').map(|(_, v)| v)
    } else {
        arg.get(2..).filter(|v| !v.is_empty())
    };
    let Some(value) = value else {
        return Ok(());
    };
    check_existing(workspace, value).map_err(|e| format!("{arg}: {e}"))?;
    check_rev_path(value).map_err(|e| format!("{arg}: {e}"))
}

/// A word that names something on disk must resolve inside the workspace, through the
/// read sandbox.
fn check_existing(workspace: &Path, word: &str) -> Result<(), String> {
    let path = Path::new(word);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    };
    if word.is_empty() || std::fs::symlink_metadata(&joined).is_err() {
        return Ok(());
    }
    sandbox::resolve(workspace, word)
        .map(|_| ())
        .map_err(|e| format!("{word}: {e}"))
}

/// The names along a word, as a pathspec: no `agents/` or `.git/` first, no
/// secret-looking name anywhere.
fn check_names(word: &str) -> Result<(), String> {
    let relative: std::path::PathBuf = Path::new(word)
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    sandbox::check_relative(&relative, word).map_err(|e| e.to_string())
}

/// `REV:PATH`, `:N:PATH` and `START,END:PATH`: the part after the first and after the
/// last colon, as names (git reads them from history, not from disk).
fn check_rev_path(word: &str) -> Result<(), String> {
    let (Some((_, first)), Some((_, last))) = (word.split_once(':'), word.rsplit_once(':')) else {
        return Ok(());
    };
    for part in [first, last] {
        check_names(part).map_err(|e| format!("{word}: {e}"))?;
    }
    Ok(())
}

/// The `PATH` of a `REV:PATH` word is read from the repository's tree, from its top
/// unless it starts with `./`: it may not climb with `..`, and in a workspace that is a
/// folder inside a larger repository it must start with `./` (git then reads it below
/// the workspace), so `HEAD:other/secret` cannot reach a sibling folder's history.
fn check_tree_path(word: &str, at_top: bool) -> Result<(), String> {
    let Some((_, path)) = word.rsplit_once(':') else {
        return Ok(());
    };
    if Path::new(path)
        .components()
        .any(|c| c == Component::ParentDir)
    {
        return Err(format!("{word}: a tree path may not climb out with '..'"));
    }
    if !at_top && !path.starts_with("./") {
        return Err(format!(
            "{word}: this workspace is a folder inside a larger repository, where a tree path \
             is read from the repository's top; write it as REV:./PATH (below the workspace)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn paths_outside_or_private_are_refused_wherever_they_stand() {
        let outer = tempfile::tempdir().unwrap();
        let ws = outer.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(ws.join("agents")).unwrap();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(ws.join("src/a.rs"), "a").unwrap();
        std::fs::write(ws.join(".env"), "SECRET=1").unwrap();
        std::fs::write(outer.path().join("x.txt"), "x").unwrap();
        std::os::unix::fs::symlink(outer.path().join("x.txt"), ws.join("out.txt")).unwrap();
        for line in [
            "/dev/null .env",
            "/dev/null src/a.rs",
            "-- /tmp",
            "-- ../x.txt",
            "out.txt",
            "HEAD -- .env",
            "HEAD:.env",
            "HEAD:./.env",
            ":0:.env",
            "HEAD:agents/memories/x.md",
            "-L1,5:.env",
            "-L 1,5:.env",
            "--ignore-revs-file=.env",
            "-S /etc/passwd",
            "-- agents",
            "HEAD:./../x.txt",
            "HEAD:src/../../x.txt",
        ] {
            assert!(check(&ws, &words(line)).is_err(), "{line}");
        }
        for line in [
            "",
            "--short",
            "-n 3 --oneline",
            "HEAD~3..HEAD -- src/a.rs",
            "HEAD:src/a.rs",
            "-L 1,5 src/a.rs",
            "--format=%h:%s",
            "main...feature",
            ".",
            "-- src",
        ] {
            assert!(check(&ws, &words(line)).is_ok(), "{line}");
        }
    }

    /// A workspace inside a larger repository: tree paths count from the repository's
    /// top, so only `REV:./PATH` (below the workspace) is let through.
    #[test]
    fn a_subfolder_workspace_reads_only_its_own_tree_paths() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        let ws = repo.path().join("app");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/a.rs"), "a").unwrap();
        for line in [
            "HEAD:ops/deploy-key.txt",
            "HEAD~1:app/src/a.rs",
            "HEAD:./../ops/x",
        ] {
            let err = check(&ws, &words(line)).unwrap_err();
            assert!(err.contains("tree path"), "{line}: {err}");
        }
        for line in [
            "HEAD:./src/a.rs",
            "--format=%h:%s",
            "-n 3",
            "HEAD -- src/a.rs",
        ] {
            assert!(check(&ws, &words(line)).is_ok(), "{line}");
        }
    }
}
