//! Text helpers shared by modules that prepare text for the model (the rolling summary,
//! end-of-session mining, files read into the context). Pure functions on strings: no
//! engine, no I/O; sizes are measured by a caller-given cost (tokens of the loaded model).
//! [`front_matter`] reads and writes the YAML header of memory files (and the Go tool's
//! YAML beside them) for `memory` and `session`.

pub mod asked;
pub mod back_reference;
pub mod duration;
pub mod front_matter;
pub mod words;

/// Splits `lines` into consecutive groups whose joined size (by `cost`) stays within
/// `limit`; a single oversized line is cut into pieces by characters.
pub fn chunk_lines(lines: &[String], limit: usize, cost: &dyn Fn(&str) -> usize) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    for line in lines.iter().flat_map(|l| split_oversized(l, limit, cost)) {
        let candidate = if current.is_empty() {
            line.clone()
        } else {
            format!("{current}\n{line}")
        };
        if cost(&candidate) > limit && !current.is_empty() {
            chunks.push(std::mem::take(&mut current));
            current = line;
        } else {
            current = candidate;
        }
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

fn split_oversized(line: &str, limit: usize, cost: &dyn Fn(&str) -> usize) -> Vec<String> {
    if cost(line) <= limit {
        return vec![line.to_string()];
    }
    let chars: Vec<char> = line.chars().collect();
    let pieces = cost(line).div_ceil(limit.max(1)) + 1;
    chars
        .chunks(chars.len().div_ceil(pieces).max(1))
        .map(|c| c.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_fit_the_limit() {
        let words = |t: &str| t.split_whitespace().count();
        let lines: Vec<String> = (0..10)
            .map(|i| format!("line {i} has five words"))
            .collect();
        let chunks = chunk_lines(&lines, 12, &words);
        assert!(chunks.iter().all(|c| words(c) <= 12), "{chunks:?}");
        assert_eq!(chunks.join("\n"), lines.join("\n"));
        let huge = vec!["w ".repeat(50)];
        let chunks = chunk_lines(&huge, 12, &words);
        assert!(
            chunks.len() >= 5 && chunks.iter().all(|c| words(c) <= 12),
            "{chunks:?}"
        );
    }
}
