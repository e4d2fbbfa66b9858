//! The memory tools: the model searches, reads and writes its own notes.
//!
//! Every call opens the workspace's store (a second SQLite handle beside the session's),
//! so the tools never share mutable state with the session. `memory_search` answers
//! through the one recall path (`sources::Sources::recall`) over the same sources as the
//! session start and `/memory recall` (memories, recent sessions, the RAG stores in use,
//! the knowledge base), ranked the same way and packed under [`SEARCH_BUDGET`] exact
//! tokens of the loaded model's tokenizer. Ids are looked up in the
//! index, never turned into paths; writes go through the store's checks (type, size cap,
//! secrets, duplicate → update) and only ever touch `agents/memories/`. `memory_update`
//! and `memory_forget` ask first and show what will change ([`preview`]); `memory_list`
//! shows the index ([`list`]).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{arg_int, arg_str, Param, ParamKind, Preview, Tool, ToolContext, ToolError};
use crate::config::MemoryConfig;
use crate::memory::recall::{Injection, Limits};
use crate::memory::{Draft, MemoryStore, Patch, StoreError};
use crate::tokens::Embedder;

mod list;
mod preview;

pub use list::MemoryList;

/// Tokens a `memory_search` result may hold: a quarter of the default context's memory
/// budget less than the session start's, well inside the 6000 characters a tool result
/// is cut to.
pub const SEARCH_BUDGET: usize = 768;

/// Where the store lives, the embedder its writes and searches use, and the memory
/// settings recall follows.
#[derive(Clone)]
pub struct MemoryPlace {
    pub agents_dir: PathBuf,
    pub workspace: PathBuf,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub config: MemoryConfig,
}

impl MemoryPlace {
    /// Whether no memory, recorded session or RAG store exists yet: a search can only
    /// come back empty (the knowledge base is left out: it is created with the workspace).
    pub fn holds_nothing(&self) -> bool {
        let any = |_: &str| true;
        let has = |dir: &str| walk_has_file(&self.agents_dir.join(dir), 2, &any);
        !(self.holds_memory() || has("sessions") || has("rag"))
    }

    /// Whether an active memory file exists (cheap: no index is opened).
    pub fn holds_memory(&self) -> bool {
        // The memory store's own files (its index, `MEMORY.md`) are made at start:
        // only a memory file (`<type>/<id>.spmd`) says something was kept; the
        // archive's are a level deeper.
        let memory = |name: &str| name.ends_with(".spmd");
        walk_has_file(&self.agents_dir.join("memories"), 2, &memory)
    }

    /// Where `rel` (under the memories directory) is, as the user finds it: relative to
    /// the workspace when it is inside.
    fn shown_path(&self, rel: &str) -> String {
        let path = self.agents_dir.join("memories").join(rel);
        let shown = path.strip_prefix(&self.workspace).unwrap_or(&path);
        shown.display().to_string()
    }

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

/// The types the model may write: the workspace profile is the profile commands' and
/// onboarding's (`chat::memory_guard`), so the grammar does not offer it.
const TYPES: &[&str] = &["project_fact", "tool_use", "workflow", "user_preference"];

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
    } else if let Some(path) = file_of_label(id) {
        Err(ToolError::BadArguments(format!(
            "{id:?} names lines of a file, not a memory: read_file with {{\"path\": {path:?}}} reads it"
        )))
    } else {
        Err(ToolError::BadArguments(format!(
            "{id:?} is not a memory id (letters, digits, _ and -)"
        )))
    }
}

