//! The sampler chain, built from the config's sampling settings, and an optional grammar
//! checked on each pick ([`Picker`]).
//!
//! Repetition penalties cost a hash look-up per candidate in llama.cpp, and the candidates
//! are the whole vocabulary (151,936 with Qwen2.5): about a millisecond a token, several
//! per cent of a small model's decode. A penalty above 1 only lowers the logits of at most
//! `repeat_last_n` distinct tokens, so whatever the later steps can pick (the best one
//! greedy, the best `top_k` otherwise) is among the `repeat_last_n + top_k` best before
//! the penalty: a top-k of that size in front narrows the candidates without changing the
//! choice (up to exact ties in logits).

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::logit_bias::LlamaLogitBias;
use llama_cpp_2::token::LlamaToken;

use super::{EngineError, SamplingParams};

/// Longest penalty window that is narrowed first; beyond it the top-k would not save work.
const MAX_NARROWED_WINDOW: i32 = 1024;

/// Picks each token of a reply: [banned tokens →] [narrowing top-k →] penalties → top-k →
/// top-p → min-p → temperature → seeded draw; or greedy at temperature 0 (penalties still
/// apply, so a greedy small model loops less).
///
/// A grammar is checked after the pick, not applied before it. Applying a grammar means
/// matching every token of the vocabulary against it: with the 1.5B that made a call's
/// tokens cost ~87 ms each against ~45–60 ms free. The chain picks from all tokens; the
/// grammar is asked about that one token; only when it refuses is it applied to every
/// candidate and the chain run again on what it allows. Greedy, the pick is the same
/// token either way (the best allowed token is the best token when that is allowed); at
/// a temperature a refused draw is drawn again among the allowed tokens.
pub struct Picker {
    chain: LlamaSampler,
    grammar: Option<LlamaSampler>,
    /// Reused for every token under a grammar: a row of logits as candidates.
    candidates: Vec<LlamaTokenData>,
    /// Returned when a grammar allows nothing at all (it ends the reply).
    end: LlamaToken,
    /// Picks the grammar refused, for the tests and the debug log.
    pub refused: usize,
}

/// Builds the [`Picker`] for `p`, with `grammar` (GBNF, root rule `root`) checked on each
/// pick and `banned` never picked.
pub fn build(
    model: &LlamaModel,
    p: &SamplingParams,
    grammar: Option<&str>,
    banned: &[LlamaToken],
) -> Result<Picker, EngineError> {
    let grammar = grammar
        .map(|gbnf| {
            LlamaSampler::grammar(model, gbnf, "root")
                .map_err(|e| EngineError::Grammar(e.to_string()))
        })
        .transpose()?;
    Ok(Picker {
        chain: chain(model.n_vocab(), p, banned),
        grammar,
        candidates: Vec::new(),
        end: model.vocab().eos(),
        refused: 0,
    })
}

/// The chain without a grammar: banned tokens, then the scoring steps.
fn chain(n_vocab: i32, p: &SamplingParams, banned: &[LlamaToken]) -> LlamaSampler {
    let mut chain = Vec::with_capacity(9);
    if !banned.is_empty() {
        let biases: Vec<LlamaLogitBias> = banned
            .iter()
            .map(|&t| LlamaLogitBias::new(t, f32::NEG_INFINITY))
            .collect();
        chain.push(LlamaSampler::logit_bias(n_vocab, &biases));
    }
    chain.extend(scoring(n_vocab, p, true));
    LlamaSampler::chain_simple(chain)
}

impl Picker {
    /// Picks the token for row `row` of the last decode and accepts it (penalty history,
    /// grammar state).
    pub fn sample(&mut self, ctx: &LlamaContext, row: i32) -> LlamaToken {
        let Some(mut grammar) = self.grammar.take() else {
            return self.chain.sample(ctx, row);
        };
        let token = self.pick(&mut grammar, ctx.get_logits_ith(row));
        self.grammar = Some(grammar);
        token
    }

    /// [`Picker::sample`] from a row of logits given directly (the tests' way in).
    #[cfg(test)]
    fn sample_row(&mut self, logits: &[f32]) -> LlamaToken {
        let mut grammar = self.grammar.take().expect("a grammar");
        let token = self.pick(&mut grammar, logits);
        self.grammar = Some(grammar);
        token
    }

