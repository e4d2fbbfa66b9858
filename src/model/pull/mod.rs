//! `harvey model pull URL`: download a GGUF into the models directory, resumably.
//!
//! The bytes collect in `NAME.gguf.part`; only when every check has passed (the GGUF magic
//! in the first four bytes, the length the server announced, the sha256 when given, a
//! readable header) is it renamed to `NAME.gguf`, so a half file never carries the final
//! name. An interrupted or cut download keeps the part file, and the next pull asks the
//! server for the rest (`Range: bytes=N-`); a server that ignores the range is answered by
//! starting over. The sha256 covers the whole part file, resumed bytes included.
//!
//! The core never prints: it reports [`PullEvent`]s and returns [`Pulled`] or a
//! [`PullError`] that says what was kept and what to do. HTTP lives in [`http`].

pub mod http;
pub mod name;
pub mod progress;
mod range;
mod transfer;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::model::gguf::GgufInfo;
pub use http::FetchError;

/// What to pull, and where.
#[derive(Debug, Clone)]
pub struct PullRequest {
    pub url: String,
    /// The models directory (created when missing).
    pub dir: PathBuf,
    /// `--name`: the file name instead of the URL's last segment.
    pub name: Option<String>,
    /// The expected sha256, lowercase or uppercase hex.
    pub sha256: Option<String>,
    /// Replace a model of the same name.
    pub force: bool,
}

/// Where a pull writes: the final file and the part file beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub dest: PathBuf,
    pub part: PathBuf,
}

/// What a pull reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum PullEvent {
    /// Connected: the download starts at `from` (the bytes already in the part file).
    Started { from: u64, total: Option<u64> },
    /// The part file could not be continued and was emptied; `why` says why.
    StartedOver { why: &'static str },
    /// Hashing the bytes a previous run left in the part file.
    Hashing { bytes: u64 },
    /// The part file holds `done` bytes.
    Progress { done: u64, total: Option<u64> },
    /// All bytes are in; checking them.
    Checking,
}

/// A finished pull.
#[derive(Debug, Clone)]
pub struct Pulled {
    pub path: PathBuf,
    pub bytes: u64,
    pub sha256: String,
    /// Bytes a previous run had downloaded (0: downloaded in one go).
    pub resumed_from: u64,
    pub info: GgufInfo,
}

/// The part file left for a resume.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    pub part: PathBuf,
    pub bytes: u64,
}

impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} keeps the {} downloaded so far: run the same command again to resume",
            self.part.display(),
            progress::human_bytes(self.bytes)
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// The sha256 flag is not 64 hex digits.
    #[error("--sha256 must be 64 hexadecimal digits, got {0:?}")]
    BadSha256(String),
    /// No usable file name: pass `--name`.
    #[error("{0}")]
    Name(String),
    #[error("{} already exists: pass --force to replace it", .0.display())]
    Exists(PathBuf),
    /// The request failed; a part file from before may be kept.
    #[error("{error}{}", kept_note(.kept))]
    Fetch {
        error: FetchError,
        kept: Option<Kept>,
    },
    /// Another pull holds the part file.
    #[error("{} is locked ({problem}): another harvey is pulling this file; wait for it to finish", .part.display())]
    Busy { part: PathBuf, problem: String },
    /// Ctrl-C: the part file is kept for a resume.
    #[error("interrupted: {0}")]
    Interrupted(Kept),
    /// The connection ended before the announced length.
    #[error("{url}: the connection ended at {} of {}; {kept}", progress::human_bytes(kept.bytes), progress::human_bytes(*total))]
    Truncated { url: String, total: u64, kept: Kept },
    /// The body is not a GGUF file; nothing is kept.
    #[error(
        "{url} is not a GGUF file (it starts with {start}, not \"GGUF\"); nothing was kept. \
             Check the URL: a web page instead of the file? (On Hugging Face use the \
             /resolve/ link, not /blob/.)"
    )]
    NotGguf { url: String, start: String },
    /// The sha256 differs; the part file was deleted.
    #[error("sha256 mismatch: expected {expected}, the download has {actual}; deleted {}. \
             The download was damaged or the expected hash is wrong.", .part.display())]
    Checksum {
        expected: String,
        actual: String,
        part: PathBuf,
    },
    /// The whole file arrived but its header does not read; it was deleted.
    #[error("the downloaded file is not a usable GGUF ({problem}); deleted {}", .part.display())]
    Damaged { problem: String, part: PathBuf },
    /// Writing failed; `kept` says what stays for a resume.
    #[error("cannot write {}: {error}: {}{}", .path.display(), io_hint(.error), kept_note(.kept))]
    Write {
        path: PathBuf,
        error: std::io::Error,
        kept: Option<Kept>,
    },
}

fn kept_note(kept: &Option<Kept>) -> String {
    kept.as_ref().map_or(String::new(), |k| format!("\n{k}"))
}

