//! Workspace files read into the context by the user (`/read`, `/attach`, `/context pin`):
//! text files, whole or by line ranges, and PDFs by page ranges through `pdftotext`.
//!
//! Paths go through the same sandbox as the model's read tools
//! ([`crate::sandbox::resolve`]): nothing outside the workspace, in `agents/` or
//! `.git/`, or secret-looking. Binary files are refused. Nothing here counts tokens or
//! decides what fits: the caller does, with the loaded model's tokenizer. Nothing prints.

use std::fs::File;
use std::path::Path;
use std::process::Command;

use crate::regular_file::{self, OpenError};

use crate::sandbox::{display, resolve};

/// Largest file read, in bytes (the token count decides what fits; this only keeps a
/// stray multi-gigabyte file from being loaded at all).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// How much of a file's head is checked for NUL bytes.
const SNIFF_BYTES: usize = 8192;

/// Lines (text) or pages (PDF), 1-based and inclusive; `end: None` runs to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: usize,
    pub end: Option<usize>,
}

/// A file as it goes to the model: a short label (screen and session record) and the
/// text block, header and end marker included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileText {
    /// The path relative to the workspace.
    pub path: String,
    pub label: String,
    pub text: String,
    pub is_pdf: bool,
    /// Lines in the file (text files; pages are not counted for PDFs).
    pub total_lines: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{0}")]
    Sandbox(#[from] crate::sandbox::SandboxError),
    #[error("{0} is a directory; name a file in it")]
    Directory(String),
    #[error("{path} looks like a binary file ({why}); /read takes text files and PDFs")]
    Binary { path: String, why: &'static str },
    #[error("{path} is {bytes} bytes; files over {MAX_FILE_BYTES} bytes are not read")]
    TooLarge { path: String, bytes: u64 },
    #[error("{0}")]
    BadRange(String),
    #[error("{path} has {total} lines; line {start} is past the end")]
    PastEnd {
        path: String,
        start: usize,
        total: usize,
    },
    #[error(
        "reading a PDF needs pdftotext, which is not installed (Debian: apt install poppler-utils)"
    )]
    NoPdfTool,
    #[error("pdftotext could not read {path}: {message}")]
    Pdf { path: String, message: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Open(OpenError),
}

/// `START-END`, `START-` (to the end) or `N` (one line or page).
pub fn parse_range(word: &str) -> Result<Range, FileError> {
    let bad = || {
        FileError::BadRange(format!(
            "{word:?} is not a range: write START-END, START- or N (1-based, e.g. 10-40)"
        ))
    };
    let number = |s: &str| s.trim().parse::<usize>().ok().filter(|n| *n >= 1);
    let range = match word.split_once('-') {
        Some((a, "")) => Range {
            start: number(a).ok_or_else(bad)?,
            end: None,
        },
        Some((a, b)) => Range {
            start: number(a).ok_or_else(bad)?,
            end: Some(number(b).ok_or_else(bad)?),
        },
        None => {
            let n = number(word).ok_or_else(bad)?;
            Range {
                start: n,
                end: Some(n),
            }
        }
    };
    match range.end {
        Some(end) if end < range.start => Err(FileError::BadRange(format!(
            "{word}: the range ends before it starts"
        ))),
        _ => Ok(range),
    }
}

/// Splits `/read` arguments into the path and its ranges: the trailing words made of
/// digits and dashes are ranges (a malformed one is an error), the rest the path (so a
/// path may contain spaces).
pub fn parse_request(args: &str) -> Result<(String, Vec<Range>), FileError> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let range_shaped = |w: &&str| {
        w.chars().any(|c| c.is_ascii_digit()) && w.chars().all(|c| c.is_ascii_digit() || c == '-')
    };
    let first_range = words
        .iter()
        .rposition(|w| !range_shaped(w))
        .map_or(0, |i| i + 1);
    let path = words[..first_range].join(" ");
    if path.is_empty() {
        return Err(FileError::BadRange(
            "name a file first: FILE [START-END]…".into(),
        ));
    }
    let ranges = words[first_range..]
        .iter()
        .map(|w| parse_range(w))
        .collect::<Result<_, _>>()?;
    Ok((path, ranges))
}

