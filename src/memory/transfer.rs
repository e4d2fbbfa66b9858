//! Moving memories between workspaces and tools without copying the index.
//!
//! `harvey memory export` writes every active memory as one JSON line with all of its
//! fields ([`Exported`]); `harvey memory import` reads such a line back as it was — the
//! same id, dates, tags and `supersedes` — where a line without an `id` is a new memory
//! (a [`Draft`]: the store gives it an id, and a matching description updates the
//! existing memory instead). A new memory is dated today unless its line gives
//! `created_at` / `updated_at` (notes migrated from elsewhere keep when they were
//! written; `2024-03-01` is a plain day). Importing an export twice changes nothing.

use serde::{Deserialize, Serialize};

use super::store::{
    bad_date, check_fields, parse_time, Dates, MemoryStore, StoreError, WriteOutcome,
};
use super::types::{Draft, Memory, MemoryType};
use crate::text::front_matter::Fields;

/// Longest id accepted from an import line (ids become file names).
const MAX_ID_CHARS: usize = 80;

/// One memory with every field of its file, as `harvey memory export` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exported {
    pub id: String,
    #[serde(rename = "type")]
    pub mtype: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub description: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    pub confidence: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// Front-matter keys harvey does not know (another tool's), kept as they were.
    #[serde(default, skip_serializing_if = "Fields::is_empty")]
    pub extra: Fields,
}

impl From<&Memory> for Exported {
    fn from(m: &Memory) -> Self {
        Self {
            id: m.id.clone(),
            mtype: m.mtype.as_str().to_string(),
            kind: m.kind.clone(),
            created_at: m.created_at.clone(),
            updated_at: m.updated_at.clone(),
            supersedes: m.supersedes.clone(),
            tags: m.tags.clone(),
            description: m.description.clone(),
            summary: m.summary.clone(),
            action: m.action.clone(),
            confidence: m.confidence,
            source_session: m.source_session.clone(),
            expires_at: m.expires_at.clone(),
            evidence: m.evidence.clone(),
            body: m.body.clone(),
            extra: m.extra.clone(),
        }
    }
}

impl Exported {
    /// The memory this line describes, after the checks every write makes.
    fn to_memory(&self) -> Result<Memory, StoreError> {
        let mtype = MemoryType::parse(&self.mtype)
            .ok_or_else(|| StoreError::BadType(self.mtype.clone()))?;
        let bad = |field, problem: String| StoreError::BadField { field, problem };
        if !valid_id(&self.id) {
            return Err(bad(
                "id",
                format!(
                    "{:?} is not a memory id: use letters, digits, '_' and '-' (at most {MAX_ID_CHARS})",
                    self.id
                ),
            ));
        }
        for (field, value) in [
            ("created_at", Some(&self.created_at)),
            ("updated_at", Some(&self.updated_at)),
            ("expires_at", self.expires_at.as_ref()),
        ] {
            if let Some(v) = value.filter(|v| parse_time(v).is_none()) {
                return Err(bad_date(field, v));
            }
        }
        if self.description.trim().is_empty() || self.description.contains('\n') {
            return Err(StoreError::NoDescription);
        }
        check_fields(
            &self.description,
            &self.summary,
            &self.body,
            self.action.as_deref().unwrap_or(""),
            &self.tags,
            Some(self.confidence),
        )?;
        Ok(Memory {
            id: self.id.clone(),
            mtype,
            kind: self.kind.clone(),
            created_at: self.created_at.clone(),
            updated_at: self.updated_at.clone(),
            supersedes: self.supersedes.clone(),
            tags: self.tags.clone(),
            description: self.description.clone(),
            summary: self.summary.clone(),
            action: self.action.clone(),
            confidence: self.confidence,
            source_session: self.source_session.clone(),
            expires_at: self.expires_at.clone(),
            evidence: self.evidence.clone(),
            // As the file format reads it back: trailing blank lines are not kept.
            body: self.body.trim_end().to_string(),
            extra: self.extra.clone(),
        })
    }
}

/// Ids become file names: no separators, no leading dot, nothing to escape.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.chars().count() <= MAX_ID_CHARS
        && !id.starts_with(['.', '-'])
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// One line of an import file.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// An exported memory (it has an `id`): restored as it was.
    Restore(Box<Exported>),
    /// A new memory, dated when its line says.
    New(Box<Draft>, Dates),
}

