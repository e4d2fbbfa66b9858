//! The in-process sentence embedder: a BERT-class GGUF (all-MiniLM-L6-v2 by default) run
//! by the same llama.cpp runtime as the chat model, with mean pooling; vectors are
//! L2-normalized here.
//!
//! llama.cpp aborts the process when one sequence holds more tokens than `n_ubatch`
//! (a non-causal model must see a whole sequence in one micro-batch), so every input is
//! cut to [`LlamaEmbedder::max_tokens`] before it gets there (keeping the closing
//! separator), and sequences are packed into batches of at most `n_ubatch` tokens.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use llama_cpp_2::context::params::{LlamaContextParams, LlamaPoolingType};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use self_cell::self_cell;

use super::backend::backend;
use super::load::fingerprint;
use super::EngineError;
use crate::model::gguf;
use crate::tokens::{EmbedError, Embedder, TokenCounter};
use crate::vector::normalize;

mod arriving;
pub use arriving::ArrivingEmbedder;

/// The default embedding model's file name (made by `scripts/fetch-embedder.sh`).
pub const DEFAULT_EMBEDDER_FILE: &str = "all-MiniLM-L6-v2.gguf";

/// Tokens per input at most: the model's training context, capped here because
/// all-MiniLM-L6-v2 was trained on 256-token inputs and its 512 positions add nothing.
const MAX_TOKENS: u32 = 256;
/// Sequences per batch at most.
const MAX_SEQS: u32 = 32;
/// Tokens per batch (= n_ubatch = n_batch). Inputs packed into one micro-batch attend
/// across each other's (masked) rows, work that grows with the square of the batch:
/// 512 ingested this repository's src/ in 94 s at 141 MB peak, 2048 in 129 s at 355 MB.
const BATCH_TOKENS: u32 = 512;

/// Tokens at most of an input embedded on its own in the one-thread context.
const SHORT_TOKENS: u32 = 64;

/// That context: cells, sequences, threads.
const QUERY_SHAPE: (u32, u32, i32) = (SHORT_TOKENS, 1, 1);

/// The model's two contexts, each made when first needed: a small one-thread context for
/// a single short input (a query, a memory's line) and the batch context (every thread)
/// for the rest. A session start embeds only its query, so it never pays for the batch
/// context's buffers. One thread for a query because the threads of a context meet at a
/// barrier after every layer, and on a machine busy with other work each meeting waits
/// for a descheduled thread: a 6-token query took 25-1,138 ms with two threads while
/// another process held both cores, 10-17 ms with one (idle: 6-80 ms against 8-11 ms).
struct Ctx<'m> {
    batch: Option<LlamaContext<'m>>,
    single: Option<LlamaContext<'m>>,
}

self_cell!(
    struct ModelCtx {
        owner: LlamaModel,
        #[covariant]
        dependent: Ctx,
    }
);

/// An embedding model with its contexts. Calls are serialized by a mutex.
pub struct LlamaEmbedder {
    cell: Mutex<ModelCtx>,
    /// The last single input and its vector: one recall asks each source for the same
    /// query (memories, each RAG store, the knowledge base), and each embedded it again
    /// (8-10 ms a time on a 2-core x86).
    last: Mutex<Option<(String, Vec<f32>)>>,
    threads: i32,
    id: String,
    path: PathBuf,
    dim: usize,
    max_tokens: usize,
}

// SAFETY-free reasoning: `LlamaModel` and `LlamaContext` are `Send`; the mutex makes
// shared use sequential, which is what `Sync` needs.
unsafe impl Sync for LlamaEmbedder {}

/// An embedding GGUF before llama.cpp loads it: its header checked and its id (the
/// file's name and fingerprint, [`Embedder::model_id`]) known, which is all a store
/// needs to open and to check that its vectors are this model's.
pub struct EmbedderFile {
    path: PathBuf,
    id: String,
}

