//! `harvey-index.db` (see `location`): the derived SQLite index (WAL) over the memory files.
//!
//! One `memories` row per file (active or archived) and an FTS5 table over description,
//! summary, tags, action and body (porter stemming, so "fixing" finds "fix"). The files
//! are the truth: every row records the file's path, mtime and size so a start-up
//! reconcile re-reads only what changed, and the whole index can be dropped and rebuilt.
//!
//! The SQL is `storage::memories`'s; this module turns its rows into memory types,
//! computes what a row is keyed by (normalized description, vector text hash) and
//! keeps the in-memory copies (vector scan, full-text postings).

use std::path::Path;

use super::lexical::LexicalIndex;
use super::types::{Memory, MemoryType};
use crate::storage::memories::{MemoryRow, MemoryTables, NewMemory, VectorKey};
use crate::storage::Result;
use crate::vector::text_hash;

mod fulltext;
pub use fulltext::Scope;

/// How long a connection waits for another process's write before giving up. Writes
/// are short (one memory, one reconcile), so a wait this long means something is stuck.
pub use crate::storage::BUSY_TIMEOUT;

/// One indexed memory (what recall and listings need; the file has the rest).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub mtype: MemoryType,
    pub kind: Option<String>,
    pub archived: bool,
    pub description: String,
    pub summary: String,
    pub tags: String,
    pub action: Option<String>,
    pub confidence: f64,
    /// Last update, unix seconds.
    pub updated: i64,
    pub expires: Option<i64>,
    /// Relative to the memories directory.
    pub path: String,
}

/// Where a file stood when it was indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub mtime_ns: i64,
    pub size: i64,
}

/// What a row needs besides the memory itself.
pub struct Placement<'a> {
    pub path: &'a str,
    pub stamp: FileStamp,
    pub archived: bool,
    pub updated: i64,
    pub expires: Option<i64>,
}

pub struct Index {
    tables: MemoryTables,
    /// (id, type, expires) of active memories with their vectors, for exact scans.
    vectors: crate::vector::VectorCache<VectorKey>,
    /// Full-text postings of the active memories (they carry the stamp they were built for).
    lexical: std::cell::RefCell<Option<LexicalIndex>>,
    /// Where the postings are saved for the next process (none for an in-memory index).
    lexical_file: Option<std::path::PathBuf>,
}

impl Index {
    /// Opens (creating) the index; an index of another schema version is emptied.
    pub fn open(path: &Path) -> Result<Self> {
        Ok(Self {
            tables: MemoryTables::open(path)?,
            vectors: crate::vector::VectorCache::with_file(crate::vector::sidecar_path(path)),
            lexical: Default::default(),
            lexical_file: Some(fulltext::postings_path(path)),
        })
    }

    /// An in-memory index (benchmarks and tests).
    pub fn in_memory() -> Result<Self> {
        Ok(Self {
            tables: MemoryTables::in_memory()?,
            vectors: Default::default(),
            lexical: Default::default(),
            lexical_file: None,
        })
    }

    /// A number that moves whenever a memory row or a vector changes, in any process
    /// (triggers keep it), and not when only token counts are cached: the in-memory
    /// copies (full-text postings, vectors) are rebuilt when it moves.
    pub fn generation(&self) -> Result<i64> {
        self.tables.generation()
    }

    /// Drops every row (the files stay).
    pub fn clear(&self) -> Result<()> {
        self.tables.clear()
    }

    /// Runs `f` in one transaction (a reconcile or an import is one write).
    pub fn batch<T>(&mut self, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        self.tables.immediate(|| f(self))
    }

    /// Every indexed file with its stamp.
    pub fn stamps(&self) -> Result<Vec<(String, String, FileStamp)>> {
        let files = self.tables.files()?;
        Ok(files
            .into_iter()
            .map(|f| {
                let stamp = FileStamp {
                    mtime_ns: f.mtime_ns,
                    size: f.size,
                };
                (f.path, f.id, stamp)
            })
            .collect())
    }

    /// Adds or replaces the row of `m.id` (and its full-text entry), in one transaction.
    pub fn upsert(&self, m: &Memory, at: &Placement<'_>) -> Result<()> {
        let tags = m.tags.join(" ");
        let action = m.action.as_deref();
        let vhash = text_hash(&embed_text(
            &m.description,
            &m.summary,
            action.unwrap_or(""),
            &m.body,
        ));
        self.tables.upsert(&NewMemory {
            id: &m.id,
            mtype: m.mtype.as_str(),
            kind: m.kind.as_deref(),
            archived: at.archived,
            description: &m.description,
            summary: &m.summary,
            tags: &tags,
            action,
            confidence: m.confidence,
            updated: at.updated,
            expires: at.expires,
            norm: &super::types::normalize_description(&m.description),
            path: at.path,
            mtime_ns: at.stamp.mtime_ns,
            size: at.stamp.size,
            vhash: &vhash,
            body: &m.body,
        })
    }

    pub fn remove_id(&self, id: &str) -> Result<()> {
        self.tables.remove_id(id)
    }

    pub fn remove_path(&self, path: &str) -> Result<()> {
        self.tables.remove_path(path)
    }

    pub fn get(&self, id: &str) -> Result<Option<Row>> {
        Ok(self.tables.row(id)?.map(Row::from))
    }

