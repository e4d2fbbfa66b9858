//! Opening what a session reads from: the memory store and the sentence embedder
//! (loaded once per process and shared).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::engine::embed::ArrivingEmbedder;
use crate::kb::KnowledgeBase;
use crate::memory::{MemoryStore, Reconciled, StoreError};
use crate::rag::RagStore;
use crate::session::SessionIndex;
use crate::tokens::Embedder;

use super::engine_params;

/// Opens the workspace's memory store; problems become notices, never a failed start.
/// The embedder loads beside it (see [`open_memory_and_embedder`]).
fn open_memory(
    config: &Config,
    workspace: &Path,
    notices: &mut Vec<String>,
) -> (Option<MemoryStore>, Option<Arc<dyn Embedder>>) {
    let (opened, arriving, note) = open_memory_and_embedder(config, workspace);
    notices.extend(note);
    // The app's chat model loads for longer than the embedder: waiting here costs nothing
    // and keeps an embedder llama.cpp refused out of every store.
    let (embedder, refused) = arriving.map(once_loaded).unwrap_or_default();
    notices.extend(refused);
    tracing::debug!("phase: embedder loaded");
    let store = match opened {
        Ok((mut store, report)) => {
            notices.extend(report.warnings.iter().map(|w| format!("memory: {w}")));
            if let Some(e) = embedder.clone() {
                if let Err(e) = store.set_embedder(e) {
                    notices.push(format!("memory: {e}"));
                }
            }
            Some(store)
        }
        Err(e) => {
            notices.push(format!("memory is off for this session: {e}"));
            None
        }
    };
    (store, embedder)
}

/// The memory store as it opened, with what the reconcile found.
pub type OpenedMemory = Result<(MemoryStore, Reconciled), StoreError>;

/// The sentence embedder, or none, with a one-line note for the user.
pub type LoadedEmbedder = (Option<Arc<dyn Embedder>>, Option<String>);

/// The memory store, opened and reconciled with its files, and the sentence embedder
/// (with [`open_embedder`]'s note). The embedder is identified here and loads on a thread
/// of its own ([`ArrivingEmbedder`]): its load (≈ 50 ms here) takes longer than the
/// store's open at 10k memories (≈ 30 ms), and what the caller opens next runs beside it
/// too; the first embedding waits for it.
pub fn open_memory_and_embedder(
    config: &Config,
    workspace: &Path,
) -> (OpenedMemory, Option<Arc<ArrivingEmbedder>>, Option<String>) {
    let (embedder, note) = arriving_embedder(config, workspace);
    let opened = MemoryStore::open(&workspace.join("agents"), workspace);
    tracing::debug!("phase: memory store open (reconciled)");
    (opened, embedder, note)
}

/// Embedders started in this process, by file: every store, tool and command shares one.
static EMBEDDERS: std::sync::Mutex<Vec<Arc<ArrivingEmbedder>>> = std::sync::Mutex::new(Vec::new());

/// The sentence embedder `memory.embedder` names (`auto`: the default file in the model
/// directories), started once per process (it loads on a thread of its own). `None`
/// comes with a one-line reason, except for `none`, which is a choice and not a problem.
///
/// It waits for the model (callers use it at once, or open after the session's stores,
/// which waited already), so one llama.cpp refuses is a note and no embedder, as a
/// missing file is. [`open_memory_and_embedder`] does not wait.
pub fn open_embedder(config: &Config, workspace: &Path) -> LoadedEmbedder {
    match arriving_embedder(config, workspace) {
        (Some(e), _) => once_loaded(e),
        (None, note) => (None, note),
    }
}

/// The embedder once its load ended: none, with a note, when llama.cpp refused it.
fn once_loaded(embedder: Arc<ArrivingEmbedder>) -> LoadedEmbedder {
    let refused = embedder
        .wait()
        .err()
        .map(|why| format!("the embedder did not load ({why}); recall uses full-text search only"));
    match refused {
        Some(note) => (None, Some(note)),
        None => (Some(embedder as Arc<dyn Embedder>), None),
    }
}

fn arriving_embedder(
    config: &Config,
    workspace: &Path,
) -> (Option<Arc<ArrivingEmbedder>>, Option<String>) {
    let path = match embedder_path(config, workspace) {
        Ok(Some(p)) => p,
        Ok(None) => return (None, None),
        Err(reason) => return (None, Some(reason)),
    };
    let mut started = EMBEDDERS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = started.iter().find(|e| e.path() == path) {
        return (Some(e.clone()), None);
    }
    let threads = engine_params(config, path.clone()).threads;
    match ArrivingEmbedder::start(&path, threads) {
        Ok(e) => {
            started.push(e.clone());
            (Some(e), None)
        }
        Err(e) => (
            None,
            Some(format!("{e}; recall uses full-text search only")),
        ),
    }
}