impl EmbedderFile {
    /// Checks the header (every read bounds-checked) and fingerprints the file (its size
    /// and first MB): ≈ 3 ms for all-MiniLM-L6-v2, where llama.cpp's load takes ≈ 50.
    pub fn identify(path: &Path) -> Result<Self, EngineError> {
        let bad_file = |reason: String| EngineError::BadModelFile {
            path: path.to_path_buf(),
            reason,
        };
        let size = std::fs::metadata(path)
            .map_err(|e| bad_file(e.to_string()))?
            .len();
        gguf::check_file(path).map_err(bad_file)?;
        let print = fingerprint(path, size).map_err(|e| bad_file(e.to_string()))?;
        tracing::debug!("phase: embedder: fingerprint");
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Self {
            path: path.to_path_buf(),
            id: format!("{name}:{print}"),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn id(&self) -> &str {
        &self.id
    }
}

impl LlamaEmbedder {
    /// Loads an embedding GGUF with `threads` threads.
    pub fn load(path: &Path, threads: u32) -> Result<Self, EngineError> {
        Self::load_file(&EmbedderFile::identify(path)?, threads)
    }

    /// Loads a file [`EmbedderFile::identify`] checked.
    pub fn load_file(file: &EmbedderFile, threads: u32) -> Result<Self, EngineError> {
        let path = file.path();
        let bad_file = |reason: String| EngineError::BadModelFile {
            path: path.to_path_buf(),
            reason,
        };
        let load_err = |step: &'static str, reason: String| EngineError::Load {
            step,
            path: path.to_path_buf(),
            reason,
        };
        let backend = backend().map_err(|e| load_err("initialize the backend", e))?;
        tracing::debug!("phase: embedder: backend");
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| load_err("load the embedding model", e.to_string()))?;
        tracing::debug!("phase: embedder: model loaded");
        let dim = usize::try_from(model.n_embd()).unwrap_or(0);
        if dim == 0 {
            return Err(bad_file("the model reports no embedding size".into()));
        }
        let max_tokens = model.n_ctx_train().clamp(8, MAX_TOKENS);
        let threads = i32::try_from(threads.max(1)).unwrap_or(1);
        let cell = ModelCtx::new(model, |_| Ctx {
            batch: None,
            single: None,
        });
        Ok(Self {
            cell: Mutex::new(cell),
            last: Mutex::new(None),
            threads,
            id: file.id().to_string(),
            path: path.to_path_buf(),
            dim,
            max_tokens: max_tokens as usize,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The input's token ids as the model sees them (with its special tokens), cut to
    /// `max_tokens` keeping the last (separator) token.
    pub fn tokens(&self, text: &str) -> Vec<i32> {
        let cell = self.cell.lock().unwrap_or_else(|p| p.into_inner());
        self.tokenize_with(cell.borrow_owner(), text)
            .into_iter()
            .map(|t| t.0)
            .collect()
    }

    fn tokenize_with(&self, model: &LlamaModel, text: &str) -> Vec<LlamaToken> {
        let clean = text.replace('\0', "");
        let mut toks = model.vocab().tokenize(clean.as_bytes(), true, false);
        if toks.len() > self.max_tokens {
            let last = toks[toks.len() - 1];
            toks.truncate(self.max_tokens - 1);
            toks.push(last);
        }
        toks
    }
}

impl TokenCounter for LlamaEmbedder {
    /// Tokens of `text` without the special tokens the embedder adds.
    fn count_tokens(&self, text: &str) -> usize {
        let cell = self.cell.lock().unwrap_or_else(|p| p.into_inner());
        cell.borrow_owner()
            .vocab()
            .tokenize(text.replace('\0', "").as_bytes(), false, false)
            .len()
    }
}

impl Embedder for LlamaEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    /// Content tokens per input: the model's limit minus its two special tokens.
    fn max_tokens(&self) -> usize {
        self.max_tokens.saturating_sub(2)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let remembered = |text: &str| {
            let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            last.as_ref()
                .filter(|(t, _)| t == text)
                .map(|(_, v)| v.clone())
        };
        if let [text] = texts {
            if let Some(v) = remembered(text) {
                return Ok(vec![v]);
            }
        }
        let out = self.embed_all(texts)?;
        if let ([text], [v]) = (texts, out.as_slice()) {
            *self.last.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((text.to_string(), v.clone()));
        }
        Ok(out)
    }
}

impl LlamaEmbedder {
    /// Makes the one-thread context a query is embedded in, ahead of the first query:
    /// an [`ArrivingEmbedder`] does it as part of its load (≈ 4 ms here), on its own
    /// thread while the session start is busy elsewhere. A failure is left to the first
    /// query.
    pub fn prepare_query_context(&self) {
        let mut guard = self.cell.lock().unwrap_or_else(|p| p.into_inner());
        let made = guard.with_dependent_mut(|model, ctx| {
            if ctx.single.is_none() {
                ctx.single = Some(new_context(model, QUERY_SHAPE)?);
            }
            Ok::<_, EmbedError>(())
        });
        if let Err(e) = made {
            tracing::debug!("embedder: {e}");
        }
    }

    fn embed_all(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut guard = self.cell.lock().unwrap_or_else(|p| p.into_inner());
        let inputs: Vec<Vec<LlamaToken>> = texts
            .iter()
            .map(|t| self.tokenize_with(guard.borrow_owner(), t))
            .collect();
        let mut out = Vec::with_capacity(texts.len());
        let mut start = 0;
        while start < inputs.len() {
            // Pack whole sequences until the batch is full.
            let mut end = start;
            let mut used = 0usize;
            while end < inputs.len()
                && end - start < MAX_SEQS as usize
                && used + inputs[end].len().max(1) <= BATCH_TOKENS as usize
            {
                used += inputs[end].len().max(1);
                end += 1;
            }
            let group = &inputs[start..end];
            let short = group.len() == 1 && group[0].len() <= SHORT_TOKENS as usize;
            let threads = self.threads;
            let vectors = guard.with_dependent_mut(|model, ctx| {
                let (slot, shape) = match short {
                    true => (&mut ctx.single, QUERY_SHAPE),
                    false => (&mut ctx.batch, (BATCH_TOKENS, MAX_SEQS, threads)),
                };
                if slot.is_none() {
                    *slot = Some(new_context(model, shape)?);
                }
                match slot {
                    Some(c) => encode(c, group),
                    None => Err(EmbedError("no embedding context".into())),
                }
            })?;
            out.extend(vectors);
            start = end;
        }
        Ok(out)
    }
}

/// A context of `tokens` cells for at most `seqs` inputs, on `threads` threads.
fn new_context(
    model: &LlamaModel,
    (tokens, seqs, threads): (u32, u32, i32),
) -> Result<LlamaContext<'_>, EmbedError> {
    let backend = backend().map_err(EmbedError)?;
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(tokens))
        .with_n_batch(tokens)
        .with_n_ubatch(tokens)
        .with_n_seq_max(seqs)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
        .with_embeddings(true)
        .with_pooling_type(LlamaPoolingType::Mean);
    model
        .new_context(backend, params)
        .map_err(|e| EmbedError(format!("cannot create the embedding context: {e}")))
}

fn encode(
    ctx: &mut LlamaContext<'_>,
    group: &[Vec<LlamaToken>],
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let total: usize = group.iter().map(|t| t.len()).sum();
    let mut batch = LlamaBatch::new(total.max(1), group.len() as i32);
    for (seq, toks) in group.iter().enumerate() {
        for (pos, tok) in toks.iter().enumerate() {
            batch
                .add(*tok, pos as i32, &[seq as i32], true)
                .map_err(|e| EmbedError(e.to_string()))?;
        }
    }
    ctx.clear_kv_cache();
    if total > 0 {
        ctx.encode(&mut batch)
            .map_err(|e| EmbedError(format!("encode: {e}")))?;
    }
    let mut out = Vec::with_capacity(group.len());
    for (seq, toks) in group.iter().enumerate() {
        if toks.is_empty() {
            out.push(Vec::new());
            continue;
        }
        let mut v = ctx
            .embeddings_seq_ith(seq as i32)
            .map_err(|e| EmbedError(format!("no pooled embedding: {e}")))?
            .to_vec();
        normalize(&mut v);
        out.push(v);
    }
    Ok(out)
}
