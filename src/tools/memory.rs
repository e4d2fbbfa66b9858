//! The memory tools: the model searches, reads and writes its own notes.
//!
//! Every call opens the workspace's store (a second SQLite handle beside the session's),
//! so the tools never share mutable state with the session. Ids are looked up in the
//! index, never turned into paths; writes go through the store's checks (type, size cap,
//! secrets, duplicate → update) and only ever touch `agents/memories/`.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{arg_int, arg_str, Param, ParamKind, Tool, ToolError};
use crate::memory::recall::memory_line;
use crate::memory::{Draft, MemoryStore, Patch, StoreError};
use crate::tokens::Embedder;

/// Where the store lives, and the embedder its writes and searches use.
#[derive(Clone)]
pub struct MemoryPlace {
    pub agents_dir: PathBuf,
    pub workspace: PathBuf,
    pub embedder: Option<Arc<dyn Embedder>>,
}

impl MemoryPlace {
    fn open(&self) -> Result<MemoryStore, ToolError> {
        let mut store = MemoryStore::attach(&self.agents_dir, &self.workspace).map_err(failed)?;
        if let Some(e) = &self.embedder {
            store.use_embedder(e.clone());
        }
        Ok(store)
    }
}

fn failed(e: StoreError) -> ToolError {
    match e {
        StoreError::NotFound(id) => ToolError::NotFound(format!(
            "no memory with id {id:?} (memory_search finds ids)"
        )),
        StoreError::Secret { .. } | StoreError::TooLong { .. } => ToolError::Refused(e.to_string()),
        StoreError::BadType(_) | StoreError::NoDescription | StoreError::BadConfidence(_) => {
            ToolError::BadArguments(e.to_string())
        }
        other => ToolError::Failed(other.to_string()),
    }
}

const TYPES: &[&str] = &[
    "workspace_profile",
    "project_fact",
    "tool_use",
    "workflow",
    "user_preference",
];

const ID: Param = Param {
    name: "id",
    kind: ParamKind::Str { max_len: 64 },
    required: true,
    help: "memory id",
};

/// Ids are the store's own (`type_hex`); anything else is refused before any lookup.
fn valid_id(args: &Map<String, Value>) -> Result<&str, ToolError> {
    let id = arg_str(args, "id").unwrap_or_default().trim();
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(id)
    } else {
        Err(ToolError::BadArguments(format!(
            "{id:?} is not a memory id (letters, digits, _ and -)"
        )))
    }
}

fn str_list(args: &Map<String, Value>, name: &str) -> Option<Vec<String>> {
    args.get(name).and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
}

pub struct MemorySearch(pub MemoryPlace);
pub struct MemoryRead(pub MemoryPlace);
pub struct MemoryWrite(pub MemoryPlace);
pub struct MemoryUpdate(pub MemoryPlace);
pub struct MemoryForget(pub MemoryPlace);