impl Line {
    /// Parses one JSON line; the message lists the fields of the kind of line it is.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let value: serde_json::Value =
            serde_json::from_str(raw).map_err(|e| format!("not JSON: {e}"))?;
        if value.get("id").is_some() {
            serde_json::from_value(value)
                .map(|e| Line::Restore(Box::new(e)))
                .map_err(|e| format!("not an exported memory: {e} (fields: id, type, kind, created_at, updated_at, supersedes, tags, description, summary, action, confidence, source_session, expires_at, evidence, body, extra)"))
        } else {
            let (value, dates) = dates_of(value)?;
            serde_json::from_value(value).map(|d| Line::New(Box::new(d), dates)).map_err(|e| {
                format!("not a memory: {e} (fields: type, description, summary, tags, body, kind, action, confidence, supersedes, source_session, expires_at, evidence, created_at, updated_at)")
            })
        }
    }
}

/// A new memory's line without its dates, and the dates checked: a message naming the
/// field when one is no date, or `updated_at` is before `created_at`.
fn dates_of(mut value: serde_json::Value) -> Result<(serde_json::Value, Dates), String> {
    let mut take = |field: &'static str| match value.as_object_mut()?.remove(field)? {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(Ok(s)),
        other => Some(Err(bad_date(field, &other.to_string()).to_string())),
    };
    let created = take("created_at").transpose()?;
    let updated = take("updated_at").transpose()?;
    let dates = Dates::new(created.as_deref(), updated.as_deref()).map_err(|e| e.to_string())?;
    Ok((value, dates))
}

impl MemoryStore {
    /// Every active memory, oldest first (ties by id), read from its file.
    pub fn export(&self) -> Result<Vec<Exported>, StoreError> {
        let mut out = Vec::new();
        for row in self.list(None, None)? {
            out.push(Exported::from(&self.read(&row)?));
        }
        out.sort_by(|a, b| {
            (parse_time(&a.created_at), &a.id).cmp(&(parse_time(&b.created_at), &b.id))
        });
        Ok(out)
    }

    /// Writes import lines in order, each with its own result; `MEMORY.md` once.
    pub fn write_lines(&mut self, lines: &[Line]) -> Vec<Result<WriteOutcome, StoreError>> {
        let results = lines
            .iter()
            .map(|line| match line {
                Line::New(draft, dates) => self.write_dated(draft, dates),
                Line::Restore(e) => self.restore(e),
            })
            .collect();
        if let Err(e) = self.write_overview() {
            tracing::warn!("cannot write MEMORY.md: {e}");
        }
        results
    }

    /// Writes an exported memory under its own id: added, replacing the memory of that
    /// id, or left alone when the file already says the same.
    fn restore(&mut self, e: &Exported) -> Result<WriteOutcome, StoreError> {
        let memory = e.to_memory()?;
        let id = memory.id.clone();
        let wanted = format!("{}/{id}.spmd", memory.mtype.as_str());
        let how = match self.index().get(&id).map_err(|e| self.db_err(e))? {
            Some(row) if row.archived => return Err(StoreError::Archived { id }),
            Some(row) => {
                if self.read(&row)? == memory {
                    return Ok(WriteOutcome::Restored {
                        id,
                        how: "unchanged",
                    });
                }
                self.save(&memory, &wanted, false)?;
                if row.path != wanted {
                    // Another type before: the old file goes after the new one is written.
                    let old = self.dir().join(&row.path);
                    if let Err(e) = std::fs::remove_file(&old) {
                        tracing::warn!("cannot remove the old copy {}: {e}", old.display());
                    }
                }
                "replaced"
            }
            None => {
                self.save(&memory, &wanted, false)?;
                "added"
            }
        };
        Ok(WriteOutcome::Restored { id, how })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, MemoryStore) {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = MemoryStore::open(&dir.path().join("agents"), dir.path()).unwrap();
        (dir, store)
    }

