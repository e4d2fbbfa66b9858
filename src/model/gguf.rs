//! What a GGUF file is, read from its header without loading weights: architecture,
//! name, parameter count (from the tensor shapes), quantization, training context,
//! whether it carries a chat template, and whether it is an embedding model.
//!
//! The file is memory-mapped and only the header pages are touched, so a directory of
//! large models is described in milliseconds. Every read is bounds-checked: a damaged
//! or truncated file is an error that names the offset, never a panic.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// The first four bytes of every GGUF file.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// What the header says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GgufInfo {
    pub path: PathBuf,
    pub file_bytes: u64,
    pub version: u32,
    pub architecture: String,
    pub name: Option<String>,
    /// Weights in the tensors (the product of each tensor's dimensions, summed).
    pub parameters: u64,
    pub tensors: u64,
    /// `general.file_type` as llama.cpp names it (`Q4_K_M`, `F16`, …).
    pub quantization: Option<String>,
    /// `<arch>.context_length`: the context the model was trained with.
    pub training_context: Option<u64>,
    pub has_chat_template: bool,
    /// For a chat model without a template: the llama.cpp format harvey falls back to
    /// and why (see `model::template`).
    pub template_fallback: Option<String>,
    /// An embedding model (a pooling type, or an encoder architecture): not for chat.
    pub embedding: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a GGUF file (it does not start with \"GGUF\")")]
    NotGguf { path: PathBuf },
    #[error("{path}: damaged GGUF header at byte {offset}: {problem}")]
    Damaged {
        path: PathBuf,
        offset: usize,
        problem: String,
    },
}

/// Reads the header of the GGUF file at `path`.
pub fn read(path: &Path) -> Result<GgufInfo, GgufError> {
    let io = |source| GgufError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let file_bytes = file.metadata().map_err(io)?.len();
    if file_bytes < 4 {
        return Err(GgufError::NotGguf {
            path: path.to_path_buf(),
        });
    }
    // SAFETY: the map is read-only and lives only inside this call; a file truncated
    // underneath would fault, as with any mmap reader (llama.cpp maps it the same way).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    parse(&map, path, file_bytes)
}

/// The check before llama.cpp sees a file: a readable header that has tensors. The
/// message says what is wrong with the file (the caller names the file).
pub fn check_file(path: &Path) -> Result<GgufInfo, String> {
    let info = read(path).map_err(|e| match e {
        GgufError::Io { source, .. } => source.to_string(),
        GgufError::NotGguf { .. } => NOT_GGUF.into(),
        GgufError::Damaged {
            offset, problem, ..
        } => damaged_at(offset, &problem),
    })?;
    if info.tensors == 0 {
        return Err(NO_TENSORS.into());
    }
    Ok(info)
}

const NOT_GGUF: &str = "not a GGUF file (the first bytes are not \"GGUF\")";
const NO_TENSORS: &str = "GGUF file has no tensors (vocabulary-only or empty file)";

fn damaged_at(offset: usize, problem: &str) -> String {
    format!("damaged or truncated GGUF header at byte {offset}: {problem}")
}

/// The cheap check of a file whose header is read in full later (before llama.cpp
/// sees it): the magic, a version harvey reads and at least one tensor, from the first
/// 24 bytes. The message says what is wrong, as [`check_file`]'s does.
pub fn check_start(path: &Path) -> Result<(), String> {
    use std::io::Read;
    let mut head = Vec::with_capacity(24);
    std::fs::File::open(path)
        .and_then(|f| f.take(24).read_to_end(&mut head))
        .map_err(|e| e.to_string())?;
    if head.get(..4) != Some(MAGIC.as_slice()) {
        return Err(NOT_GGUF.into());
    }
    let mut r = Reader {
        bytes: &head,
        at: 4,
    };
    match r.start() {
        Err((offset, problem)) => Err(damaged_at(offset, &problem)),
        Ok((_, 0, _)) => Err(NO_TENSORS.into()),
        Ok(_) => Ok(()),
    }
}

