//! int8 vectors for the scan copy: one f32 scale per vector (symmetric: the largest
//! component maps to ±127) and one signed byte per component.
//!
//! The query stays f32, so only the stored side is rounded: a component is off by at most
//! half a step (`scale / 2`), and a dot product with a unit query by at most
//! `scale / 2 · Σ|q|`. `benches/recall_quality.rs` measures what that does to recall.
//! Pure arithmetic, no I/O.

/// The largest code; -127..=127 keeps the range symmetric (no lone -128).
const MAX_CODE: f32 = 127.0;

/// Lanes summed separately so the compiler keeps them in SIMD registers (see `super::dot`).
const LANES: usize = 8;

/// Bytes of one record: the scale, then `dim` codes, padded to 4 so every scale stays
/// aligned for the next record.
pub fn record_len(dim: usize) -> usize {
    (4 + dim + 3) & !3
}

/// Writes `v` as one record (`record_len(v.len())` bytes) into `out`.
pub fn encode(v: &[f32], out: &mut Vec<u8>) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 && max.is_finite() {
        max / MAX_CODE
    } else {
        0.0
    };
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(v.iter().map(|x| code(*x, scale) as u8));
    let pad = record_len(v.len()) - 4 - v.len();
    out.extend(std::iter::repeat_n(0u8, pad));
}

fn code(x: f32, scale: f32) -> i8 {
    if scale == 0.0 || !x.is_finite() {
        return 0;
    }
    (x / scale).round().clamp(-MAX_CODE, MAX_CODE) as i8
}

/// The f32s a record stands for (tests; the scan never expands).
#[cfg(test)]
pub fn decode(record: &[u8], dim: usize) -> Vec<f32> {
    let scale = scale_of(record);
    record[4..4 + dim]
        .iter()
        .map(|b| f32::from(*b as i8) * scale)
        .collect()
}

fn scale_of(record: &[u8]) -> f32 {
    f32::from_le_bytes([record[0], record[1], record[2], record[3]])
}

/// `q · v` for the vector `record` stands for; `q.len()` is the dimension.
pub fn dot(q: &[f32], record: &[u8]) -> f32 {
    let codes = &record[4..4 + q.len()];
    let mut acc = [0f32; LANES];
    let whole = q.len() - q.len() % LANES;
    for (x, c) in q[..whole]
        .chunks_exact(LANES)
        .zip(codes[..whole].chunks_exact(LANES))
    {
        for ((sum, x), c) in acc.iter_mut().zip(x).zip(c) {
            *sum += x * f32::from(*c as i8);
        }
    }
    let tail: f32 = q[whole..]
        .iter()
        .zip(&codes[whole..])
        .map(|(x, c)| x * f32::from(*c as i8))
        .sum();
    (acc.iter().sum::<f32>() + tail) * scale_of(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut s = seed | 1;
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        crate::vector::normalize(&mut v);
        v
    }

    #[test]
    fn every_component_is_within_half_a_step() {
        for (seed, dim) in [(1, 1), (2, 7), (3, 384), (4, 385), (5, 768)] {
            let v = unit(seed, dim);
            let mut rec = Vec::new();
            encode(&v, &mut rec);
            assert_eq!(rec.len(), record_len(dim));
            assert_eq!(rec.len() % 4, 0);
            let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
            let step = max / 127.0;
            for (x, y) in v.iter().zip(decode(&rec, dim)) {
                assert!((x - y).abs() <= step / 2.0 + 1e-7, "dim {dim}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn dot_is_within_the_bound_and_matches_the_expanded_vector() {
        for (seed, dim) in [(7, 3), (8, 8), (9, 384), (10, 385)] {
            let v = unit(seed, dim);
            let q = unit(seed + 100, dim);
            let mut rec = Vec::new();
            encode(&v, &mut rec);
            let exact = crate::vector::dot(&q, &v);
            let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
            let bound = max / 127.0 / 2.0 * q.iter().map(|x| x.abs()).sum::<f32>();
            let got = dot(&q, &rec);
            assert!(
                (got - exact).abs() <= bound + 1e-5,
                "dim {dim}: {got} vs {exact}"
            );
            let expanded = crate::vector::dot(&q, &decode(&rec, dim));
            assert!((got - expanded).abs() < 1e-5, "dim {dim}");
        }
        let v = unit(11, 384);
        let mut rec = Vec::new();
        encode(&v, &mut rec);
        assert!((dot(&v, &rec) - 1.0).abs() < 0.01, "a vector with itself");
    }

    #[test]
    fn zero_and_non_finite_vectors_never_poison_a_score() {
        for v in [vec![0.0; 5], vec![f32::INFINITY, 0.5]] {
            let mut rec = Vec::new();
            encode(&v, &mut rec);
            assert_eq!(dot(&vec![1.0; v.len()], &rec), 0.0, "{v:?}");
        }
        let mut rec = Vec::new();
        encode(&[f32::NAN, 1.0], &mut rec);
        assert_eq!(
            decode(&rec, 2),
            vec![0.0, 1.0],
            "a NaN component counts as zero"
        );
    }
}
