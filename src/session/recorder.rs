//! Writes the session record as it happens: the file is created at the first exchange
//! (a session with no exchange leaves nothing behind), each exchange is appended and
//! flushed to disk, and the close appends the summary notes and `THE END.`.
//!
//! A write that fails (a full disk) leaves nothing half-written: the file is cut back to
//! its last complete piece (or removed, when nothing of it was complete), and the text
//! that did not reach the disk is kept and written first at the next append, so a later
//! success (space freed) still records every exchange. The caller is told each failure.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::fountain::{self, Exchange, TitlePage};

pub struct Recorder {
    dir: PathBuf,
    path: Option<PathBuf>,
    file: Option<File>,
    /// Bytes of the file that are complete pieces (the header, scenes, notes).
    saved_len: u64,
    /// Text not on disk yet because a write failed; written before anything else.
    unsaved: String,
    title: TitlePage,
    user: String,
    exchanges: usize,
    /// Skill scenes waiting for the first exchange (a session with no exchange leaves
    /// nothing behind).
    held: String,
    ended: bool,
    started: chrono::DateTime<chrono::Local>,
}

impl Recorder {
    /// A recorder for a new session in `dir` (`agents/sessions`).
    pub fn new(dir: &Path, model: &str) -> Self {
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("USERNAME"))
            .unwrap_or_else(|_| "user".into());
        let started = chrono::Local::now();
        Self {
            dir: dir.to_path_buf(),
            path: None,
            file: None,
            saved_len: 0,
            unsaved: String::new(),
            title: TitlePage {
                title: "Harvey Session".into(),
                credit: format!("Written by harvey {}", env!("CARGO_PKG_VERSION")),
                author: format!("harvey and {user}"),
                date: started.format("%Y-%m-%d %H:%M:%S").to_string(),
                model: model.to_string(),
            },
            user,
            exchanges: 0,
            held: String::new(),
            ended: false,
            started,
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The record's path, or where it will be once written.
    pub fn planned_path(&self) -> PathBuf {
        self.path.clone().unwrap_or_else(|| self.new_path())
    }

    /// Whether some recorded text is not on disk yet (a write failed).
    pub fn has_unsaved(&self) -> bool {
        !self.unsaved.is_empty()
    }

    pub fn exchanges(&self) -> usize {
        self.exchanges
    }

    pub fn started(&self) -> chrono::DateTime<chrono::Local> {
        self.started
    }

    /// Appends one exchange and flushes it to disk.
    pub fn exchange(&mut self, user: &str, reply: &str, notes: Vec<String>) -> std::io::Result<()> {
        let exchange = Exchange {
            when: chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string(),
            user: user.to_string(),
            reply: reply.to_string(),
            notes,
        };
        let text = std::mem::take(&mut self.held) + &fountain::scene(&self.user, &exchange);
        // Counted even when the write fails: the text is kept and written later.
        self.exchanges += 1;
        self.append(&text)
    }

    /// Appends a skill's scene (`INT. SKILL <NAME>`, see [`fountain::skill_scene`]);
    /// before the first exchange it waits for it.
    pub fn skill(&mut self, name: &str, description: &str, speech: &str) -> std::io::Result<()> {
        let when = chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string();
        let text = fountain::skill_scene(name, description, speech, &when);
        if self.exchanges == 0 {
            self.held.push_str(&text);
            return Ok(());
        }
        self.append(&text)
    }

    /// The session's id as the Go tool gives it to a skill's script (`YYYYMMDD-HHMMSS`,
    /// the record's time stamp).
    pub fn session_id(&self) -> String {
        self.started.format("%Y%m%d-%H%M%S").to_string()
    }

    /// Appends a note between exchanges (e.g. a rolling summary).
    pub fn note(&mut self, text: &str) -> std::io::Result<()> {
        if self.exchanges == 0 {
            return Ok(());
        }
        self.append(&fountain::note(text))
    }

    /// Closing notes and `THE END.`; nothing when no exchange was recorded.
    pub fn close(&mut self, notes: &[String]) -> std::io::Result<()> {
        if self.ended || self.exchanges == 0 {
            return Ok(());
        }
        let mut text: String = notes.iter().map(|n| fountain::note(n)).collect();
        text.push_str(fountain::THE_END);
        self.append(&text)?;
        self.ended = true;
        Ok(())
    }

    fn append(&mut self, text: &str) -> std::io::Result<()> {
        self.unsaved.push_str(text);
        if self.file.is_none() {
            std::fs::create_dir_all(&self.dir)?;
            let path = self.new_path();
            let file = OpenOptions::new()
                .create_new(true)
                .append(true)
                .open(&path)?;
            self.path = Some(path);
            self.file = Some(file);
            self.saved_len = 0;
        }
        let mut bytes = String::new();
        if self.saved_len == 0 {
            bytes.push_str(&fountain::header(&self.title));
        }
        bytes.push_str(&self.unsaved);
        match self.write_through(bytes.as_bytes()) {
            Ok(()) => {
                self.saved_len += bytes.len() as u64;
                self.unsaved.clear();
                Ok(())
            }
            Err(e) => {
                self.undo_partial_write();
                Err(e)
            }
        }
    }

    /// Writes `bytes` and waits until they are on disk.
    fn write_through(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let Some(f) = self.file.as_mut() else {
            return Err(std::io::Error::other("the session record is not open"));
        };
        f.write_all(bytes)?;
        f.flush()?;
        f.sync_data()
    }

    /// After a failed write: the file back to its complete pieces, or gone when it had
    /// none (a record is never left empty or cut mid-scene).
    fn undo_partial_write(&mut self) {
        if self.saved_len > 0 {
            if let Some(f) = self.file.as_ref() {
                let _ = f.set_len(self.saved_len).and_then(|()| f.sync_data());
            }
            return;
        }
        self.file = None;
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }

    fn new_path(&self) -> PathBuf {
        let stamp = self.started.format("%Y%m%d-%H%M%S").to_string();
        let mut path = self.dir.join(format!("harvey-session-{stamp}.spmd"));
        let mut n = 2;
        while path.exists() {
            path = self.dir.join(format!("harvey-session-{stamp}-{n}.spmd"));
            n += 1;
        }
        path
    }
}
