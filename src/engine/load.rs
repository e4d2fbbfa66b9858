//! Loading helpers: the chat template, what the model is, its context parameters and the
//! file fingerprint that keys saved state.

use std::io::Read;
use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use sha2::{Digest, Sha256};

use super::template::template_family;
use super::{EngineParams, ModelInfo};

/// The GGUF's own template (family name, fingerprint), or chatml when the file has none.
pub fn chat_template(model: &LlamaModel) -> Option<(LlamaChatTemplate, String, String)> {
    if let Ok(template) = model.chat_template(None) {
        let text = template.to_str().unwrap_or_default().to_string();
        let family = template_family(&text).to_string();
        return Some((template, family, sha256_hex(text.as_bytes())));
    }
    let fallback = LlamaChatTemplate::new("chatml").ok()?;
    Some((
        fallback,
        "chatml (fallback: the model has no template)".into(),
        sha256_hex(b"chatml"),
    ))
}

pub fn describe(model: &LlamaModel, params: &EngineParams, file_bytes: u64) -> ModelInfo {
    let n_ctx_train = model.n_ctx_train();
    let n_ctx = if n_ctx_train > 0 {
        params.n_ctx.min(n_ctx_train)
    } else {
        params.n_ctx
    }
    .max(16);
    // Fit the KV cache into the memory the machine has now, beside the weights.
    let mut notes = Vec::new();
    let n_ctx = match crate::platform::memory() {
        Some(mem) => {
            notes.extend(crate::platform::model_size_warning(
                file_bytes,
                mem.available,
            ));
            let (fit, note) = crate::platform::fit_n_ctx(
                n_ctx,
                kv_bytes_per_token(model),
                file_bytes,
                mem.available,
            );
            notes.extend(note);
            fit
        }
        None => n_ctx,
    };
    let name = model
        .meta_val_str("general.name")
        .ok()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| file_stem(&params.model_path));
    ModelInfo {
        path: params.model_path.clone(),
        name,
        file_bytes,
        n_params: model.n_params(),
        n_ctx_train,
        n_ctx,
        n_batch: params.n_batch.clamp(1, n_ctx),
        threads: params.threads.max(1),
        threads_batch: params.threads_batch.max(1),
        template_name: String::new(),
        load_time: Duration::ZERO,
        fingerprint: String::new(),
        template_fingerprint: String::new(),
        kv_type: "f16".into(),
        notes,
    }
}

/// Bytes of f16 KV cache per token, from the GGUF's metadata: layers × (K + V widths)
/// × 2 bytes. 0 when the metadata is incomplete (no fitting is done then).
fn kv_bytes_per_token(model: &LlamaModel) -> u64 {
    let Ok(arch) = model.meta_val_str("general.architecture") else {
        return 0;
    };
    let num = |key: &str| -> Option<u64> {
        model
            .meta_val_str(&format!("{arch}.{key}"))
            .ok()
            .and_then(|v| v.trim().parse().ok())
    };
    let (Some(layers), Some(embd), Some(heads)) = (
        num("block_count"),
        num("embedding_length"),
        num("attention.head_count"),
    ) else {
        return 0;
    };
    if heads == 0 {
        return 0;
    }
    let heads_kv = num("attention.head_count_kv").unwrap_or(heads);
    let key = num("attention.key_length").unwrap_or(embd / heads);
    let value = num("attention.value_length").unwrap_or(embd / heads);
    layers * heads_kv * (key + value) * 2
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn context_params(info: &ModelInfo, n_ctx: u32) -> LlamaContextParams {
    let threads = i32::try_from(info.threads).unwrap_or(1);
    let threads_batch = i32::try_from(info.threads_batch).unwrap_or(1);
    let n_batch = info.n_batch.min(n_ctx);
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(n_batch)
        .with_n_ubatch(n_batch)
        .with_n_threads(threads)
        .with_n_threads_batch(threads_batch)
}

/// `size:sha256(first MiB)`, enough to tell model files apart without reading gigabytes.
pub fn fingerprint(path: &Path, size: u64) -> std::io::Result<String> {
    let mut head = Vec::with_capacity(1 << 20);
    std::fs::File::open(path)?
        .take(1 << 20)
        .read_to_end(&mut head)?;
    Ok(format!("{size}:{}", sha256_hex(&head)))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
