//! The full-text index as bytes: one layout for the copy built in memory and for the
//! file beside the index database (`harvey-index.db.postings`), so a process that finds
//! the file current maps it and searches at once, with nothing to build, and ranks
//! exactly as the process that built it (the same bytes, read by the same code).
//!
//! Little-endian. A fixed header (magic, version, the store's stamp, the BM25F settings,
//! counts, average field lengths, total length, a checksum of the header), then five
//! sections: one 48-byte record per document (field lengths, type, expiry, confidence,
//! update time, where its id is), the documents ordered by id (u32 each, for lookups by
//! id), one 16-byte entry per term sorted by its bytes (where its text and postings
//! are), the postings (document u32 and five u16 field frequencies, 14 bytes), and the
//! strings. Opening checks the header only, so it costs the same at 100 or 100k
//! memories; every read after that is bounds-checked, so a damaged body can give wrong
//! scores but never a crash. Files are written under a temporary name, synced and
//! renamed into place, never changed in place (see `index::fulltext`).

use std::io::Write;
use std::path::Path;

use crate::memory::types::MemoryType;
use crate::vector::Stamp;

use super::{Bm25, DocMeta, DocRef, FIELDS};

const MAGIC: &[u8; 8] = b"HRVYLEX\0";
const VERSION: u32 = 1;
const HEADER: usize = 144;
const DOC: usize = 48;
const BY_ID: usize = 4;
const TERM: usize = 16;
pub const POSTING: usize = 14;

/// The bytes of an index: built here, or a mapped file.
pub enum Bytes {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Bytes {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

/// What the header says (validated against the length of the bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Header {
    pub stamp: Stamp,
    pub params: Bm25,
    pub docs: usize,
    pub terms: usize,
    pub postings: usize,
    pub avg_len: [f32; FIELDS],
    pub strings: usize,
}

impl Header {
    fn docs_at(&self) -> usize {
        HEADER
    }
    fn by_id_at(&self) -> usize {
        self.docs_at() + self.docs * DOC
    }
    fn terms_at(&self) -> usize {
        self.by_id_at() + self.docs * BY_ID
    }
    fn postings_at(&self) -> usize {
        self.terms_at() + self.terms * TERM
    }
    fn strings_at(&self) -> usize {
        self.postings_at() + self.postings * POSTING
    }
    fn total(&self) -> usize {
        self.strings_at() + self.strings
    }

    fn encode(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER);
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&VERSION.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&self.stamp.store.to_le_bytes());
        h.extend_from_slice(&self.stamp.generation.to_le_bytes());
        for w in self.params.weights {
            h.extend_from_slice(&w.to_le_bytes());
        }
        h.extend_from_slice(&self.params.k1.to_le_bytes());
        h.extend_from_slice(&self.params.b.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&(self.params.prefix_min as u64).to_le_bytes());
        for n in [self.docs, self.terms, self.postings] {
            h.extend_from_slice(&(n as u64).to_le_bytes());
        }
        for a in self.avg_len {
            h.extend_from_slice(&a.to_le_bytes());
        }
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&(self.strings as u64).to_le_bytes());
        h.extend_from_slice(&(self.total() as u64).to_le_bytes());
        let sum = checksum(&h);
        h.extend_from_slice(&sum.to_le_bytes());
        h
    }

    /// The header of `bytes`, if it is one of this version whose sections fit exactly.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let h = bytes.get(..HEADER)?;
        if h.get(..8)? != MAGIC
            || u32_at(h, 8)? != VERSION
            || u64_at(h, 136)? != checksum(&h[..136])
        {
            return None;
        }
        let size = |at| usize::try_from(u64_at(h, at)?).ok();
        let mut weights = [0f32; FIELDS];
        for (i, w) in weights.iter_mut().enumerate() {
            *w = f32_at(h, 32 + 4 * i)?;
        }
        let mut avg_len = [0f32; FIELDS];
        for (i, a) in avg_len.iter_mut().enumerate() {
            *a = f32_at(h, 96 + 4 * i)?;
        }
        let prefix_min = u64_at(h, 64)?;
        let header = Self {
            stamp: Stamp {
                store: i64_at(h, 16)?,
                generation: i64_at(h, 24)?,
            },
            params: Bm25 {
                weights,
                k1: f32_at(h, 52)?,
                b: f32_at(h, 56)?,
                prefix_min: usize::try_from(prefix_min).unwrap_or(usize::MAX),
            },
            docs: size(72)?,
            terms: size(80)?,
            postings: size(88)?,
            avg_len,
            strings: size(120)?,
        };
        // Sizes that overflow cannot be the sizes of these bytes.
        let fits = header
            .docs
            .checked_mul(DOC + BY_ID)
            .zip(header.terms.checked_mul(TERM))
            .zip(header.postings.checked_mul(POSTING))
            .and_then(|((d, t), p)| {
                HEADER
                    .checked_add(d)?
                    .checked_add(t)?
                    .checked_add(p)?
                    .checked_add(header.strings)
            });
        (fits == Some(bytes.len()) && size(128)? == bytes.len()).then_some(header)
    }
}

