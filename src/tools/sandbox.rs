//! Keeping the workspace tools inside the workspace.
//!
//! A path from the model is resolved against the workspace root and canonicalized (which
//! resolves `..` and symlinks); the result must still be inside the root. Harvey's own
//! files (`agents/`), git internals and secret-looking files are refused even inside it.

use std::path::{Component, Path, PathBuf};

use super::ToolError;

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
        || lower == ".netrc"
        || lower == ".pgpass"
}

/// Directories (relative to the root) the tools never enter.
fn is_private_dir(first_component: &str) -> bool {
    matches!(first_component, "agents" | ".git")
}

/// Resolves `requested` (relative to `root`, or absolute inside it) to an existing path
/// inside the workspace, or says why not.
pub fn resolve(root: &Path, requested: &str) -> Result<PathBuf, ToolError> {
    check_text(requested)?;
    let root = root
        .canonicalize()
        .map_err(|e| ToolError::Failed(format!("workspace unavailable: {e}")))?;
    let requested = if requested.trim().is_empty() {
        "."
    } else {
        requested.trim()
    };
    let candidate = Path::new(requested);
    if !candidate.is_absolute() && escapes(candidate) {
        return Err(ToolError::Refused(format!(
            "{requested} is outside the workspace"
        )));
    }
    let joined = if candidate.is_absolute() {
        candidate.to_path_buf()
    } else {
        root.join(candidate)
    };
    let resolved = joined
        .canonicalize()
        .map_err(|_| ToolError::NotFound(format!("{requested} does not exist in the workspace")))?;
    let relative = resolved
        .strip_prefix(&root)
        .map_err(|_| ToolError::Refused(format!("{requested} is outside the workspace")))?;
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

fn check_text(requested: &str) -> Result<(), ToolError> {
    if requested.contains('\0') {
        return Err(ToolError::Refused("paths cannot contain NUL bytes".into()));
    }
    if requested.len() > MAX_PATH_BYTES {
        return Err(ToolError::Refused(format!(
            "path is {} bytes long; the limit is {MAX_PATH_BYTES}",
            requested.len()
        )));
    }
    Ok(())
}

/// Refuses private directories and secret-looking names anywhere along the path.
pub fn check_relative(relative: &Path, shown: &str) -> Result<(), ToolError> {
    let parts: Vec<String> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if let Some(first) = parts.first() {
        if is_private_dir(first) {
            return Err(ToolError::Refused(format!(
                "{shown} is inside {first}/, which tools may not read"
            )));
        }
    }
    if let Some(secret) = parts.iter().find(|p| is_secret_name(p)) {
        return Err(ToolError::Refused(format!(
            "{secret} looks like a secret file"
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
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["main.rs", "environment.md", "keys.rs", "README"] {
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
        ];
        for (p, needle) in refused {
            let e = resolve(root, p).unwrap_err().to_string();
            assert!(e.contains(needle), "{p}: {e}");
        }
        assert!(matches!(
            resolve(root, "nope.txt"),
            Err(ToolError::NotFound(_))
        ));
        assert!(resolve(root, &"a/".repeat(600))
            .unwrap_err()
            .to_string()
            .contains("limit"));
    }
}
