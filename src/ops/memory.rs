//! `/memory …` and `harvey memory …`: the memory-store operations both faces run.
//!
//! Each takes a typed request and returns a value; the REPL and the subcommand parse
//! their words or flags into the request and render the value (the REPL as lines, the
//! CLI as lines or JSON). Below both faces: nothing here imports `repl` or the CLI, and
//! nothing prints. Errors keep the store's and the index's own messages.

use std::path::PathBuf;

use crate::config::MemoryConfig;
use crate::memory::index::Row;
use crate::memory::store::Flagged;
use crate::memory::{Draft, Injection, Limits, MemoryStore, MemoryType, StoreError, WriteOutcome};
use crate::sources::Sources;
use crate::tokens::TokenCounter;

/// A memory operation that failed: the store's error, or the index's when the
/// operation reads the index directly (archived rows, vector coverage).
#[derive(Debug, thiserror::Error)]
pub enum MemoryOpError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Index(#[from] crate::storage::Error),
}

/// Which memories a list shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListRequest {
    pub mtype: Option<MemoryType>,
    pub kind: Option<String>,
    /// Archived (forgotten, superseded, flagged-out) memories instead of active ones.
    pub archived: bool,
}

/// A memory type by name; `Err` is the message to show.
pub fn parse_type(name: &str) -> Result<MemoryType, String> {
    MemoryType::parse(name)
        .ok_or_else(|| format!("unknown type {name:?}: one of {}", MemoryType::choices()))
}

/// The memories `request` selects, as the index lists them.
pub fn list(store: &MemoryStore, request: &ListRequest) -> Result<Vec<Row>, MemoryOpError> {
    let kind = request.kind.as_deref();
    if !request.archived {
        return Ok(store.list(request.mtype, kind)?);
    }
    Ok(store
        .index()
        .list(true)?
        .into_iter()
        .filter(|r| request.mtype.is_none_or(|t| r.mtype == t))
        .filter(|r| kind.is_none_or(|k| r.kind.as_deref() == Some(k)))
        .collect())
}

/// One memory's file: where it is and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub path: PathBuf,
    pub text: String,
}

/// Why a memory's file cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The index knows the file but it does not read (the OS error is part of the
    /// message, not a source: a chain would say it twice).
    #[error("{}: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// The file of memory `id`.
pub fn show(store: &MemoryStore, id: &str) -> Result<Shown, ShowError> {
    let path = store.path_of(id)?;
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Shown { path, text }),
        Err(error) => Err(ShowError::Read { path, error }),
    }
}

/// Saves `draft` (a description equal to an existing one updates it instead).
pub fn add(store: &mut MemoryStore, draft: &Draft) -> Result<WriteOutcome, StoreError> {
    store.write(draft)
}

/// Archives memory `id`: it is never recalled again.
pub fn forget(store: &mut MemoryStore, id: &str) -> Result<(), StoreError> {
    store.forget(id)
}

/// Lowers memory `id`'s confidence by 0.1 (archived at 0.2 or below).
pub fn flag(store: &mut MemoryStore, id: &str) -> Result<Flagged, StoreError> {
    store.flag(id)
}

/// `MEMORY.md`: one line per active memory, most useful first, capped.
pub fn index(store: &MemoryStore) -> Result<String, StoreError> {
    store.overview()
}

/// What the store holds: per-type counts and how many memories have vectors.
#[derive(Debug)]
pub struct Status {
    pub dir: PathBuf,
    /// (type, active, archived) per type.
    pub counts: Result<Vec<(MemoryType, usize, usize)>, StoreError>,
    /// `None`: no embedder, recall is full-text only.
    pub vectors: Option<Vectors>,
}

/// How many active memories have a vector of the embedder's model.
#[derive(Debug)]
pub struct Vectors {
    pub model: String,
    /// (with a vector, without one).
    pub coverage: Result<(usize, usize), crate::storage::Error>,
}

/// The store's status; each part keeps its own error so a face shows what it can.
pub fn status(store: &MemoryStore) -> Status {
    let vectors = store.embedder().map(|e| Vectors {
        model: e.model_id().to_string(),
        coverage: store.index().vector_coverage(e.model_id()),
    });
    Status {
        dir: store.dir().to_path_buf(),
        counts: store.counts(),
        vectors,
    }
}

/// One recall query: a list of `k` items after the factual ones (default
/// `memory.top_k`), or with a budget, everything that fits as the session-start
/// injection packs it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecallRequest {
    pub query: String,
    #[serde(default)]
    pub k: Option<usize>,
    #[serde(default)]
    pub budget: Option<usize>,
}

/// The packing limits of `request` under the memory config.
pub fn recall_limits(memory: &MemoryConfig, request: &RecallRequest) -> Limits {
    let share = memory.factual_share;
    match request.budget {
        Some(budget) => Limits::budgeted(budget, share),
        None => Limits::list(request.k.unwrap_or(memory.top_k), share),
    }
}

/// `request` through the session-start recall path over `sources`, costs counted by
/// `counter`.
pub fn recall<C: TokenCounter + ?Sized>(
    sources: &Sources<'_>,
    memory: &MemoryConfig,
    request: &RecallRequest,
    counter: &C,
) -> Result<Injection, StoreError> {
    sources.recall(&request.query, recall_limits(memory, request), counter)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(k: Option<usize>, budget: Option<usize>) -> RecallRequest {
        RecallRequest {
            query: "q".into(),
            k,
            budget,
        }
    }

    fn shape(l: Limits) -> (usize, usize) {
        (l.budget, l.max_relevant)
    }

    #[test]
    fn recall_limits_follow_the_request_then_the_config() {
        let m = crate::config::Config::default().memory;
        let share = m.factual_share;
        let limits = |k, budget| shape(recall_limits(&m, &request(k, budget)));
        assert_eq!(limits(None, None), shape(Limits::list(m.top_k, share)));
        assert_eq!(limits(Some(3), None), shape(Limits::list(3, share)));
        assert_eq!(
            limits(Some(3), Some(200)),
            shape(Limits::budgeted(200, share))
        );
    }

    #[test]
    fn an_unknown_type_names_the_choices() {
        let e = parse_type("nope").unwrap_err();
        assert!(e.starts_with("unknown type \"nope\": one of "), "{e}");
        assert_eq!(parse_type("project_fact"), Ok(MemoryType::ProjectFact));
    }
}
