//! Pure prompt arithmetic: which parts of a rendered chat are message text, how much of
//! the KV cache can be kept, and how a prefill is cut into decode-sized chunks.
//!
//! No llama.cpp here; the engine calls these with token ids and strings.

/// A piece of a rendered prompt: template scaffolding (special tokens allowed) or text a
/// person or tool wrote (special-token parsing off, so `<|im_start|>` stays plain text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'a> {
    Template(&'a str),
    Content(&'a str),
}

/// Splits `rendered` into template and content segments by finding each message's text,
/// in order, in the rendered string.
///
/// Returns `None` when a message's text cannot be found verbatim (a template that rewrites
/// content); the caller must then refuse rather than tokenize content with specials on.
pub fn split_rendered<'a>(rendered: &'a str, contents: &[&str]) -> Option<Vec<Segment<'a>>> {
    let mut segments = Vec::with_capacity(contents.len() * 2 + 1);
    let mut pos = 0;
    for content in contents {
        let needle = locate_content(&rendered[pos..], content)?;
        let (start, len) = (pos + needle.0, needle.1);
        if start > pos {
            segments.push(Segment::Template(&rendered[pos..start]));
        }
        if len > 0 {
            segments.push(Segment::Content(&rendered[start..start + len]));
        }
        pos = start + len;
    }
    if pos < rendered.len() {
        segments.push(Segment::Template(&rendered[pos..]));
    }
    Some(segments)
}

/// Finds `content` in `haystack`: verbatim first, then trimmed (templates often trim).
fn locate_content(haystack: &str, content: &str) -> Option<(usize, usize)> {
    if content.is_empty() {
        return Some((0, 0));
    }
    if let Some(at) = haystack.find(content) {
        return Some((at, content.len()));
    }
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return Some((0, 0));
    }
    haystack.find(trimmed).map(|at| (at, trimmed.len()))
}

/// Length of the common prefix of the tokens in the KV cache and the new prompt.
pub fn common_prefix<T: PartialEq>(cached: &[T], prompt: &[T]) -> usize {
    cached
        .iter()
        .zip(prompt)
        .take_while(|(a, b)| a == b)
        .count()
}

/// How many cached tokens to keep for `prompt`: the common prefix, but never the whole
/// prompt, because sampling needs fresh logits from at least one decoded token.
pub fn reusable_prefix<T: PartialEq>(cached: &[T], prompt: &[T]) -> usize {
    let common = common_prefix(cached, prompt);
    if common == prompt.len() {
        common.saturating_sub(1)
    } else {
        common
    }
}

/// Start/end offsets of the prefill chunks for `n` tokens, each at most `n_batch` long.
pub fn chunk_ranges(n: usize, n_batch: usize) -> Vec<(usize, usize)> {
    let step = n_batch.max(1);
    (0..n)
        .step_by(step)
        .map(|start| (start, (start + step).min(n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_marks_message_text_as_content() {
        let rendered = "<|im_start|>system\nBe brief<|im_end|>\n<|im_start|>user\nhi <|im_start|>x<|im_end|>\n<|im_start|>assistant\n";
        let segs = split_rendered(rendered, &["Be brief", "hi <|im_start|>x"]).unwrap();
        assert_eq!(
            segs,
            vec![
                Segment::Template("<|im_start|>system\n"),
                Segment::Content("Be brief"),
                Segment::Template("<|im_end|>\n<|im_start|>user\n"),
                Segment::Content("hi <|im_start|>x"),
                Segment::Template("<|im_end|>\n<|im_start|>assistant\n"),
            ]
        );
    }

    #[test]
    fn split_finds_trimmed_content_and_refuses_rewritten_content() {
        let rendered = "[INST] hello [/INST]";
        let segs = split_rendered(rendered, &["  hello\n"]).unwrap();
        assert_eq!(segs[1], Segment::Content("hello"));
        assert!(split_rendered(rendered, &["HELLO"]).is_none());
    }

    #[test]
    fn split_handles_repeated_text_in_order() {
        let rendered = "<s>a</s><s>a</s>";
        let segs = split_rendered(rendered, &["a", "a"]).unwrap();
        let contents: Vec<_> = segs
            .iter()
            .filter(|s| matches!(s, Segment::Content(_)))
            .collect();
        assert_eq!(contents.len(), 2);
        assert_eq!(segs.last(), Some(&Segment::Template("</s>")));
    }

    #[test]
    fn reusable_prefix_table() {
        let cases: &[(&[u32], &[u32], usize)] = &[
            (&[], &[1, 2, 3], 0),
            (&[1, 2, 3], &[1, 2, 3, 4], 3),
            (&[1, 2, 3], &[1, 2, 3], 2),
            (&[1, 2, 9, 9], &[1, 2, 3], 2),
            (&[5], &[1, 2], 0),
            (&[1, 2, 3, 4, 5], &[1, 2], 1),
        ];
        for (cached, prompt, want) in cases {
            assert_eq!(
                reusable_prefix(cached, prompt),
                *want,
                "{cached:?} vs {prompt:?}"
            );
        }
    }

    #[test]
    fn chunks_never_exceed_batch() {
        assert_eq!(chunk_ranges(0, 4), vec![]);
        assert_eq!(chunk_ranges(4, 4), vec![(0, 4)]);
        assert_eq!(chunk_ranges(9, 4), vec![(0, 4), (4, 8), (8, 9)]);
        assert_eq!(chunk_ranges(3, 0), vec![(0, 1), (1, 2), (2, 3)]);
    }
}
