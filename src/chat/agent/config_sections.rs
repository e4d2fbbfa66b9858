//! A long settings file (TOML, INI, `setup.cfg`) read for a how-to question, shown as the
//! sections that mention the question's subject. Asked "How do I run the tests?" in
//! itsdangerous, the 1.5B was pointed at `pyproject.toml` and read its first 200 of 205
//! lines (≈ 2,000 tokens prefilled) for the `pytest` of `[tool.tox.env_run_base]`.
//! A how-to is not focused on lines ([`super::focus`]): a section is its unit, as a
//! heading's is in a document ([`super::sections`]).

use crate::text::asked::{asked, Asked};
use crate::workspace_map::named::subject_stems;

/// Files of at most this many lines are shown whole.
const FROM_LINES: usize = 60;

/// Most lines shown in all, the head's included.
const MAX_SHOWN: usize = 50;

/// The file's first lines, always shown (the project's name and version).
const HEAD_LINES: usize = 3;

/// What the model is told about the lines shown.
const NOTE: &str = "(a long settings file: shown are its first lines and the sections that \
mention the question's words; … marks lines left out)";

/// Whether `path` names a settings file laid out in `[section]`s.
fn is_sectioned(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".toml", ".ini", ".cfg"].iter().any(|e| lower.ends_with(e))
}

/// `result` (a read of `path`) cut to its head and the sections whose heading or lines
/// hold a subject word of `request` (as part of a word: "test" in `pytest`,
/// `testpaths`), the sections with most such lines first; `None` where it stands as it
/// is: not a how-to, not a sectioned settings file, short, or no section fits.
pub(super) fn how_to_config(request: &str, path: &str, result: &str) -> Option<String> {
    if asked(request) != Asked::HowTo || !is_sectioned(path) {
        return None;
    }
    let (notes, lines) = super::focus::split_numbered(result);
    if lines.len() <= FROM_LINES {
        return None;
    }
    let stems = subject_stems(request);
    if stems.is_empty() {
        return None;
    }
    let heads: Vec<usize> = (0..lines.len())
        .filter(|&i| is_heading(lines[i].1))
        .collect();
    // (lines mentioning a subject word, start, end) of each section that has one.
    let mut fitting: Vec<(usize, usize, usize)> = heads
        .iter()
        .enumerate()
        .filter_map(|(h, &start)| {
            let end = heads.get(h + 1).copied().unwrap_or(lines.len());
            let n = lines[start..end]
                .iter()
                .filter(|(_, text)| {
                    let t = text.to_lowercase();
                    stems.iter().any(|s| t.contains(s.as_str()))
                })
                .count();
            (n > 0).then_some((n, start, end))
        })
        .collect();
    if fitting.is_empty() {
        return None;
    }
    fitting.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let spans = fitting.into_iter().map(|(_, start, end)| {
        // A section's trailing blank lines add nothing.
        let end = (start..end)
            .rev()
            .find(|&i| !lines[i].1.trim().is_empty())
            .map_or(end, |i| i + 1);
        start..end
    });
    let keep = super::sections::keep_spans(lines.len(), HEAD_LINES, MAX_SHOWN, spans)?;
    Some(super::focus::kept_lines(&notes, NOTE, &lines, &keep))
}

/// A `[section]` or `[[table]]` heading line.
fn is_heading(line: &str) -> bool {
    let t = line.trim();
    t.len() > 2 && t.starts_with('[') && t.ends_with(']') && !t.contains('=')
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::chat::agent::focus::as_read as numbered;

    /// A `pyproject.toml` shaped like itsdangerous': the test settings in the middle of
    /// long unrelated sections.
    fn pyproject() -> String {
        let mut t = String::from("[project]\nname = \"pkg\"\nversion = \"1.0\"\n\n[tool.ruff]\n");
        t.push_str(&"select = [\"B\"]\n".repeat(30));
        t.push_str("\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n\n[tool.mypy]\n");
        t.push_str(&"strict = true\n".repeat(30));
        t.push_str("\n[tool.tox.env_run_base]\ndescription = \"pytest on latest\"\ncommands = [[\"pytest\", \"-v\"]]\n\n[tool.tox.env.docs]\ncommands = [[\"sphinx-build\"]]\n");
        t
    }

    #[test]
    fn a_how_to_sees_the_sections_that_mention_its_subject() {
        let shown = how_to_config(
            "How do I run the tests?",
            "pyproject.toml",
            &numbered(&pyproject()),
        )
        .unwrap();
        assert!(shown.starts_with(NOTE), "{shown}");
        assert!(shown.contains("    1| [project]"), "{shown}");
        for kept in [
            "[tool.pytest.ini_options]",
            "testpaths",
            "\"pytest\", \"-v\"",
        ] {
            assert!(shown.contains(kept), "{kept}: {shown}");
        }
        for gone in ["select = ", "strict = true", "sphinx-build"] {
            assert!(!shown.contains(gone), "{gone}: {shown}");
        }
    }

    #[test]
    fn other_questions_files_and_subjects_are_left_alone() {
        let text = numbered(&pyproject());
        assert_eq!(
            how_to_config("What version is this?", "pyproject.toml", &text),
            None
        );
        assert_eq!(
            how_to_config("How do I run the tests?", "README.md", &text),
            None
        );
        assert_eq!(
            how_to_config("How do I deploy it?", "pyproject.toml", &text),
            None,
            "no section mentions deploying"
        );
        let short = numbered("[tool.pytest]\ntestpaths = [\"tests\"]\n");
        assert_eq!(
            how_to_config("How do I run the tests?", "setup.cfg", &short),
            None
        );
    }
}