/// Parses a header held in memory (`path` only names it in errors).
pub fn parse(bytes: &[u8], path: &Path, file_bytes: u64) -> Result<GgufInfo, GgufError> {
    if bytes.get(..4) != Some(MAGIC.as_slice()) {
        return Err(GgufError::NotGguf {
            path: path.to_path_buf(),
        });
    }
    let mut r = Reader { bytes, at: 4 };
    let damaged = |offset, problem: String| GgufError::Damaged {
        path: path.to_path_buf(),
        offset,
        problem,
    };
    let header = (|| -> Result<Header, (usize, String)> {
        let (version, tensors, kvs) = r.start()?;
        let mut h = Header {
            version,
            tensors,
            ..Header::default()
        };
        for _ in 0..kvs {
            let key = r.string()?;
            let kind = r.u32()?;
            h.take(&key, kind, &mut r)?;
        }
        for _ in 0..tensors {
            r.string()?;
            let dims = r.u32()?;
            if dims > 8 {
                return Err((r.at, format!("a tensor with {dims} dimensions")));
            }
            let mut n: u64 = 1;
            for _ in 0..dims {
                n = n.saturating_mul(r.u64()?);
            }
            r.u32()?; // element type
            r.u64()?; // data offset
            h.parameters = h.parameters.saturating_add(n);
        }
        Ok(h)
    })()
    .map_err(|(offset, problem)| damaged(offset, problem))?;
    let arch = header.architecture.clone().unwrap_or_default();
    let context_key = format!("{arch}.context_length");
    let pooling_key = format!("{arch}.pooling_type");
    let embedding = header.ints.contains_key(&pooling_key)
        || matches!(
            arch.as_str(),
            "bert" | "nomic-bert" | "jina-bert-v2" | "t5encoder"
        );
    Ok(GgufInfo {
        path: path.to_path_buf(),
        file_bytes,
        version: header.version,
        architecture: arch,
        name: header.name,
        parameters: header.parameters,
        tensors: header.tensors,
        quantization: header.file_type.map(quantization_name),
        training_context: header.ints.get(&context_key).copied(),
        has_chat_template: header.has_template,
        template_fallback: (!header.has_template && !embedding).then(|| {
            let arch = header.architecture.clone().unwrap_or_default();
            let has = |t: &str| header.turn_tokens.iter().any(|x| x == t);
            let (name, why) = crate::model::template::fallback(&arch, &has);
            format!("{name} ({why})")
        }),
        embedding,
    })
}

#[derive(Default)]
struct Header {
    version: u32,
    tensors: u64,
    architecture: Option<String>,
    name: Option<String>,
    file_type: Option<u64>,
    has_template: bool,
    /// Turn tokens of the vocabulary that choose a fallback template.
    turn_tokens: Vec<String>,
    /// Integer keys that may matter (`<arch>.context_length`, `<arch>.pooling_type`).
    ints: std::collections::HashMap<String, u64>,
    parameters: u64,
}

impl Header {
    /// Reads one value of type `kind`, keeping what a description needs.
    fn take(&mut self, key: &str, kind: u32, r: &mut Reader<'_>) -> Result<(), (usize, String)> {
        match (key, kind) {
            ("general.architecture", STRING) => self.architecture = Some(r.string()?),
            ("general.name", STRING) => self.name = Some(r.string()?),
            ("tokenizer.chat_template", STRING) => {
                self.has_template = !r.string()?.trim().is_empty();
            }
            ("tokenizer.ggml.tokens", ARRAY) => self.turn_tokens = r.marker_strings()?,
            (_, UINT8..=INT32 | UINT64 | INT64) => {
                let v = r.int(kind)?;
                if key == "general.file_type" {
                    self.file_type = Some(v);
                } else if key.ends_with(".context_length") || key.ends_with(".pooling_type") {
                    self.ints.insert(key.to_string(), v);
                }
            }
            _ => r.skip(kind, 0)?,
        }
        Ok(())
    }
}

