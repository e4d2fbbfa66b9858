//! The start of a session: restore the prefix exactly, else the longest saved beginning
//! of it (an earlier state of this workspace or the shared head), prefill the rest, save.
//!
//! Order of the steps, and why: the exact key first (nothing to prefill); else every
//! compatible state is ranked by how many leading ids it shares with the new prefix, and
//! the best one that passes the file checks is loaded — `warm_prefix` then keeps that
//! common part and evaluates only the tail. When the shared head is missing and nothing
//! longer was restored, the head alone is warmed and saved to the shared directory first
//! (the cache then holds exactly the head's ids, nothing of the workspace), then the rest.

use std::path::Path;

use super::files::{self, Saved};
use super::{key, shared, Held, PrefixOutcome, Source};
use crate::engine::prompt::common_prefix;
use crate::engine::Engine;

/// A saved beginning shorter than this is not worth loading (loading and hashing a state
/// costs more than prefilling a few dozen tokens).
pub const PARTIAL_FLOOR: usize = 32;

/// Where a chat prefix is restored from and saved to.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    /// The workspace's `agents/cache/`.
    pub dir: &'a Path,
    /// Saved prefixes kept per model (`engine.cache_prefix_keep`).
    pub keep: usize,
    /// The shared head cache, when on (`engine.cache_shared`).
    pub shared: Option<SharedHead<'a>>,
}

/// The shared head cache's directory and the head's ids (see [`super::head_ids`]).
#[derive(Debug, Clone, Copy)]
pub struct SharedHead<'a> {
    pub dir: &'a Path,
    pub ids: &'a [i32],
}

/// Restores the prefix from `dir` when a matching state exists; otherwise restores the
/// longest saved beginning of it there, prefills the rest and saves it, keeping the
/// model's newest `keep` saved prefixes.
pub fn restore_or_save(
    engine: &mut dyn Engine,
    dir: &Path,
    ids: &[i32],
    keep: usize,
) -> PrefixOutcome {
    let places = Places {
        dir,
        keep,
        shared: None,
    };
    restore_or_save_in(engine, ids, &places)
}

