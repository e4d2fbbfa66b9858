//! Splitting documents into chunks sized in tokens, each with its line range.
//!
//! A document is first cut into units that should stay together — Markdown paragraphs
//! and code fences under their heading, top-level items of source code (a line at column
//! 0 after a blank line starts one), paragraphs of plain text — then units are packed
//! greedily up to the token limit. A unit larger than the limit is split by lines, and a
//! line larger than the limit by words, so no chunk ever exceeds it (the embedder would
//! otherwise have to cut it and lose text).

use crate::tokens::TokenCounter;

/// How a file is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Markdown,
    Code,
    Text,
}

impl Kind {
    /// By file extension.
    pub fn of(path: &std::path::Path) -> Kind {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "md" | "markdown" | "mdx" | "rst" => Kind::Markdown,
            "rs" | "py" | "go" | "js" | "jsx" | "ts" | "tsx" | "c" | "h" | "cc" | "cpp" | "hpp"
            | "java" | "kt" | "swift" | "rb" | "php" | "cs" | "scala" | "sh" | "bash" | "zsh"
            | "lua" | "pl" | "r" | "sql" | "toml" | "yaml" | "yml" | "json" | "zig" | "hs"
            | "ex" | "exs" | "erl" | "clj" | "ml" | "nim" | "dart" | "css" | "html" => Kind::Code,
            _ => Kind::Text,
        }
    }
}

/// One chunk: 1-based inclusive line range in the source, the Markdown heading it sits
/// under (if any), and the exact text of those lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub start_line: usize,
    pub end_line: usize,
    pub heading: Option<String>,
    pub text: String,
}

/// A run of lines that should stay together.
struct Unit {
    start: usize,
    /// Lines (without newline), `start` is the 1-based number of the first.
    lines: Vec<String>,
    heading: Option<String>,
    /// A new heading begins here: never pack this unit with what came before.
    hard_break: bool,
}

/// Cuts `text` into chunks of at most `max_tokens` tokens by `counter`.
pub fn chunk(kind: Kind, text: &str, max_tokens: usize, counter: &dyn TokenCounter) -> Vec<Chunk> {
    let max_tokens = max_tokens.max(8);
    let source: Vec<&str> = text.lines().collect();
    let units = match kind {
        Kind::Markdown => markdown_units(text),
        Kind::Code => blank_line_units(text, true),
        Kind::Text => blank_line_units(text, false),
    };
    let mut out: Vec<Chunk> = Vec::new();
    let mut open: Option<(usize, usize, Option<String>, Vec<String>)> = None;
    let flush = |open: &mut Option<(usize, usize, Option<String>, Vec<String>)>,
                 out: &mut Vec<Chunk>| {
        if let Some((start, end, heading, lines)) = open.take() {
            let text = lines.join("\n");
            if !text.trim().is_empty() {
                out.push(Chunk {
                    start_line: start,
                    end_line: end,
                    heading,
                    text,
                });
            }
        }
    };
    for unit in units {
        for piece in fit(unit, max_tokens, counter) {
            let end = piece.start + piece.lines.len().saturating_sub(1);
            if let Some((_, open_end, heading, lines)) = open.as_mut() {
                if !piece.hard_break && *heading == piece.heading {
                    // Join with the blank lines between, as in the source.
                    let gap = source
                        .get(*open_end..piece.start.saturating_sub(1))
                        .unwrap_or_default();
                    let mut joined = lines.clone();
                    joined.extend(gap.iter().map(|l| l.to_string()));
                    joined.extend(piece.lines.iter().cloned());
                    if counter.count_tokens(&joined.join("\n")) <= max_tokens {
                        *lines = joined;
                        *open_end = end;
                        continue;
                    }
                }
            }
            flush(&mut open, &mut out);
            open = Some((piece.start, end, piece.heading.clone(), piece.lines));
        }
    }
    flush(&mut open, &mut out);
    out
}

