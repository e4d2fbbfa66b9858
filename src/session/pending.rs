//! Records whose summary is still to be written (`memory.summary_at: later`): a session
//! closes at once with a pending note in place of its summary, and a later interactive
//! session fills it in. Finding such records and replacing the note are plain file work
//! here; the summarizing itself is the app's (it needs the model).
//!
//! The note is explicit on purpose: a record without a summary is not enough (the Go
//! tool writes none, and a live session's record has none yet), so only records harvey
//! closed this way are ever rewritten. The rewrite is atomic (temporary file, fsync,
//! rename): a crash leaves the pending record or the summarized one, never a mix.

use std::path::{Path, PathBuf};

use super::fountain;

/// The closing note of a record whose summary is still to be written.
pub const PENDING_NOTE: &str =
    "Summary pending: written by the next interactive session (memory.summary_at: later)";

/// Whether a parsed record waits for its summary.
pub fn is_pending(record: &fountain::Record) -> bool {
    record.ended
        && !record.exchanges.is_empty()
        && record.closing_notes.iter().any(|n| n == PENDING_NOTE)
}

/// The pending records in `dir` (`agents/sessions`), oldest first, except `skip` (the
/// running session's own record).
pub fn find(dir: &Path, skip: Option<&Path>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "spmd"))
        .filter(|p| Some(p.as_path()) != skip)
        .filter(|p| {
            std::fs::read_to_string(p)
                .map(|text| is_pending(&fountain::parse(&text)))
                .unwrap_or(false)
        })
        .collect();
    found.sort();
    found
}

/// The record's text with the pending note replaced by `notes` (the summary, tags, the
/// mining note); `None` when the text holds no pending note.
pub fn fill_in(text: &str, notes: &[String]) -> Option<String> {
    let pending = fountain::note(PENDING_NOTE);
    let at = text.find(&pending)?;
    let filled: String = notes.iter().map(|n| fountain::note(n)).collect();
    Some(format!(
        "{}{filled}{}",
        &text[..at],
        &text[at + pending.len()..]
    ))
}

/// Replaces the pending note of the record at `path` by `notes`, atomically. Returns
/// `Ok(false)` when the record is no longer pending (another session summarized it).
pub fn finish(path: &Path, notes: &[String]) -> std::io::Result<bool> {
    let text = std::fs::read_to_string(path)?;
    match fill_in(&text, notes) {
        Some(filled) => {
            crate::memory::file::write_atomic(path, filled.as_bytes())?;
            Ok(true)
        }
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fountain::{Exchange, TitlePage};

    fn record(closing: &[&str]) -> String {
        let mut text = fountain::header(&TitlePage::default());
        let ex = Exchange {
            when: "2026-01-02 03:04:05".into(),
            user: "What is 17 times 3?".into(),
            reply: "51".into(),
            notes: vec!["stats: 1".into()],
        };
        text.push_str(&fountain::scene("ann", &ex));
        for n in closing {
            text.push_str(&fountain::note(n));
        }
        text.push_str(fountain::THE_END);
        text
    }

    #[test]
    fn a_pending_record_is_filled_in_once_and_keeps_its_exchange() {
        let text = record(&[PENDING_NOTE, "Session stats: 1 turns"]);
        assert!(is_pending(&fountain::parse(&text)));
        let filled = fill_in(
            &text,
            &["Summary: Arithmetic.".into(), "Tags: maths".into()],
        )
        .expect("pending");
        let back = fountain::parse(&filled);
        assert!(!is_pending(&back));
        assert!(back.ended);
        assert_eq!(back.exchanges.len(), 1);
        assert_eq!(back.exchanges[0].reply, "51");
        assert_eq!(
            back.closing_notes,
            vec![
                "Summary: Arithmetic.",
                "Tags: maths",
                "Session stats: 1 turns"
            ]
        );
        assert!(fill_in(&filled, &["Summary: again".into()]).is_none());
    }

    #[test]
    fn only_records_closed_as_pending_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("harvey-session-1.spmd", &record(&[PENDING_NOTE]));
        write("harvey-session-2.spmd", &record(&["Summary: done"]));
        // A live session's record: no closing notes, no THE END.
        write(
            "harvey-session-3.spmd",
            record(&[]).trim_end_matches(fountain::THE_END),
        );
        write("harvey-session-4.spmd", &record(&[PENDING_NOTE]));
        let skip = dir.path().join("harvey-session-4.spmd");
        let found = find(dir.path(), Some(&skip));
        assert_eq!(found, vec![dir.path().join("harvey-session-1.spmd")]);
    }
}
