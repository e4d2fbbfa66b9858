//! The memory file format shared with the Go tool: `---` YAML front matter `---` body.
//!
//! `.spmd`, `.fountain` and `.md` are read alike; harvey writes `.spmd`. Keys harvey does
//! not know are kept in [`Memory::extra`] and written back after the known ones. Writes
//! are atomic: a temporary file in the same directory, fsync, rename, fsync of the
//! directory. The YAML itself (splitting the header off, reading and writing its keys)
//! is `text::front_matter`'s; this module knows which keys a memory has.

use std::io::Write;
use std::path::Path;

use super::types::{Memory, MemoryType, DEFAULT_CONFIDENCE};
use crate::text::front_matter::{self, Fields, HeaderError, Listed, Mismatch, SplitError};

/// File extensions read as memories.
pub const EXTENSIONS: [&str; 3] = ["spmd", "fountain", "md"];

/// Why a file is not a memory (shown with the file name; the file is skipped).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FormatError {
    #[error("not valid UTF-8 (byte {0}); save it as UTF-8")]
    NotUtf8(usize),
    #[error("no front matter: the file must start with a line `---`")]
    NoFrontMatter,
    #[error("front matter is not closed by a line `---`")]
    Unclosed,
    #[error("front matter line {line}: {reason}")]
    Yaml { line: usize, reason: String },
    #[error("front matter is not a mapping of keys to values")]
    NotMapping,
    #[error("missing `{0}`")]
    Missing(&'static str),
    #[error("`{key}` {reason}")]
    Field { key: &'static str, reason: String },
}

const KNOWN_KEYS: [&str; 14] = [
    "id",
    "type",
    "kind",
    "created_at",
    "updated_at",
    "supersedes",
    "tags",
    "description",
    "summary",
    "action",
    "confidence",
    "source_session",
    "expires_at",
    "evidence",
];

/// Parses a memory file. `dir_type` (the `<type>/` directory it sits in) is used when
/// the front matter has no `type`.
pub fn parse(bytes: &[u8], dir_type: Option<MemoryType>) -> Result<Memory, FormatError> {
    let text = std::str::from_utf8(bytes).map_err(|e| FormatError::NotUtf8(e.valid_up_to()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) = front_matter::split(text).map_err(|e| match e {
        SplitError::NoFrontMatter => FormatError::NoFrontMatter,
        SplitError::Unclosed => FormatError::Unclosed,
    })?;
    let mut map = Fields::parse(front).map_err(|e| match e {
        HeaderError::Yaml { line, reason } => FormatError::Yaml { line, reason },
        HeaderError::NotMapping => FormatError::NotMapping,
    })?;
    let id = take_string(&mut map, "id")?
        .filter(|s| !s.trim().is_empty())
        .ok_or(FormatError::Missing("id"))?;
    let mtype = match take_string(&mut map, "type")? {
        Some(t) => MemoryType::parse(&t).ok_or_else(|| FormatError::Field {
            key: "type",
            reason: format!("is {t:?}; expected one of {}", MemoryType::choices()),
        })?,
        None => dir_type.ok_or(FormatError::Missing("type"))?,
    };
    let summary = take_string(&mut map, "summary")?.unwrap_or_default();
    let description = take_string(&mut map, "description")?
        .filter(|d| !d.trim().is_empty())
        .or_else(|| first_line(&summary))
        .or_else(|| first_line(body))
        .ok_or(FormatError::Missing("description"))?;
    let confidence = map
        .take_number("confidence")
        .map_err(|m| FormatError::Field {
            key: "confidence",
            reason: format!("must be a number between 0 and 1, not {}", m.found),
        })?
        .map_or(DEFAULT_CONFIDENCE, |n| n.clamp(0.0, 1.0));
    Ok(Memory {
        id: id.trim().to_string(),
        mtype,
        kind: take_string(&mut map, "kind")?.filter(|s| !s.is_empty()),
        created_at: take_string(&mut map, "created_at")?.unwrap_or_default(),
        updated_at: take_string(&mut map, "updated_at")?.unwrap_or_default(),
        supersedes: take_list(&mut map, "supersedes")?,
        tags: take_list(&mut map, "tags")?,
        description: description.trim().to_string(),
        summary: summary.trim().to_string(),
        action: take_string(&mut map, "action")?.filter(|s| !s.is_empty()),
        confidence,
        source_session: take_string(&mut map, "source_session")?.filter(|s| !s.is_empty()),
        expires_at: take_string(&mut map, "expires_at")?.filter(|s| !s.is_empty()),
        evidence: take_string(&mut map, "evidence")?.filter(|s| !s.is_empty()),
        body: body.trim_end().to_string(),
        extra: map,
    })
}

/// The file text of a memory: known keys in a fixed order, then the unknown ones.
pub fn render(m: &Memory) -> String {
    let mut map = Fields::default();
    map.put_text("id", &m.id);
    map.put_text("type", m.mtype.as_str());
    if let Some(kind) = &m.kind {
        map.put_text("kind", kind);
    }
    map.put_text("created_at", &m.created_at);
    map.put_text("updated_at", &m.updated_at);
    map.put_list("supersedes", &m.supersedes);
    map.put_list("tags", &m.tags);
    map.put_text("description", &m.description);
    map.put_text("summary", &m.summary);
    if let Some(action) = &m.action {
        map.put_text("action", action);
    }
    map.put_number("confidence", m.confidence);
    if let Some(session) = &m.source_session {
        map.put_text("source_session", session);
    }
    if let Some(expires) = &m.expires_at {
        map.put_text("expires_at", expires);
    }
    if let Some(evidence) = &m.evidence {
        map.put_text("evidence", evidence);
    }
    map.put_others(&m.extra, &KNOWN_KEYS);
    front_matter::join(&map, &m.body)
}

/// Writes `bytes` to `path` atomically (temp file, fsync, rename, fsync dir).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("memory");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        // Make the rename durable; not every filesystem lets a directory be synced.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A temp file of [`write_atomic`] older than this belongs to a process that died mid-write
/// (a live write holds its temp file for milliseconds).
pub const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether `name` is a temp file of [`write_atomic`] (`.NAME.tmp-PID`).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.')
        && name
            .rsplit_once(".tmp-")
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes temp files in `dir` left by a write that was killed (older than `STALE_TEMP`);
/// returns how many. They are never read, only clutter.
pub fn remove_stale_temps(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(remove_if_stale_temp)
        .count()
}

/// Removes `entry` when it is a temp file of a killed write (see [`remove_stale_temps`]);
/// whether it did.
pub fn remove_if_stale_temp(entry: &std::fs::DirEntry) -> bool {
    let name = entry.file_name();
    if !name.to_str().is_some_and(is_temp_name) {
        return false;
    }
    let old = entry
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age >= STALE_TEMP);
    old && std::fs::remove_file(entry.path()).is_ok()
}

fn take_string(map: &mut Fields, key: &'static str) -> Result<Option<String>, FormatError> {
    map.take_text(key).map_err(|m| FormatError::Field {
        key,
        reason: format!("must be text, not {}", m.found),
    })
}

fn take_list(map: &mut Fields, key: &'static str) -> Result<Vec<String>, FormatError> {
    let listed = map.take_list(key).map_err(|m| list_error(key, m))?;
    Ok(match listed {
        None => Vec::new(),
        Some(Listed::Text(s)) => super::types::split_tags(&s),
        Some(Listed::Items(items)) => items,
    })
}

fn list_error(key: &'static str, m: Mismatch) -> FormatError {
    let reason = if m.in_list {
        format!("items must be text, not {}", m.found)
    } else {
        format!("must be a list, not {}", m.found)
    };
    FormatError::Field { key, reason }
}

fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_temp_files_of_killed_writes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - STALE_TEMP * 2;
        for name in [".a.spmd.tmp-123", ".gitkeep", "b.spmd", ".c.spmd.tmp-x"] {
            let f = std::fs::File::create(dir.path().join(name)).unwrap();
            f.set_modified(old).unwrap();
        }
        std::fs::write(dir.path().join(".d.spmd.tmp-456"), "being written").unwrap();
        assert_eq!(remove_stale_temps(dir.path()), 1);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [".c.spmd.tmp-x", ".d.spmd.tmp-456", ".gitkeep", "b.spmd"]
        );
    }

    const GO_FILE: &str = "---\nid: tool_use_a3f891\ntype: tool_use\nkind: pitfall\ncreated_at: \"2026-05-25T12:00:00Z\"\nupdated_at: \"2026-05-25T12:00:00Z\"\nsupersedes: []\ntags:\n    - git\ndescription: Run git init when git reports not a repository\nsummary: Running git init in the project root resolved the error immediately.\naction: Run `git init` in the project root, then retry.\nconfidence: 0.7\nsource_session: \"\"\nreviewer: alice\n---\nINT. TERMINAL - DAY\n\nThe user runs git status.\n";

    #[test]
    fn go_tool_file_parses_and_keeps_unknown_keys() {
        let m = parse(GO_FILE.as_bytes(), None).unwrap();
        assert_eq!(m.id, "tool_use_a3f891");
        assert_eq!(m.mtype, MemoryType::ToolUse);
        assert_eq!(m.kind.as_deref(), Some("pitfall"));
        assert_eq!(m.tags, vec!["git"]);
        assert_eq!(m.confidence, 0.7);
        assert_eq!(m.source_session, None);
        assert!(m.body.starts_with("INT. TERMINAL - DAY\n\nThe user"));
        let text = render(&m);
        assert!(text.contains("reviewer: alice"), "{text}");
        let again = parse(text.as_bytes(), None).unwrap();
        assert_eq!(again, m);
    }

    #[test]
    fn malformed_files_say_what_is_wrong() {
        assert_eq!(parse(b"\xff\xfe---", None), Err(FormatError::NotUtf8(0)));
        assert_eq!(parse(b"id: x\n", None), Err(FormatError::NoFrontMatter));
        assert_eq!(parse(b"---\nid: x\n", None), Err(FormatError::Unclosed));
        assert_eq!(
            parse(b"---\ntype: workflow\ndescription: d\n---\n", None),
            Err(FormatError::Missing("id"))
        );
        let yaml = parse(b"---\nid: x\ntags: [a, b\n---\n", None).unwrap_err();
        assert!(matches!(yaml, FormatError::Yaml { .. }), "{yaml:?}");
        let bad_type = parse(b"---\nid: x\ntype: nope\ndescription: d\n---\n", None).unwrap_err();
        assert!(bad_type.to_string().contains("project_fact"), "{bad_type}");
    }

    #[test]
    fn type_falls_back_to_the_directory() {
        let m = parse(
            b"---\nid: x\ndescription: d\n---\n",
            Some(MemoryType::Workflow),
        )
        .unwrap();
        assert_eq!(m.mtype, MemoryType::Workflow);
        assert_eq!(m.confidence, DEFAULT_CONFIDENCE);
    }

    #[test]
    fn unicode_line_separators_do_not_break_the_front_matter() {
        let mut m = parse(GO_FILE.as_bytes(), None).unwrap();
        m.expires_at = Some("\n\u{2028}".into());
        m.summary = "a\u{85}b\u{2029}c".into();
        let back = parse(render(&m).as_bytes(), None).unwrap();
        assert_eq!(back.expires_at.as_deref(), Some("\n\n"));
        assert_eq!(back.summary, "a\nb\nc");
    }

    #[test]
    fn atomic_write_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b.spmd");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let entries = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(entries, 1, "no temporary file left behind");
    }
}