/// Splits a unit that is over the limit by lines, then over-long lines by words.
fn fit(unit: Unit, max_tokens: usize, counter: &dyn TokenCounter) -> Vec<Unit> {
    if counter.count_tokens(&unit.lines.join("\n")) <= max_tokens {
        return vec![unit];
    }
    let mut out: Vec<Unit> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut current_start = unit.start;
    let mut first = true;
    let mut push = |lines: &mut Vec<String>, start: usize, out: &mut Vec<Unit>| {
        if !lines.is_empty() {
            out.push(Unit {
                start,
                lines: std::mem::take(lines),
                heading: unit.heading.clone(),
                hard_break: unit.hard_break && first,
            });
            first = false;
        }
    };
    for (i, line) in unit.lines.iter().enumerate() {
        let number = unit.start + i;
        if counter.count_tokens(line) > max_tokens {
            push(&mut current, current_start, &mut out);
            for part in split_words(line, max_tokens, counter) {
                let mut one = vec![part];
                push(&mut one, number, &mut out);
            }
            current_start = number + 1;
            continue;
        }
        let mut trial = current.clone();
        trial.push(line.clone());
        if !current.is_empty() && counter.count_tokens(&trial.join("\n")) > max_tokens {
            push(&mut current, current_start, &mut out);
            current_start = number;
            current.push(line.clone());
        } else {
            if current.is_empty() {
                current_start = number;
            }
            current = trial;
        }
    }
    push(&mut current, current_start, &mut out);
    out
}

/// Cuts one long line into pieces of whole words under the limit (a single word longer
/// than the limit is cut by characters).
fn split_words(line: &str, max_tokens: usize, counter: &dyn TokenCounter) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for word in line.split_inclusive(char::is_whitespace) {
        let trial = format!("{current}{word}");
        if counter.count_tokens(&trial) <= max_tokens {
            current = trial;
            continue;
        }
        if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if counter.count_tokens(word) <= max_tokens {
            current = word.to_string();
        } else {
            // A "word" over the limit (minified code, base64): cut by characters.
            let mut piece = String::new();
            for ch in word.chars() {
                piece.push(ch);
                if counter.count_tokens(&piece) > max_tokens {
                    piece.pop();
                    out.push(std::mem::take(&mut piece));
                    piece.push(ch);
                }
            }
            current = piece;
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// Paragraphs (runs of non-blank lines). With `top_level`, a paragraph only ends at a
/// blank line followed by a line at column 0, so an indented function body with blank
/// lines inside stays one unit.
fn blank_line_units(text: &str, top_level: bool) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut start = 1;
    // Blank (or whitespace-only) lines since the last text line, kept as they are.
    let mut pending_blank: Vec<&str> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() {
            if !current.is_empty() {
                pending_blank.push(line);
            }
            continue;
        }
        let starts_item = !line.starts_with(char::is_whitespace)
            && !line.starts_with('}')
            && !line.starts_with(')')
            && !line.starts_with(']');
        let boundary = !pending_blank.is_empty() && (!top_level || starts_item);
        if boundary && !current.is_empty() {
            units.push(Unit {
                start,
                lines: std::mem::take(&mut current),
                heading: None,
                hard_break: false,
            });
        } else {
            current.extend(pending_blank.iter().map(|l| l.to_string()));
        }
        pending_blank.clear();
        if current.is_empty() {
            start = number;
        }
        current.push(line.to_string());
    }
    if !current.is_empty() {
        units.push(Unit {
            start,
            lines: current,
            heading: None,
            hard_break: false,
        });
    }
    units
}

