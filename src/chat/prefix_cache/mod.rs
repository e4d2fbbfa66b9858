//! Saving the stable prompt prefix (system prompt + the query-independent part of the
//! memory context) as a llama.cpp state file under `agents/cache/`, and restoring it at
//! the next start instead of prefilling it again.
//!
//! A state file records only the architecture, not the model, so each one has a sidecar
//! key (model fingerprint, n_ctx, KV type, template, exact prefix tokens, engine version)
//! that must match before the state is loaded. llama.cpp aborts the process on a
//! truncated or corrupt state file (`GGML_ASSERT(nread <= state_size)`), so the sidecar
//! also records the state file's size and sha256, checked before llama.cpp reads it.
//! Any mismatch or failure means a normal prefill and a fresh file — never a crash. The
//! cache is safe to delete.
//!
//! A memory change (mining, `memory_write`, `harvey memory add`) changes the prefix's
//! tail, not its head: when the exact key misses, the saved state of the same setup whose
//! ids share the longest beginning with the new ones is loaded and only the rest is
//! prefilled (see [`restore_or_save_in`]). The system prompt's workspace-independent head
//! (persona, tools, examples) is also kept once per model outside any workspace
//! ([`shared`]), so a new workspace's first start prefills only what is its own.
//!
//! Every change of facts, profile or guidance makes a new key, so each save prunes the
//! same model's older states down to the newest `keep` (`engine.cache_prefix_keep`):
//! states are hundreds of megabytes and may sit on an SD card.

mod files;
mod restore;
pub mod shared;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::prompt::common_prefix;
use crate::engine::{Engine, EngineError, Message, ModelInfo, Role};

pub use restore::{restore_or_save_in, Places, SharedHead, PARTIAL_FLOOR};

/// Everything a saved state must agree on before it may be loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrefixKey {
    pub model: String,
    pub n_ctx: u32,
    pub kv_type: String,
    pub template: String,
    pub n_tokens: usize,
    pub tokens_hash: String,
    /// The llama.cpp binding version: state layouts may change between versions.
    pub engine: String,
}

/// Version of the bundled llama.cpp binding, part of every key.
const ENGINE_VERSION: &str = "llama-cpp-2 0.1.160 / llama-cpp-sys-2 0.1.161";

/// Where a partly restored prefix came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An earlier state of this workspace (`agents/cache/`).
    Workspace,
    /// The shared head cache (outside the workspace; see [`shared`]).
    Shared,
}

impl Source {
    fn describe(self) -> &'static str {
        match self {
            Source::Workspace => "agents/cache",
            Source::Shared => "the shared head cache",
        }
    }
}

/// What happened to the prefix at startup (shown by `/status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixOutcome {
    /// Loaded from the cache: these tokens were not prefilled.
    Restored { tokens: usize },
    /// The beginning (`restored` tokens) came from a saved state of another prefix, the
    /// rest (`prefilled`) was evaluated; the whole prefix was then saved.
    Partial {
        restored: usize,
        prefilled: usize,
        from: Source,
    },
    /// Prefilled and saved for next time (`reason` says why the cache was not used).
    Saved { tokens: usize, reason: String },
    /// Prefilled but not saved (the cache directory is not writable, …).
    NotSaved { tokens: usize, reason: String },
    /// Nothing to cache.
    Empty,
}

impl PrefixOutcome {
    pub fn describe(&self) -> String {
        match self {
            PrefixOutcome::Restored { tokens } => {
                format!("{tokens} tokens restored from agents/cache")
            }
            PrefixOutcome::Partial {
                restored,
                prefilled,
                from,
            } => format!(
                "{restored} tokens restored from {}, {prefilled} prefilled and saved",
                from.describe()
            ),
            PrefixOutcome::Saved { tokens, reason } => {
                format!("{tokens} tokens prefilled and saved ({reason})")
            }
            PrefixOutcome::NotSaved { tokens, reason } => {
                format!("{tokens} tokens prefilled, not saved: {reason}")
            }
            PrefixOutcome::Empty => "none".into(),
        }
    }

    /// Tokens that were not prefilled because a saved state held them.
    pub fn restored_tokens(&self) -> usize {
        match self {
            PrefixOutcome::Restored { tokens } => *tokens,
            PrefixOutcome::Partial { restored, .. } => *restored,
            _ => 0,
        }
    }

