//! A long Markdown document read for a how-to question, shown as the sections whose
//! headings name the question's subject. A how-to is not focused on lines (its steps run
//! on past the lines naming them, see [`super::focus`]), so a long README was cut at the
//! result's size from its top: asked "How do I build this library with CMake?" in cJSON
//! (a 590-line README), the model saw the table of contents and the license, not the
//! "CMake" section on line 90.

use crate::text::asked::{asked, Asked};
use crate::workspace_map::named::{subject_stems, word_fits};

/// Documents of at most this many lines are shown whole.
const FROM_LINES: usize = 80;

/// Most lines shown in all, the head's included.
const MAX_SHOWN: usize = 70;

/// The document's first lines, always shown (its title).
const HEAD_LINES: usize = 3;

/// What the model is told about the lines shown.
const SECTIONS_NOTE: &str = "(a long document: shown are its first lines and the sections \
whose headings name the question's words; … marks lines left out)";

/// `result` (a read of `path`) cut to its head and the sections whose headings hold a
/// word of `request`, the most fitting and the narrowest first; `None` where it stands
/// as it is: not a how-to, not Markdown, short, or no heading fits.
pub(super) fn how_to_sections(request: &str, path: &str, result: &str) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    if asked(request) != Asked::HowTo || !(lower.ends_with(".md") || lower.ends_with(".markdown")) {
        return None;
    }
    let (notes, lines) = super::focus::split_numbered(result);
    if lines.len() <= FROM_LINES {
        return None;
    }
    let stems = subject_stems(request);
    let headings = headings(&lines);
    // (words fitting, level, index into `headings`) of each heading some word fits.
    let mut fitting: Vec<(usize, usize, usize)> = headings
        .iter()
        .enumerate()
        .filter_map(|(h, &(_, level, text))| {
            let words = crate::text::words::name_words(text);
            let n = words.iter().filter(|w| word_fits(&stems, w)).count();
            (n > 0).then_some((n, level, h))
        })
        .collect();
    if fitting.is_empty() {
        return None;
    }
    fitting.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let spans = fitting.into_iter().map(|(_, level, h)| {
        let start = headings[h].0;
        let end = headings[h + 1..]
            .iter()
            .find(|(_, l, _)| *l <= level)
            .map_or(lines.len(), |(i, _, _)| *i);
        start..end
    });
    let keep = keep_spans(lines.len(), HEAD_LINES, MAX_SHOWN, spans)?;
    Some(super::focus::kept_lines(
        &notes,
        SECTIONS_NOTE,
        &lines,
        &keep,
    ))
}

/// Which of `len` lines to show: the first `head`, then each of `spans` in turn that
/// still fits under `max` lines in all (one that does not is passed over); `None` when no
/// span fits.
pub(super) fn keep_spans(
    len: usize,
    head: usize,
    max: usize,
    spans: impl IntoIterator<Item = std::ops::Range<usize>>,
) -> Option<Vec<bool>> {
    let mut keep = vec![false; len];
    keep.iter_mut().take(head).for_each(|k| *k = true);
    for span in spans {
        let adds = span.clone().filter(|&i| !keep[i]).count();
        if keep.iter().filter(|k| **k).count() + adds > max {
            continue;
        }
        span.for_each(|i| keep[i] = true);
    }
    (keep.iter().filter(|k| **k).count() > head.min(len)).then_some(keep)
}

/// The Markdown headings of `lines` outside fenced code: (index, level, text).
fn headings<'a>(lines: &[(usize, &'a str)]) -> Vec<(usize, usize, &'a str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, (_, text)) in lines.iter().enumerate() {
        let t = text.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        let level = t.chars().take_while(|c| *c == '#').count();
        if !fenced && (1..=6).contains(&level) && t[level..].starts_with(' ') {
            out.push((i, level, t[level..].trim()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::chat::agent::focus::as_read as numbered;

    /// A README laid out as cJSON's: a long usage part, building with its ways as
    /// subsections, a code block holding a `#include` line.
    fn readme() -> String {
        let mut md = String::from("# cJSON\n\nA JSON parser.\n\n## License\n\nMIT\n\n## Usage\n");
        md.push_str(&"Some usage text.\n".repeat(30));
        md.push_str("### Building\n\nThere are several ways.\n\n#### CMake\n\n```\nmkdir build\ncd build\ncmake ..\n#include <cjson/cJSON.h>\n```\n\n#### Makefile\n\nRun make.\n\n### Parsing JSON\n");
        md.push_str(&"Parsing text.\n".repeat(40));
        md
    }

    #[test]
    fn a_how_to_sees_the_sections_its_words_head() {
        let shown = how_to_sections(
            "How do I build this library with CMake?",
            "README.md",
            &numbered(&readme()),
        )
        .unwrap();
        assert!(shown.contains("cmake .."), "{shown}");
        assert!(
            shown.contains("#include <cjson/cJSON.h>"),
            "a code line is no heading: {shown}"
        );
        assert!(
            shown.contains("Run make."),
            "the Building section holds the Makefile part: {shown}"
        );
        assert!(!shown.contains("Parsing text."), "{shown}");
        assert!(shown.contains("    1| # cJSON"), "{shown}");
        assert!(shown.contains(SECTIONS_NOTE));
    }

    #[test]
    fn other_questions_documents_and_headings_are_left_alone() {
        let text = numbered(&readme());
        assert_eq!(
            how_to_sections("What does cJSON build with?", "README.md", &text),
            None
        );
        assert_eq!(
            how_to_sections("How do I build it?", "src/build.rs", &text),
            None
        );
        assert_eq!(
            how_to_sections("How do I run the tests?", "README.md", &text),
            None,
            "no heading fits"
        );
        let short = numbered("# Tool\n## Building\nmake\n");
        assert_eq!(
            how_to_sections("How do I build it?", "README.md", &short),
            None
        );
    }
}