/// FNV-1a over the header's bytes.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One term's postings while building: (document, frequency per field).
pub type Postings = Vec<(u32, [u16; FIELDS])>;

/// The bytes of an index over `docs` (with their field `lengths`) and `postings` (terms
/// in sorted order). None when a count does not fit the layout's u32 fields.
pub fn encode(
    stamp: Stamp,
    params: Bm25,
    docs: &[DocMeta],
    lengths: &[[u16; FIELDS]],
    avg_len: [f32; FIELDS],
    postings: &std::collections::BTreeMap<String, Postings>,
) -> Option<Vec<u8>> {
    let mut strings: Vec<u8> = Vec::new();
    let mut doc_bytes = Vec::with_capacity(docs.len() * DOC);
    for (meta, len) in docs.iter().zip(lengths) {
        for l in len {
            doc_bytes.extend_from_slice(&l.to_le_bytes());
        }
        let code = MemoryType::ALL
            .iter()
            .position(|t| *t == meta.mtype)
            .unwrap_or(0) as u8;
        doc_bytes.extend_from_slice(&[code, u8::from(meta.expires.is_some()), 0, 0, 0, 0]);
        doc_bytes.extend_from_slice(&meta.expires.unwrap_or(0).to_le_bytes());
        doc_bytes.extend_from_slice(&meta.confidence.to_le_bytes());
        doc_bytes.extend_from_slice(&meta.updated.to_le_bytes());
        doc_bytes.extend_from_slice(&u32::try_from(strings.len()).ok()?.to_le_bytes());
        doc_bytes.extend_from_slice(&u32::try_from(meta.id.len()).ok()?.to_le_bytes());
        strings.extend_from_slice(meta.id.as_bytes());
    }
    let mut order: Vec<u32> = (0..u32::try_from(docs.len()).ok()?).collect();
    order.sort_by(|a, b| docs[*a as usize].id.cmp(&docs[*b as usize].id));
    let mut term_bytes = Vec::with_capacity(postings.len() * TERM);
    let mut posting_bytes = Vec::new();
    let mut count = 0usize;
    for (term, list) in postings {
        for v in [strings.len(), term.len(), count, list.len()] {
            term_bytes.extend_from_slice(&u32::try_from(v).ok()?.to_le_bytes());
        }
        strings.extend_from_slice(term.as_bytes());
        for (doc, tf) in list {
            posting_bytes.extend_from_slice(&doc.to_le_bytes());
            for f in tf {
                posting_bytes.extend_from_slice(&f.to_le_bytes());
            }
        }
        count += list.len();
    }
    u32::try_from(strings.len()).ok()?;
    let header = Header {
        stamp,
        params,
        docs: docs.len(),
        terms: postings.len(),
        postings: count,
        avg_len,
        strings: strings.len(),
    };
    let mut out = header.encode();
    out.reserve(header.total() - HEADER);
    out.extend_from_slice(&doc_bytes);
    out.extend(order.iter().flat_map(|d| d.to_le_bytes()));
    out.extend_from_slice(&term_bytes);
    out.extend_from_slice(&posting_bytes);
    out.extend_from_slice(&strings);
    Some(out)
}