/// The file an evidence label (`src/lib.rs:10-24`, `Cargo.toml@1-14`) names, when `id`
/// is one: the model sometimes takes a snippet's source for a memory's id.
fn file_of_label(id: &str) -> Option<&str> {
    let path = id.split([':', '@']).next().unwrap_or(id);
    let path = path.strip_prefix("/workspace/").unwrap_or(path);
    let looks_like_file = path.contains('/')
        || path.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
        });
    // A path that leaves the workspace is no label of its evidence: it stays a bad id.
    let inside = !path.starts_with('/') && !path.split(['/', '\\']).any(|part| part == "..");
    (looks_like_file && inside && !path.contains(char::is_whitespace)).then_some(path)
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
    fn route(&self) -> Option<&'static str> {
        Some("what the user told you before: 'did I tell you…', 'what do you know about me', 'what did I say about…'")
    }
    fn description(&self) -> &'static str {
        "Search your notes, past sessions and documents (ids, sources, scores)."
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
                help: "most items (default: what fits the budget)",
            },
        ];
        P
    }
    fn finds_nothing(&self) -> bool {
        self.0.holds_nothing()
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        self.call_in(args, ToolContext::default())
    }
    fn call_in(
        &self,
        args: &Map<String, Value>,
        ctx: ToolContext<'_>,
    ) -> Result<String, ToolError> {
        let counter = ctx.counter.ok_or_else(|| {
            ToolError::Failed(
                "memory_search counts exact tokens and needs the model's tokenizer, which is not loaded here (pass --model, or run scripts/fetch-models.sh)".into(),
            )
        })?;
        let query = arg_str(args, "query").unwrap_or_default();
        let limits = search_limits(&self.0.config, arg_int(args, "k"));
        let store = self.0.open()?;
        let (opened, notes) = crate::sources::Opened::open(
            &self.0.workspace,
            &self.0.config,
            self.0.embedder.clone(),
        );
        for n in notes {
            tracing::warn!("memory_search: {n}");
        }
        let injection = opened
            .sources(&self.0.config, &store)
            .recall(query, limits, counter)
            .map_err(failed)?;
        Ok(render_search(query, &injection))
    }
}

/// The session start's limits under the tool's budget; `k` caps the relevant items.
pub fn search_limits(config: &MemoryConfig, k: Option<i64>) -> Limits {
    Limits {
        max_relevant: k.map_or(usize::MAX, |k| k.clamp(1, 20) as usize),
        ..Limits::budgeted(SEARCH_BUDGET, config.factual_share)
    }
}

/// One line per recalled item, best first within its section as the block orders them:
/// `id (source) score 0.87: text`, then what the result cost.
fn render_search(query: &str, injection: &Injection) -> String {
    if injection.items.is_empty() {
        return format!("no memory matches {query:?} (memories, sessions, RAG stores and the knowledge base were searched)");
    }
    let mut out: Vec<String> = injection
        .items
        .iter()
        .map(|p| {
            let c = &p.candidate;
            format!(
                "{} ({}) score {:.2}: {}",
                c.id,
                c.source,
                c.score,
                c.text.trim_start_matches("- ")
            )
        })
        .collect();
    out.push(format!(
        "({} items, {} of {} tokens; memory_read shows a memory in full)",
        injection.items.len(),
        injection.tokens,
        injection.budget
    ));
    out.join("\n")
}

