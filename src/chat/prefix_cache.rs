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
//! Every change of facts, profile or guidance makes a new key, so each save prunes the
//! same model's older states down to the newest `keep` (`engine.cache_prefix_keep`):
//! states are hundreds of megabytes and may sit on an SD card.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::{Engine, EngineError, Message, ModelInfo, Role};

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

/// The sidecar: the key plus the identity of the state file it vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Sidecar {
    key: PrefixKey,
    state_bytes: u64,
    state_sha256: String,
}

/// Version of the bundled llama.cpp binding, part of every key.
const ENGINE_VERSION: &str = "llama-cpp-2 0.1.160 / llama-cpp-sys-2 0.1.161";

/// What happened to the prefix at startup (shown by `/status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixOutcome {
    /// Loaded from the cache: these tokens were not prefilled.
    Restored { tokens: usize },
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
            PrefixOutcome::Saved { tokens, reason } => {
                format!("{tokens} tokens prefilled and saved ({reason})")
            }
            PrefixOutcome::NotSaved { tokens, reason } => {
                format!("{tokens} tokens prefilled, not saved: {reason}")
            }
            PrefixOutcome::Empty => "none".into(),
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
    let bytes: Vec<u8> = ids.iter().flat_map(|t| t.to_le_bytes()).collect();
    PrefixKey {
        model: info.fingerprint.clone(),
        n_ctx: info.n_ctx,
        kv_type: info.kv_type.clone(),
        template: info.template_fingerprint.clone(),
        n_tokens: ids.len(),
        tokens_hash: hash_hex(&bytes),
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
    paths_of(Held::Chat, dir, key)
}

/// `<dir>/<stem>-<hash of key>.{state,json}`.
fn paths_of(held: Held, dir: &Path, key: &PrefixKey) -> (PathBuf, PathBuf) {
    let stem = held.stem();
    let hash = match serde_json::to_vec(key) {
        Ok(bytes) => hash_hex(&bytes)[..16].to_string(),
        Err(_) => stem.into(),
    };
    (
        dir.join(format!("{stem}-{hash}.state")),
        dir.join(format!("{stem}-{hash}.json")),
    )
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
            let common = crate::engine::prompt::common_prefix(&a, &b);
            a[..common].to_vec()
        }
        _ => Vec::new(),
    }
}

/// Restores the prefix from `dir` when a matching state exists; otherwise prefills it
/// and saves it there, keeping the model's newest `keep` saved prefixes.
pub fn restore_or_save(
    engine: &mut dyn Engine,
    dir: &Path,
    ids: &[i32],
    keep: usize,
) -> PrefixOutcome {
    restore_or_save_held(Held::Chat, engine, dir, ids, keep)
}

/// [`restore_or_save`] for the prompt an aside call keeps (`Held::Aside`), in files of
/// their own (`aside-*`), pruned apart from the chat's.
pub fn restore_or_save_held(
    held: Held,
    engine: &mut dyn Engine,
    dir: &Path,
    ids: &[i32],
    keep: usize,
) -> PrefixOutcome {
    if ids.is_empty() {
        return PrefixOutcome::Empty;
    }
    let key = key(engine.info(), ids);
    let (state, sidecar) = paths_of(held, dir, &key);
    let reason = match try_restore(held, engine, &key, &state, &sidecar, ids) {
        Ok(()) => return PrefixOutcome::Restored { tokens: ids.len() },
        Err(reason) => reason,
    };
    if let Err(e) = held.warm(engine, ids) {
        return PrefixOutcome::NotSaved {
            tokens: 0,
            reason: e.to_string(),
        };
    }
    match save(held, engine, &key, dir, &state, &sidecar) {
        Ok(()) => {
            prune(held, dir, &key.model, &state, keep);
            PrefixOutcome::Saved {
                tokens: ids.len(),
                reason,
            }
        }
        Err(e) => PrefixOutcome::NotSaved {
            tokens: ids.len(),
            reason: e,
        },
    }
}