/// Reads `requested` (relative to the workspace `root`) for the context: the ranges of
/// a text file (lines) or a PDF (pages); no ranges = the whole file.
pub fn read(root: &Path, requested: &str, ranges: &[Range]) -> Result<FileText, FileError> {
    let path = resolve(root, requested)?;
    let shown = display(root, &path);
    if path.is_dir() {
        return Err(FileError::Directory(shown));
    }
    let opened = |e: OpenError| FileError::Open(e.shown_as(&shown));
    let (file, meta) = regular_file::open(&path).map_err(opened)?;
    let bytes = meta.len();
    if bytes > MAX_FILE_BYTES {
        return Err(FileError::TooLarge { path: shown, bytes });
    }
    let reader = file.try_clone().map_err(|source| FileError::Io {
        path: shown.clone(),
        source,
    })?;
    let data =
        regular_file::read_opened(&path, reader, &meta, Some(MAX_FILE_BYTES)).map_err(opened)?;
    if data.starts_with(b"%PDF-") {
        return read_pdf(&file, &shown, ranges);
    }
    if let Some(why) = binary_reason(&data) {
        return Err(FileError::Binary { path: shown, why });
    }
    let text = String::from_utf8_lossy(&data);
    text_block(&shown, &text, ranges)
}

/// Why `data` is not text, if it is not: NUL bytes near the start, or not UTF-8.
pub fn binary_reason(data: &[u8]) -> Option<&'static str> {
    if data[..data.len().min(SNIFF_BYTES)].contains(&0) {
        Some("it contains NUL bytes")
    } else if std::str::from_utf8(data).is_err() {
        Some("it is not UTF-8 text")
    } else {
        None
    }
}

/// The block for a text file: a header naming the path and lines, the selected lines
/// (`[…]` between ranges), and an end marker.
pub fn text_block(path: &str, text: &str, ranges: &[Range]) -> Result<FileText, FileError> {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let mut spans = Vec::new();
    for r in ranges {
        if r.start > total.max(1) {
            return Err(FileError::PastEnd {
                path: path.into(),
                start: r.start,
                total,
            });
        }
        spans.push((r.start, r.end.unwrap_or(total).min(total)));
    }
    let whole = spans.is_empty() || spans == [(1, total)];
    let (label, header) = if whole {
        (
            format!("file {path}"),
            format!("[file {path}, {total} lines]"),
        )
    } else {
        let shown = spans_text(&spans);
        (
            format!("file {path} lines {shown}"),
            format!("[file {path}, lines {shown} of {total}]"),
        )
    };
    let body = if whole {
        lines.join("\n")
    } else {
        let parts: Vec<String> = spans
            .iter()
            .map(|&(a, b)| lines[a - 1..b].join("\n"))
            .collect();
        parts.join("\n[…]\n")
    };
    Ok(FileText {
        path: path.into(),
        label,
        text: format!("{header}\n{body}\n[end of {path}]"),
        is_pdf: false,
        total_lines: total,
    })
}

fn spans_text(spans: &[(usize, usize)]) -> String {
    let parts: Vec<String> = spans.iter().map(|(a, b)| format!("{a}–{b}")).collect();
    parts.join(", ")
}

fn read_pdf(file: &File, shown: &str, ranges: &[Range]) -> Result<FileText, FileError> {
    let whole = [Range {
        start: 1,
        end: None,
    }];
    let wanted = if ranges.is_empty() {
        &whole[..]
    } else {
        ranges
    };
    let mut parts = Vec::new();
    for r in wanted {
        parts.push(pdf_pages(file, shown, *r)?);
    }
    let pages: Vec<String> = ranges
        .iter()
        .map(|r| match r.end {
            Some(e) if e == r.start => format!("{e}"),
            Some(e) => format!("{}–{e}", r.start),
            None => format!("{}–", r.start),
        })
        .collect();
    let (label, header) = if ranges.is_empty() {
        (format!("PDF {shown}"), format!("[PDF {shown}, all pages]"))
    } else {
        let p = pages.join(", ");
        (
            format!("PDF {shown} pages {p}"),
            format!("[PDF {shown}, pages {p}]"),
        )
    };
    let body = parts.join("\n[…]\n");
    Ok(FileText {
        path: shown.into(),
        label,
        text: format!("{header}\n{}\n[end of {shown}]", body.trim_end()),
        is_pdf: true,
        total_lines: body.lines().count(),
    })
}