/// Markdown: each heading starts a section (a hard break); inside, paragraphs are units
/// and a fenced code block is one unit however many blank lines it holds.
fn markdown_units(text: &str) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut start = 1;
    let mut heading: Option<String> = None;
    let mut hard_break = false;
    let mut in_fence = false;
    let push = |current: &mut Vec<String>,
                start: usize,
                heading: &Option<String>,
                hard_break: &mut bool,
                units: &mut Vec<Unit>| {
        if !current.is_empty() {
            units.push(Unit {
                start,
                lines: std::mem::take(current),
                heading: heading.clone(),
                hard_break: *hard_break,
            });
            *hard_break = false;
        }
    };
    // Adds source line `number`, padding with the blank lines skipped since the last
    // one, so a unit's lines are always exactly the source's.
    let source: Vec<&str> = text.lines().collect();
    let add = |current: &mut Vec<String>, start: &mut usize, number: usize, line: &str| {
        if current.is_empty() {
            *start = number;
        } else {
            let last = *start + current.len() - 1;
            let gap = source.get(last..number - 1).unwrap_or_default();
            current.extend(gap.iter().map(|l| l.to_string()));
        }
        current.push(line.to_string());
    };
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            add(&mut current, &mut start, number, line);
            continue;
        }
        if in_fence {
            current.push(line.to_string());
            continue;
        }
        if let Some(title) = heading_text(line) {
            push(&mut current, start, &heading, &mut hard_break, &mut units);
            heading = Some(title);
            hard_break = true;
            add(&mut current, &mut start, number, line);
            continue;
        }
        if line.trim().is_empty() {
            // A heading stays with the paragraph after it.
            if current.len() == 1 && heading_text(&current[0]).is_some() {
                continue;
            }
            push(&mut current, start, &heading, &mut hard_break, &mut units);
            continue;
        }
        add(&mut current, &mut start, number, line);
    }
    push(&mut current, start, &heading, &mut hard_break, &mut units);
    units
}

/// `## Title` → `Title`.
fn heading_text(line: &str) -> Option<String> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        Some(
            line[hashes..]
                .trim()
                .trim_end_matches('#')
                .trim()
                .to_string(),
        )
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::WordCounter;

    fn lines_of(text: &str, c: &Chunk) -> String {
        text.lines()
            .skip(c.start_line - 1)
            .take(c.end_line - c.start_line + 1)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn markdown_chunks_follow_headings_and_keep_line_ranges() {
        let text = "# Title\n\nIntro words here.\n\n## Install\n\nRun the script.\n\nThen start it.\n\n## Use\n\n```sh\nharvey\n\nharvey run\n```\n";
        let chunks = chunk(Kind::Markdown, text, 50, &WordCounter);
        let headings: Vec<_> = chunks.iter().map(|c| c.heading.as_deref()).collect();
        assert_eq!(headings, [Some("Title"), Some("Install"), Some("Use")]);
        for c in &chunks {
            assert_eq!(c.text, lines_of(text, c), "chunk text is exactly its lines");
        }
        assert_eq!((chunks[1].start_line, chunks[1].end_line), (5, 9));
        assert!(chunks[2].text.contains("harvey run"), "a fence stays whole");
    }

    #[test]
    fn no_chunk_exceeds_the_limit_even_for_one_huge_line() {
        let long_line = (0..500)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let text = format!("short para\n\n{long_line}\n\nend para");
        let chunks = chunk(Kind::Text, &text, 40, &WordCounter);
        assert!(chunks
            .iter()
            .all(|c| WordCounter.count_tokens(&c.text) <= 40));
        let words: usize = chunks
            .iter()
            .map(|c| WordCounter.count_tokens(&c.text))
            .sum();
        assert_eq!(words, 504, "no word lost");
        assert!(chunks.iter().any(|c| c.start_line == 3 && c.end_line == 3));
    }

    #[test]
    fn code_splits_at_top_level_items_not_inside_bodies() {
        let text = "fn a() {\n    let x = 1;\n\n    x + 1\n}\n\nfn b() {\n    2\n}\n";
        let chunks = chunk(Kind::Code, text, 12, &WordCounter);
        assert_eq!(chunks.len(), 2, "{chunks:?}");
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 5));
        assert_eq!((chunks[1].start_line, chunks[1].end_line), (7, 9));
    }

    #[test]
    fn small_paragraphs_are_packed_together() {
        let text = "one two\n\nthree four\n\nfive six";
        let chunks = chunk(Kind::Text, text, 100, &WordCounter);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, text);
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 5));
    }

    #[test]
    fn kind_by_extension() {
        use std::path::Path;
        assert_eq!(Kind::of(Path::new("a/README.md")), Kind::Markdown);
        assert_eq!(Kind::of(Path::new("src/main.rs")), Kind::Code);
        assert_eq!(Kind::of(Path::new("notes.txt")), Kind::Text);
    }
}
