//! The write path: new memories (deduplicated by description, superseding others),
//! patches, the atomic file write and new ids.

use sha2::{Digest, Sha256};

use super::*;
use crate::memory::clock::now_nanos;

/// What a write did.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOutcome {
    Added {
        id: String,
        archived: Vec<String>,
    },
    /// An active memory had the same description: it was updated instead.
    Updated {
        id: String,
        archived: Vec<String>,
    },
    /// An exported memory written back under its own id (`how`: added, replaced,
    /// unchanged); see `transfer`.
    Restored {
        id: String,
        how: &'static str,
    },
}

impl WriteOutcome {
    pub fn id(&self) -> &str {
        match self {
            WriteOutcome::Added { id, .. }
            | WriteOutcome::Updated { id, .. }
            | WriteOutcome::Restored { id, .. } => id,
        }
    }

    pub fn describe(&self) -> String {
        let (verb, id, archived) = match self {
            WriteOutcome::Added { id, archived } => ("saved", id, archived),
            WriteOutcome::Updated { id, archived } => (
                "updated (same description as an existing memory)",
                id,
                archived,
            ),
            WriteOutcome::Restored { id, how } => {
                return format!("{how} {id} (restored with its id)")
            }
        };
        let mut s = format!("{verb} {id}");
        if !archived.is_empty() {
            s.push_str(&format!("; archived superseded {}", archived.join(", ")));
        }
        s
    }
}

/// When a new memory was said, when its writer knows (an imported dated note); a
/// memory written without them is dated now. Built only through [`Dates::new`], so
/// both are times [`parse_time`] reads, written as the files write them, and
/// `updated_at` is not before `created_at`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dates {
    created_at: Option<String>,
    updated_at: Option<String>,
}

impl Dates {
    /// `updated_at` defaults to `created_at`; `2024-03-01` means midnight UTC.
    pub fn new(created_at: Option<&str>, updated_at: Option<&str>) -> Result<Self, StoreError> {
        let time = |field, value: Option<&str>| match value {
            None => Ok(None),
            Some(v) => normalized_time(v)
                .map(Some)
                .ok_or_else(|| bad_date(field, v)),
        };
        let created_at = time("created_at", created_at)?;
        let updated_at = time("updated_at", updated_at)?.or_else(|| created_at.clone());
        if let (Some(c), Some(u)) = (&created_at, &updated_at) {
            if parse_time(u) < parse_time(c) {
                return Err(StoreError::BadField {
                    field: "updated_at",
                    problem: format!(
                        "{u} is before created_at {c}; a memory is updated after it is made"
                    ),
                });
            }
        }
        Ok(Self {
            created_at,
            updated_at,
        })
    }
}

/// A date field that is no date: which field, what it says, and a good value.
pub(in crate::memory) fn bad_date(field: &'static str, value: &str) -> StoreError {
    StoreError::BadField {
        field,
        problem: format!(
            "{value:?} is not a date (RFC 3339 or a plain day, e.g. 2026-05-25T12:00:00Z or 2026-05-25)"
        ),
    }
}

/// Fields `update` may change (`None` = keep).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Patch {
    pub description: Option<String>,
    pub summary: Option<String>,
    pub body: Option<String>,
    pub tags: Option<Vec<String>>,
}

impl MemoryStore {
    /// Saves a memory. A description equal (after normalization) to an active memory's
    /// updates that memory instead of adding a duplicate; `supersedes` archives the
    /// listed memories.
    pub fn write(&mut self, draft: &Draft) -> Result<WriteOutcome, StoreError> {
        let outcome = self.write_one(draft)?;
        self.write_overview()?;
        Ok(outcome)
    }

    /// Saves many memories; each line gets its own result. `MEMORY.md` is written once.
    pub fn write_many(&mut self, drafts: &[Draft]) -> Vec<Result<WriteOutcome, StoreError>> {
        let results: Vec<_> = drafts.iter().map(|d| self.write_one(d)).collect();
        if let Err(e) = self.write_overview() {
            tracing::warn!("cannot write MEMORY.md: {e}");
        }
        results
    }

    pub(in crate::memory) fn write_one(
        &mut self,
        draft: &Draft,
    ) -> Result<WriteOutcome, StoreError> {
        self.write_dated(draft, &Dates::default())
    }

