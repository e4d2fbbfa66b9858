//! Opening workspace files for reading: regular files only, and never blocking.
//!
//! Opening a named pipe for reading waits for a writer, and reading a device may never
//! end, so one `mkfifo notes.txt` in the workspace could freeze a session. Every reader
//! of workspace files (the read tools, `/read`, `/attach`, `/context pin`, PDF
//! extraction, onboarding's manifests, the diff before a write) goes through [`open`]:
//! it opens with `O_NONBLOCK` (a FIFO opens at once, without a writer) and `O_NOCTTY`,
//! then checks what it opened with `fstat` on the handle — not by name first, which a
//! swap between the check and the open would defeat — and refuses anything but a
//! regular file. `O_NONBLOCK` changes nothing for a regular file's reads.
//!
//! Depends only on std and nix; prints nothing.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::OFlag;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{path} is {kind}, not a regular file; harvey reads regular files only (a pipe, socket or device could block or never end)")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path} is {bytes} bytes; the limit is {limit}")]
    TooLarge {
        path: String,
        bytes: u64,
        limit: u64,
    },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl OpenError {
    /// The same error naming the file as `shown` (e.g. relative to the workspace).
    pub fn shown_as(self, shown: &str) -> Self {
        let path = shown.to_string();
        match self {
            Self::NotRegular { kind, .. } => Self::NotRegular { path, kind },
            Self::TooLarge { bytes, limit, .. } => Self::TooLarge { path, bytes, limit },
            Self::Io { source, .. } => Self::Io { path, source },
        }
    }

    fn io(path: &Path, source: std::io::Error) -> Self {
        if source.raw_os_error() == Some(nix::libc::ENXIO) {
            // What open(2) says for a socket file.
            return Self::NotRegular {
                path: path.display().to_string(),
                kind: "a socket (or a device with nothing behind it)",
            };
        }
        Self::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// What a non-regular file is, for the message.
fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a plain file"
    }
}

/// Opens `path` for reading without blocking; a regular file, or why not. The metadata
/// is the opened file's own.
pub fn open(path: &Path) -> Result<(File, Metadata), OpenError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
        .open(path)
        .map_err(|e| OpenError::io(path, e))?;
    let meta = file.metadata().map_err(|e| OpenError::io(path, e))?;
    if !meta.is_file() {
        return Err(OpenError::NotRegular {
            path: path.display().to_string(),
            kind: kind_of(&meta),
        });
    }
    Ok((file, meta))
}

/// The whole of a regular file, refused past `limit` bytes (when given).
pub fn read(path: &Path, limit: Option<u64>) -> Result<Vec<u8>, OpenError> {
    let (file, meta) = open(path)?;
    read_opened(path, file, &meta, limit)
}

/// [`read`] for a file [`open`] returned.
pub fn read_opened(
    path: &Path,
    file: File,
    meta: &Metadata,
    limit: Option<u64>,
) -> Result<Vec<u8>, OpenError> {
    if let Some(limit) = limit.filter(|l| meta.len() > *l) {
        return Err(OpenError::TooLarge {
            path: path.display().to_string(),
            bytes: meta.len(),
            limit,
        });
    }
    let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // A file that grows while it is read is cut at the limit rather than read forever.
    let cap = limit.unwrap_or(u64::MAX).saturating_add(1);
    file.take(cap)
        .read_to_end(&mut data)
        .map_err(|e| OpenError::io(path, e))?;
    Ok(data)
}

/// [`read`] as UTF-8 text (`None` when it is not).
pub fn read_text(path: &Path, limit: Option<u64>) -> Result<Option<String>, OpenError> {
    Ok(String::from_utf8(read(path, limit)?).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn mkfifo(path: &Path) {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    }

    #[test]
    fn a_pipe_is_refused_at_once_and_a_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("notes.txt");
        mkfifo(&pipe);
        let start = Instant::now();
        let e = read(&pipe, None).unwrap_err().to_string();
        assert!(e.contains("named pipe (FIFO)"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(2));
        let e = read(dir.path(), None).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let e = read(Path::new("/dev/null"), None).unwrap_err().to_string();
        assert!(e.contains("character device"), "{e}");
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "hello").unwrap();
        assert_eq!(read(&file, None).unwrap(), b"hello");
        assert_eq!(read_text(&file, Some(5)).unwrap().as_deref(), Some("hello"));
        assert!(matches!(
            read(&file, Some(4)),
            Err(OpenError::TooLarge { .. })
        ));
    }

    #[test]
    fn a_socket_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let e = read(&path, None).unwrap_err().to_string();
        assert!(e.contains("socket"), "{e}");
    }
}
