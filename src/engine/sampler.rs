//! The sampler chain, built from the config's sampling settings and an optional grammar.
//!
//! Repetition penalties cost a hash look-up per candidate in llama.cpp, and the candidates
//! are the whole vocabulary (151,936 with Qwen2.5): about a millisecond a token, several
//! per cent of a small model's decode. A penalty above 1 only lowers the logits of at most
//! `repeat_last_n` distinct tokens, so whatever the later steps can pick (the best one
//! greedy, the best `top_k` otherwise) is among the `repeat_last_n + top_k` best before
//! the penalty: a top-k of that size in front narrows the candidates without changing the
//! choice (up to exact ties in logits).

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::logit_bias::LlamaLogitBias;
use llama_cpp_2::token::LlamaToken;

use super::{EngineError, SamplingParams};

/// Longest penalty window that is narrowed first; beyond it the top-k would not save work.
const MAX_NARROWED_WINDOW: i32 = 1024;

/// [grammar →] [banned tokens →] [narrowing top-k →] penalties → top-k → top-p → min-p →
/// temperature → seeded draw; or greedy at temperature 0 (penalties still apply, so a
/// greedy small model loops less). The grammar goes first so every later step only sees
/// tokens the grammar allows.
pub fn build(
    model: &LlamaModel,
    p: &SamplingParams,
    grammar: Option<&str>,
    banned: &[LlamaToken],
) -> Result<LlamaSampler, EngineError> {
    let mut chain = Vec::with_capacity(9);
    if !banned.is_empty() {
        let biases: Vec<LlamaLogitBias> = banned
            .iter()
            .map(|&t| LlamaLogitBias::new(t, f32::NEG_INFINITY))
            .collect();
        chain.push(LlamaSampler::logit_bias(model.n_vocab(), &biases));
    }
    if let Some(gbnf) = grammar {
        let sampler = LlamaSampler::grammar(model, gbnf, "root")
            .map_err(|e| EngineError::Grammar(e.to_string()))?;
        chain.push(sampler);
    }
    chain.extend(scoring(model.n_vocab(), p, true));
    Ok(LlamaSampler::chain_simple(chain))
}

/// The steps after the grammar: penalties to the draw. `narrow` puts the narrowing top-k
/// in front when it cannot change the choice.
fn scoring(n_vocab: i32, p: &SamplingParams, narrow: bool) -> Vec<LlamaSampler> {
    let mut chain = Vec::with_capacity(7);
    if (p.repeat_penalty - 1.0).abs() > f32::EPSILON && p.repeat_last_n != 0 {
        if let Some(k) = narrowing(p).filter(|_| narrow) {
            chain.push(LlamaSampler::top_k(k));
        }
        chain.push(LlamaSampler::penalties(
            n_vocab,
            p.repeat_last_n,
            p.repeat_penalty,
            0.0,
            0.0,
        ));
    }
    if p.is_greedy() {
        chain.push(LlamaSampler::greedy());
        return chain;
    }
    if p.top_k > 0 {
        chain.push(LlamaSampler::top_k(p.top_k));
    }
    if p.top_p < 1.0 {
        chain.push(LlamaSampler::top_p(p.top_p, 1));
    }
    if p.min_p > 0.0 {
        chain.push(LlamaSampler::min_p(p.min_p, 1));
    }
    chain.push(LlamaSampler::temp(p.temperature));
    chain.push(LlamaSampler::dist(p.seed));
    chain
}

/// How many of the best candidates the penalties and everything after them can need:
/// `None` when every candidate may matter (a penalty below 1 raises logits, no top-k
/// after it, a window of the whole context or a very long one).
fn narrowing(p: &SamplingParams) -> Option<i32> {
    if p.repeat_penalty <= 1.0 || !(1..=MAX_NARROWED_WINDOW).contains(&p.repeat_last_n) {
        return None;
    }
    let kept = if p.is_greedy() {
        1
    } else if p.top_k > 0 {
        p.top_k
    } else {
        return None;
    };
    Some(p.repeat_last_n + kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llama_cpp_2::token::data::LlamaTokenData;
    use llama_cpp_2::token::data_array::LlamaTokenDataArray;

    fn params(temperature: f32, top_k: i32, repeat_last_n: i32) -> SamplingParams {
        SamplingParams {
            temperature,
            top_k,
            top_p: 0.95,
            min_p: 0.05,
            repeat_penalty: 1.1,
            repeat_last_n,
            seed: 7,
        }
    }

    /// xorshift64: reproducible logits and histories without a model.
    struct Draws(u64);
    impl Draws {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// In [-8, 8), fine-grained enough that ties do not occur.
        fn logit(&mut self) -> f32 {
            ((self.next() >> 11) as f64 / (1u64 << 53) as f64 * 16.0 - 8.0) as f32
        }
    }

    /// The token each chain picks over `rounds` steps of random logits, where the
    /// previous picks and some of the best tokens are in the penalty window.
    fn picks(p: &SamplingParams, narrow: bool, rounds: usize) -> Vec<LlamaToken> {
        let n_vocab = 5_000;
        let mut draws = Draws(0x5EED);
        let mut chain = LlamaSampler::chain_simple(scoring(n_vocab, p, narrow));
        let mut out = Vec::new();
        for _ in 0..rounds {
            let logits: Vec<f32> = (0..n_vocab).map(|_| draws.logit()).collect();
            // Penalize a few of this round's best tokens too, so the penalty decides.
            let mut best: Vec<i32> = (0..n_vocab).collect();
            best.sort_by(|a, b| logits[*b as usize].total_cmp(&logits[*a as usize]));
            for &t in best.iter().take(3) {
                chain.accept(LlamaToken::new(t));
            }
            let mut data = LlamaTokenDataArray::from_iter(
                logits
                    .iter()
                    .enumerate()
                    .map(|(i, &l)| LlamaTokenData::new(LlamaToken::new(i as i32), l, 0.0)),
                false,
            );
            data.apply_sampler(&mut chain);
            let token = data.selected_token().expect("a token is selected");
            chain.accept(token);
            out.push(token);
        }
        out
    }

    #[test]
    fn narrowing_first_picks_the_same_tokens_greedy_and_sampled() {
        for p in [params(0.0, 0, 64), params(0.7, 40, 64), params(0.7, 5, 8)] {
            assert!(narrowing(&p).is_some(), "{p:?} is narrowed");
            assert_eq!(picks(&p, true, 60), picks(&p, false, 60), "{p:?}");
        }
    }

    #[test]
    fn only_safe_settings_are_narrowed() {
        assert_eq!(narrowing(&params(0.0, 0, 64)), Some(65));
        assert_eq!(narrowing(&params(0.7, 40, 64)), Some(104));
        // No top-k: top-p and min-p see the whole distribution.
        assert_eq!(narrowing(&params(0.7, 0, 64)), None);
        // The whole context, or a window too long to save work.
        assert_eq!(narrowing(&params(0.0, 0, -1)), None);
        assert_eq!(narrowing(&params(0.0, 0, 4096)), None);
        // A penalty below 1 raises logits: any candidate may win.
        let raising = SamplingParams {
            repeat_penalty: 0.9,
            ..params(0.0, 0, 64)
        };
        assert_eq!(narrowing(&raising), None);
    }
}
