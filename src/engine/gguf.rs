//! A cheap sanity check of a GGUF file before llama.cpp sees it, so a wrong or truncated
//! file gives a message that says what is wrong instead of a null pointer.

use std::io::Read;
use std::path::Path;

const MAGIC: &[u8; 4] = b"GGUF";
/// Magic (4) + version (4) + tensor count (8) + metadata count (8).
const HEADER_LEN: usize = 24;

/// What the fixed-size header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GgufHeader {
    pub version: u32,
    pub n_tensors: u64,
    pub n_kv: u64,
}

/// Parses the fixed header; the error says what a person should know about the file.
pub fn parse_header(bytes: &[u8]) -> Result<GgufHeader, String> {
    if bytes.len() < 4 || &bytes[..4] != MAGIC {
        return Err("not a GGUF file (the first bytes are not \"GGUF\")".into());
    }
    if bytes.len() < HEADER_LEN {
        return Err(format!(
            "truncated GGUF file: {} bytes, the header alone needs {HEADER_LEN}",
            bytes.len()
        ));
    }
    let u32_at =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let u64_at = |at: usize| u64::from(u32_at(at)) | (u64::from(u32_at(at + 4)) << 32);
    let header = GgufHeader {
        version: u32_at(4),
        n_tensors: u64_at(8),
        n_kv: u64_at(16),
    };
    if !(2..=3).contains(&header.version) {
        return Err(format!("unsupported GGUF version {}", header.version));
    }
    if header.n_tensors == 0 {
        return Err("GGUF file has no tensors (vocabulary-only or empty file)".into());
    }
    Ok(header)
}

/// Reads and checks the header of the file at `path`.
pub fn check_file(path: &Path) -> Result<GgufHeader, String> {
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    file.by_ref()
        .take(HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    parse_header(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(version: u32, tensors: u64) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend(version.to_le_bytes());
        b.extend(tensors.to_le_bytes());
        b.extend(7u64.to_le_bytes());
        b
    }

    #[test]
    fn header_table() {
        assert_eq!(
            parse_header(&header(3, 272)),
            Ok(GgufHeader {
                version: 3,
                n_tensors: 272,
                n_kv: 7
            })
        );
        assert!(parse_header(b"PK\x03\x04 zip file")
            .unwrap_err()
            .contains("not a GGUF"));
        assert!(parse_header(b"").unwrap_err().contains("not a GGUF"));
        assert!(parse_header(&header(3, 1)[..10])
            .unwrap_err()
            .contains("truncated"));
        assert!(parse_header(&header(9, 1))
            .unwrap_err()
            .contains("version 9"));
        assert!(parse_header(&header(3, 0))
            .unwrap_err()
            .contains("no tensors"));
    }
}
