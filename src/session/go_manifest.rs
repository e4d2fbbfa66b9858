//! The Go tool's record of mined sessions, `agents/memories/manifest.yaml`: YAML with a
//! `sessions` list whose entries carry the session file's `path` (absolute, or as the
//! user typed it) with `mined_at`, `memories_created`, `memories_skipped` and `status`
//! (`empty` for a session without dialogue), and a `failures` list of sessions a model
//! could not process (those are not mined). harvey reads it so `/memory mine` does not
//! offer those sessions again, and never writes it: harvey's own record is the `mined`
//! table of its index.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::text::front_matter::{read_document, DocumentError};

/// The file name, in the memories directory.
pub const FILE: &str = "manifest.yaml";

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    sessions: Option<Vec<Entry>>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    path: String,
}

/// The session file names the Go tool mined, read from `memories_dir/manifest.yaml`
/// (none when there is no such file). A file that does not parse is named in a warning
/// and counts as empty: it is the Go tool's to fix, and harvey writes nothing into it.
pub fn mined_files(memories_dir: &Path) -> HashSet<String> {
    let path = memories_dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return HashSet::new(),
        Err(e) => {
            tracing::warn!(
                "{}: {e}; its sessions may be offered for mining",
                path.display()
            );
            return HashSet::new();
        }
    };
    parse(&text).unwrap_or_else(|e| {
        tracing::warn!(
            "{}: {e}; the Go harvey's mined sessions in it may be offered for mining",
            path.display()
        );
        HashSet::new()
    })
}

/// The file names in a manifest's `sessions` list.
fn parse(text: &str) -> Result<HashSet<String>, DocumentError> {
    if text.trim().is_empty() {
        return Ok(HashSet::new());
    }
    let raw: Raw = read_document(text)?;
    Ok(raw
        .sessions
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| {
            Path::new(e.path.trim())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Go tool's layout (yaml.v3, four-space indent), in our words.
    const GO_MANIFEST: &str = "sessions:
    - path: /home/ada/site/agents/sessions/harvey-session-20260520-101500.spmd
      mined_at: \"2026-05-20T11:00:00Z\"
      memories_created:
        - workflow_a1b2c3
      memories_skipped: 1
    - path: agents/sessions/harvey-session-20260521-090000.spmd
      mined_at: \"2026-05-21T10:00:00Z\"
      memories_created: []
      memories_skipped: 0
      status: empty
failures:
    - path: /home/ada/site/agents/sessions/harvey-session-20260522-080000.spmd
      model: ollama/granite3.3:8b
      reason: reply truncated
      at: \"2026-05-22T09:00:00Z\"
";

    #[test]
    fn the_mined_sessions_are_read_and_failures_are_not_mined() {
        let files = parse(GO_MANIFEST).unwrap();
        assert!(files.contains("harvey-session-20260520-101500.spmd"));
        assert!(files.contains("harvey-session-20260521-090000.spmd"));
        assert!(!files.contains("harvey-session-20260522-080000.spmd"));
        assert_eq!(files.len(), 2);
        assert!(parse("").unwrap().is_empty());
        assert!(parse("sessions: []\n").unwrap().is_empty());
        assert!(parse("sessions:\n").unwrap().is_empty());
        assert!(parse("sessions: [unclosed").is_err());
    }

    #[test]
    fn a_missing_or_broken_manifest_counts_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(mined_files(dir.path()).is_empty());
        std::fs::write(dir.path().join(FILE), "sessions: {").unwrap();
        assert!(mined_files(dir.path()).is_empty());
        std::fs::write(dir.path().join(FILE), GO_MANIFEST).unwrap();
        assert_eq!(mined_files(dir.path()).len(), 2);
    }
}
