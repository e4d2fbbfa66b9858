//! `harvey bench --mining`: what end-of-session mining keeps from recorded sessions.
//! Each `.spmd` record of a directory goes through the path `/exit` and `/memory mine`
//! take: [`mining::mine_report`] (proposals under the JSON grammar, each checked for
//! grounding, completeness, specificity, secrets and duplicates within the session), then
//! [`mining::screen`] against a memory store. The model loads once.
//!
//! The workspace and its memory store are a fresh temporary directory, removed at the
//! end: nothing is saved in the user's store (kept proposals are reported, never
//! written) and the records are only read. The workspace being empty, the assistant's
//! words never count as quoting a workspace file; the store being empty, `duplicate`
//! only fires within a session. Whether a kept memory is right is for a person to judge
//! against the record (docs/benchmarks.md, "Memory mining"); this reports what to judge. Returns a report;
//! [`render`] turns it into text.

pub mod render;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::engine::{AbortFlag, Engine, EngineError, EngineParams, LlamaEngine};
use crate::memory::{MemoryStore, StoreError};
use crate::session::grounding::{DropReason, Drops};
use crate::session::{fountain, mining};

/// Where the recorded sessions are unless `--sessions` says otherwise.
pub const DEFAULT_SESSIONS_DIR: &str = "tests/fixtures/sessions";

/// What to run.
#[derive(Debug, Clone)]
pub struct MiningOptions {
    pub params: EngineParams,
    /// The `.spmd` files to mine (see [`session_files`]).
    pub sessions: Vec<PathBuf>,
    /// The directory they came from, for the report.
    pub sessions_dir: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum MiningBenchError {
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Point `--sessions` at a directory of recorded sessions.
    #[error("no recorded sessions (*.spmd) in {0}; point --sessions DIR at a directory of them")]
    NoSessions(PathBuf),
    #[error("cannot open the temporary memory store: {0}")]
    Memory(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

#[derive(Debug, Clone, Serialize)]
pub struct MiningReport {
    pub model: String,
    /// The GGUF file's name.
    pub model_file: String,
    pub model_bytes: u64,
    pub n_params: u64,
    /// Whether `/exit` mines with this model under the default `memory.mining.on_exit:
    /// auto` (at least `memory.mining.min_params` parameters); `/memory mine` always does.
    pub mined_at_exit_by_default: bool,
    pub n_ctx: u32,
    pub load_secs: f64,
    pub sessions_dir: String,
    pub sessions: Vec<SessionResult>,
    pub totals: Totals,
}

/// One recorded session's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct SessionResult {
    /// The record's file name.
    pub file: String,
    pub exchanges: usize,
    /// Transcript chunks the model was asked about.
    pub chunks: usize,
    /// Every proposal the model made: kept + dropped.
    pub proposals: usize,
    pub kept: Vec<KeptMemory>,
    pub dropped: Vec<DroppedMemory>,
    pub drops: DropCounts,
    /// The model's answer for each chunk, as generated.
    pub outputs: Vec<String>,
    pub secs: f64,
    /// Why mining failed (a cut-off or unparsable answer, an engine error).
    pub error: Option<String>,
}

/// A proposal that passed every check: what would be saved.
#[derive(Debug, Clone, Serialize)]
pub struct KeptMemory {
    #[serde(rename = "type")]
    pub mtype: String,
    pub kind: String,
    pub description: String,
    pub summary: String,
    /// The words of the session it quotes.
    pub evidence: String,
}

/// A proposal that was dropped, and why.
#[derive(Debug, Clone, Serialize)]
pub struct DroppedMemory {
    pub reason: &'static str,
    pub description: String,
}

/// Dropped proposals counted by reason, one field per [`DropReason`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DropCounts {
    pub not_grounded: usize,
    pub incomplete: usize,
    pub generic: usize,
    pub duplicate: usize,
    pub secret: usize,
}

impl DropCounts {
    pub fn of(drops: &Drops) -> Self {
        Self {
            not_grounded: drops.count(DropReason::NotGrounded),
            incomplete: drops.count(DropReason::Incomplete),
            generic: drops.count(DropReason::Generic),
            duplicate: drops.count(DropReason::Duplicate),
            secret: drops.count(DropReason::Secret),
        }
    }

    pub fn total(&self) -> usize {
        self.not_grounded + self.incomplete + self.generic + self.duplicate + self.secret
    }

    fn add(&mut self, other: &DropCounts) {
        self.not_grounded += other.not_grounded;
        self.incomplete += other.incomplete;
        self.generic += other.generic;
        self.duplicate += other.duplicate;
        self.secret += other.secret;
    }
}

/// The counts over all sessions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    pub sessions: usize,
    /// Sessions whose mining failed.
    pub errors: usize,
    pub exchanges: usize,
    pub proposals: usize,
    pub kept: usize,
    pub drops: DropCounts,
    pub secs: f64,
}

/// The `.spmd` files directly in `dir`, sorted by name (oldest record first).
pub fn session_files(dir: &Path) -> Result<Vec<PathBuf>, MiningBenchError> {
    let entries = std::fs::read_dir(dir).map_err(|source| MiningBenchError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "spmd"))
        .collect();
    if files.is_empty() {
        return Err(MiningBenchError::NoSessions(dir.to_path_buf()));
    }
    files.sort();
    Ok(files)
}