    /// The lazy grammar's pick from one row of logits (see [`Picker`]).
    fn pick(&mut self, grammar: &mut LlamaSampler, logits: &[f32]) -> LlamaToken {
        let token = match self.chained(logits, None) {
            Some(t) if allows(grammar, t) => t,
            _ => {
                self.refused += 1;
                match self.chained(logits, Some(grammar)) {
                    Some(t) if allows(grammar, t) => t,
                    // Nothing allowed is left: end the reply rather than accept a token
                    // the grammar refuses (llama.cpp aborts on that).
                    _ => return self.end,
                }
            }
        };
        self.chain.accept(token);
        grammar.accept(token);
        token
    }

    /// What the chain picks from `logits`, after `grammar` masked them when given.
    fn chained(
        &mut self,
        logits: &[f32],
        grammar: Option<&mut LlamaSampler>,
    ) -> Option<LlamaToken> {
        let mut data = std::mem::take(&mut self.candidates);
        data.clear();
        data.extend(
            (0_i32..)
                .zip(logits)
                .map(|(i, &l)| LlamaTokenData::new(LlamaToken::new(i), l, 0.0)),
        );
        let mut cur = LlamaTokenDataArray::new(data, false);
        if let Some(g) = grammar {
            cur.apply_sampler(g);
        }
        cur.apply_sampler(&mut self.chain);
        let token = cur.selected_token();
        self.candidates = cur.data;
        token
    }
}

/// Whether `grammar`, in its current state, allows `token` next.
fn allows(grammar: &mut LlamaSampler, token: LlamaToken) -> bool {
    let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
    one.apply_sampler(grammar);
    one.data.first().is_some_and(|d| d.logit().is_finite())
}

/// The scoring steps: penalties to the draw. `narrow` puts the narrowing top-k
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

    /// The lazy grammar against the grammar applied first, on rows of random logits from
    /// a real vocabulary: every other row lifts the token the grammar-first chain picks
    /// above the rest (the lazy pick is then allowed at once), the others leave it where
    /// it is (nearly always refused, so the grammar is applied). Greedy with penalties,
    /// until the grammar completes and the end token is picked.
    #[test]
    fn the_lazy_grammar_picks_what_the_grammar_first_chain_picks() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
        assert!(
            path.exists(),
            "{} is missing: run scripts/fetch-models.sh",
            path.display()
        );
        let backend = super::super::backend::backend().expect("backend");
        let model = LlamaModel::load_from_file(
            backend,
            &path,
            &llama_cpp_2::model::params::LlamaModelParams::default(),
        )
        .expect("model loads");
        let gbnf = r#"root ::= "{\"n\": " [0-9]{1,6} ", \"s\": \"" [a-z ]{0,12} "\"}""#;
        let p = params(0.0, 0, 64);
        let mut lazy = build(&model, &p, Some(gbnf), &[]).expect("grammar parses");
        let mut grammar = LlamaSampler::grammar(&model, gbnf, "root").expect("grammar");
        let mut eager = chain(model.n_vocab(), &p, &[]);
        let mut draws = Draws(0xC0FFEE);
        let (mut picked, mut ended) = (Vec::new(), false);
        for round in 0..80 {
            let mut logits: Vec<f32> = (0..model.n_vocab()).map(|_| draws.logit()).collect();
            let mut cur = LlamaTokenDataArray::from_iter(
                (0_i32..)
                    .zip(&logits)
                    .map(|(i, &l)| LlamaTokenData::new(LlamaToken::new(i), l, 0.0)),
                false,
            );
            cur.apply_sampler(&mut grammar);
            cur.apply_sampler(&mut eager);
            let want = cur.selected_token().expect("the grammar allows a token");
            grammar.accept(want);
            eager.accept(want);
            if round % 2 == 0 {
                logits[want.0 as usize] = 9.0;
            }
            let got = lazy.sample_row(&logits);
            assert_eq!(got, want, "round {round}, after {picked:?}");
            if model.vocab().is_eog(got) {
                ended = true;
                break;
            }
            picked.push(got);
        }
        assert!(ended, "the grammar completed: {picked:?}");
        let bytes: Vec<u8> = picked
            .iter()
            .flat_map(|&t| model.vocab().token_to_piece(t, false, None))
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            text.starts_with("{\"n\": ") && text.ends_with("\"}"),
            "{text}"
        );
        // Both paths were taken: the lifted rows were allowed at once, the rest refused.
        assert!(
            lazy.refused > 0 && lazy.refused < picked.len(),
            "{}",
            lazy.refused
        );
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
