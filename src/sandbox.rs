//! Keeping the workspace tools inside the workspace.
//!
//! A path from the model is resolved against the workspace root and canonicalized (which
//! resolves `..` and symlinks); the result must still be inside the root. Harvey's own
//! files (`agents/`), git internals and secret-looking files are refused even inside it.
//!
//! Writes ([`resolve_write`]) follow the same rules and add two: `.git` anywhere on the
//! path and the project guidance files (`HARVEY.md`, `AGENTS.md`) are refused. A new
//! file's missing parent directories may be created, but only below the deepest existing
//! ancestor, which must itself resolve (through any symlinks) inside the workspace.
//!
//! These rules are shared by everything that touches a workspace path for the model or
//! the user: the tools, the read-only git command, `/read` and `/write`, session mining.
//! So they stand on the ground floor: std only, nothing of harvey above them.

use std::path::{Component, Path, PathBuf};

/// Why a path was not accepted; the tools turn it into the `ToolError` of the same name
/// and text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The text is not a usable path (a directory for a file, no parent).
    #[error("bad arguments: {0}")]
    BadArguments(String),
    /// Outside the workspace, inside `agents/` or `.git/`, or a secret-looking file.
    #[error("refused: {0}")]
    Refused(String),
    /// Nothing there.
    #[error("not found: {0}")]
    NotFound(String),
    /// The workspace itself cannot be resolved.
    #[error("failed: {0}")]
    Failed(String),
}

/// Longest path a tool accepts, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;

/// File names that look like secrets and are never read or listed.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with(".env")
        || lower.ends_with(".pem")
        || lower.ends_with(".key")
        || lower.starts_with("id_rsa")
        || lower.starts_with("id_ed25519")
        || lower.starts_with("id_ecdsa")
        || lower.ends_with(".p12")
        || lower.ends_with(".pfx")
        || lower == "authorized_keys"
        || lower.starts_with("credentials")
        || lower == ".netrc"
        || lower == ".pgpass"
        || lower == ".git-credentials"
        || lower == ".npmrc"
        || lower == ".pypirc"
}

/// Secret-looking files known by their folder and name together (a plain `config`
/// elsewhere is not one).
const SECRET_PAIRS: &[(&str, &str)] = &[(".docker", "config.json"), (".kube", "config")];

/// Whether `name` inside a folder named `dir` looks like a secret.
pub fn is_secret_pair(dir: &str, name: &str) -> bool {
    SECRET_PAIRS
        .iter()
        .any(|(d, n)| dir.eq_ignore_ascii_case(d) && name.eq_ignore_ascii_case(n))
}

/// Directories (relative to the root) the tools never enter.
fn is_private_dir(first_component: &str) -> bool {
    matches!(first_component, "agents" | ".git")
}

/// Resolves `requested` (relative to `root`, or absolute inside it) to an existing path
/// inside the workspace, or says why not.
pub fn resolve(root: &Path, requested: &str) -> Result<PathBuf, SandboxError> {
    check_text(requested)?;
    let root = root
        .canonicalize()
        .map_err(|e| SandboxError::Failed(format!("workspace unavailable: {e}")))?;
    let requested = if requested.trim().is_empty() {
        "."
    } else {
        requested.trim()
    };
    let candidate = Path::new(requested);
    if !candidate.is_absolute() && escapes(candidate) {
        return Err(SandboxError::Refused(format!(
            "{requested} is outside the workspace"
        )));
    }
    let joined = if candidate.is_absolute() {
        candidate.to_path_buf()
    } else {
        root.join(candidate)
    };
    let resolved = joined.canonicalize().map_err(|_| {
        SandboxError::NotFound(format!("{requested} does not exist in the workspace"))
    })?;
    let relative = resolved
        .strip_prefix(&root)
        .map_err(|_| SandboxError::Refused(format!("{requested} is outside the workspace")))?;
    check_relative(relative, requested)?;
    Ok(resolved)
}

/// Whether a relative path climbs above its starting point (`..` past the root).
fn escapes(path: &Path) -> bool {
    let mut depth: i64 = 0;
    for c in path.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

fn check_text(requested: &str) -> Result<(), SandboxError> {
    if requested.contains('\0') {
        return Err(SandboxError::Refused(
            "paths cannot contain NUL bytes".into(),
        ));
    }
    if requested.len() > MAX_PATH_BYTES {
        return Err(SandboxError::Refused(format!(
            "path is {} bytes long; the limit is {MAX_PATH_BYTES}",
            requested.len()
        )));
    }
    Ok(())
}

/// Refuses private directories and secret-looking names anywhere along the path.
pub fn check_relative(relative: &Path, shown: &str) -> Result<(), SandboxError> {
    let parts: Vec<String> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if let Some(first) = parts.first() {
        if is_private_dir(first) {
            return Err(SandboxError::Refused(format!(
                "{shown} is inside {first}/, which tools may not read"
            )));
        }
    }
    if let Some(secret) = parts.iter().find(|p| is_secret_name(p)) {
        return Err(SandboxError::Refused(format!(
            "{secret} looks like a secret file"
        )));
    }
    if let Some(pair) = parts.windows(2).find(|w| is_secret_pair(&w[0], &w[1])) {
        return Err(SandboxError::Refused(format!(
            "{}/{} looks like a secret file",
            pair[0], pair[1]
        )));
    }
    Ok(())
}

/// The path as shown to the model: relative to the root.
pub fn display(root: &Path, path: &Path) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let rel = path.strip_prefix(&root).unwrap_or(path);
    let text = rel.to_string_lossy();
    if text.is_empty() {
        ".".into()
    } else {
        text.into_owned()
    }
}