    /// [`Self::write_one`] of a note said at `dates` (an import): a new memory keeps
    /// them; folded into an existing one, the newer `updated_at` of the two stays.
    pub(in crate::memory) fn write_dated(
        &mut self,
        draft: &Draft,
        dates: &Dates,
    ) -> Result<WriteOutcome, StoreError> {
        let mtype = MemoryType::parse(&draft.mtype)
            .ok_or_else(|| StoreError::BadType(draft.mtype.clone()))?;
        let clean = |t: &str| relativize(t.trim(), &self.workspace);
        let description = clean(&draft.description).replace('\n', " ");
        if description.trim().is_empty() {
            return Err(StoreError::NoDescription);
        }
        let summary = clean(&draft.summary);
        let body = clean(&draft.body);
        let action = draft.action.as_deref().map(clean).filter(|a| !a.is_empty());
        check_fields(
            &description,
            &summary,
            &body,
            action.as_deref().unwrap_or(""),
            &draft.tags,
            draft.confidence,
        )?;
        let now = now_rfc3339();
        let norm = normalize_description(&description);
        let existing = self
            .index
            .active_with_norm(&norm)
            .map_err(|e| self.db_err(e))?;
        let fields = Fields {
            mtype,
            description,
            summary,
            body,
            action,
        };
        let (memory, rel, old_file, updated) = match existing {
            Some(row) => {
                let given = dates.updated_at.as_deref();
                let (m, rel, old) = self.merged(&row, draft, fields, now, given)?;
                (m, rel, old, true)
            }
            None => {
                let created = dates.created_at.clone().unwrap_or_else(|| now.clone());
                let updated = dates.updated_at.clone().unwrap_or(now);
                let (m, rel) = self.created(draft, fields, created, updated)?;
                (m, rel, None, false)
            }
        };
        self.save(&memory, &rel, false)?;
        if let Some(old) = old_file {
            // A crash before this line leaves two copies; reconcile keeps the newer.
            let path = self.dir.join(old);
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!("cannot remove the old copy {}: {e}", path.display());
            }
        }
        let mut archived = Vec::new();
        for id in &draft.supersedes {
            if id != &memory.id && self.archive(id).is_ok() {
                archived.push(id.clone());
            }
        }
        let id = memory.id;
        Ok(if updated {
            WriteOutcome::Updated { id, archived }
        } else {
            WriteOutcome::Added { id, archived }
        })
    }

    /// `draft` folded into the active memory `row` (same description): its path, and the
    /// old path when a type change moves the file (removed only after the new one is
    /// written). It is updated `now`, or at the note's own date (`given`, an import)
    /// unless its own `updated_at` is newer.
    fn merged(
        &self,
        row: &Row,
        draft: &Draft,
        f: Fields,
        now: String,
        given: Option<&str>,
    ) -> Result<(Memory, String, Option<String>), StoreError> {
        let mut m = self.read(row)?;
        m.mtype = f.mtype;
        m.description = f.description;
        if !f.summary.is_empty() {
            m.summary = f.summary;
        }
        if !f.body.is_empty() {
            m.body = f.body;
        }
        if !draft.tags.is_empty() {
            m.tags = draft.tags.clone();
        }
        m.kind = draft.kind.clone().or(m.kind);
        m.action = f.action.or(m.action);
        m.confidence = draft.confidence.unwrap_or(m.confidence);
        m.expires_at = draft.expires_at.clone().or(m.expires_at);
        m.evidence = draft.evidence.clone().or(m.evidence);
        if draft.source_session.is_some() {
            m.source_session.clone_from(&draft.source_session);
        }
        for s in &draft.supersedes {
            if !m.supersedes.contains(s) {
                m.supersedes.push(s.clone());
            }
        }
        match given {
            None => m.updated_at = now,
            Some(g) if parse_time(g) > parse_time(&m.updated_at) => m.updated_at = g.into(),
            Some(_) => {}
        }
        if row.mtype == f.mtype {
            return Ok((m, row.path.clone(), None));
        }
        let rel = format!("{}/{}.spmd", f.mtype.as_str(), m.id);
        Ok((m, rel, Some(row.path.clone())))
    }

    /// A new memory from `draft`, with a fresh id, and its path.
    fn created(
        &mut self,
        draft: &Draft,
        f: Fields,
        created_at: String,
        updated_at: String,
    ) -> Result<(Memory, String), StoreError> {
        let id = self.new_id(f.mtype, &f.description)?;
        let rel = format!("{}/{id}.spmd", f.mtype.as_str());
        let m = Memory {
            id,
            mtype: f.mtype,
            kind: draft.kind.clone().filter(|k| !k.is_empty()),
            created_at,
            updated_at,
            supersedes: draft.supersedes.clone(),
            tags: draft.tags.clone(),
            description: f.description,
            summary: f.summary,
            action: f.action,
            confidence: draft.confidence.unwrap_or(DEFAULT_CONFIDENCE),
            source_session: draft.source_session.clone().filter(|s| !s.is_empty()),
            expires_at: draft.expires_at.clone().filter(|s| !s.is_empty()),
            evidence: draft.evidence.clone().filter(|s| !s.is_empty()),
            body: f.body,
            extra: Default::default(),
        };
        Ok((m, rel))
    }

    /// Changes some fields of an active memory (same checks as a write).
    pub fn update(&mut self, id: &str, patch: &Patch) -> Result<Memory, StoreError> {
        let (row, _, mut m) = self.patch_of(id, patch)?;
        m.updated_at = now_rfc3339();
        self.save(&m, &row.path, false)?;
        self.write_overview()?;
        Ok(m)
    }

    /// What [`Self::update`] would make of memory `id`, with nothing written: the memory
    /// as it is and as it would be (its `updated_at` aside), after the same cleaning and
    /// checks, so a refusal here is the refusal the update would give.
    pub fn patched(&self, id: &str, patch: &Patch) -> Result<(Memory, Memory), StoreError> {
        self.patch_of(id, patch).map(|(_, old, new)| (old, new))
    }

    fn patch_of(&self, id: &str, patch: &Patch) -> Result<(Row, Memory, Memory), StoreError> {
        let row = self.row(id)?;
        if row.archived {
            return Err(StoreError::Archived { id: id.to_string() });
        }
        let old = self.read(&row)?;
        let mut m = old.clone();
        let clean = |t: &str| relativize(t.trim(), &self.workspace);
        if let Some(d) = &patch.description {
            let d = clean(d).replace('\n', " ");
            if d.trim().is_empty() {
                return Err(StoreError::NoDescription);
            }
            m.description = d;
        }
        if let Some(s) = &patch.summary {
            m.summary = clean(s);
        }
        if let Some(b) = &patch.body {
            let b = clean(b);
            if b.len() > MAX_BODY_BYTES {
                return Err(StoreError::TooLong { bytes: b.len() });
            }
            m.body = b;
        }
        if let Some(t) = &patch.tags {
            m.tags = t.clone();
        }
        let tags = m.tags.join(" ");
        for (field, text) in [
            ("description", m.description.as_str()),
            ("summary", m.summary.as_str()),
            ("body", m.body.as_str()),
            ("tags", tags.as_str()),
        ] {
            if let Some(what) = find_secret(text) {
                return Err(StoreError::Secret { field, what });
            }
        }
        Ok((row, old, m))
    }

    /// Writes the file atomically and indexes it.
    pub(in crate::memory) fn save(
        &self,
        m: &Memory,
        rel: &str,
        archived: bool,
    ) -> Result<(), StoreError> {
        let path = self.dir.join(rel);
        file::write_atomic(&path, file::render(m).as_bytes()).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        let stamp = stamp_of(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        self.index
            .upsert(m, &placement(m, rel, stamp, archived))
            .map_err(|e| self.db_err(e))
    }

    fn new_id(&mut self, mtype: MemoryType, description: &str) -> Result<String, StoreError> {
        loop {
            self.counter += 1;
            let mut h = Sha256::new();
            h.update(description.as_bytes());
            h.update(now_nanos().to_le_bytes());
            h.update(self.counter.to_le_bytes());
            h.update(std::process::id().to_le_bytes());
            let hex: String = h
                .finalize()
                .iter()
                .take(3)
                .map(|b| format!("{b:02x}"))
                .collect();
            let id = format!("{}_{hex}", mtype.as_str());
            // The file too: another process may have written it and not indexed it yet.
            let taken_on_disk = self
                .dir
                .join(mtype.as_str())
                .join(format!("{id}.spmd"))
                .exists();
            if !taken_on_disk && self.index.get(&id).map_err(|e| self.db_err(e))?.is_none() {
                return Ok(id);
            }
        }
    }
}

/// The checks every write makes on what a memory says (that there is a description is
/// the caller's check): a body that is a fact, a confidence in 0–1, no secrets.
pub(in crate::memory) fn check_fields(
    description: &str,
    summary: &str,
    body: &str,
    action: &str,
    tags: &[String],
    confidence: Option<f64>,
) -> Result<(), StoreError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(StoreError::TooLong { bytes: body.len() });
    }
    if let Some(c) = confidence.filter(|c| !(0.0..=1.0).contains(c)) {
        return Err(StoreError::BadConfidence(c));
    }
    let tags = tags.join(" ");
    for (field, text) in [
        ("description", description),
        ("summary", summary),
        ("body", body),
        ("action", action),
        ("tags", tags.as_str()),
    ] {
        if let Some(what) = find_secret(text) {
            return Err(StoreError::Secret { field, what });
        }
    }
    Ok(())
}

/// A draft's fields after cleaning (paths made relative, whitespace trimmed) and checks.
struct Fields {
    mtype: MemoryType,
    description: String,
    summary: String,
    body: String,
    action: Option<String>,
}
