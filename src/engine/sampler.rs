//! The sampler chain, built from the config's sampling settings and an optional grammar.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::logit_bias::LlamaLogitBias;
use llama_cpp_2::token::LlamaToken;

use super::{EngineError, SamplingParams};

/// [grammar →] [banned tokens →] penalties → top-k → top-p → min-p → temperature → seeded
/// draw; or greedy at temperature 0 (penalties still apply, so a greedy small model loops
/// less). The grammar goes first so every later step only sees tokens the grammar allows.
pub fn build(
    model: &LlamaModel,
    p: &SamplingParams,
    grammar: Option<&str>,
    banned: &[LlamaToken],
) -> Result<LlamaSampler, EngineError> {
    let mut chain = Vec::with_capacity(8);
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
    if (p.repeat_penalty - 1.0).abs() > f32::EPSILON && p.repeat_last_n != 0 {
        chain.push(LlamaSampler::penalties(
            model.n_vocab(),
            p.repeat_last_n,
            p.repeat_penalty,
            0.0,
            0.0,
        ));
    }
    if p.is_greedy() {
        chain.push(LlamaSampler::greedy());
        return Ok(LlamaSampler::chain_simple(chain));
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
    Ok(LlamaSampler::chain_simple(chain))
}