    /// Tokens evaluated at startup to make the prefix ready.
    pub fn prefilled_tokens(&self) -> usize {
        match self {
            PrefixOutcome::Partial { prefilled, .. } => *prefilled,
            PrefixOutcome::Saved { tokens, .. } | PrefixOutcome::NotSaved { tokens, .. } => *tokens,
            _ => 0,
        }
    }

    /// What to tell the user when the prefix could not be saved in `dir` (it cannot be
    /// written): every start then prefills it again, and the router's instructions, kept
    /// in the same place, too. `None` when it was saved or restored.
    pub fn unsaved_note(&self, dir: &Path) -> Option<String> {
        match self {
            PrefixOutcome::NotSaved { tokens, reason } => Some(format!(
                "the prompt prefix ({tokens} tokens) was not saved in {}: {reason}; every \
                 start prefills it again until that directory can be written (or set \
                 engine.cache_prefix: false)",
                dir.display()
            )),
            _ => None,
        }
    }
}

pub fn key(info: &ModelInfo, ids: &[i32]) -> PrefixKey {
    PrefixKey {
        model: info.fingerprint.clone(),
        n_ctx: info.n_ctx,
        kv_type: info.kv_type.clone(),
        template: info.template_fingerprint.clone(),
        n_tokens: ids.len(),
        tokens_hash: files::tokens_hash(ids),
        engine: ENGINE_VERSION.into(),
    }
}

/// Which sequence a saved state fills: the chat's prompt prefix, or the prompt an aside
/// call keeps in the chat context's free cells (the router's instructions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Chat,
    Aside,
}

impl Held {
    /// The start of its files' names; each kind is pruned on its own.
    fn stem(self) -> &'static str {
        match self {
            Held::Chat => "prefix",
            Held::Aside => "aside",
        }
    }

    fn warm(self, engine: &mut dyn Engine, ids: &[i32]) -> Result<usize, EngineError> {
        match self {
            Held::Chat => engine.warm_prefix(ids),
            Held::Aside => engine.keep_aside_prefix(ids),
        }
    }

    fn save(self, engine: &dyn Engine, path: &Path) -> Result<usize, EngineError> {
        match self {
            Held::Chat => engine.save_state(path),
            Held::Aside => engine.save_aside_state(path),
        }
    }

    fn load(self, engine: &mut dyn Engine, path: &Path, ids: &[i32]) -> Result<(), EngineError> {
        match self {
            Held::Chat => engine.load_state(path, ids),
            Held::Aside => engine.load_aside_state(path, ids),
        }
    }
}

/// `<dir>/prefix-<hash of key>.{state,json}`.
pub fn paths(dir: &Path, key: &PrefixKey) -> (PathBuf, PathBuf) {
    files::paths_of(Held::Chat.stem(), dir, key)
}

/// `<dir>/head-<hash of key>.{state,json}`: a shared head state (see [`shared`]).
pub fn head_paths(dir: &Path, key: &PrefixKey) -> (PathBuf, PathBuf) {
    files::paths_of(shared::STEM, dir, key)
}

/// Token ids of the stable prefix: the part of the rendered prompt that is the same
/// whatever the first user message turns out to be.
pub fn stable_prefix_ids(engine: &dyn Engine, system: &str, stable_context: &str) -> Vec<i32> {
    let mut conversation = super::Conversation::new(system);
    conversation.set_context_as_system(engine.info().template_system_turns);
    stable_prefix_ids_in(engine, &conversation, stable_context)
}

/// [`stable_prefix_ids`] for the system prompt and memory-block framing of `conversation`.
pub fn stable_prefix_ids_in(
    engine: &dyn Engine,
    conversation: &super::Conversation,
    stable_context: &str,
) -> Vec<i32> {
    let probe = |tail: &str| {
        let first = format!("{stable_context}{tail}");
        engine.prompt_ids(&[
            Message::new(Role::System, conversation.system()),
            conversation.context_message(&first),
        ])
    };
    match (probe("\u{2}alpha"), probe("\u{3}omega")) {
        (Ok(a), Ok(b)) => {
            let common = common_prefix(&a, &b);
            a[..common].to_vec()
        }
        _ => Vec::new(),
    }
}

/// Token ids of the system prompt's workspace-independent `head` (the system prompt
/// without the project's guidance): what the system turn begins with whatever follows
/// the head, cut to a prefix of the head's own render. Only these ids may be saved to
/// the shared cache: they come from harvey's own text and the template, never from a
/// workspace. Empty when the template cannot render a system turn alone.
pub fn head_ids(engine: &dyn Engine, head: &str) -> Vec<i32> {
    let render = |text: String| engine.prompt_ids(&[Message::new(Role::System, text)]);
    let probes = (
        render(format!("{head}\n\u{2}alpha")),
        render(format!("{head}\n\u{3}omega")),
        render(head.to_string()),
    );
    match probes {
        (Ok(a), Ok(b), Ok(own)) => {
            let common = common_prefix(&a, &b).min(common_prefix(&a, &own));
            a[..common].to_vec()
        }
        _ => Vec::new(),
    }
}