const UINT8: u32 = 0;
const INT32: u32 = 5;
const FLOAT32: u32 = 6;
const BOOL: u32 = 7;
const STRING: u32 = 8;
const ARRAY: u32 = 9;
const UINT64: u32 = 10;
const INT64: u32 = 11;
const FLOAT64: u32 = 12;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// The fixed start after the magic: version (2 or 3), tensor count, key count.
    fn start(&mut self) -> Result<(u32, u64, u64), (usize, String)> {
        let version = self.u32()?;
        if !(2..=3).contains(&version) {
            return Err((
                4,
                format!("version {version} (harvey reads versions 2 and 3)"),
            ));
        }
        Ok((version, self.u64()?, self.u64()?))
    }

    fn take(&mut self, n: u64) -> Result<&[u8], (usize, String)> {
        let start = self.at;
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| start.checked_add(n))
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| (start, format!("{n} bytes wanted, the file ends first")))?;
        self.at = end;
        Ok(&self.bytes[start..end])
    }

    fn u32(&mut self) -> Result<u32, (usize, String)> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, (usize, String)> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn string(&mut self) -> Result<String, (usize, String)> {
        let n = self.u64()?;
        let at = self.at;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| (at, "a string that is not UTF-8".into()))
    }

    /// An integer of any width (negative values read as 0: none of the kept keys is).
    fn int(&mut self, kind: u32) -> Result<u64, (usize, String)> {
        let width = scalar_width(kind).unwrap_or(8);
        let b = self.take(width)?;
        let mut a = [0u8; 8];
        a[..b.len()].copy_from_slice(b);
        let v = u64::from_le_bytes(a);
        let signed = matches!(kind, 1 | 3 | 5 | 11);
        let negative = signed && b.last().is_some_and(|x| x & 0x80 != 0);
        Ok(if negative { 0 } else { v })
    }

    /// An array value: the strings of it that are fallback turn tokens (others skipped).
    fn marker_strings(&mut self) -> Result<Vec<String>, (usize, String)> {
        let inner = self.u32()?;
        let n = self.u64()?;
        let mut found = Vec::new();
        for _ in 0..n {
            if inner != STRING {
                self.skip(inner, 1)?;
                continue;
            }
            let len = self.u64()?;
            let bytes = self.take(len)?;
            if let Some(t) =
                crate::model::template::fallback_tokens().find(|t| t.as_bytes() == bytes)
            {
                found.push(t.to_string());
            }
        }
        Ok(found)
    }

    fn skip(&mut self, kind: u32, depth: u32) -> Result<(), (usize, String)> {
        match kind {
            STRING => {
                let n = self.u64()?;
                self.take(n)?;
            }
            ARRAY => {
                if depth > 2 {
                    return Err((self.at, "arrays nested too deep".into()));
                }
                let inner = self.u32()?;
                let n = self.u64()?;
                match scalar_width(inner) {
                    Some(w) => {
                        self.take(n.saturating_mul(w))?;
                    }
                    None => {
                        for _ in 0..n {
                            self.skip(inner, depth + 1)?;
                        }
                    }
                }
            }
            k => match scalar_width(k) {
                Some(w) => {
                    self.take(w)?;
                }
                None => return Err((self.at, format!("unknown value type {k}"))),
            },
        }
        Ok(())
    }
}

fn scalar_width(kind: u32) -> Option<u64> {
    Some(match kind {
        0 | 1 | BOOL => 1,
        2 | 3 => 2,
        4 | INT32 | FLOAT32 => 4,
        UINT64 | INT64 | FLOAT64 => 8,
        _ => return None,
    })
}

/// llama.cpp's names for `general.file_type`.
fn quantization_name(t: u64) -> String {
    let name = match t {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        32 => "BF16",
        other => return format!("type {other}"),
    };
    name.to_string()
}

/// `135M`, `1.5B`: a parameter count for people.
pub fn human_count(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.1}B", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.0}M", n as f64 / 1e6),
        n => format!("{n}"),
    }
}

/// Small valid headers for tests elsewhere.
#[cfg(test)]
pub(crate) mod sample {
    use super::*;

