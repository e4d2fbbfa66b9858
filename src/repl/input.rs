//! The line editor's helper: command completion from the table and multi-line input.

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper};

use super::commands::{complete, is_incomplete};

pub struct InputHelper;

impl Completer for InputHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let head = &line[..pos];
        if head.contains(char::is_whitespace) {
            return Ok((pos, Vec::new()));
        }
        let pairs = complete(head)
            .into_iter()
            .map(|name| Pair {
                display: name.clone(),
                replacement: name,
            })
            .collect();
        Ok((0, pairs))
    }
}

impl Validator for InputHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if is_incomplete(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Hinter for InputHelper {
    type Hint = String;
}

impl Highlighter for InputHelper {}

impl Helper for InputHelper {}

/// The Go tool's line history (`agents/harvey_history`, one entry per line), copied into
/// harvey's (`history`) the first time harvey runs in the workspace; the Go file is only
/// read. Returns how many entries were taken.
pub(super) fn import_go_history<H: rustyline::Helper>(
    editor: &mut rustyline::Editor<H, rustyline::history::FileHistory>,
    agents: &std::path::Path,
    history: &std::path::Path,
) -> Option<usize> {
    if history.exists() {
        return None;
    }
    let text = std::fs::read_to_string(agents.join("harvey_history")).ok()?;
    let entries: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for entry in &entries {
        let _ = editor.add_history_entry(*entry);
    }
    editor.save_history(history).ok()?;
    Some(entries.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_go_history_is_taken_once_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join("harvey_history");
        std::fs::write(&go, "/rag ingest docs\n\n!git status\nhow do I publish?\n").unwrap();
        let ours = dir.path().join("history");
        let mut editor =
            rustyline::Editor::<InputHelper, rustyline::history::FileHistory>::new().unwrap();
        assert_eq!(import_go_history(&mut editor, dir.path(), &ours), Some(3));
        let mut again =
            rustyline::Editor::<InputHelper, rustyline::history::FileHistory>::new().unwrap();
        again.load_history(&ours).unwrap();
        let entries: Vec<String> = again.history().iter().cloned().collect();
        assert_eq!(
            entries,
            ["/rag ingest docs", "!git status", "how do I publish?"]
        );
        assert_eq!(
            import_go_history(&mut again, dir.path(), &ours),
            None,
            "once"
        );
        assert_eq!(
            std::fs::read_to_string(&go).unwrap(),
            "/rag ingest docs\n\n!git status\nhow do I publish?\n"
        );
    }
}
