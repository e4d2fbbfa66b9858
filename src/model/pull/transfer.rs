//! The bytes of one pull into its part file: continue what is there when the server
//! agrees (206), start over when it does not (200 to a range, a different range, or a 416
//! that does not match), refuse a body that does not start with the GGUF magic, and hash
//! everything, resumed bytes included.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::fcntl::{Flock, FlockArg};
use sha2::{Digest, Sha256};

use super::http::{self, Reply};
use super::{Kept, PullError, PullEvent};
use crate::model::gguf::MAGIC;

const CHUNK: usize = 256 * 1024;

/// A part file that holds the whole file.
pub struct Downloaded {
    pub bytes: u64,
    pub sha256: String,
    pub resumed_from: u64,
}

/// Where the answer leaves the part file: its length to keep, the body to append.
struct Opening {
    keep: u64,
    total: Option<u64>,
    body: Option<Box<dyn Read + Send>>,
}

pub fn download(
    url: &str,
    part: &Path,
    abort: &AtomicBool,
    on: &mut dyn FnMut(PullEvent),
) -> Result<Downloaded, PullError> {
    let mut file = lock(part)?;
    let result = fill(url, part, &mut file, abort, on);
    if result.is_err() && file.metadata().is_ok_and(|m| m.len() == 0) {
        // Nothing arrived (an HTTP error, say): no empty part file is left behind.
        let _ = std::fs::remove_file(part);
    }
    result
}

/// The part file, opened (created when missing) and locked: a second pull of the same
/// file is refused instead of writing into it too.
fn lock(part: &Path) -> Result<Flock<File>, PullError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(part)
        .map_err(|error| write_error(part, error, 0))?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| PullError::Busy {
        part: part.to_path_buf(),
        problem: errno.desc().to_string(),
    })
}

fn fill(
    url: &str,
    part: &Path,
    file: &mut File,
    abort: &AtomicBool,
    on: &mut dyn FnMut(PullEvent),
) -> Result<Downloaded, PullError> {
    let opening = open(url, part, on)?;
    on(PullEvent::Started {
        from: opening.keep,
        total: opening.total,
    });
    let mut sink = Sink {
        url,
        part,
        hasher: Sha256::new(),
        head: Vec::with_capacity(MAGIC.len()),
        done: 0,
    };
    sink.take_prefix(file, opening.keep, on)?;
    if let Some(body) = opening.body {
        sink.stream(body, file, opening.total, abort, on)?;
    }
    sink.check_magic(true)?;
    if let Some(total) = opening.total.filter(|t| sink.done < *t) {
        return Err(PullError::Truncated {
            url: url.to_string(),
            total,
            kept: sink.kept(),
        });
    }
    file.sync_all()
        .map_err(|error| write_error(part, error, sink.done))?;
    Ok(Downloaded {
        bytes: sink.done,
        sha256: hex(&sink.hasher.finalize()),
        resumed_from: opening.keep,
    })
}

/// Asks for what the part file lacks and decides from the answer what to keep of it.
fn open(url: &str, part: &Path, on: &mut dyn FnMut(PullEvent)) -> Result<Opening, PullError> {
    let mut have = std::fs::metadata(part).map_or(0, |m| m.len());
    if have > 0 && !starts_with_magic(part) {
        on(PullEvent::StartedOver {
            why: "the part file left from before is not a GGUF start",
        });
        have = 0;
    }
    let fetch_error = |error, have: u64| PullError::Fetch {
        error,
        kept: (have > 0).then(|| Kept {
            part: part.to_path_buf(),
            bytes: have,
        }),
    };
    match http::get(url, have).map_err(|e| fetch_error(e, have))? {
        Reply::Partial { start, total, body } if start == have => Ok(Opening {
            keep: have,
            total,
            body: Some(body),
        }),
        Reply::NotSatisfiable { total: Some(total) } if have > 0 && total == have => Ok(Opening {
            keep: have,
            total: Some(total),
            body: None,
        }),
        Reply::Whole { length, body } => {
            if have > 0 {
                on(PullEvent::StartedOver {
                    why: "the server does not resume downloads (it ignored the Range request)",
                });
            }
            Ok(Opening {
                keep: 0,
                total: length,
                body: Some(body),
            })
        }
        Reply::NotSatisfiable { .. } if have == 0 => Err(fetch_error(
            http::FetchError::Status {
                url: url.to_string(),
                status: 416,
            },
            0,
        )),
        _ => {
            if have > 0 {
                on(PullEvent::StartedOver {
                    why: "the part file does not match the server's file",
                });
            }
            whole(url)
        }
    }
}

/// A plain GET from byte 0, after a range answer that could not be used.
fn whole(url: &str) -> Result<Opening, PullError> {
    let fetch_error = |error| PullError::Fetch { error, kept: None };
    match http::get(url, 0).map_err(fetch_error)? {
        Reply::Whole { length, body } => Ok(Opening {
            keep: 0,
            total: length,
            body: Some(body),
        }),
        _ => Err(fetch_error(http::FetchError::Network {
            url: url.to_string(),
            problem: "the server answered a plain request with a partial one: try again".into(),
        })),
    }
}