fn try_restore(
    held: Held,
    engine: &mut dyn Engine,
    key: &PrefixKey,
    state: &Path,
    sidecar: &Path,
    ids: &[i32],
) -> Result<(), String> {
    let text = std::fs::read_to_string(sidecar).map_err(|_| "no saved prefix yet".to_string())?;
    let saved: Sidecar =
        serde_json::from_str(&text).map_err(|e| format!("unreadable cache key: {e}"))?;
    if &saved.key != key {
        return Err("cache key mismatch".into());
    }
    let (bytes, sha) = file_identity(state).map_err(|e| format!("saved state unusable: {e}"))?;
    if bytes != saved.state_bytes || sha != saved.state_sha256 {
        return Err(
            "saved state unusable: the file changed since it was written (corrupt?)".into(),
        );
    }
    held.load(engine, state, ids)
        .map_err(|e| format!("saved state unusable: {e}"))
}

fn save(
    held: Held,
    engine: &dyn Engine,
    key: &PrefixKey,
    dir: &Path,
    state: &Path,
    sidecar: &Path,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // The sidecar goes last: a state without a matching key is never loaded.
    let _ = std::fs::remove_file(sidecar);
    let tmp = state.with_extension("state.tmp");
    let written = write_state(held, engine, key, &tmp, state, sidecar);
    if written.is_err() {
        // A full disk leaves no cut state, temporary file or empty key behind.
        for path in [&tmp, sidecar, state] {
            let _ = std::fs::remove_file(path);
        }
    }
    written
}

fn write_state(
    held: Held,
    engine: &dyn Engine,
    key: &PrefixKey,
    tmp: &Path,
    state: &Path,
    sidecar: &Path,
) -> Result<(), String> {
    held.save(engine, tmp).map_err(|e| e.to_string())?;
    std::fs::rename(tmp, state).map_err(|e| e.to_string())?;
    let (state_bytes, state_sha256) = file_identity(state).map_err(|e| e.to_string())?;
    let sidecar_value = Sidecar {
        key: key.clone(),
        state_bytes,
        state_sha256,
    };
    let json = serde_json::to_string_pretty(&sidecar_value).map_err(|e| e.to_string())?;
    crate::memory::file::write_atomic(sidecar, json.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", sidecar.display()))
}

/// Deletes `model`'s saved prefixes in `dir` beyond the newest `keep` (`just_saved`
/// always counts as the newest). Only pairs whose sidecar names `model` are touched: a
/// state without a sidecar may be another process's save in progress. A file that
/// cannot be deleted is left for the next save to try again.
fn prune(held: Held, dir: &Path, model: &str, just_saved: &Path, keep: usize) {
    let start = format!("{}-", held.stem());
    let mut saved: Vec<(std::time::SystemTime, PathBuf, PathBuf)> = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let sidecar = entry.path();
        let is_key = sidecar
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(&start) && n.ends_with(".json"));
        if !is_key || sidecar_model(&sidecar).as_deref() != Some(model) {
            continue;
        }
        let state = sidecar.with_extension("state");
        let at = std::fs::metadata(&state)
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        let at = if state == just_saved {
            std::time::SystemTime::now() + std::time::Duration::from_secs(1)
        } else {
            at
        };
        saved.push((at, state, sidecar));
    }
    saved.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    for (_, state, sidecar) in saved.into_iter().skip(keep.max(1)) {
        // The key first: a state without its key is never loaded.
        if let Err(e) = std::fs::remove_file(&sidecar).and_then(|()| std::fs::remove_file(&state)) {
            tracing::warn!("cannot prune the saved prefix {}: {e}", state.display());
        }
    }
}

/// The model fingerprint a sidecar vouches for (`None`: unreadable).
fn sidecar_model(sidecar: &Path) -> Option<String> {
    let text = std::fs::read_to_string(sidecar).ok()?;
    serde_json::from_str::<Sidecar>(&text)
        .ok()
        .map(|s| s.key.model)
}

/// Size and sha256 of a file, streamed.
fn file_identity(path: &Path) -> std::io::Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((total, hex))
}

fn hash_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

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
        let sidecar = Sidecar {
            key: theirs,
            state_bytes: 5,
            state_sha256: String::new(),
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