/// The wording of `storage::hint` for the same failures.
fn io_hint(e: &std::io::Error) -> &'static str {
    if is_disk_full(e) {
        return "the disk is full: free some space and try again";
    }
    if e.kind() == std::io::ErrorKind::FileTooLarge || e.raw_os_error() == Some(27) {
        return "the file outgrew a file-size limit (ulimit -f) or the file system's largest \
                file: raise the limit or pull into another directory (model.models_dir)";
    }
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "check the directory's permissions",
        std::io::ErrorKind::ReadOnlyFilesystem => "the file system is read-only",
        _ => "check free space and permissions, then try again",
    }
}

/// ENOSPC and EDQUOT: no room for more bytes.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    ) || matches!(e.raw_os_error(), Some(28 | 122))
}

/// The final and part paths of `req`, and the checks that need no network: the sha256
/// flag and the name are well formed, and no model of that name exists (unless `force`).
pub fn target(req: &PullRequest) -> Result<Target, PullError> {
    if let Some(hex) = &req.sha256 {
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(PullError::BadSha256(hex.clone()));
        }
    }
    http::check_url(&req.url).map_err(|error| PullError::Fetch { error, kept: None })?;
    let file = name::resolve(&req.url, req.name.as_deref()).map_err(PullError::Name)?;
    let dest = req.dir.join(file);
    if dest.exists() && !req.force {
        return Err(PullError::Exists(dest));
    }
    let part = name::part_path(&dest);
    Ok(Target { dest, part })
}

/// Downloads `req`, resuming a part file a previous run left. `abort` (Ctrl-C) stops it
/// between reads with the part file kept.
pub fn pull(
    req: &PullRequest,
    abort: &AtomicBool,
    on: &mut dyn FnMut(PullEvent),
) -> Result<Pulled, PullError> {
    let target = target(req)?;
    std::fs::create_dir_all(&req.dir).map_err(|error| PullError::Write {
        path: req.dir.clone(),
        error,
        kept: None,
    })?;
    let done = transfer::download(&req.url, &target.part, abort, on)?;
    on(PullEvent::Checking);
    let sha256 = done.sha256;
    if let Some(expected) = &req.sha256 {
        if !expected.eq_ignore_ascii_case(&sha256) {
            let _ = std::fs::remove_file(&target.part);
            return Err(PullError::Checksum {
                expected: expected.to_ascii_lowercase(),
                actual: sha256,
                part: target.part,
            });
        }
    }
    let info = finish(req, &target)?;
    Ok(Pulled {
        path: target.dest,
        bytes: done.bytes,
        sha256,
        resumed_from: done.resumed_from,
        info,
    })
}

/// The header reads, then the part file takes the final name.
fn finish(req: &PullRequest, target: &Target) -> Result<GgufInfo, PullError> {
    let mut info = crate::model::gguf::read(&target.part).map_err(|e| {
        let _ = std::fs::remove_file(&target.part);
        PullError::Damaged {
            problem: e.to_string(),
            part: target.part.clone(),
        }
    })?;
    if target.dest.exists() && !req.force {
        return Err(PullError::Exists(target.dest.clone()));
    }
    std::fs::rename(&target.part, &target.dest).map_err(|error| PullError::Write {
        path: target.dest.clone(),
        error,
        kept: Some(Kept {
            part: target.part.clone(),
            bytes: info.file_bytes,
        }),
    })?;
    info.path = target.dest.clone();
    Ok(info)
}

/// The part file of `target` and its size, when one is there.
pub fn kept(target: &Target) -> Option<Kept> {
    let bytes = std::fs::metadata(&target.part).ok()?.len();
    Some(Kept {
        part: target.part.clone(),
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_checks_the_flags_and_an_existing_model() {
        let dir = tempfile::tempdir().unwrap();
        let mut req = PullRequest {
            url: "http://127.0.0.1:9/m/a.gguf?x=1".into(),
            dir: dir.path().to_path_buf(),
            name: None,
            sha256: Some("ab".into()),
            force: false,
        };
        assert!(matches!(target(&req), Err(PullError::BadSha256(_))));
        req.sha256 = Some("A".repeat(64));
        let t = target(&req).unwrap();
        assert_eq!(t.dest, dir.path().join("a.gguf"));
        assert_eq!(t.part, dir.path().join("a.gguf.part"));
        std::fs::write(&t.dest, "x").unwrap();
        let err = target(&req).unwrap_err().to_string();
        assert!(err.contains("--force"), "{err}");
        req.force = true;
        assert_eq!(target(&req).unwrap(), t);
    }

    #[test]
    fn disk_full_is_recognised_by_kind_and_by_errno() {
        assert!(is_disk_full(&std::io::Error::from_raw_os_error(28)));
        assert!(is_disk_full(&std::io::Error::from(
            std::io::ErrorKind::StorageFull
        )));
        assert!(!is_disk_full(&std::io::Error::from(
            std::io::ErrorKind::PermissionDenied
        )));
        let e = PullError::Write {
            path: "m.gguf.part".into(),
            error: std::io::Error::from_raw_os_error(28),
            kept: Some(Kept {
                part: "m.gguf.part".into(),
                bytes: 2_000_000,
            }),
        }
        .to_string();
        assert!(
            e.contains("the disk is full") && e.contains("2.0 MB") && e.contains("resume"),
            "{e}"
        );
    }
}