fn starts_with_magic(part: &Path) -> bool {
    let mut head = Vec::new();
    File::open(part)
        .and_then(|f| f.take(MAGIC.len() as u64).read_to_end(&mut head))
        .is_ok()
        && MAGIC.starts_with(&head)
}

/// The part file as it grows: its length, hash and first bytes.
struct Sink<'a> {
    url: &'a str,
    part: &'a Path,
    hasher: Sha256,
    head: Vec<u8>,
    done: u64,
}

impl Sink<'_> {
    /// Cuts the part file to `keep` bytes and hashes them.
    fn take_prefix(
        &mut self,
        file: &mut File,
        keep: u64,
        on: &mut dyn FnMut(PullEvent),
    ) -> Result<(), PullError> {
        let fail = |source| write_error(self.part, source, keep);
        file.set_len(keep).map_err(fail)?;
        if keep > 0 {
            on(PullEvent::Hashing { bytes: keep });
        }
        file.seek(SeekFrom::Start(0)).map_err(fail)?;
        let mut buf = vec![0u8; CHUNK];
        let mut prefix = (&mut *file).take(keep);
        loop {
            let n = prefix.read(&mut buf).map_err(fail)?;
            if n == 0 {
                break;
            }
            self.absorb(&buf[..n]);
        }
        file.seek(SeekFrom::Start(self.done)).map_err(fail)?;
        Ok(())
    }

    fn stream(
        &mut self,
        mut body: Box<dyn Read + Send>,
        file: &mut File,
        total: Option<u64>,
        abort: &AtomicBool,
        on: &mut dyn FnMut(PullEvent),
    ) -> Result<(), PullError> {
        let mut buf = vec![0u8; CHUNK];
        loop {
            if abort.load(Ordering::SeqCst) {
                return Err(PullError::Interrupted(self.kept()));
            }
            let n = match body.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.cut(&e)),
            };
            let chunk = &buf[..n];
            self.check_magic_with(chunk)?;
            file.write_all(chunk)
                .map_err(|error| write_error(self.part, error, self.done))?;
            self.absorb(chunk);
            on(PullEvent::Progress {
                done: self.done,
                total,
            });
        }
    }

    fn absorb(&mut self, bytes: &[u8]) {
        let want = MAGIC.len().saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..want.min(bytes.len())]);
        self.hasher.update(bytes);
        self.done += bytes.len() as u64;
    }

    /// Refuses the body as soon as its first bytes show it is no GGUF.
    fn check_magic_with(&mut self, next: &[u8]) -> Result<(), PullError> {
        let mut head = self.head.clone();
        let want = MAGIC.len().saturating_sub(head.len());
        head.extend_from_slice(&next[..want.min(next.len())]);
        if MAGIC.starts_with(&head) {
            return Ok(());
        }
        self.head = head;
        self.check_magic(false)
    }

    /// `at_end`: a body shorter than the magic is refused too.
    fn check_magic(&self, at_end: bool) -> Result<(), PullError> {
        let whole = self.head.len() == MAGIC.len();
        if MAGIC.starts_with(&self.head) && (whole || !at_end) {
            return Ok(());
        }
        let _ = std::fs::remove_file(self.part);
        Err(PullError::NotGguf {
            url: self.url.to_string(),
            start: shown(&self.head),
        })
    }

    /// The connection failed mid-body.
    fn cut(&self, e: &std::io::Error) -> PullError {
        PullError::Fetch {
            error: http::FetchError::Network {
                url: self.url.to_string(),
                problem: format!("the download broke off ({e})"),
            },
            kept: Some(self.kept()),
        }
    }

    fn kept(&self) -> Kept {
        Kept {
            part: self.part.to_path_buf(),
            bytes: self.done,
        }
    }
}

fn write_error(path: &Path, error: std::io::Error, bytes: u64) -> PullError {
    PullError::Write {
        path: path.to_path_buf(),
        error,
        kept: (bytes > 0).then(|| Kept {
            part: path.to_path_buf(),
            bytes,
        }),
    }
}

/// The first bytes as text when they are printable (`"<!do"`), else as hex (`1f 8b 08 08`).
fn shown(bytes: &[u8]) -> String {
    if bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!("{:?}", String::from_utf8_lossy(bytes))
    } else {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("bytes {}", hex.join(" "))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_pull_of_the_same_file_is_refused_while_the_first_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("m.gguf.part");
        let _held = lock(&part).unwrap();
        let abort = AtomicBool::new(false);
        let err = download("http://127.0.0.1:9/m.gguf", &part, &abort, &mut |_| {})
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("another harvey is pulling"), "{err}");
        assert!(part.exists(), "the first pull's part file is left alone");
    }

    #[test]
    fn first_bytes_are_shown_as_text_or_hex() {
        assert_eq!(shown(b"<!do"), "\"<!do\"");
        assert_eq!(shown(&[0x1f, 0x8b, 8, 8]), "bytes 1f 8b 08 08");
    }

    #[test]
    fn a_failed_request_leaves_no_empty_part_file() {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("m.gguf.part");
        let abort = AtomicBool::new(false);
        // Port 9 (discard) on loopback: nothing listens, the connection is refused.
        let err = download("http://127.0.0.1:9/m.gguf", &part, &abort, &mut |_| {});
        assert!(matches!(err, Err(PullError::Fetch { kept: None, .. })));
        assert!(!part.exists());
    }
}