/// Guidance files the model must not rewrite: they carry the user's authority.
fn is_guidance_name(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "harvey.md" | "agents.md"
    )
}

/// Where a write goes: the file (resolved through symlinks), the directories to create
/// first, and the path as shown to the user and the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTarget {
    pub path: PathBuf,
    /// The parent directory when it does not exist yet (created at write time).
    pub missing_parent: Option<PathBuf>,
    pub shown: String,
    pub exists: bool,
}

/// Resolves `requested` as a file to write: an existing file inside the workspace (its
/// symlinks followed), or a new one whose nearest existing ancestor is inside it.
pub fn resolve_write(root: &Path, requested: &str) -> Result<WriteTarget, SandboxError> {
    check_text(requested)?;
    let root = root
        .canonicalize()
        .map_err(|e| SandboxError::Failed(format!("workspace unavailable: {e}")))?;
    let requested = requested.trim();
    let outside = || SandboxError::Refused(format!("{requested} is outside the workspace"));
    let candidate = Path::new(requested);
    if requested.is_empty() || requested.ends_with('/') {
        return Err(SandboxError::BadArguments(format!(
            "{requested:?} is not a file path"
        )));
    }
    if !candidate.is_absolute() && escapes(candidate) {
        return Err(outside());
    }
    let joined = root.join(candidate);
    let (path, missing_parent) = match std::fs::symlink_metadata(&joined) {
        Ok(_) => (existing_file(&joined, requested)?, None),
        Err(_) => new_file(&joined, requested)?,
    };
    let relative = path.strip_prefix(&root).map_err(|_| outside())?;
    check_writable(relative, requested)?;
    Ok(WriteTarget {
        shown: relative.to_string_lossy().into_owned(),
        exists: missing_parent.is_none() && path.exists(),
        path,
        missing_parent,
    })
}

/// An existing path, resolved: a symlink must lead to a file that exists.
fn existing_file(joined: &Path, requested: &str) -> Result<PathBuf, SandboxError> {
    let resolved = joined.canonicalize().map_err(|_| {
        SandboxError::Refused(format!(
            "{requested} is a symlink to nothing; harvey does not write through it"
        ))
    })?;
    if resolved.is_dir() {
        return Err(SandboxError::BadArguments(format!(
            "{requested} is a directory, not a file"
        )));
    }
    Ok(resolved)
}

/// A new file: the nearest existing ancestor, resolved, plus the missing names (plain
/// names only: no `.` or `..` below what exists).
fn new_file(joined: &Path, requested: &str) -> Result<(PathBuf, Option<PathBuf>), SandboxError> {
    let mut missing = Vec::new();
    let mut ancestor = joined;
    while std::fs::symlink_metadata(ancestor).is_err() {
        missing.push(ancestor.file_name().map(|n| n.to_os_string()));
        ancestor = ancestor
            .parent()
            .ok_or_else(|| SandboxError::BadArguments(format!("{requested} has no parent")))?;
    }
    let base = ancestor.canonicalize().map_err(|_| {
        SandboxError::Refused(format!(
            "{} (in {requested}) is a symlink to nothing",
            ancestor.display()
        ))
    })?;
    if !base.is_dir() {
        return Err(SandboxError::BadArguments(format!(
            "{requested}: {} is a file, not a directory",
            ancestor.display()
        )));
    }
    let mut path = base.clone();
    for name in missing.iter().rev() {
        match name {
            Some(n) if n != "." && n != ".." => path.push(n),
            _ => {
                return Err(SandboxError::BadArguments(format!(
                    "{requested}: only plain names may follow the directories that exist"
                )))
            }
        }
    }
    let parent = path.parent().map(Path::to_path_buf);
    let missing_parent = parent.filter(|p| *p != base);
    Ok((path, missing_parent))
}