/// Waits for every embedder still loading: llama.cpp must not be torn down at exit while
/// a load runs on another thread. `main` calls it before returning.
pub fn settle_embedders() {
    let started = EMBEDDERS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for e in started {
        let _ = e.wait();
    }
}

/// What the app opens beside the engine; each is `None` (with a notice) when it cannot be
/// opened, and all are off when `memory.enabled` is false.
pub(super) struct Stores {
    pub memory: Option<MemoryStore>,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub kb: Option<KnowledgeBase>,
    pub rag: Vec<RagStore>,
    pub rag_enabled: bool,
    pub sessions: Option<SessionIndex>,
    /// What could not be opened, or was found wrong, for the banner.
    pub notices: Vec<String>,
}

/// Opens the stores; while `waiting()` says the caller still waits for something else
/// (the app: its chat model), the vector copies are mapped and checked too, work the first
/// recall would otherwise do.
pub(super) fn open_stores(config: &Config, workspace: &Path, waiting: impl Fn() -> bool) -> Stores {
    let mut notices = Vec::new();
    let (mut memory, embedder) = if config.memory.enabled {
        open_memory(config, workspace, &mut notices)
    } else {
        (None, None)
    };
    if let Some(store) = memory.as_mut() {
        match crate::onboarding::save_manifest_facts(store, workspace) {
            Ok(ids) if !ids.is_empty() => notices.push(format!(
                "memory: saved {} project fact(s) from the workspace's manifests ({})",
                ids.len(),
                ids.join(", ")
            )),
            Ok(_) => {}
            Err(e) => notices.push(format!("memory: cannot save manifest facts: {e}")),
        }
    }
    let agents = workspace.join("agents");
    let kb = if config.memory.enabled {
        let project =
            crate::kb::default_project(config.memory.knowledge_base.project.as_deref(), workspace);
        match KnowledgeBase::open(&agents, &project, embedder.clone()) {
            Ok(kb) => {
                if kb.is_foreign() {
                    notices.push(crate::kb::FOREIGN_NOTE.into());
                }
                Some(kb)
            }
            Err(e) => {
                notices.push(format!("knowledge base unavailable: {e}"));
                None
            }
        }
    } else {
        None
    };
    let (rag, rag_enabled) = if config.memory.enabled {
        let (stores, enabled, notes) =
            crate::rag::open_active(&agents, &config.memory.rag, embedder.as_ref());
        notices.extend(notes);
        (stores, enabled)
    } else {
        (Vec::new(), false)
    };
    let sessions = match SessionIndex::open(&agents) {
        Ok(index) => {
            let _ = index.reconcile();
            Some(index)
        }
        Err(e) => {
            notices.push(format!("sessions index unavailable: {e}"));
            None
        }
    };
    if waiting() {
        // The first recall (at the first message) then only scores the vectors.
        let warmed = memory.as_ref().is_some_and(MemoryStore::warm_vectors) as usize
            + kb.as_ref().is_some_and(KnowledgeBase::warm) as usize
            + rag.iter().filter(|r| r.warm()).count();
        tracing::debug!("phase: {warmed} vector copies warmed");
    }
    Stores {
        memory,
        embedder,
        kb,
        rag,
        rag_enabled,
        sessions,
        notices,
    }
}

/// The file `memory.embedder` names (`auto`: the default file in the model directories);
/// `None` for `none`, an error with a one-line reason when the file is not there.
pub fn embedder_path(config: &Config, workspace: &Path) -> Result<Option<PathBuf>, String> {
    use crate::config::Embedder as Choice;
    use crate::engine::embed::DEFAULT_EMBEDDER_FILE;
    match &config.memory.embedder {
        Choice::None => Ok(None),
        Choice::Path(p) => {
            let p = workspace.join(p);
            if p.is_file() {
                Ok(Some(p))
            } else {
                Err(format!(
                    "memory.embedder {} does not exist; recall uses full-text search only",
                    p.display()
                ))
            }
        }
        Choice::Auto => crate::model::find::search_dirs(&config.model.models_dir, workspace)
            .iter()
            .map(|d| d.join(DEFAULT_EMBEDDER_FILE))
            .find(|p| p.is_file())
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "no embedding model ({DEFAULT_EMBEDDER_FILE}; scripts/fetch-embedder.sh makes it): recall uses full-text search only"
                )
            }),
    }
}
