//! Summaries written later (`memory.summary_at: later`): a session closed with its
//! summary pending gets it, its tags and its mining from a later interactive session,
//! one record at a time, while that session waits for input. The abort flag stops the
//! work between and inside generations; a record whose summary was not finished stays
//! pending for the next time, so nothing is lost by stopping.

use std::path::PathBuf;

use super::App;
use crate::session::{fountain, pending};

/// What summarizing one pending record did.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingReport {
    pub record: PathBuf,
    pub summary: String,
    pub tags: Vec<String>,
    /// The mining note written to the record, if mining ran to the end.
    pub mined: Option<String>,
}

impl App {
    /// Records closed with their summary pending (oldest first), except this session's.
    pub fn pending_records(&self) -> Vec<PathBuf> {
        pending::find(&self.agents_dir().join("sessions"), self.recorder.path())
    }

    /// Summarizes (and mines, when mining is on for this model) the oldest pending record
    /// and fills in its closing notes. `Ok(None)`: nothing pending, or the abort flag
    /// stopped the summary (the record stays pending). The flag is not cleared here: the
    /// caller raises it to take the model back.
    pub fn summarize_pending(
        &mut self,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Option<PendingReport>, String> {
        let Some(path) = self.pending_records().into_iter().next() else {
            return Ok(None);
        };
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let record = fountain::parse(&text);
        let transcript: Vec<(String, String)> = record
            .exchanges
            .iter()
            .map(|x| (x.user.clone(), x.reply.clone()))
            .collect();
        if self.abort.is_raised() {
            return Ok(None);
        }
        tracing::info!(record = %path.display(), "summarizing a pending session");
        let (summary, tags, _, skipped) = self.summarize_transcript(&transcript);
        if skipped || self.abort.is_raised() {
            return Ok(None);
        }
        let mut notes = vec![format!("Summary: {summary}")];
        if !tags.is_empty() {
            notes.push(format!("Tags: {}", tags.join(", ")));
        }
        let file = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let mined = match self.is_unmined(file.as_deref()) {
            true => self.mine_transcript(&transcript, file, progress),
            false => None,
        };
        notes.extend(mined.iter().cloned());
        pending::finish(&path, &notes)
            .map_err(|e| format!("cannot write the summary into {}: {e}", path.display()))?;
        if let Some(index) = &self.sessions {
            // The changed file is read again: its row gets the summary and tags.
            index
                .reconcile()
                .map_err(|e| format!("cannot update the sessions index: {e}"))?;
        }
        Ok(Some(PendingReport {
            record: path,
            summary,
            tags,
            mined,
        }))
    }

    /// Whether mining is on for this model and `file` was not mined yet.
    fn is_unmined(&self, file: Option<&str>) -> bool {
        let mined = match (&self.sessions, file) {
            (Some(index), Some(f)) => index.is_mined(f).unwrap_or(false),
            _ => false,
        };
        self.mining_enabled() && !mined
    }
}
