//! Closing a session: the summary and tags (screened for secrets), optional mining,
//! the record's closing notes, the sessions index and stats; continuing a recorded
//! session. One guarded sequence for /exit, end of input, signals and `harvey run`.

use std::path::{Path, PathBuf};

use super::{average_decode_rate, App, CloseReport, TagSource};
use crate::config::SummaryAt;
use crate::memory::guard::{find_secret, redact_secrets};
use crate::session::{mining, SessionEntry, SessionStats};

impl App {
    /// Ends the session as `memory.summary_at` says: `later` closes the record at once
    /// with its summary pending ([`Self::close_session_later`]); `close` summarizes and
    /// mines first ([`Self::close_session`]). `/exit`, end of input, signals and
    /// `harvey run` all end here.
    pub fn end_session(&mut self, progress: &mut dyn FnMut(&str)) -> Option<CloseReport> {
        match self.config.memory.summary_at {
            SummaryAt::Later => self.close_session_later(progress),
            SummaryAt::Close => self.close_session(progress),
        }
    }

    /// The end-of-session sequence, run once whichever way the session ends: summary and
    /// tags from the model (skipped when the abort flag is raised, e.g. a second Ctrl-C),
    /// the closing notes and `THE END.` in the record, the sessions index entry and the
    /// `memory_stats` row. A session without exchanges leaves nothing behind.
    pub fn close_session(&mut self, progress: &mut dyn FnMut(&str)) -> Option<CloseReport> {
        if self.closed {
            return None;
        }
        self.closed = true;
        if self.transcript.is_empty() {
            return None;
        }
        self.abort.clear();
        tracing::info!(turns = self.transcript.len(), "closing the session");
        progress("summarizing session… (Ctrl-C to skip)");
        let transcript = self.transcript.clone();
        let (summary, tags, tag_source, skipped) = self.summarize_transcript(&transcript);
        let mut notes = vec![format!("Summary: {summary}")];
        if !tags.is_empty() {
            notes.push(format!("Tags: {}", tags.join(", ")));
        }
        if !skipped {
            let source = self.record_name();
            if let Some(line) = self.mine_transcript(&transcript, source, progress) {
                notes.push(line);
            }
        }
        let (record, problems) = self.finish_record(notes, &summary, &tags, progress);
        Some(CloseReport {
            record,
            summary,
            tags,
            tag_source,
            skipped,
            pending: false,
            problems,
        })
    }

    /// Closes the record at once: the closing notes say its summary is pending, and the
    /// next interactive session writes it ([`Self::summarize_pending`]) and mines it. The
    /// index lists the session (without a summary until then).
    pub fn close_session_later(&mut self, progress: &mut dyn FnMut(&str)) -> Option<CloseReport> {
        if self.closed {
            return None;
        }
        self.closed = true;
        if self.transcript.is_empty() {
            return None;
        }
        tracing::info!(
            turns = self.transcript.len(),
            "closing the session, summary later"
        );
        let notes = vec![crate::session::pending::PENDING_NOTE.to_string()];
        let (record, problems) = self.finish_record(notes, "", &[], progress);
        Some(CloseReport {
            record,
            summary: String::new(),
            tags: Vec::new(),
            tag_source: TagSource::Fallback,
            skipped: false,
            pending: true,
            problems,
        })
    }

    /// A note for the record's close (the closing notes, before the stats line).
    pub fn note_at_close(&mut self, note: String) {
        self.end_notes.push(note);
    }

    /// The first failure to write this session's record, if one happened.
    pub fn record_problem(&self) -> Option<&str> {
        self.record_problem.as_deref()
    }

    /// The record's file name, once it exists.
    fn record_name(&self) -> Option<String> {
        self.recorder
            .path()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    }

