//! The files of a saved prefix: a llama.cpp state and its sidecar (the key, the saved
//! token ids, and the state's size and sha256), written state first and sidecar last so
//! a state without a matching sidecar is never loaded.
//!
//! llama.cpp aborts the process on a truncated or corrupt state file, so every load is
//! preceded by the size + sha256 check against the sidecar. Saves go through a
//! temporary file named after the process, so two harvey processes saving the same key
//! (the shared head cache) never write into one file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Held, PrefixKey};
use crate::engine::Engine;

/// The sidecar: the key plus the identity of the state file it vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Sidecar {
    pub key: PrefixKey,
    pub state_bytes: u64,
    pub state_sha256: String,
    /// The saved token ids, so a later prompt that shares only their beginning can still
    /// restore that part. Empty in sidecars written before partial restores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<i32>,
}

/// A saved state another prompt may restore part of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Saved {
    pub state: PathBuf,
    pub sidecar: Sidecar,
}

/// `<dir>/<stem>-<hash of key>.{state,json}`.
pub(super) fn paths_of(stem: &str, dir: &Path, key: &PrefixKey) -> (PathBuf, PathBuf) {
    let hash = match serde_json::to_vec(key) {
        Ok(bytes) => hash_hex(&bytes)[..16].to_string(),
        Err(_) => stem.into(),
    };
    (
        dir.join(format!("{stem}-{hash}.state")),
        dir.join(format!("{stem}-{hash}.json")),
    )
}

/// Reads the sidecar at `sidecar`; `Err` says why it cannot vouch for anything.
pub(super) fn read_sidecar(sidecar: &Path) -> Result<Sidecar, String> {
    let text = std::fs::read_to_string(sidecar).map_err(|_| "no saved prefix yet".to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("unreadable cache key: {e}"))
}

/// Loads `state` into `engine` when `sidecar` holds exactly `key` and the file is the
/// one the sidecar vouches for.
pub(super) fn try_restore(
    held: Held,
    engine: &mut dyn Engine,
    key: &PrefixKey,
    state: &Path,
    sidecar: &Path,
    ids: &[i32],
) -> Result<(), String> {
    let saved = read_sidecar(sidecar)?;
    if &saved.key != key {
        return Err("cache key mismatch".into());
    }
    check_identity(state, &saved)?;
    held.load(engine, state, ids)
        .map_err(|e| format!("saved state unusable: {e}"))
}

/// Loads a saved state whose ids are only partly this prompt's (the caller keeps the
/// common part); the same checks as an exact restore.
pub(super) fn load_saved(engine: &mut dyn Engine, saved: &Saved) -> Result<(), String> {
    check_identity(&saved.state, &saved.sidecar)?;
    engine
        .load_state(&saved.state, &saved.sidecar.ids)
        .map_err(|e| format!("saved state unusable: {e}"))
}

/// Size and sha256 of `state` against what its sidecar recorded: llama.cpp must never
/// read a file that changed since it was written.
fn check_identity(state: &Path, saved: &Sidecar) -> Result<(), String> {
    let (bytes, sha) = file_identity(state).map_err(|e| format!("saved state unusable: {e}"))?;
    if bytes != saved.state_bytes || sha != saved.state_sha256 {
        return Err(
            "saved state unusable: the file changed since it was written (corrupt?)".into(),
        );
    }
    Ok(())
}

/// The saved states in `dir` named `<stem>-*` whose key differs from `key` only in its
/// tokens (same model, n_ctx, KV type, template and engine) and that list their ids.
pub(super) fn compatible_states(stem: &str, dir: &Path, key: &PrefixKey) -> Vec<Saved> {
    let start = format!("{stem}-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let sidecar = entry.path();
        let is_key = sidecar
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(&start) && n.ends_with(".json"));
        if !is_key {
            continue;
        }
        let Ok(saved) = read_sidecar(&sidecar) else {
            continue;
        };
        if same_setup(&saved.key, key) && ids_match_key(&saved) {
            found.push(Saved {
                state: sidecar.with_extension("state"),
                sidecar: saved,
            });
        }
    }
    found
}

/// Whether two keys agree on everything but the tokens.
pub(super) fn same_setup(a: &PrefixKey, b: &PrefixKey) -> bool {
    a.model == b.model
        && a.n_ctx == b.n_ctx
        && a.kv_type == b.kv_type
        && a.template == b.template
        && a.engine == b.engine
}

/// The sidecar's ids are the ones its key hashes (an edited list is not trusted).
fn ids_match_key(saved: &Sidecar) -> bool {
    !saved.ids.is_empty()
        && saved.ids.len() == saved.key.n_tokens
        && tokens_hash(&saved.ids) == saved.key.tokens_hash
}

pub(super) fn tokens_hash(ids: &[i32]) -> String {
    let bytes: Vec<u8> = ids.iter().flat_map(|t| t.to_le_bytes()).collect();
    hash_hex(&bytes)
}

/// Saves the engine's `held` cache as `state` + `sidecar` in `dir`, vouching for `ids`.
pub(super) fn save(
    held: Held,
    engine: &dyn Engine,
    key: &PrefixKey,
    ids: &[i32],
    dir: &Path,
    (state, sidecar): (&Path, &Path),
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // The sidecar goes last: a state without a matching key is never loaded.
    let _ = std::fs::remove_file(sidecar);
    let tmp = state.with_extension(format!("state.{}.tmp", std::process::id()));
    let written = write_state(held, engine, key, ids, &tmp, (state, sidecar));
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
    ids: &[i32],
    tmp: &Path,
    (state, sidecar): (&Path, &Path),
) -> Result<(), String> {
    held.save(engine, tmp).map_err(|e| e.to_string())?;
    std::fs::rename(tmp, state).map_err(|e| e.to_string())?;
    let (state_bytes, state_sha256) = file_identity(state).map_err(|e| e.to_string())?;
    let sidecar_value = Sidecar {
        key: key.clone(),
        state_bytes,
        state_sha256,
        // Only the chat's states are restored in part; the router's stay exact.
        ids: if held == Held::Chat {
            ids.to_vec()
        } else {
            Vec::new()
        },
    };
    let json = serde_json::to_string_pretty(&sidecar_value).map_err(|e| e.to_string())?;
    crate::memory::file::write_atomic(sidecar, json.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", sidecar.display()))
}

/// Deletes `model`'s saved `<stem>-*` states in `dir` beyond the newest `keep`
/// (`just_saved` always counts as the newest). Only pairs whose sidecar names `model` are
/// touched: a state without a sidecar may be another process's save in progress. A file
/// that cannot be deleted is left for the next save to try again.
pub(super) fn prune(stem: &str, dir: &Path, model: &str, just_saved: &Path, keep: usize) {
    let start = format!("{stem}-");
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
    read_sidecar(sidecar).ok().map(|s| s.key.model)
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

pub(super) fn hash_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