/// [`check_relative`], plus `.git` anywhere and the guidance files.
fn check_writable(relative: &Path, shown: &str) -> Result<(), SandboxError> {
    if relative.as_os_str().is_empty() {
        return Err(SandboxError::BadArguments(format!(
            "{shown} is the workspace itself"
        )));
    }
    check_relative(relative, shown)?;
    for part in relative.components() {
        let Component::Normal(name) = part else {
            continue;
        };
        let name = name.to_string_lossy();
        if name == ".git" {
            return Err(SandboxError::Refused(format!(
                "{shown} is inside a .git directory, which tools may not write"
            )));
        }
    }
    let name = relative
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    if name.as_deref().is_some_and(is_guidance_name) {
        return Err(SandboxError::Refused(format!(
            "{shown} is the project's guidance for harvey; only the user edits it"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            ".env",
            ".env.local",
            "server.pem",
            "tls.KEY",
            "id_rsa",
            "id_rsa.pub",
            "id_ed25519",
            ".netrc",
            ".pgpass",
            "cert.p12",
            "Store.PFX",
            "authorized_keys",
            "credentials",
            "credentials.json",
            ".git-credentials",
            ".npmrc",
            ".pypirc",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        assert!(is_secret_pair(".docker", "config.json") && is_secret_pair(".kube", "config"));
        assert!(!is_secret_pair("docker", "config.json") && !is_secret_pair("src", "config"));
        for name in [
            "main.rs",
            "environment.md",
            "keys.rs",
            "README",
            "my_credentials.md",
            "p12.txt",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn resolve_table() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("agents/memories")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(root.join(".env"), "X=1").unwrap();
        for dir in ["web", ".docker", "home/.kube", "conf"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            ".git-credentials",
            "web/.npmrc",
            ".pypirc",
            ".docker/config.json",
            "home/.kube/config",
            "conf/config",
        ] {
            std::fs::write(root.join(file), "token=1").unwrap();
        }
        assert!(resolve(root, "conf/config").is_ok());
        assert!(resolve(root, "src/main.rs").is_ok());
        assert!(resolve(root, "./src/../src/main.rs").is_ok());
        assert!(resolve(root, "").is_ok());
        let abs = root.join("src/main.rs");
        assert!(resolve(root, abs.to_str().unwrap()).is_ok());
        let refused = [
            ("../etc/passwd", "outside"),
            ("/etc/passwd", "outside"),
            ("agents/memories", "agents/"),
            (".env", "secret"),
            ("src/\0x", "NUL"),
            (".git-credentials", "secret"),
            ("web/.npmrc", "secret"),
            (".pypirc", "secret"),
            (
                ".docker/config.json",
                ".docker/config.json looks like a secret",
            ),
            ("home/.kube/config", ".kube/config looks like a secret"),
        ];
        for (p, needle) in refused {
            let e = resolve(root, p).unwrap_err().to_string();
            assert!(e.contains(needle), "{p}: {e}");
        }
        assert!(matches!(
            resolve(root, "nope.txt"),
            Err(SandboxError::NotFound(_))
        ));
        assert!(resolve(root, &"a/".repeat(600))
            .unwrap_err()
            .to_string()
            .contains("limit"));
    }
}

#[cfg(test)]
mod write_tests {
    use super::*;

    #[test]
    fn write_targets_stay_inside_and_away_from_private_files() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        for dir in ["src", "agents", ".git", "vendor/.git"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("src/a.rs"), "a").unwrap();
        std::os::unix::fs::symlink(outer.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(outer.path().join("x.txt"), root.join("dangling")).unwrap();
        std::os::unix::fs::symlink(root.join("src/a.rs"), root.join("inside.rs")).unwrap();
        let t = resolve_write(&root, "src/a.rs").unwrap();
        assert!(t.exists && t.missing_parent.is_none() && t.shown == "src/a.rs");
        let t = resolve_write(&root, "inside.rs").unwrap();
        assert_eq!(
            t.shown, "src/a.rs",
            "a symlink inside is written at its target"
        );
        let t = resolve_write(&root, "src/new/deep/b.rs").unwrap();
        assert!(!t.exists && t.shown == "src/new/deep/b.rs");
        let canon = root.canonicalize().unwrap();
        assert_eq!(t.missing_parent, Some(canon.join("src/new/deep")));
        let abs = root.join("src/c.rs");
        assert_eq!(
            resolve_write(&root, abs.to_str().unwrap()).unwrap().shown,
            "src/c.rs"
        );
        let refused = [
            ("../x.txt", "outside"),
            ("src/../../x.txt", "outside"),
            ("/etc/harvey-test", "outside"),
            ("out/x.txt", "outside"),
            ("out/new/x.txt", "outside"),
            ("dangling", "symlink to nothing"),
            ("agents/notes.md", "agents/"),
            (".git/config", ".git"),
            ("vendor/.git/hooks/x", ".git"),
            ("HARVEY.md", "guidance"),
            ("docs/agents.md", "guidance"),
            (".env", "secret"),
            ("keys/server.key", "secret"),
            ("credentials.json", "secret"),
            ("src", "directory"),
            ("", "not a file path"),
            ("src/new/../x", "plain names"),
        ];
        for (p, needle) in refused {
            let e = resolve_write(&root, p).unwrap_err().to_string();
            assert!(e.contains(needle), "{p}: {e}");
        }
    }
}
