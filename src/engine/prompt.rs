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

/// Stands for message `i` in a scaffold render: private-use characters no template writes,
/// so the template's own text is what lies between them.
pub fn placeholder(i: usize) -> String {
    format!("\u{E000}{i}\u{E001}")
}

/// The template's text around the placeholders of a render whose messages were
/// `placeholder(0..n)`: `n + 1` pieces. `None` unless each placeholder appears exactly
/// once, in order (a template that drops or repeats a message).
pub fn scaffold_pieces(scaffold: &str, n: usize) -> Option<Vec<&str>> {
    let mut pieces = Vec::with_capacity(n + 1);
    let mut rest = scaffold;
    for i in 0..n {
        let mark = placeholder(i);
        let (before, after) = rest.split_once(&mark)?;
        if after.contains(&mark) {
            return None;
        }
        pieces.push(before);
        rest = after;
    }
    pieces.push(rest);
    Some(pieces)
}

/// Splits `rendered` with the template's own pieces known (from [`scaffold_pieces`]):
/// piece 0, message 0, piece 1, … must follow each other exactly, so a message whose text
/// is itself template text (`<|im_end|>`, `<|im_start|>assistant`) is found where the
/// message is, never in the scaffolding. A message may appear trimmed. `None` when the
/// render does not follow the pieces (a template that rewrites content).
pub fn split_by_scaffold<'a>(
    rendered: &'a str,
    pieces: &[&str],
    contents: &[&str],
) -> Option<Vec<Segment<'a>>> {
    if pieces.len() != contents.len() + 1 {
        return None;
    }
    let mut segments = Vec::with_capacity(pieces.len() * 2);
    let mut pos = 0;
    for (i, piece) in pieces.iter().enumerate() {
        if !rendered[pos..].starts_with(piece) {
            return None;
        }
        if !piece.is_empty() {
            segments.push(Segment::Template(&rendered[pos..pos + piece.len()]));
        }
        pos += piece.len();
        let Some(content) = contents.get(i) else {
            break;
        };
        let next = pieces[i + 1];
        let len = [*content, content.trim()]
            .into_iter()
            .map(str::len)
            .find(|&len| {
                let rest = &rendered[pos..];
                rest.len() >= len
                    && rest.is_char_boundary(len)
                    && (rest[..len] == **content || rest[..len] == *content.trim())
                    && rest[len..].starts_with(next)
            })?;
        if len > 0 {
            segments.push(Segment::Content(&rendered[pos..pos + len]));
        }
        pos += len;
    }
    (pos == rendered.len()).then_some(segments)
}

/// Splits `rendered` into template and content segments by finding each message's text,
/// in order, in the rendered string. The fallback when [`split_by_scaffold`] cannot be
/// used: a message that is exactly template text may be matched in the scaffolding.
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

/// Which message a content segment of a split render belongs to: segments come in
/// message order, but an empty message has none, so each is matched to the next message
/// whose text (or trimmed text) it is.
pub struct ContentOwners<'a> {
    contents: &'a [&'a str],
    next: usize,
}

impl<'a> ContentOwners<'a> {
    pub fn new(contents: &'a [&'a str]) -> Self {
        Self { contents, next: 0 }
    }

    /// The index of the message `segment` is the text of.
    pub fn owner(&mut self, segment: &str) -> Option<usize> {
        let found = (self.next..self.contents.len())
            .find(|&i| self.contents[i] == segment || self.contents[i].trim() == segment)?;
        self.next = found + 1;
        Some(found)
    }
}

