//! Loading helpers: the chat template, what the model is, its context parameters and the
//! file fingerprint that keys saved state.

use std::io::Read;
use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use llama_cpp_2::context::params::{KvCacheType as LlamaKvType, LlamaContextParams};
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token_type::LlamaTokenAttr;
use sha2::{Digest, Sha256};

use super::{EngineParams, KvCacheType, ModelInfo};

/// Is `text` exactly one control or user-defined token of the vocabulary?
pub fn is_special_token(model: &LlamaModel, text: &str) -> bool {
    let vocab = model.vocab();
    match vocab.tokenize(text.as_bytes(), false, true).as_slice() {
        [one] => vocab.is_control(*one) || vocab.attr(*one).0.contains(LlamaTokenAttr::UserDefined),
        _ => false,
    }
}

/// The special tokens (as text) in a rendered scaffold: the template's turn markers.
pub fn specials_in(model: &LlamaModel, rendered: &str) -> Vec<String> {
    let vocab = model.vocab();
    let mut out: Vec<String> = Vec::new();
    for token in vocab.tokenize(rendered.as_bytes(), false, true) {
        let special =
            vocab.is_control(token) || vocab.attr(token).0.contains(LlamaTokenAttr::UserDefined);
        if !special {
            continue;
        }
        let piece = String::from_utf8_lossy(&vocab.token_to_piece(token, true, None)).into_owned();
        if !piece.trim().is_empty() && !out.contains(&piece) {
            out.push(piece);
        }
    }
    out
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
    let kv_per_token = kv_elements_per_token(model);
    let mut notes = Vec::new();
    let n_ctx = match crate::platform::memory() {
        Some(mem) => {
            notes.extend(crate::platform::model_size_warning(
                file_bytes,
                mem.available,
            ));
            let (fit, note) = crate::platform::fit_n_ctx(
                n_ctx,
                params.kv_cache_type.bytes_for(kv_per_token),
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
        template_reason: String::new(),
        load_time: Duration::ZERO,
        fingerprint: String::new(),
        template_fingerprint: String::new(),
        template_tools: false,
        template_system_turns: false,
        template_text: String::new(),
        kv_type: params.kv_cache_type.as_str().into(),
        kv_bytes: params
            .kv_cache_type
            .bytes_for(kv_per_token * u64::from(n_ctx)),
        notes,
    }
}

/// KV cache values per token, from the GGUF's metadata: layers × (K + V widths).
/// 0 when the metadata is incomplete (no fitting is done then).
fn kv_elements_per_token(model: &LlamaModel) -> u64 {
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
    layers * heads_kv * (key + value)
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Context parameters for `n_ctx` tokens. `seqs` > 1 makes room for that many sequences
/// in one unified cache of `n_ctx` cells (the chat and an aside call sharing it).
pub fn context_params(
    info: &ModelInfo,
    n_ctx: u32,
    kv: KvCacheType,
    seqs: u32,
) -> LlamaContextParams {
    let threads = i32::try_from(info.threads).unwrap_or(1);
    let threads_batch = i32::try_from(info.threads_batch).unwrap_or(1);
    let n_batch = info.n_batch.min(n_ctx);
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(n_batch)
        .with_n_ubatch(n_batch)
        .with_n_threads(threads)
        .with_n_threads_batch(threads_batch)
        .with_n_seq_max(seqs.max(1))
        .with_kv_unified(seqs > 1)
        .with_kv_cache_type(kv)
}

/// Sets the K and V cache types; a quantized V cache needs flash attention in llama.cpp
/// (context creation fails without it), so q8_0 turns it on; f16 keeps llama.cpp's choice.
pub trait WithKvCacheType {
    fn with_kv_cache_type(self, kv: KvCacheType) -> Self;
}

impl WithKvCacheType for LlamaContextParams {
    fn with_kv_cache_type(self, kv: KvCacheType) -> Self {
        match kv {
            KvCacheType::F16 => self
                .with_type_k(LlamaKvType::F16)
                .with_type_v(LlamaKvType::F16),
            KvCacheType::Q8_0 => self
                .with_type_k(LlamaKvType::Q8_0)
                .with_type_v(LlamaKvType::Q8_0)
                .with_flash_attention_policy(llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_ENABLED),
        }
    }
}

/// `engine.mmap`: map the model file or read it into memory.
///
/// The CPU backend copies the weights of some types into its own faster layout at load
/// ("repack"); with a mapping, those weights then stay in memory twice (the mapped pages
/// were read to be copied): 600 MB more RSS with Qwen2.5-Coder-1.5B Q4_K_M. Read into
/// memory, each weight is held once. A mapping is lazy and shared between processes, so
/// it is the better choice for the types that are used in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MmapMode {
    /// Read files whose quantization the backend may repack; map the others.
    #[default]
    Auto,
    On,
    Off,
}

/// Quantizations (llama.cpp's `general.file_type` names, by prefix) whose weights the CPU
/// backend may repack, depending on the CPU's features.
const REPACKED: [&str; 8] = [
    "Q4_0", "Q4_K", "Q5_K", "Q6_K", "Q2_K", "Q8_0", "IQ4_NL", "MXFP4",
];

impl MmapMode {
    pub const ALL: [MmapMode; 3] = [MmapMode::Auto, MmapMode::On, MmapMode::Off];

    pub fn as_str(self) -> &'static str {
        match self {
            MmapMode::Auto => "auto",
            MmapMode::On => "on",
            MmapMode::Off => "off",
        }
    }

    /// The setting's value (`auto`, `on`, `off`); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(text.trim()))
    }

    /// Whether to map a file of `quantization` (its `general.file_type` name).
    pub fn maps(self, quantization: Option<&str>) -> bool {
        match self {
            MmapMode::On => true,
            MmapMode::Off => false,
            MmapMode::Auto => {
                !quantization.is_some_and(|q| REPACKED.iter().any(|r| q.starts_with(r)))
            }
        }
    }
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

#[cfg(test)]
mod mmap_tests {
    use super::MmapMode;

    #[test]
    fn auto_reads_the_files_the_backend_repacks_and_maps_the_rest() {
        for q in ["Q4_K_M", "Q4_0", "Q8_0", "Q6_K", "Q5_K_S"] {
            assert!(!MmapMode::Auto.maps(Some(q)), "{q} is read");
        }
        for q in ["Q4_1", "F16", "BF16", "Q5_1"] {
            assert!(MmapMode::Auto.maps(Some(q)), "{q} is mapped");
        }
        assert!(MmapMode::Auto.maps(None), "an unknown type is mapped");
        assert!(MmapMode::On.maps(Some("Q4_K_M")));
        assert!(!MmapMode::Off.maps(Some("Q4_1")));
    }
}
