//! The KV cache side of `harvey bench`: each `engine.kv_cache_type` loaded in turn, its
//! cache size, and its prefill/decode speed with the cache already holding a given number
//! of tokens (decode reads the whole cache each step, so depth is where the types differ).

use serde::Serialize;

use super::greedy;
use crate::engine::{
    EngineError, EngineParams, KvCacheType, LlamaEngine, Message, Role, TurnStats,
};

/// One KV cache type's memory and speed.
#[derive(Debug, Clone, Serialize)]
pub struct KvCacheRow {
    pub kv_type: KvCacheType,
    /// Bytes of the chat context's KV cache at the bench's n_ctx.
    pub kv_bytes: u64,
    pub n_ctx: u32,
    /// One entry per requested depth that fits in n_ctx with the decoded tokens.
    pub depths: Vec<DepthSpeed>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DepthSpeed {
    /// Prompt tokens in the cache when decoding started (close to the requested depth).
    pub depth: usize,
    pub prefill_tps: f64,
    pub generated_tokens: usize,
    pub decode_tps: f64,
}

/// Loads the model once per KV cache type and measures each; `depths` may be empty
/// (sizes only).
pub fn compare(
    params: &EngineParams,
    depths: &[usize],
    decode_tokens: usize,
) -> Result<Vec<KvCacheRow>, EngineError> {
    KvCacheType::ALL
        .into_iter()
        .map(|kv| row(params, kv, depths, decode_tokens))
        .collect()
}

fn row(
    params: &EngineParams,
    kv: KvCacheType,
    depths: &[usize],
    decode_tokens: usize,
) -> Result<KvCacheRow, EngineError> {
    let params = EngineParams {
        kv_cache_type: kv,
        ..params.clone()
    };
    let mut engine = LlamaEngine::load(&params)?;
    let n_ctx = engine.info().n_ctx;
    let mut speeds = Vec::new();
    for &depth in depths.iter().filter(|&&d| fits(d, decode_tokens, n_ctx)) {
        engine.reset();
        let messages = filler_messages(&engine, depth)?;
        let stats = engine
            .generate(&messages, &greedy(decode_tokens), &mut |_| {})?
            .stats;
        speeds.push(depth_speed(&stats));
    }
    Ok(KvCacheRow {
        kv_type: kv,
        kv_bytes: engine.info().kv_bytes,
        n_ctx,
        depths: speeds,
    })
}

/// A depth is measured when it and the decoded tokens fit in the context.
fn fits(depth: usize, decode_tokens: usize, n_ctx: u32) -> bool {
    depth > 0 && depth + decode_tokens < n_ctx as usize
}

fn depth_speed(stats: &TurnStats) -> DepthSpeed {
    DepthSpeed {
        depth: stats.prompt_tokens,
        prefill_tps: stats.prefill_tps,
        generated_tokens: stats.completion_tokens,
        decode_tps: stats.decode_tps,
    }
}

const FILLER_LINE: &str =
    "- The keeper logged the wind, the swell and the ships that passed the point today.\n";

/// A chat whose prompt is about `depth` tokens: notes to continue, padded with lines.
pub(super) fn filler_messages(
    engine: &LlamaEngine,
    depth: usize,
) -> Result<Vec<Message>, EngineError> {
    let with = |lines: usize| {
        vec![Message::new(
            Role::User,
            format!(
                "Here are a lighthouse keeper's notes:\n{}Continue the notes with many more lines.",
                FILLER_LINE.repeat(lines)
            ),
        )]
    };
    let base = engine.tokenize_prompt(&with(0))?.len();
    let per_line = engine
        .tokenize_prompt(&with(1))?
        .len()
        .saturating_sub(base)
        .max(1);
    Ok(with(lines_for(depth, base, per_line)))
}

/// Lines of filler that bring a prompt of `base` tokens to about `depth`.
fn lines_for(depth: usize, base: usize, per_line: usize) -> usize {
    depth.saturating_sub(base) / per_line.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_must_leave_room_for_the_decoded_tokens() {
        assert!(fits(512, 32, 4096));
        assert!(!fits(4090, 32, 4096));
        assert!(!fits(0, 32, 4096));
    }

    #[test]
    fn filler_lines_reach_the_depth_without_passing_it() {
        assert_eq!(lines_for(512, 40, 18), 26);
        assert!(40 + lines_for(512, 40, 18) * 18 <= 512);
        assert_eq!(lines_for(10, 40, 18), 0);
        assert_eq!(lines_for(100, 40, 0), 60);
    }
}
