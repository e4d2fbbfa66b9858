//! Vectors next to SQLite rows: content-hash keys, f32 BLOBs, brute-force top-k (fusion
//! with full text is `memory::rank`). The `vectors` table, its stamp and the row reads
//! are in `storage::vectors`; this module holds the arithmetic and the scan copy.
//!
//! Every store (memories, RAG stores, the knowledge base) keeps a `vectors` table keyed by
//! (hash of the embedded text, embedder id). Rows point at a hash, never own a vector, so
//! rebuilding a store's rows keeps every vector, a changed text simply misses and is
//! embedded again, and vectors of another embedder are never compared with this one's.
//! Search is an exact scan over an int8 copy in a memory-mapped file ([`VectorCache`]):
//! `benches/retrieval.rs` measures it at 10k and 100k rows, `benches/vector_memory.rs`
//! what it costs in resident memory.

mod cache;
mod key;
mod quant;
mod sidecar;

pub use cache::{Filler, VectorCache};
pub use key::Key;
pub use sidecar::{path_for as sidecar_path, remove_orphans as remove_orphan_temps, Stamp};

use sha2::{Digest, Sha256};

/// Hex sha256 (first 16 bytes) of the exact text that is embedded.
pub fn text_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Little-endian f32s.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The f32s of a stored vector, appended to `out`; false (nothing appended) when the
/// blob does not hold `dim` of them.
pub fn extend_from_blob(out: &mut Vec<f32>, blob: &[u8], dim: usize) -> bool {
    if blob.len() != dim * 4 {
        return false;
    }
    out.extend(
        blob.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    );
    true
}

/// Lanes summed separately, so the compiler can keep them in SIMD registers (a single
/// running sum must be added in order, which forbids vectorizing it).
const LANES: usize = 8;

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; LANES];
    let whole = n - n % LANES;
    for (x, y) in a[..whole]
        .chunks_exact(LANES)
        .zip(b[..whole].chunks_exact(LANES))
    {
        for ((sum, x), y) in acc.iter_mut().zip(x).zip(y) {
            *sum += x * y;
        }
    }
    let tail: f32 = a[whole..].iter().zip(&b[whole..]).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot = dot(a, b);
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// Keeps the `k` best (score, key) pairs seen.
pub struct TopK<K> {
    k: usize,
    items: Vec<(f32, K)>,
}

impl<K> TopK<K> {
    pub fn new(k: usize) -> Self {
        Self {
            k,
            items: Vec::with_capacity(k + 1),
        }
    }

    /// Whether a score could enter (cheap check before building the key).
    pub fn admits(&self, score: f32) -> bool {
        self.k > 0 && (self.items.len() < self.k || score > self.items[self.items.len() - 1].0)
    }

    pub fn push(&mut self, score: f32, key: K) {
        if !self.admits(score) {
            return;
        }
        let at = self.items.partition_point(|(s, _)| *s >= score);
        self.items.insert(at, (score, key));
        self.items.truncate(self.k);
    }

    /// Best first.
    pub fn into_sorted(self) -> Vec<(f32, K)> {
        self.items
    }
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn blob_round_trip_and_dot() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let blob = to_blob(&v);
        assert_eq!(blob.len(), 8);
        let mut back = Vec::new();
        assert!(extend_from_blob(&mut back, &blob, v.len()));
        assert!((dot(&v, &back) - 1.0).abs() < 1e-6);
        assert!(!extend_from_blob(&mut back, &blob, 1));
        assert_eq!(back.len(), 2, "a blob of the wrong size adds nothing");
    }

    #[test]
    fn dot_agrees_with_the_plain_sum_at_every_length() {
        for n in [0, 1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "n = {n}");
        }
        assert_eq!(
            dot(&[1.0, 2.0, 3.0], &[1.0, 1.0]),
            3.0,
            "the shorter length counts"
        );
    }

    #[test]
    fn topk_keeps_the_best_in_order() {
        let mut t = TopK::new(3);
        for (s, k) in [(0.1, "a"), (0.9, "b"), (0.5, "c"), (0.7, "d"), (0.2, "e")] {
            t.push(s, k);
        }
        let keys: Vec<&str> = t.into_sorted().into_iter().map(|(_, k)| k).collect();
        assert_eq!(keys, ["b", "d", "c"]);
    }

    #[test]
    fn hash_is_stable_and_text_sensitive() {
        assert_eq!(text_hash("abc"), text_hash("abc"));
        assert_ne!(text_hash("abc"), text_hash("abd"));
        assert_eq!(text_hash("abc").len(), 32);
    }
}
