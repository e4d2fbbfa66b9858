//! Writes the session record as it happens: the file is created at the first exchange
//! (a session with no exchange leaves nothing behind), each exchange is appended and
//! flushed to disk, and the close appends the summary notes and `THE END.`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::fountain::{self, Exchange, TitlePage};

pub struct Recorder {
    dir: PathBuf,
    path: Option<PathBuf>,
    file: Option<File>,
    title: TitlePage,
    user: String,
    exchanges: usize,
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
            title: TitlePage {
                title: "Harvey Session".into(),
                credit: format!("Written by harvey {}", env!("CARGO_PKG_VERSION")),
                author: format!("harvey and {user}"),
                date: started.format("%Y-%m-%d %H:%M:%S").to_string(),
                model: model.to_string(),
            },
            user,
            exchanges: 0,
            ended: false,
            started,
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
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
        let text = fountain::scene(&self.user, &exchange);
        self.append(&text)?;
        self.exchanges += 1;
        Ok(())
    }

    /// Appends a note between exchanges (e.g. a rolling summary).
    pub fn note(&mut self, text: &str) -> std::io::Result<()> {
        if self.file.is_none() && self.path.is_none() {
            return Ok(());
        }
        self.append(&fountain::note(text))
    }

    /// Closing notes and `THE END.`; nothing when no exchange was recorded.
    pub fn close(&mut self, notes: &[String]) -> std::io::Result<()> {
        if self.ended || (self.exchanges == 0 && self.path.is_none()) {
            return Ok(());
        }
        let mut text: String = notes.iter().map(|n| fountain::note(n)).collect();
        text.push_str(fountain::THE_END);
        self.append(&text)?;
        self.ended = true;
        Ok(())
    }

    fn append(&mut self, text: &str) -> std::io::Result<()> {
        if self.file.is_none() {
            std::fs::create_dir_all(&self.dir)?;
            let path = self.new_path();
            let mut file = OpenOptions::new()
                .create_new(true)
                .append(true)
                .open(&path)?;
            file.write_all(fountain::header(&self.title).as_bytes())?;
            self.path = Some(path);
            self.file = Some(file);
        }
        if let Some(f) = self.file.as_mut() {
            f.write_all(text.as_bytes())?;
            f.flush()?;
            f.sync_data()?;
        }
        Ok(())
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