    /// Appends `notes`, the stats line and `THE END.` to the record, then writes the
    /// sessions index entry and the stats row. Returns the record's path (where it would
    /// be, when it was not written) and what went wrong, each said once through `progress` too.
    fn finish_record(
        &mut self,
        mut notes: Vec<String>,
        summary: &str,
        tags: &[String],
        progress: &mut dyn FnMut(&str),
    ) -> (PathBuf, Vec<String>) {
        let duration = (chrono::Local::now() - self.recorder.started()).num_seconds();
        let tps = average_decode_rate(&self.turns);
        notes.append(&mut self.end_notes);
        notes.push(format!(
            "Session stats: {} turns, {duration} s, {tps:.1} tok/s, {} compressions",
            self.transcript.len(),
            self.compressions.len()
        ));
        // The close writes first what an earlier failed write kept back: when it
        // succeeds, every exchange is on disk.
        let mut problems = Vec::new();
        if let Err(e) = self.recorder.close(&notes) {
            problems.push(format!(
                "cannot write the session record {}: {e}",
                self.recorder.planned_path().display()
            ));
        }
        let Some(file) = self.record_name() else {
            for p in &problems {
                progress(p);
            }
            return (self.recorder.planned_path(), problems);
        };
        if let Some(index) = &self.sessions {
            let entry = SessionEntry {
                file: file.clone(),
                started: self
                    .recorder
                    .started()
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string(),
                duration_s: duration,
                turns: self.transcript.len() as i64,
                summary: summary.to_string(),
                tags: tags.to_vec(),
                name: self.session_name.clone(),
            };
            let stats = SessionStats {
                session_id: file,
                budget_tokens: self.memory_budget() as i64,
                injected_tokens: self.injection.as_ref().map_or(0, |i| i.tokens as i64),
                compressed: !self.compressions.is_empty(),
                avg_tokens_per_sec: tps,
                recorded_at: crate::memory::store::now_rfc3339(),
            };
            if let Err(e) = index.put(&entry).and_then(|()| index.record_stats(&stats)) {
                problems.push(format!("cannot update the sessions index: {e}"));
            }
        }
        for p in &problems {
            progress(p);
        }
        (self.recorder.planned_path(), problems)
    }

