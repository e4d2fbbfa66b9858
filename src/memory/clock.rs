//! Time as the memory files and the index write it, and a file's stamp (mtime, size) for
//! the index: plain helpers below the store and its upkeep, which both use them.

use std::path::Path;

use super::index::FileStamp;

pub(crate) fn stamp_of(path: &Path) -> std::io::Result<FileStamp> {
    stamp_from(&std::fs::metadata(path)?)
}

/// The stamp of a file's metadata; an error for anything but a file.
pub(crate) fn stamp_from(meta: &std::fs::Metadata) -> std::io::Result<FileStamp> {
    if !meta.is_file() {
        return Err(std::io::Error::other("not a file"));
    }
    let mtime_ns = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    Ok(FileStamp {
        mtime_ns,
        size: i64::try_from(meta.len()).unwrap_or(i64::MAX),
    })
}

/// Now, as the files write it: `2026-05-25T12:00:00Z`.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Unix seconds now.
pub fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

pub(crate) fn now_nanos() -> i64 {
    chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
}

/// RFC 3339, `YYYY-MM-DD HH:MM:SS` (UTC) or `YYYY-MM-DD` → unix seconds.
pub fn parse_time(text: &str) -> Option<i64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(t) {
        return Some(dt.timestamp());
    }
    if let Ok(dt) = chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S") {
        return Some(dt.and_utc().timestamp());
    }
    chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|dt| dt.and_utc().timestamp())
}