    fn exported(id: &str) -> Exported {
        Exported {
            id: id.into(),
            mtype: "tool_use".into(),
            kind: Some("pitfall".into()),
            created_at: "2025-01-02T03:04:05Z".into(),
            updated_at: "2025-02-03T04:05:06Z".into(),
            supersedes: vec!["tool_use_000000".into()],
            tags: vec!["git".into()],
            description: "Run git init when git says not a repository".into(),
            summary: "It worked.".into(),
            action: Some("git init".into()),
            confidence: 0.7,
            source_session: None,
            expires_at: None,
            evidence: None,
            body: "INT. TERMINAL - DAY\n".into(),
            extra: Fields::parse("reviewer: alice").unwrap(),
        }
    }

    #[test]
    fn a_restored_memory_keeps_its_id_dates_and_unknown_keys_and_twice_is_unchanged() {
        let (_d, mut s) = store();
        let e = exported("tool_use_a3f891");
        let line = Line::Restore(Box::new(e.clone()));
        let first = s.write_lines(std::slice::from_ref(&line));
        assert_eq!(
            first[0].as_ref().unwrap().describe(),
            "added tool_use_a3f891 (restored with its id)"
        );
        let as_kept = Exported {
            body: "INT. TERMINAL - DAY".into(),
            ..e.clone()
        };
        assert_eq!(s.export().unwrap(), vec![as_kept.clone()]);
        let again = s.write_lines(&[line]);
        assert!(matches!(
            again[0],
            Ok(WriteOutcome::Restored {
                how: "unchanged",
                ..
            })
        ));
        let mut changed = as_kept.clone();
        changed.mtype = "workflow".into();
        s.write_lines(&[Line::Restore(Box::new(changed.clone()))]);
        assert_eq!(s.export().unwrap(), vec![changed]);
        assert!(!s.dir().join("tool_use/tool_use_a3f891.spmd").exists());
    }

    #[test]
    fn bad_lines_say_which_field_is_wrong() {
        let (_d, mut s) = store();
        for (e, needle) in [
            (
                Exported {
                    id: "../x".into(),
                    ..exported("a")
                },
                "id:",
            ),
            (
                Exported {
                    created_at: "yesterday".into(),
                    ..exported("b")
                },
                "created_at:",
            ),
            (
                Exported {
                    confidence: 2.0,
                    ..exported("c")
                },
                "confidence",
            ),
            (
                Exported {
                    mtype: "diary".into(),
                    ..exported("d")
                },
                "unknown memory type",
            ),
            (
                Exported {
                    summary: "password=hunter2hunter2".into(),
                    ..exported("e")
                },
                "secret",
            ),
        ] {
            let r = s.write_lines(&[Line::Restore(Box::new(e))]);
            let msg = r[0].as_ref().unwrap_err().to_string();
            assert!(msg.contains(needle), "{msg}");
        }
        assert!(s.export().unwrap().is_empty());
    }

