//! Engine errors, phrased by what the caller should do about them.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The model file is missing, unreadable or not a usable GGUF: pick another file.
    #[error("cannot use model {path}: {reason}")]
    BadModelFile { path: PathBuf, reason: String },
    /// llama.cpp refused to load or set up the model (out of memory, unsupported arch…).
    #[error("llama.cpp could not {step} for {path}: {reason}")]
    Load {
        step: &'static str,
        path: PathBuf,
        reason: String,
    },
    /// The prompt does not fit: shorten the input or start a new conversation.
    #[error("the prompt has {tokens} tokens but the context holds {n_ctx} (at most {fits} for a prompt, leaving room for a reply); shorten it or /clear")]
    PromptTooLong {
        tokens: usize,
        n_ctx: usize,
        fits: usize,
    },
    /// The chat template rewrote message text, so it cannot be tokenized safely.
    #[error("the chat template altered message text; cannot tokenize it safely: {0}")]
    Template(String),
    /// A grammar did not parse: fix the grammar (a bug in the caller, not user input).
    #[error("grammar rejected by llama.cpp: {0}")]
    Grammar(String),
    /// A saved state file could not be written or read; the caller falls back to prefill.
    #[error("state file {path}: {reason}")]
    State { path: PathBuf, reason: String },
    /// No model is loaded (a `/model use` failed and the previous model could not be
    /// loaded back either): load one with `/model use NAME`.
    #[error("no model is loaded ({path} was freed): load one with /model use NAME")]
    Unloaded { path: PathBuf },
    /// This engine cannot do what was asked (e.g. keep an aside prompt); the caller goes
    /// without.
    #[error("this engine cannot {0}")]
    Unsupported(&'static str),
    /// A decode step failed; the KV cache was reset, so the next turn re-prefills.
    #[error("llama.cpp decode failed: {0}")]
    Decode(String),
}
