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

/// A time [`parse_time`] reads, as the files write it: `2024-03-01` → `2024-03-01T00:00:00Z`.
pub fn normalized_time(text: &str) -> Option<String> {
    let at = chrono::DateTime::from_timestamp(parse_time(text)?, 0)?;
    Some(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The day of a file's time (`2025-02-03`), for a person; the text itself when it is no
/// time [`parse_time`] reads.
pub fn day_of(text: &str) -> String {
    parse_time(text)
        .and_then(|t| chrono::DateTime::from_timestamp(t, 0))
        .map_or_else(
            || text.trim().to_string(),
            |at| at.format("%Y-%m-%d").to_string(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_dates_are_midnight_utc_and_days_read_back() {
        assert_eq!(
            normalized_time("2024-03-01").as_deref(),
            Some("2024-03-01T00:00:00Z")
        );
        assert_eq!(
            normalized_time("2024-03-01T12:30:00+02:00").as_deref(),
            Some("2024-03-01T10:30:00Z")
        );
        assert_eq!(normalized_time("March 2024"), None);
        assert_eq!(day_of("2025-02-03T04:05:06Z"), "2025-02-03");
        assert_eq!(day_of(" someday "), "someday");
    }
}