impl Tool for MemorySearch {
    fn name(&self) -> &'static str {
        "memory_search"
    }
    fn description(&self) -> &'static str {
        "Search your memory notes (ids, descriptions, scores)."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[
            Param {
                name: "query",
                kind: ParamKind::Str { max_len: 200 },
                required: true,
                help: "what to look for",
            },
            Param {
                name: "k",
                kind: ParamKind::Int { min: 1, max: 20 },
                required: false,
                help: "how many (default 5)",
            },
        ];
        P
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let query = arg_str(args, "query").unwrap_or_default();
        let k = arg_int(args, "k").unwrap_or(5).clamp(1, 20) as usize;
        let store = self.0.open()?;
        let hits = store.search(query, &[], k).map_err(failed)?;
        if hits.is_empty() {
            return Ok(format!("no memory matches {query:?}"));
        }
        Ok(hits
            .iter()
            .map(|h| {
                format!(
                    "{} [{}] score {:.2} (memory): {}",
                    h.row.id,
                    h.row.mtype,
                    h.score,
                    memory_line(&h.row).trim_start_matches("- ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

impl Tool for MemoryRead {
    fn name(&self) -> &'static str {
        "memory_read"
    }
    fn description(&self) -> &'static str {
        "Read one memory note in full by id."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[ID];
        P
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let id = valid_id(args)?;
        let m = self.0.open()?.get(id).map_err(failed)?;
        let mut text = format!(
            "id: {}\ntype: {}\ndescription: {}\nconfidence: {:.2}\nupdated: {}",
            m.id, m.mtype, m.description, m.confidence, m.updated_at
        );
        if !m.summary.is_empty() {
            text.push_str(&format!("\nsummary: {}", m.summary));
        }
        if let Some(a) = &m.action {
            text.push_str(&format!("\naction: {a}"));
        }
        if !m.tags.is_empty() {
            text.push_str(&format!("\ntags: {}", m.tags.join(", ")));
        }
        if !m.body.is_empty() {
            text.push_str(&format!("\n\n{}", m.body));
        }
        Ok(text)
    }
}

impl Tool for MemoryWrite {
    fn name(&self) -> &'static str {
        "memory_write"
    }
    fn description(&self) -> &'static str {
        "Save a short note for future sessions (same description updates it)."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[
            Param {
                name: "type",
                kind: ParamKind::Enum { values: TYPES },
                required: true,
                help: "kind of note",
            },
            Param {
                name: "description",
                kind: ParamKind::Str { max_len: 160 },
                required: true,
                help: "one line",
            },
            Param {
                name: "summary",
                kind: ParamKind::Str { max_len: 400 },
                required: false,
                help: "details",
            },
            Param {
                name: "body",
                kind: ParamKind::Str { max_len: 1000 },
                required: false,
                help: "more text",
            },
            Param {
                name: "tags",
                kind: ParamKind::StrList {
                    max_items: 6,
                    max_len: 24,
                },
                required: false,
                help: "keywords",
            },
            Param {
                name: "supersedes",
                kind: ParamKind::StrList {
                    max_items: 4,
                    max_len: 64,
                },
                required: false,
                help: "ids this replaces",
            },
        ];
        P
    }
    fn writes(&self) -> bool {
        true
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let draft = Draft {
            mtype: arg_str(args, "type").unwrap_or_default().to_string(),
            description: arg_str(args, "description").unwrap_or_default().to_string(),
            summary: arg_str(args, "summary").unwrap_or_default().to_string(),
            body: arg_str(args, "body").unwrap_or_default().to_string(),
            tags: str_list(args, "tags").unwrap_or_default(),
            supersedes: str_list(args, "supersedes").unwrap_or_default(),
            // The model's own notes start below the default: they are unverified.
            confidence: Some(0.4),
            ..Draft::default()
        };
        let mut store = self.0.open()?;
        let outcome = store.write(&draft).map_err(failed)?;
        Ok(format!(
            "memory saved: {} — {} ({}; the user can undo it with /memory forget {})",
            outcome.id(),
            draft.description.trim(),
            outcome.describe(),
            outcome.id()
        ))
    }
}

impl Tool for MemoryUpdate {
    fn name(&self) -> &'static str {
        "memory_update"
    }
    fn description(&self) -> &'static str {
        "Change fields of one memory note by id (the user approves)."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[
            ID,
            Param {
                name: "description",
                kind: ParamKind::Str { max_len: 160 },
                required: false,
                help: "new line",
            },
            Param {
                name: "summary",
                kind: ParamKind::Str { max_len: 400 },
                required: false,
                help: "new details",
            },
            Param {
                name: "body",
                kind: ParamKind::Str { max_len: 1000 },
                required: false,
                help: "new text",
            },
            Param {
                name: "tags",
                kind: ParamKind::StrList {
                    max_items: 6,
                    max_len: 24,
                },
                required: false,
                help: "new keywords",
            },
        ];
        P
    }
    fn writes(&self) -> bool {
        true
    }
    /// As [`MemoryForget`]: rewriting a note is the user's call.
    fn asks(&self) -> bool {
        true
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let id = valid_id(args)?;
        let patch = Patch {
            description: arg_str(args, "description").map(str::to_string),
            summary: arg_str(args, "summary").map(str::to_string),
            body: arg_str(args, "body").map(str::to_string),
            tags: str_list(args, "tags"),
        };
        if patch == Patch::default() {
            return Err(ToolError::BadArguments(
                "nothing to change: give description, summary, body or tags".into(),
            ));
        }
        let m = self.0.open()?.update(id, &patch).map_err(failed)?;
        Ok(format!("memory updated: {} — {}", m.id, m.description))
    }
}

impl Tool for MemoryForget {
    fn name(&self) -> &'static str {
        "memory_forget"
    }
    fn description(&self) -> &'static str {
        "Archive a wrong or outdated memory note by id (the user approves)."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[ID];
        P
    }
    fn writes(&self) -> bool {
        true
    }
    /// A model must not lose a note on its own: small ones archive notes unasked while
    /// answering something else. Sessions that cannot ask refuse it.
    fn asks(&self) -> bool {
        true
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let id = valid_id(args)?;
        self.0.open()?.forget(id).map_err(failed)?;
        Ok(format!(
            "memory archived: {id} (it will not be recalled again)"
        ))
    }
}