/// Writes `bytes` to `path` whole or not at all: under a temporary name (temporary
/// files of processes that died while writing are removed first), synced, then renamed
/// over the old file, which a process that mapped it keeps reading until it notices
/// the new stamp.
pub fn save(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::vector::remove_orphan_temps(path);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".tmp.{}.{nanos}", std::process::id()));
    let temp = std::path::PathBuf::from(temp);
    let written = (|| {
        let mut file = std::fs::File::create_new(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Reads of an index's bytes (all bounds-checked; out of range reads as empty or zero).
pub struct View<'a> {
    pub header: &'a Header,
    pub bytes: &'a [u8],
}

impl<'a> View<'a> {
    fn string(&self, at: usize, len: usize) -> &'a str {
        let start = self.header.strings_at().saturating_add(at);
        self.bytes
            .get(start..start.saturating_add(len))
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }

    fn doc_bytes(&self, doc: u32) -> &'a [u8] {
        let at = self.header.docs_at() + doc as usize * DOC;
        self.bytes.get(at..at + DOC).unwrap_or(&[])
    }

    /// The field lengths of `doc`.
    pub fn lengths(&self, doc: u32) -> [u16; FIELDS] {
        let d = self.doc_bytes(doc);
        std::array::from_fn(|f| u16_at(d, 2 * f).unwrap_or(0))
    }

    /// Document `doc`'s fields, borrowed from the bytes.
    pub fn doc(&self, doc: u32) -> DocRef<'a> {
        let d = self.doc_bytes(doc);
        let byte = |at: usize| d.get(at).copied().unwrap_or(0);
        let at = u32_at(d, 40).unwrap_or(0) as usize;
        let len = u32_at(d, 44).unwrap_or(0) as usize;
        DocRef {
            id: self.string(at, len),
            mtype: MemoryType::ALL
                .get(byte(10) as usize)
                .copied()
                .unwrap_or(MemoryType::ToolUse),
            expires: (byte(11) != 0).then(|| i64_at(d, 16).unwrap_or(0)),
            confidence: f64_at(d, 24).unwrap_or(0.0),
            updated: i64_at(d, 32).unwrap_or(0),
        }
    }

    /// The document whose id is `id`.
    pub fn find(&self, id: &str) -> Option<u32> {
        let at = self.header.by_id_at();
        let doc = |i: usize| u32_at(self.bytes, at + i * BY_ID).unwrap_or(0);
        let i = partition(self.header.docs, |i| self.doc(doc(i)).id < id);
        (i < self.header.docs && self.doc(doc(i)).id == id).then(|| doc(i))
    }

    fn term(&self, i: usize) -> (&'a str, usize, usize) {
        let at = self.header.terms_at() + i * TERM;
        let field = |k: usize| u32_at(self.bytes, at + 4 * k).unwrap_or(0) as usize;
        (self.string(field(0), field(1)), field(2), field(3))
    }

    /// Indices of the terms equal to `term` or, with `prefix`, starting with it (sorted
    /// terms, so they are one range).
    pub fn terms_from(&self, term: &str, prefix: bool) -> std::ops::Range<usize> {
        let first = partition(self.header.terms, |i| self.term(i).0 < term);
        let mut end = first;
        while end < self.header.terms {
            let t = self.term(end).0;
            if !(t == term || (prefix && t.starts_with(term))) {
                break;
            }
            end += 1;
        }
        first..end
    }

    /// How many documents hold `term` (an exact term).
    pub fn df(&self, term: &str) -> usize {
        let i = partition(self.header.terms, |i| self.term(i).0 < term);
        match (i < self.header.terms).then(|| self.term(i)) {
            Some((t, _, len)) if t == term => len,
            _ => 0,
        }
    }

    /// The postings of term `i`: (document, frequency per field).
    pub fn postings(&self, i: usize) -> impl Iterator<Item = (u32, [u16; FIELDS])> + 'a {
        let (_, start, len) = self.term(i);
        let from = self
            .header
            .postings_at()
            .saturating_add(start.saturating_mul(POSTING));
        let list = self
            .bytes
            .get(from..from.saturating_add(len.saturating_mul(POSTING)))
            .unwrap_or(&[]);
        list.chunks_exact(POSTING).map(|p| {
            let doc = u32_at(p, 0).unwrap_or(0);
            (
                doc,
                std::array::from_fn(|f| u16_at(p, 4 + 2 * f).unwrap_or(0)),
            )
        })
    }
}

/// The first index in `0..n` for which `before` is false (`before` is true, then false).
fn partition(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

fn array<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    array(b, at).map(u16::from_le_bytes)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    array(b, at).map(u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    array(b, at).map(u64::from_le_bytes)
}

fn i64_at(b: &[u8], at: usize) -> Option<i64> {
    array(b, at).map(i64::from_le_bytes)
}

fn f32_at(b: &[u8], at: usize) -> Option<f32> {
    array(b, at).map(f32::from_le_bytes)
}

fn f64_at(b: &[u8], at: usize) -> Option<f64> {
    array(b, at).map(f64::from_le_bytes)
}