    /// A session record by file name (under `agents/sessions/`) or path inside it;
    /// `None` = the newest.
    pub fn find_session(&self, name: Option<&str>) -> Result<PathBuf, String> {
        let dir = self.agents_dir().join("sessions");
        let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
            let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|_| "no sessions recorded yet".to_string())?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "spmd"))
                .filter(|p| Some(p.as_path()) != self.recorder.path())
                .collect();
            all.sort();
            return all
                .pop()
                .ok_or_else(|| "no sessions recorded yet".to_string());
        };
        let file = std::path::Path::new(name)
            .file_name()
            .ok_or_else(|| format!("{name:?} is not a session file"))?;
        let path = dir.join(file);
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "no session {name:?} in {} (/session list shows them)",
                dir.display()
            ))
        }
    }

    /// Rebuilds the conversation from a session record (`/session continue`, `--continue`,
    /// `--resume`); this session's own record notes where it continues from. Returns the
    /// number of exchanges restored.
    pub fn continue_session(&mut self, path: &Path) -> Result<usize, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let record = crate::session::fountain::parse(&text);
        self.conversation.clear();
        for ex in &record.exchanges {
            self.conversation.push_user(&ex.user);
            self.conversation.push_assistant(&ex.reply);
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.pending_notes.push(format!(
            "continued from {name} ({} exchanges)",
            record.exchanges.len()
        ));
        Ok(record.exchanges.len())
    }

    /// Whether end-of-session mining runs for this model (`memory.mining.on_exit`).
    pub fn mining_enabled(&self) -> bool {
        use crate::config::MineOnExit;
        let m = &self.config.memory.mining;
        self.config.memory.enabled
            && match m.on_exit {
                MineOnExit::On => true,
                MineOnExit::Off => false,
                MineOnExit::Auto => self.engine.info().n_params >= m.min_params,
            }
    }

    /// Mines a session's exchanges for memory proposals and saves the ones that pass the
    /// screen, with confidence 0.5 and the session's record (`source`) as their source.
    /// Returns the record's note; `None` also when the abort flag stopped the mining (the
    /// session stays unmined: `/memory mine` can do it).
    pub(super) fn mine_transcript(
        &mut self,
        transcript: &[(String, String)],
        source: Option<String>,
        progress: &mut dyn FnMut(&str),
    ) -> Option<String> {
        if !self.mining_enabled() {
            if self.config.memory.mining.on_exit == crate::config::MineOnExit::Auto {
                progress(&format!(
                    "memory mining skipped: the model has {:.0}M parameters, below memory.mining.min_params (small models invent details; set memory.mining.on_exit: on to mine anyway)",
                    self.engine.info().n_params as f64 / 1e6
                ));
            }
            return None;
        }
        progress("mining memories from this session… (Ctrl-C to skip)");
        let workspace = mining::workspace_texts(&self.workspace, transcript);
        let mined = mining::mine_report(self.engine.as_mut(), transcript, &workspace, &self.abort);
        if self.abort.is_raised() {
            return None;
        }
        let mut mined = match mined {
            Ok(m) => m,
            Err(e) => {
                progress(&format!("mining failed: {e}"));
                return Some(format!("Mining failed: {e}"));
            }
        };
        if let (Some(index), Some(file)) = (&self.sessions, &source) {
            let _ = index.mark_mined(file);
        }
        let store = self.memory.as_mut()?;
        mining::screen(store, &mut mined);
        let drops = mined.drops();
        let mut saved = Vec::new();
        for p in mined.proposals {
            let mut d = p.draft;
            d.source_session = source.clone();
            match store.write(&d) {
                Ok(o) => {
                    progress(&format!(
                        "memory saved: {} — {} (undo: /memory forget {})",
                        o.id(),
                        d.description,
                        o.id()
                    ));
                    saved.push(o.id().to_string());
                }
                Err(e) => progress(&format!("proposal not saved: {e}")),
            }
        }
        if drops.total() > 0 {
            progress(&format!(
                "memory proposals dropped: {drops} (kept only what the session said)"
            ));
        }
        Some(mining::mined_note(&saved, &drops))
    }

    /// A paragraph and 3–5 tags for the whole session (chunked when it does not fit).
    /// Both go through the secret screen memories get: the summary is injected into
    /// later sessions as `[recent sessions]`.
    pub(super) fn summarize_transcript(
        &mut self,
        transcript: &[(String, String)],
    ) -> (String, Vec<String>, TagSource, bool) {
        let messages: Vec<crate::engine::Message> = transcript
            .iter()
            .flat_map(|(u, r)| {
                [
                    crate::engine::Message::new(crate::engine::Role::User, u.clone()),
                    crate::engine::Message::new(crate::engine::Role::Assistant, r.clone()),
                ]
            })
            .collect();
        let fallback_tags = keyword_tags(transcript);
        let summary = crate::chat::rolling::summarize_map_reduce(
            self.engine.as_mut(),
            &messages,
            &self.abort,
        );
        let skipped = self.abort.is_raised();
        let summary = match summary {
            Ok(s) if !skipped => s.split_whitespace().collect::<Vec<_>>().join(" "),
            _ => {
                let first = transcript
                    .first()
                    .map_or("", |(u, _)| u.as_str())
                    .split_whitespace()
                    .take(20)
                    .collect::<Vec<_>>();
                format!("(no summary) Began with: {}", first.join(" "))
            }
        };
        let summary = redact_secrets(&summary).0;
        let (tags, source) = if skipped {
            (fallback_tags, TagSource::Fallback)
        } else {
            match crate::chat::rolling::tags(self.engine.as_mut(), &summary, &self.abort) {
                Ok(t) => (top_up_tags(t, fallback_tags), TagSource::Model),
                Err(_) => (fallback_tags, TagSource::Fallback),
            }
        };
        let tags = tags
            .into_iter()
            .filter(|t| find_secret(t).is_none())
            .collect();
        (summary, tags, source, skipped)
    }
}

/// The model's distinct tags, completed to three from `keywords` when it repeated itself.
fn top_up_tags(mut tags: Vec<String>, keywords: Vec<String>) -> Vec<String> {
    for k in keywords {
        if tags.len() >= crate::chat::rolling::TAGS.0 {
            break;
        }
        if !tags.contains(&k) {
            tags.push(k);
        }
    }
    tags
}

/// The most frequent topic words of the session, when the model gives no tags.
fn keyword_tags(transcript: &[(String, String)]) -> Vec<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for (u, r) in transcript {
        for t in crate::memory::query::terms(&format!("{u} {r}")) {
            if t.len() < 3 || t.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            match counts.iter_mut().find(|(w, _)| *w == t) {
                Some((_, n)) => *n += 1,
                None => counts.push((t, 1)),
            }
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts.into_iter().take(4).map(|(w, _)| w).collect()
}