pub use restore::{restore_or_save, restore_or_save_held};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::scripted::ScriptedEngine;

    #[test]
    fn stable_prefix_stops_where_the_first_message_begins() {
        let engine = ScriptedEngine::new(4096, Vec::<String>::new());
        let ids = stable_prefix_ids(&engine, "be brief", "[memory context] facts here ");
        // "<system> be brief </system> <user> [memory context] facts here" = 9 words.
        assert_eq!(ids.len(), 9);
    }

    #[test]
    fn save_then_restore_then_mismatch_then_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = ScriptedEngine::new(4096, Vec::<String>::new());
        let ids = stable_prefix_ids(&engine, "sys", "stable ");
        let first = restore_or_save(&mut engine, dir.path(), &ids, 3);
        assert!(matches!(first, PrefixOutcome::Saved { .. }), "{first:?}");

        let mut fresh = ScriptedEngine::new(4096, Vec::<String>::new());
        assert_eq!(
            restore_or_save(&mut fresh, dir.path(), &ids, 3),
            PrefixOutcome::Restored { tokens: ids.len() }
        );
        assert_eq!(fresh.cached_tokens(), ids.len());

        // A different prefix has a different key: prefilled and saved beside it.
        let other = stable_prefix_ids(&fresh, "sys", "changed ");
        assert!(matches!(
            restore_or_save(&mut fresh, dir.path(), &other, 3),
            PrefixOutcome::Saved { .. }
        ));

        // A corrupt state file falls back to prefill and is replaced.
        let (state, _) = paths(dir.path(), &key(fresh.info(), &ids));
        std::fs::write(&state, b"garbage").unwrap();
        let mut third = ScriptedEngine::new(4096, Vec::<String>::new());
        match restore_or_save(&mut third, dir.path(), &ids, 3) {
            PrefixOutcome::Saved { reason, .. } => assert!(reason.contains("unusable"), "{reason}"),
            other => panic!("{other:?}"),
        }
        let mut fourth = ScriptedEngine::new(4096, Vec::<String>::new());
        assert!(matches!(
            restore_or_save(&mut fourth, dir.path(), &ids, 3),
            PrefixOutcome::Restored { .. }
        ));
    }

    #[test]
    fn each_save_keeps_the_newest_few_per_model() {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = ScriptedEngine::new(4096, Vec::<String>::new());
        // Another model's saved prefix is not this model's to prune.
        let mut theirs = key(engine.info(), &[1, 2, 3]);
        theirs.model = "another model".into();
        let (their_state, their_key) = paths(dir.path(), &theirs);
        std::fs::write(&their_state, b"state").unwrap();
        let sidecar = files::Sidecar {
            key: theirs,
            state_bytes: 5,
            state_sha256: String::new(),
            ids: Vec::new(),
        };
        std::fs::write(&their_key, serde_json::to_string(&sidecar).unwrap()).unwrap();
        let mut saved = Vec::new();
        for fact in ["one", "two", "three", "four", "five"] {
            let ids = stable_prefix_ids(&engine, "sys", &format!("facts {fact} "));
            let outcome = restore_or_save(&mut engine, dir.path(), &ids, 2);
            assert!(
                matches!(outcome, PrefixOutcome::Saved { .. }),
                "{outcome:?}"
            );
            saved.push(paths(dir.path(), &key(engine.info(), &ids)));
            // Coarse mtimes must still show the order of the saves.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let exists = |(state, key): &(PathBuf, PathBuf)| state.exists() || key.exists();
        let kept: Vec<bool> = saved.iter().map(exists).collect();
        assert_eq!(
            kept,
            [false, false, false, true, true],
            "only the two newest stay"
        );
        assert!(
            their_state.exists() && their_key.exists(),
            "another model's stays"
        );
        // The newest still restores.
        let ids = stable_prefix_ids(&engine, "sys", "facts five ");
        let mut fresh = ScriptedEngine::new(4096, Vec::<String>::new());
        let outcome = restore_or_save(&mut fresh, dir.path(), &ids, 2);
        assert_eq!(outcome, PrefixOutcome::Restored { tokens: ids.len() });
    }
}