    /// A header written by hand: four keys (`arch` first), one 2-D tensor.
    pub fn header(arch: &str) -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(1u64.to_le_bytes()); // tensors
        b.extend(4u64.to_le_bytes()); // keys
        let string = |b: &mut Vec<u8>, s: &str| {
            b.extend((s.len() as u64).to_le_bytes());
            b.extend(s.as_bytes());
        };
        string(&mut b, "general.architecture");
        b.extend(STRING.to_le_bytes());
        string(&mut b, arch);
        string(&mut b, &format!("{arch}.context_length"));
        b.extend(4u32.to_le_bytes());
        b.extend(8192u32.to_le_bytes());
        string(&mut b, "tokenizer.ggml.scores");
        b.extend(ARRAY.to_le_bytes());
        b.extend(FLOAT32.to_le_bytes());
        b.extend(3u64.to_le_bytes());
        b.extend([0u8; 12]);
        string(&mut b, "general.file_type");
        b.extend(4u32.to_le_bytes());
        b.extend(15u32.to_le_bytes());
        string(&mut b, "token_embd.weight");
        b.extend(2u32.to_le_bytes());
        b.extend(64u64.to_le_bytes());
        b.extend(1000u64.to_le_bytes());
        b.extend(12u32.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b
    }
}

#[cfg(test)]
mod tests {
    use super::sample::header;
    use super::*;

    fn tiny() -> Vec<u8> {
        header("llama")
    }

    #[test]
    fn a_header_is_described() {
        let bytes = tiny();
        let info = parse(&bytes, Path::new("t.gguf"), bytes.len() as u64).unwrap();
        assert_eq!(info.architecture, "llama");
        assert_eq!(info.training_context, Some(8192));
        assert_eq!(info.quantization.as_deref(), Some("Q4_K_M"));
        assert_eq!(info.parameters, 64_000);
        assert!(!info.has_chat_template && !info.embedding);
        // No template and no turn tokens in the list: what harvey would fall back to.
        assert_eq!(
            info.template_fallback.as_deref(),
            Some("llama2 (architecture llama without Llama 3, ChatML or Mistral turn tokens)")
        );
        let bytes = header("gemma3");
        let info = parse(&bytes, Path::new("g.gguf"), bytes.len() as u64).unwrap();
        assert_eq!(
            info.template_fallback.as_deref(),
            Some("gemma (architecture gemma3)")
        );
    }

    #[test]
    fn the_cheap_check_reads_the_start_and_says_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let good = tiny();
        assert_eq!(check_start(&write("good.gguf", &good)), Ok(()));
        // Only the start is read: a file cut after it passes here and fails the full check.
        let cut = write("cut.gguf", &good[..40]);
        assert_eq!(check_start(&cut), Ok(()));
        assert!(check_file(&cut)
            .unwrap_err()
            .starts_with("damaged or truncated"));
        let short = check_start(&write("short.gguf", &good[..12])).unwrap_err();
        assert!(
            short.starts_with("damaged or truncated GGUF header at byte"),
            "{short}"
        );
        let text = check_start(&write("text.gguf", b"hello, world")).unwrap_err();
        assert_eq!(text, NOT_GGUF);
        let mut v9 = good.clone();
        v9[4..8].copy_from_slice(&9u32.to_le_bytes());
        let v9 = check_start(&write("v9.gguf", &v9)).unwrap_err();
        assert!(
            v9.contains("version 9 (harvey reads versions 2 and 3)"),
            "{v9}"
        );
        let mut empty = good.clone();
        empty[8..16].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(
            check_start(&write("empty.gguf", &empty)),
            Err(NO_TENSORS.into())
        );
        let missing = check_start(&dir.path().join("missing.gguf")).unwrap_err();
        assert!(missing.contains("No such file"), "{missing}");
    }

    #[test]
    fn every_cut_of_a_header_is_an_error_naming_an_offset() {
        let bytes = tiny();
        for n in 0..bytes.len() {
            match parse(&bytes[..n], Path::new("t.gguf"), n as u64) {
                Err(GgufError::Damaged { offset, .. }) => assert!(offset <= n),
                Err(GgufError::NotGguf { .. }) => assert!(n < 4),
                other => panic!("cut at {n}: {other:?}"),
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_after_the_magic_never_panic(tail in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let mut bytes = b"GGUF".to_vec();
            bytes.extend(tail);
            let _ = parse(&bytes, Path::new("r.gguf"), bytes.len() as u64);
        }
    }
}