impl Tool for MemoryRead {
    fn name(&self) -> &'static str {
        "memory_read"
    }
    /// A first step only for a request about the memory, which comes with the ids of
    /// the memories that rank for it (`chat::route::memory`).
    fn route(&self) -> Option<&'static str> {
        Some("read a remembered note in full")
    }
    fn description(&self) -> &'static str {
        "Read one memory note in full by id."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[ID];
        P
    }
    fn finds_nothing(&self) -> bool {
        !self.0.holds_memory()
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
    fn route(&self) -> Option<&'static str> {
        Some("the user tells you something to keep: 'remember…', 'from now on…', 'I prefer…', 'note that…'")
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
    fn remembers(&self) -> bool {
        true
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        self.call_in(args, ToolContext::default())
    }
    /// Saves the note with where it came from (the turn's guard sets `ctx.provenance`).
    fn call_in(
        &self,
        args: &Map<String, Value>,
        ctx: ToolContext<'_>,
    ) -> Result<String, ToolError> {
        let text = |name: &str| arg_str(args, name).unwrap_or_default().to_string();
        let (description, summary, body) = (text("description"), text("summary"), text("body"));
        let mut tags = str_list(args, "tags").unwrap_or_default();
        if let Some(p) = ctx.provenance {
            // The words the note rests on become keys it is found by (memory::keys).
            let words = p
                .evidence
                .split_once(": ")
                .map_or(p.evidence.as_str(), |w| w.1);
            let own = [description.as_str(), &summary, &body].join("\n");
            tags = crate::memory::keys::with_context_keys(tags, words, &own);
        }
        let draft = Draft {
            mtype: text("type"),
            description,
            summary,
            body,
            tags,
            supersedes: str_list(args, "supersedes").unwrap_or_default(),
            // The model's own notes start below the default: they are unverified.
            confidence: Some(0.4),
            source_session: ctx.provenance.and_then(|p| p.session.clone()),
            evidence: ctx.provenance.map(|p| p.evidence.clone()),
            ..Draft::default()
        };
        let mut store = self.0.open()?;
        other_type_with_description(&store, &draft)?;
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

/// A note whose description an active memory of another type already has: the store would
/// fold it into that memory and keep its id (a `project_fact` under a
/// `workspace_profile_…` id); the model is told to update that memory instead.
fn other_type_with_description(store: &MemoryStore, draft: &Draft) -> Result<(), ToolError> {
    let norm = crate::memory::normalize_description(&draft.description);
    let row = store
        .index()
        .active_with_norm(&norm)
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    match row {
        Some(row) if row.mtype.as_str() != draft.mtype => Err(ToolError::Refused(format!(
            "memory {} ({}) already says this; it was not changed (memory_update changes it, with the user's yes)",
            row.id, row.mtype
        ))),
        _ => Ok(()),
    }
}

impl Tool for MemoryUpdate {
    fn name(&self) -> &'static str {
        "memory_update"
    }
    fn route(&self) -> Option<&'static str> {
        Some("change or correct a note you remember")
    }
    fn description(&self) -> &'static str {
        "Rewrite one memory note by id with its whole new text (the user approves)."
    }
    /// The note's new line, and details: small models fill every field they are shown
    /// (empty strings, keywords in place of the text), so the text is required and the
    /// rest is left to the user's `/memory` commands.
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[
            ID,
            Param {
                name: "description",
                kind: ParamKind::Str { max_len: 160 },
                required: true,
                help: "the note as it should read now, one line",
            },
            Param {
                name: "summary",
                kind: ParamKind::Str { max_len: 400 },
                required: false,
                help: "details",
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
    /// The fields that change, old then new, as the store would write them; an unknown
    /// id or a patch the store refuses is refused here, before anyone is asked.
    fn preview(&self, args: &Map<String, Value>) -> Result<Option<Preview>, ToolError> {
        let id = valid_id(args)?;
        let patch = patch_of(args)?;
        let (old, new) = self.0.open()?.patched(id, &patch).map_err(failed)?;
        Ok(Some(Preview {
            question: preview::question(self.name(), &old),
            diff: preview::update_diff(&old, &new),
        }))
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let id = valid_id(args)?;
        let patch = patch_of(args)?;
        let m = self.0.open()?.update(id, &patch).map_err(failed)?;
        Ok(format!("memory updated: {} — {}", m.id, m.description))
    }
}

/// The fields a `memory_update` call gives; at least one.
fn patch_of(args: &Map<String, Value>) -> Result<Patch, ToolError> {
    // An empty field is one the model did not mean to change.
    let given = |name: &str| {
        arg_str(args, name)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    let patch = Patch {
        description: given("description"),
        summary: given("summary"),
        body: given("body"),
        tags: str_list(args, "tags").filter(|t| !t.is_empty()),
    };
    if patch == Patch::default() {
        return Err(ToolError::BadArguments(
            "nothing to change: give description, summary, body or tags".into(),
        ));
    }
    Ok(patch)
}

impl Tool for MemoryForget {
    fn name(&self) -> &'static str {
        "memory_forget"
    }
    fn route(&self) -> Option<&'static str> {
        Some("forget or delete a note you remember")
    }
    fn description(&self) -> &'static str {
        "Archive a wrong or outdated memory note by id (the user approves)."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[ID];
        P
    }
    fn finds_nothing(&self) -> bool {
        !self.0.holds_memory()
    }
    fn writes(&self) -> bool {
        true
    }
    /// A model must not lose a note on its own: small ones archive notes unasked while
    /// answering something else. Sessions that cannot ask refuse it.
    fn asks(&self) -> bool {
        true
    }
    /// The memory that goes and where it is kept; an unknown or archived id is refused
    /// here, before anyone is asked.
    fn preview(&self, args: &Map<String, Value>) -> Result<Option<Preview>, ToolError> {
        let id = valid_id(args)?;
        let (memory, rel) = self.0.open()?.to_archive(id).map_err(failed)?;
        Ok(Some(Preview {
            question: preview::question(self.name(), &memory),
            diff: preview::forget_diff(&memory, &self.0.shown_path(&rel)),
        }))
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let id = valid_id(args)?;
        self.0.open()?.forget(id).map_err(failed)?;
        Ok(format!(
            "memory archived: {id} (it will not be recalled again)"
        ))
    }
}

/// Whether `dir` holds a file within `depth` levels (`memories/<type>/<id>.md` is two).
fn walk_has_file(dir: &std::path::Path, depth: usize, fits: &dyn Fn(&str) -> bool) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| match e.file_type() {
        Ok(t) if t.is_file() => fits(&e.file_name().to_string_lossy()),
        Ok(t) if t.is_dir() && depth > 1 => walk_has_file(&e.path(), depth - 1, fits),
        _ => false,
    })
}

#[cfg(test)]
mod tests;