    /// The active memory whose normalized description is `norm`.
    pub fn active_with_norm(&self, norm: &str) -> Result<Option<Row>> {
        Ok(self.tables.active_with_norm(norm)?.map(Row::from))
    }

    /// Memories for listings, newest first.
    pub fn list(&self, archived: bool) -> Result<Vec<Row>> {
        Ok(rows(self.tables.list(archived)?))
    }

    /// Ids of active memories whose `expires_at` is at or before `now`.
    pub fn expired(&self, now: i64) -> Result<Vec<String>> {
        self.tables.expired(now)
    }

    /// Recallable memories of the given types by confidence, then recency (one indexed
    /// scan per type that stops after `limit` rows).
    pub fn top(&self, types: &[MemoryType], now: i64, limit: usize) -> Result<Vec<Row>> {
        let names: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
        let mut rows = rows(self.tables.top_of_types(&names, now, limit)?);
        rows.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then(b.updated.cmp(&a.updated))
                .then(a.id.cmp(&b.id))
        });
        rows.truncate(limit);
        Ok(rows)
    }

    /// A cached token count (`key` names the tokenizer and the exact text).
    pub fn cached_cost(&self, key: &str) -> Result<Option<usize>> {
        self.tables.cached_cost(key)
    }

    /// Remembers token counts (one transaction).
    pub fn save_costs(&self, costs: &[(String, usize)]) -> Result<()> {
        self.tables.save_costs(costs)
    }

    /// Active memories without a vector from `model`: (hash, text to embed), one per hash.
    pub fn missing_vectors(&self, model: &str, limit: usize) -> Result<Vec<(String, String)>> {
        let missing = self.tables.missing_vectors(model, limit)?;
        Ok(missing
            .into_iter()
            .map(|(hash, [description, summary, action, body])| {
                (hash, embed_text(&description, &summary, &action, &body))
            })
            .collect())
    }

    /// Whether every active memory had a vector from `model` at the memories' current
    /// generation (as [`Self::mark_vectors_complete`] recorded): then nothing is missing
    /// and the scan for it, which reads every row, can be skipped.
    pub fn vectors_complete(&self, model: &str) -> Result<bool> {
        self.tables.vectors_complete(model)
    }

    /// Records that no active memory lacks a vector from `model` at the current
    /// generation, checked under the write lock (so no write slips in between).
    pub fn mark_vectors_complete(&self, model: &str) -> Result<()> {
        self.tables.mark_vectors_complete(model)
    }

    /// Stores vectors in one transaction.
    pub fn put_vectors(&self, model: &str, items: &[(String, Vec<f32>)]) -> Result<()> {
        self.tables.put_vectors(model, items)
    }

    /// Active memories with a vector from `model`, and those without.
    pub fn vector_coverage(&self, model: &str) -> Result<(usize, usize)> {
        self.tables.vector_coverage(model)
    }

    /// Maps and checks the vector copy of `model` ahead of the first search (see
    /// `vector::VectorCache::warm`); true when it is ready.
    pub fn warm_vectors(&self, model: Option<&str>) -> Result<bool> {
        self.tables.warm_vectors(&self.vectors, model)
    }

    /// The `k` recallable memories of `types` nearest to the unit vector `q` (exact
    /// scan over the int8 copy of the vectors, `vector::VectorCache`), with their cosine
    /// similarity, best first.
    pub fn vector_search(
        &self,
        q: &[f32],
        model: &str,
        types: &[MemoryType],
        now: i64,
        k: usize,
    ) -> Result<Vec<(String, f32)>> {
        let wanted = type_set(types);
        let found = self
            .tables
            .nearest(&self.vectors, q, model, k, |(_, t, expires)| {
                expires.is_none_or(|e| e > now)
                    && (wanted.is_empty() || wanted.contains(&format!(",{t},")))
            })?;
        Ok(found.into_iter().map(|((id, _, _), s)| (id, s)).collect())
    }

    /// (type, active, archived) counts.
    pub fn counts(&self) -> Result<Vec<(MemoryType, usize, usize)>> {
        let mut out = Vec::new();
        for t in MemoryType::ALL {
            let (active, archived) = self.tables.count_of_type(t.as_str())?;
            out.push((t, active, archived));
        }
        Ok(out)
    }
}

impl From<MemoryRow> for Row {
    fn from(r: MemoryRow) -> Self {
        Row {
            id: r.id,
            mtype: stored_type(&r.mtype),
            kind: r.kind,
            archived: r.archived,
            description: r.description,
            summary: r.summary,
            tags: r.tags,
            action: r.action,
            confidence: r.confidence,
            updated: r.updated,
            expires: r.expires,
            path: r.path,
        }
    }
}

fn rows(stored: Vec<MemoryRow>) -> Vec<Row> {
    stored.into_iter().map(Row::from).collect()
}

/// The type of a stored row (a type this harvey does not know reads as `tool_use`).
fn stored_type(name: &str) -> MemoryType {
    MemoryType::parse(name).unwrap_or(MemoryType::ToolUse)
}

/// The text a memory's vector is made from.
pub fn embed_text(description: &str, summary: &str, action: &str, body: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in [description, summary, action, body] {
        let p = p.trim();
        if !p.is_empty() && !parts.contains(&p) {
            parts.push(p);
        }
    }
    parts.join("\n")
}

/// `,a,b,` for the `instr` type filter; empty = every type.
fn type_set(types: &[MemoryType]) -> String {
    if types.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
    format!(",{},", names.join(","))
}