/// [`restore_or_save`] for the prompt an aside call keeps (`Held::Aside`), in files of
/// their own (`aside-*`), pruned apart from the chat's; those are restored only whole.
pub fn restore_or_save_held(
    held: Held,
    engine: &mut dyn Engine,
    dir: &Path,
    ids: &[i32],
    keep: usize,
) -> PrefixOutcome {
    if held == Held::Chat {
        return restore_or_save(engine, dir, ids, keep);
    }
    if ids.is_empty() {
        return PrefixOutcome::Empty;
    }
    let key = key(engine.info(), ids);
    let (state, sidecar) = files::paths_of(held.stem(), dir, &key);
    let reason = match files::try_restore(held, engine, &key, &state, &sidecar, ids) {
        Ok(()) => return PrefixOutcome::Restored { tokens: ids.len() },
        Err(reason) => reason,
    };
    if let Err(e) = held.warm(engine, ids) {
        return PrefixOutcome::NotSaved {
            tokens: 0,
            reason: e.to_string(),
        };
    }
    match files::save(held, engine, &key, ids, dir, (&state, &sidecar)) {
        Ok(()) => {
            files::prune(held.stem(), dir, &key.model, &state, keep);
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

/// The chat prefix `ids` made ready: exactly restored, or the best saved beginning
/// restored and the rest prefilled, or all prefilled; then saved in `places.dir` (and
/// the head in the shared directory when it was missing there).
pub fn restore_or_save_in(
    engine: &mut dyn Engine,
    ids: &[i32],
    places: &Places<'_>,
) -> PrefixOutcome {
    if ids.is_empty() {
        return PrefixOutcome::Empty;
    }
    let key = key(engine.info(), ids);
    let (state, sidecar) = files::paths_of(Held::Chat.stem(), places.dir, &key);
    let mut reason = match files::try_restore(Held::Chat, engine, &key, &state, &sidecar, ids) {
        Ok(()) => return PrefixOutcome::Restored { tokens: ids.len() },
        Err(reason) => reason,
    };
    let head = places.shared.filter(|h| is_usable_head(h.ids, ids));
    let start = restore_best(engine, ids, places.dir, head.as_ref());
    let mut prefilled = 0;
    if let Some(head) =
        head.filter(|h| start.from != Some(Source::Shared) && start.restored <= h.ids.len())
    {
        match engine.warm_prefix(head.ids) {
            Ok(n) => prefilled += n,
            Err(e) => return not_prefilled(e),
        }
        match save_head(engine, &head, places.keep) {
            Ok(()) => reason.push_str(&format!(
                "; the {}-token head saved to the shared cache",
                head.ids.len()
            )),
            Err(e) => tracing::warn!("the shared head was not saved: {e}"),
        }
    }
    match engine.warm_prefix(ids) {
        Ok(n) => prefilled += n,
        Err(e) => return not_prefilled(e),
    }
    if let Err(e) = files::save(
        Held::Chat,
        engine,
        &key,
        ids,
        places.dir,
        (&state, &sidecar),
    ) {
        return PrefixOutcome::NotSaved {
            tokens: prefilled,
            reason: e,
        };
    }
    files::prune(
        Held::Chat.stem(),
        places.dir,
        &key.model,
        &state,
        places.keep,
    );
    match start.from {
        Some(from) => PrefixOutcome::Partial {
            restored: ids.len().saturating_sub(prefilled),
            prefilled,
            from,
        },
        None => PrefixOutcome::Saved {
            tokens: ids.len(),
            reason,
        },
    }
}

fn not_prefilled(e: crate::engine::EngineError) -> PrefixOutcome {
    PrefixOutcome::NotSaved {
        tokens: 0,
        reason: e.to_string(),
    }
}

/// A head worth sharing: long enough, and the very beginning of this prefix (a template
/// that renders the system turn otherwise gets no shared state).
fn is_usable_head(head: &[i32], ids: &[i32]) -> bool {
    head.len() >= PARTIAL_FLOOR && common_prefix(head, ids) == head.len()
}

/// What was restored before prefilling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Start {
    restored: usize,
    from: Option<Source>,
}

/// Loads the compatible saved state sharing the most leading ids with `ids` (at least
/// [`PARTIAL_FLOOR`]); one that fails its checks gives way to the next.
fn restore_best(
    engine: &mut dyn Engine,
    ids: &[i32],
    dir: &Path,
    head: Option<&SharedHead<'_>>,
) -> Start {
    let key = key(engine.info(), ids);
    let mut candidates: Vec<(usize, Source, Saved)> =
        files::compatible_states(Held::Chat.stem(), dir, &key)
            .into_iter()
            .map(|s| (common_prefix(&s.sidecar.ids, ids), Source::Workspace, s))
            .collect();
    if let Some(saved) = head.and_then(|h| saved_head(engine, h)) {
        candidates.push((saved.sidecar.ids.len(), Source::Shared, saved));
    }
    for (common, from, saved) in rank(candidates) {
        match files::load_saved(engine, &saved) {
            Ok(()) => {
                return Start {
                    restored: common,
                    from: Some(from),
                }
            }
            Err(e) => tracing::debug!("{}: {e}", saved.state.display()),
        }
    }
    Start::default()
}

/// Candidates worth loading, best first: the longest common prefix, and on a tie the
/// shared head (loading it confirms it is intact, so it is not saved again).
fn rank<T>(mut candidates: Vec<(usize, Source, T)>) -> Vec<(usize, Source, T)> {
    candidates.retain(|(common, _, _)| *common >= PARTIAL_FLOOR);
    candidates
        .sort_by_key(|(common, from, _)| (std::cmp::Reverse(*common), *from != Source::Shared));
    candidates
}

/// The shared head's saved state for this model and head, when its sidecar vouches for
/// exactly these ids.
fn saved_head(engine: &dyn Engine, head: &SharedHead<'_>) -> Option<Saved> {
    let key = key(engine.info(), head.ids);
    let (state, sidecar) = files::paths_of(shared::STEM, head.dir, &key);
    let saved = files::read_sidecar(&sidecar).ok()?;
    (saved.key == key && saved.ids == head.ids).then_some(Saved {
        state,
        sidecar: saved,
    })
}

/// Saves the engine's chat cache as the shared head. The cache must hold exactly the
/// head's ids: nothing that follows them (the guidance, the memory context) may leave
/// the workspace.
fn save_head(engine: &dyn Engine, head: &SharedHead<'_>, keep: usize) -> Result<(), String> {
    if engine.cached_tokens() != head.ids.len() {
        return Err(format!(
            "the cache holds {} tokens, not the {}-token head",
            engine.cached_tokens(),
            head.ids.len()
        ));
    }
    let key = key(engine.info(), head.ids);
    let (state, sidecar) = files::paths_of(shared::STEM, head.dir, &key);
    files::save(
        Held::Chat,
        engine,
        &key,
        head.ids,
        head.dir,
        (&state, &sidecar),
    )?;
    files::prune(shared::STEM, head.dir, &key.model, &state, keep);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_prefers_the_longest_then_the_shared_head_and_drops_short_ones() {
        let w = Source::Workspace;
        let s = Source::Shared;
        type Case = (Vec<(usize, Source, u8)>, Vec<u8>);
        let cases: [Case; 4] = [
            (vec![(40, w, 1), (900, w, 2), (700, s, 3)], vec![2, 3, 1]),
            (vec![(700, w, 1), (700, s, 2)], vec![2, 1]),
            (vec![(31, w, 1), (0, s, 2)], vec![]),
            (vec![(32, w, 1)], vec![1]),
        ];
        for (input, want) in cases {
            let got: Vec<u8> = rank(input.clone()).into_iter().map(|c| c.2).collect();
            assert_eq!(got, want, "{input:?}");
        }
    }

    #[test]
    fn a_head_is_usable_only_as_the_prefix_s_beginning() {
        let ids: Vec<i32> = (0..100).collect();
        let cases: [(Vec<i32>, bool); 4] = [
            ((0..40).collect(), true),
            ((0..31).collect(), false),
            ((1..41).collect(), false),
            ((0..100).collect(), true),
        ];
        for (head, want) in cases {
            assert_eq!(is_usable_head(&head, &ids), want, "{}", head.len());
        }
    }
}
