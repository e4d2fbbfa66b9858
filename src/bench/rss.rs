//! Resident memory of this process from `/proc/self/status` (Linux): the current set split
//! into anonymous and file-backed pages, the peak, and a way to reset the peak so one part
//! of a benchmark can be measured after another.

use serde::Serialize;

/// The process's memory after one step of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    pub step: String,
    pub rss_bytes: u64,
    /// Heap, KV caches, compute buffers: what is not a mapped file.
    pub rss_anon_bytes: Option<u64>,
    /// Mapped files: the model weights, SQLite's mapped pages.
    pub rss_file_bytes: Option<u64>,
    /// Peak RSS since start or the last [`reset_peak`].
    pub peak_rss_bytes: Option<u64>,
}

/// Reads the process's memory now; `None` where `/proc/self/status` does not exist.
pub fn sample(step: &str) -> Option<Sample> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse(step, &status)
}

/// Resets the peak (`VmHWM`) to the current RSS (Linux ≥ 4.0: writing 5 to
/// `/proc/self/clear_refs`). False when that is not possible; the peak then covers the
/// whole process.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Returns freed heap to the OS (glibc's `malloc_trim`), so what a setup step allocated
/// and freed does not count in what is measured after it. False without glibc.
pub fn trim_heap() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim takes no pointer and only releases free pages of the heap.
        unsafe { malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Copies `/proc/self/smaps` to `path` (a per-mapping account of the resident set).
pub fn keep_smaps(path: &std::path::Path) -> std::io::Result<u64> {
    std::fs::copy("/proc/self/smaps", path)
}

fn parse(step: &str, status: &str) -> Option<Sample> {
    Some(Sample {
        step: step.to_string(),
        rss_bytes: field(status, "VmRSS:")?,
        rss_anon_bytes: field(status, "RssAnon:"),
        rss_file_bytes: field(status, "RssFile:"),
        peak_rss_bytes: field(status, "VmHWM:"),
    })
}

/// A `Key:   123 kB` line of `/proc/self/status`, in bytes.
fn field(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_bytes() {
        let status = "Name:\tharvey\nVmHWM:\t  2000 kB\nVmRSS:\t  1500 kB\nRssAnon:\t  500 kB\nRssFile:\t 1000 kB\n";
        let s = parse("x", status).unwrap();
        assert_eq!(s.rss_bytes, 1500 * 1024);
        assert_eq!(s.peak_rss_bytes, Some(2000 * 1024));
        assert_eq!(s.rss_anon_bytes, Some(500 * 1024));
        assert_eq!(s.rss_file_bytes, Some(1000 * 1024));
        assert_eq!(parse("x", "Name: x\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_peak_never_falls_below_the_current_set() {
        let s = sample("now").unwrap();
        assert!(s.peak_rss_bytes.unwrap() >= s.rss_bytes);
        if reset_peak() {
            let after = sample("after").unwrap();
            assert!(after.peak_rss_bytes.unwrap() >= after.rss_bytes);
        }
    }
}