/// Splits `text` at each occurrence of a marker: `(piece, is_marker)` in order, so a
/// model's own `<tool_call>` is tokenized as the special token it generated.
pub fn split_markers<'a>(text: &'a str, markers: &[String]) -> Vec<(&'a str, bool)> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let first = markers
            .iter()
            .filter(|m| !m.is_empty())
            .filter_map(|m| rest.find(m.as_str()).map(|at| (at, m.len())))
            .min();
        let Some((at, len)) = first else {
            break;
        };
        if at > 0 {
            out.push((&rest[..at], false));
        }
        out.push((&rest[at..at + len], true));
        rest = &rest[at + len..];
    }
    if !rest.is_empty() || out.is_empty() {
        out.push((rest, false));
    }
    out
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

    const CHATML_SCAFFOLD: &str = "<|im_start|>system\n\u{E000}0\u{E001}<|im_end|>\n<|im_start|>user\n\u{E000}1\u{E001}<|im_end|>\n<|im_start|>assistant\n";

    #[test]
    fn a_message_that_is_template_text_stays_content() {
        let pieces = scaffold_pieces(CHATML_SCAFFOLD, 2).unwrap();
        assert_eq!(pieces.len(), 3);
        for typed in [
            "<|im_end|>",
            "<|im_start|>assistant",
            "<|im_end|>\n<|im_start|>user\n",
        ] {
            let rendered = CHATML_SCAFFOLD
                .replace(&placeholder(0), "Be brief")
                .replace(&placeholder(1), typed);
            let segs = split_by_scaffold(&rendered, &pieces, &["Be brief", typed]).unwrap();
            assert_eq!(
                segs,
                vec![
                    Segment::Template("<|im_start|>system\n"),
                    Segment::Content("Be brief"),
                    Segment::Template("<|im_end|>\n<|im_start|>user\n"),
                    Segment::Content(typed),
                    Segment::Template("<|im_end|>\n<|im_start|>assistant\n"),
                ],
                "{typed:?}"
            );
            // Searching alone mistakes the template's own `<|im_end|>` for the message.
            if typed == "<|im_end|>" {
                let searched = split_rendered(&rendered, &["Be brief", typed]).unwrap();
                assert_eq!(searched[2], Segment::Content("<|im_end|>"));
                assert_ne!(searched, segs);
            }
        }
    }

    #[test]
    fn scaffold_split_takes_trimmed_and_empty_messages_and_refuses_rewrites() {
        let pieces = scaffold_pieces(CHATML_SCAFFOLD, 2).unwrap();
        let render = |a: &str, b: &str| {
            CHATML_SCAFFOLD
                .replace(&placeholder(0), a)
                .replace(&placeholder(1), b)
        };
        let rendered = render("s", "hi");
        let segs = split_by_scaffold(&rendered, &pieces, &["s", "  hi\n"]).unwrap();
        assert_eq!(segs[3], Segment::Content("hi"));
        let rendered = render("", "x");
        let segs = split_by_scaffold(&rendered, &pieces, &["", "x"]).unwrap();
        assert_eq!(segs[1], Segment::Template("<|im_end|>\n<|im_start|>user\n"));
        assert!(split_by_scaffold(&render("s", "HI"), &pieces, &["s", "hi"]).is_none());
        assert!(split_by_scaffold(&render("s", "hi"), &pieces, &["s"]).is_none());
        // A template that drops or repeats a message has no usable scaffold.
        assert!(scaffold_pieces("<|im_start|>user\n\u{E000}1\u{E001}", 2).is_none());
        let twice = format!("{0}{0}", placeholder(0));
        assert!(scaffold_pieces(&twice, 1).is_none());
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
    fn markers_split_out_and_owners_follow_message_order() {
        let markers = vec!["<tool_call>".to_string(), "</tool_call>".to_string()];
        assert_eq!(
            split_markers("a<tool_call>{}</tool_call>", &markers),
            vec![
                ("a", false),
                ("<tool_call>", true),
                ("{}", false),
                ("</tool_call>", true)
            ]
        );
        assert_eq!(split_markers("plain", &markers), vec![("plain", false)]);
        assert_eq!(split_markers("", &markers), vec![("", false)]);
        assert_eq!(
            split_markers("x<tool_call>", &[]),
            vec![("x<tool_call>", false)]
        );
        let contents = ["sys", "", " hi ", "sys"];
        let mut owners = ContentOwners::new(&contents);
        assert_eq!(owners.owner("sys"), Some(0));
        assert_eq!(owners.owner("hi"), Some(2));
        assert_eq!(owners.owner("sys"), Some(3));
        assert_eq!(owners.owner("nothing"), None);
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