    #[test]
    fn lines_with_an_id_restore_and_lines_without_are_new() {
        assert!(matches!(
            Line::parse(r#"{"type":"workflow","description":"x"}"#),
            Ok(Line::New(..))
        ));
        let exported = serde_json::to_string(&exported("tool_use_1")).unwrap();
        assert!(matches!(Line::parse(&exported), Ok(Line::Restore(_))));
        let err = Line::parse(r#"{"id":"x","type":"workflow"}"#).unwrap_err();
        assert!(err.contains("not an exported memory"), "{err}");
        assert!(Line::parse("{").unwrap_err().contains("not JSON"));
    }

    fn new_line(json: &str) -> Line {
        Line::parse(json).unwrap()
    }

    fn written(s: &mut MemoryStore, json: &str) -> Exported {
        let results = s.write_lines(&[new_line(json)]);
        let id = results[0].as_ref().unwrap().id().to_string();
        Exported::from(&s.get(&id).unwrap())
    }

    #[test]
    fn a_new_memory_keeps_the_dates_its_line_gives() {
        let (_d, mut s) = store();
        let both = written(
            &mut s,
            r#"{"type":"workflow","description":"prime the pump","created_at":"2024-03-05T09:00:00Z","updated_at":"2024-04-01T10:00:00Z"}"#,
        );
        assert_eq!(
            (both.created_at.as_str(), both.updated_at.as_str()),
            ("2024-03-05T09:00:00Z", "2024-04-01T10:00:00Z")
        );
        let file = std::fs::read_to_string(s.path_of(&both.id).unwrap()).unwrap();
        assert!(file.contains("2024-03-05T09:00:00Z"), "{file}");
        // A plain day is midnight UTC; updated_at defaults to created_at.
        let day = written(
            &mut s,
            r#"{"type":"project_fact","description":"the valve was replaced","created_at":"2024-03-01"}"#,
        );
        assert_eq!(day.created_at, "2024-03-01T00:00:00Z");
        assert_eq!(day.updated_at, "2024-03-01T00:00:00Z");
        let exported = s.export().unwrap();
        assert_eq!(exported[0].id, day.id, "oldest first");
        assert_eq!(exported[1].created_at, "2024-03-05T09:00:00Z");
        // Without dates, today.
        let today = written(&mut s, r#"{"type":"workflow","description":"undated"}"#);
        assert!(parse_time(&today.created_at) > parse_time("2025-01-01"));
    }

    #[test]
    fn bad_dates_on_a_new_line_name_the_field_and_a_good_value() {
        for (json, needle) in [
            (
                r#"{"type":"workflow","description":"x","created_at":"last March"}"#,
                r#"created_at: "last March" is not a date"#,
            ),
            (
                r#"{"type":"workflow","description":"x","updated_at":20240301}"#,
                r#"updated_at: "20240301" is not a date"#,
            ),
            (
                r#"{"type":"workflow","description":"x","created_at":"2024-03-02","updated_at":"2024-03-01"}"#,
                "updated_at: 2024-03-01T00:00:00Z is before created_at 2024-03-02T00:00:00Z",
            ),
        ] {
            let err = Line::parse(json).unwrap_err();
            assert!(err.contains(needle), "{err}");
        }
        let err =
            Line::parse(r#"{"type":"workflow","description":"x","created_at":"?"}"#).unwrap_err();
        assert!(
            err.contains("e.g. 2026-05-25T12:00:00Z or 2026-05-25"),
            "{err}"
        );
        let err =
            Line::parse(r#"{"type":"workflow","description":"x","made":"2024"}"#).unwrap_err();
        assert!(err.contains("created_at, updated_at)"), "{err}");
    }

    #[test]
    fn a_dated_line_folded_into_a_memory_keeps_the_newer_updated_at() {
        let (_d, mut s) = store();
        let first = written(
            &mut s,
            r#"{"type":"workflow","description":"prime the pump","created_at":"2024-03-05","updated_at":"2024-06-01"}"#,
        );
        let older = written(
            &mut s,
            r#"{"type":"workflow","description":"Prime the pump","summary":"twice","updated_at":"2024-04-01"}"#,
        );
        assert_eq!(older.id, first.id, "the same memory");
        assert_eq!(older.summary, "twice");
        assert_eq!(older.updated_at, "2024-06-01T00:00:00Z", "its own is newer");
        assert_eq!(older.created_at, "2024-03-05T00:00:00Z");
        let newer = written(
            &mut s,
            r#"{"type":"workflow","description":"prime the pump","created_at":"2024-09-09"}"#,
        );
        assert_eq!(newer.updated_at, "2024-09-09T00:00:00Z");
        assert_eq!(newer.created_at, "2024-03-05T00:00:00Z", "created stays");
    }

    /// Recall matches a dated question against when a memory was said: an imported
    /// note from March 2024 is found by "in March 2024" over one from July.
    #[test]
    fn an_imported_dated_note_is_recalled_by_its_month() {
        let (_d, mut s) = store();
        for json in [
            r#"{"type":"workflow","description":"the pump was serviced and the seals replaced","created_at":"2024-07-10"}"#,
            r#"{"type":"workflow","description":"the pump was serviced, the filter cleaned","created_at":"2024-03-12"}"#,
        ] {
            written(&mut s, json);
        }
        for (query, first) in [
            ("what was done to the pump in March 2024", "filter"),
            ("what was done to the pump in July 2024", "seals"),
        ] {
            let hits = s.search(query, &[], 5).unwrap();
            assert_eq!(hits.len(), 2, "{query}: {hits:?}");
            assert!(hits[0].row.description.contains(first), "{query}: {hits:?}");
        }
    }
}