/// The text of pages `r` of a PDF; pages are separated by blank lines. pdftotext reads
/// the file harvey opened and checked (as its stdin, reopened as `/dev/stdin`), not the
/// name, which could meanwhile lead to a pipe.
fn pdf_pages(file: &File, shown: &str, r: Range) -> Result<String, FileError> {
    let stdin = file.try_clone().map_err(|source| FileError::Io {
        path: shown.into(),
        source,
    })?;
    let mut cmd = Command::new("pdftotext");
    cmd.stdin(stdin);
    cmd.args(["-q", "-enc", "UTF-8", "-f", &r.start.to_string()]);
    if let Some(end) = r.end {
        cmd.args(["-l", &end.to_string()]);
    }
    let output = cmd
        .arg("/dev/stdin")
        .arg("-")
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FileError::NoPdfTool,
            _ => FileError::Pdf {
                path: shown.into(),
                message: e.to_string(),
            },
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        let message = if stderr.is_empty() {
            format!(
                "pdftotext exited with {} (is page {} past the end?)",
                output.status, r.start
            )
        } else {
            stderr
        };
        return Err(FileError::Pdf {
            path: shown.into(),
            message,
        });
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let pages: Vec<&str> = text
        .split('\u{c}')
        .map(str::trim_end)
        .filter(|p| !p.trim().is_empty())
        .collect();
    Ok(pages.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_table() {
        let r = |start, end| Range { start, end };
        assert_eq!(parse_range("3-5").unwrap(), r(3, Some(5)));
        assert_eq!(parse_range("7-").unwrap(), r(7, None));
        assert_eq!(parse_range("4").unwrap(), r(4, Some(4)));
        for bad in ["0-3", "5-2", "a-b", "-3", "x", "1-2-3"] {
            assert!(parse_range(bad).is_err(), "{bad}");
        }
        let (path, ranges) = parse_request("my notes.md 1-2 9-").unwrap();
        assert_eq!(path, "my notes.md");
        assert_eq!(ranges, [r(1, Some(2)), r(9, None)]);
        assert_eq!(parse_request("2024.txt").unwrap().1, []);
        assert!(parse_request("").is_err());
        assert!(parse_request("1-3").is_err(), "a range alone names no file");
        assert!(
            parse_request("x.md 5-2").is_err(),
            "a malformed range is not a path"
        );
        assert!(parse_request("x.md 1-2-3").is_err());
    }

    #[test]
    fn text_blocks_name_path_and_lines() {
        let text = "a\nb\nc\nd\ne\n";
        let whole = text_block("x.txt", text, &[]).unwrap();
        assert_eq!(whole.label, "file x.txt");
        assert_eq!(
            whole.text,
            "[file x.txt, 5 lines]\na\nb\nc\nd\ne\n[end of x.txt]"
        );
        let cut = [
            Range {
                start: 2,
                end: Some(3),
            },
            Range {
                start: 5,
                end: Some(99),
            },
        ];
        let some = text_block("x.txt", text, &cut).unwrap();
        assert_eq!(some.label, "file x.txt lines 2–3, 5–5");
        assert_eq!(
            some.text,
            "[file x.txt, lines 2–3, 5–5 of 5]\nb\nc\n[…]\ne\n[end of x.txt]"
        );
        let past = Range {
            start: 6,
            end: None,
        };
        let e = text_block("x.txt", text, &[past]).unwrap_err().to_string();
        assert!(e.contains("5 lines") && e.contains("line 6"), "{e}");
    }

    #[test]
    fn binary_is_told_apart() {
        assert_eq!(binary_reason(b"plain\ntext"), None);
        assert_eq!(binary_reason("héllo".as_bytes()), None);
        assert!(binary_reason(b"\x7fELF\x00\x01").is_some());
        assert!(binary_reason(&[0xff, 0xfe, 0x41]).is_some());
    }
}