/// Loads the model once and mines every session.
pub fn run(opts: &MiningOptions) -> Result<MiningReport, MiningBenchError> {
    let started = Instant::now();
    let mut engine = LlamaEngine::load(&opts.params)?;
    let load_secs = started.elapsed().as_secs_f64();
    let sessions = mine_sessions(&mut engine, &opts.sessions)?;
    let info = engine.info();
    let min_params = crate::config::Config::default().memory.mining.min_params;
    Ok(MiningReport {
        model: info.name.clone(),
        model_file: file_name(&opts.params.model_path),
        model_bytes: info.file_bytes,
        n_params: info.n_params,
        mined_at_exit_by_default: info.n_params >= min_params,
        n_ctx: info.n_ctx,
        load_secs,
        sessions_dir: opts.sessions_dir.display().to_string(),
        totals: totals(&sessions),
        sessions,
    })
}

/// Mines each of `files` with `engine` in one fresh temporary workspace and store.
pub fn mine_sessions(
    engine: &mut dyn Engine,
    files: &[PathBuf],
) -> Result<Vec<SessionResult>, MiningBenchError> {
    let scratch = Scratch::create()?;
    let (store, _) = MemoryStore::open(&scratch.dir.join("agents"), &scratch.dir)?;
    Ok(files
        .iter()
        .map(|f| mine_session(engine, f, &scratch.dir, &store))
        .collect())
}

/// One record through `mine_report` and `screen`, as `/memory mine FILE` runs it.
fn mine_session(
    engine: &mut dyn Engine,
    path: &Path,
    workspace: &Path,
    store: &MemoryStore,
) -> SessionResult {
    let started = Instant::now();
    let mut result = SessionResult {
        file: file_name(path),
        exchanges: 0,
        chunks: 0,
        proposals: 0,
        kept: Vec::new(),
        dropped: Vec::new(),
        drops: DropCounts::default(),
        outputs: Vec::new(),
        secs: 0.0,
        error: None,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            result.error = Some(format!("{}: {e}", path.display()));
            return result;
        }
    };
    let exchanges: Vec<(String, String)> = fountain::parse(&text)
        .exchanges
        .iter()
        .map(|e| (e.user.clone(), e.reply.clone()))
        .collect();
    result.exchanges = exchanges.len();
    let texts = mining::workspace_texts(workspace, &exchanges);
    match mining::mine_report(engine, &exchanges, &texts, &AbortFlag::new()) {
        Ok(mut mined) => {
            mining::screen(store, &mut mined);
            fill(&mut result, &mined);
        }
        Err(e) => result.error = Some(e.to_string()),
    }
    result.secs = started.elapsed().as_secs_f64();
    result
}

fn fill(result: &mut SessionResult, mined: &mining::Mined) {
    result.chunks = mined.chunks;
    result.kept = mined
        .proposals
        .iter()
        .map(|p| KeptMemory {
            mtype: p.draft.mtype.clone(),
            kind: p.draft.kind.clone().unwrap_or_default(),
            description: p.draft.description.clone(),
            summary: p.draft.summary.clone(),
            evidence: p.evidence.clone(),
        })
        .collect();
    result.dropped = mined
        .rejected
        .iter()
        .map(|r| DroppedMemory {
            reason: r.reason.as_str(),
            description: r.description.clone(),
        })
        .collect();
    result.drops = DropCounts::of(&mined.drops());
    result.outputs = mined.outputs.clone();
    result.proposals = result.kept.len() + result.dropped.len();
}

/// The counts over `sessions`.
pub fn totals(sessions: &[SessionResult]) -> Totals {
    let mut t = Totals {
        sessions: sessions.len(),
        ..Totals::default()
    };
    for s in sessions {
        t.errors += usize::from(s.error.is_some());
        t.exchanges += s.exchanges;
        t.proposals += s.proposals;
        t.kept += s.kept.len();
        t.drops.add(&s.drops);
        t.secs += s.secs;
    }
    t
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The temporary workspace: removed when dropped.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn create() -> Result<Self, MiningBenchError> {
        static CREATED: AtomicUsize = AtomicUsize::new(0);
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("harvey-miningbench-{}-{n}", std::process::id()));
        let io = |source| MiningBenchError::Io {
            path: dir.clone(),
            source,
        };
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(io)?;
        let dir = dir.canonicalize().map_err(io)?;
        Ok(Self { dir })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_records_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let err = session_files(dir.path()).unwrap_err();
        assert!(matches!(err, MiningBenchError::NoSessions(_)), "{err}");
        assert!(err.to_string().contains("--sessions DIR"), "{err}");
        assert!(matches!(
            session_files(&dir.path().join("absent")),
            Err(MiningBenchError::Io { .. })
        ));
    }

    #[test]
    fn records_are_listed_by_name() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.spmd", "a.spmd", "c.txt"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let names: Vec<String> = session_files(dir.path())
            .unwrap()
            .iter()
            .map(|p| file_name(p))
            .collect();
        assert_eq!(names, ["a.spmd", "b.spmd"]);
    }

    #[test]
    fn totals_add_up_the_sessions() {
        let session = |kept: usize, not_grounded: usize, error: bool| SessionResult {
            file: "s.spmd".into(),
            exchanges: 2,
            chunks: 1,
            proposals: kept + not_grounded,
            kept: vec![
                KeptMemory {
                    mtype: "workflow".into(),
                    kind: "pattern".into(),
                    description: "d".into(),
                    summary: String::new(),
                    evidence: "e".into(),
                };
                kept
            ],
            dropped: Vec::new(),
            drops: DropCounts {
                not_grounded,
                ..DropCounts::default()
            },
            outputs: Vec::new(),
            secs: 1.5,
            error: error.then(|| "cut".to_string()),
        };
        let t = totals(&[session(1, 2, false), session(0, 1, true)]);
        assert_eq!((t.sessions, t.errors, t.exchanges), (2, 1, 4));
        assert_eq!((t.proposals, t.kept, t.drops.not_grounded), (4, 1, 3));
        assert_eq!((t.drops.total(), t.secs), (3, 3.0));
    }
}
