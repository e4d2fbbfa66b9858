//! The text of a download's progress: bytes, percentage, rate and time left. Pure; the
//! command line decides when to draw it (a redrawn bar on a terminal, a periodic line
//! otherwise).

use std::time::Duration;

/// Where a download stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Snapshot {
    /// Bytes in the part file, resumed ones included.
    pub done: u64,
    pub total: Option<u64>,
    /// Bytes received by this run, and how long it has run: the rate.
    pub received: u64,
    pub elapsed: Duration,
}

impl Snapshot {
    /// Bytes per second this run, once there is something to measure.
    pub fn rate(&self) -> Option<f64> {
        let secs = self.elapsed.as_secs_f64();
        (secs >= 0.05 && self.received > 0).then(|| self.received as f64 / secs)
    }

    /// Time left at the current rate.
    pub fn eta(&self) -> Option<Duration> {
        let left = self
            .total?
            .checked_sub(self.done)
            .filter(|left| *left > 0)?;
        let rate = self.rate()?;
        Some(Duration::from_secs_f64(left as f64 / rate))
    }
}

/// `49.2 MB / 98.4 MB  50%  12.3 MB/s  ETA 4s` (parts that are unknown are left out).
pub fn line(s: &Snapshot) -> String {
    let mut out = human_bytes(s.done);
    if let Some(total) = s.total {
        out.push_str(&format!(
            " / {}  {:>3}%",
            human_bytes(total),
            percent(s.done, total)
        ));
    }
    if let Some(rate) = s.rate() {
        out.push_str(&format!("  {}/s", human_bytes(rate as u64)));
    }
    if let Some(eta) = s.eta() {
        out.push_str(&format!("  ETA {}", clock(eta)));
    }
    out
}

/// `[#########-----------]`: `width` cells between the brackets.
pub fn bar(done: u64, total: u64, width: usize) -> String {
    let filled = if total == 0 {
        width
    } else {
        ((done.min(total) as u128 * width as u128) / total as u128) as usize
    };
    format!("[{}{}]", "#".repeat(filled), "-".repeat(width - filled))
}

/// Decimal units, as `model list` prints sizes: `950 B`, `12.3 KB`, `98.4 MB`, `1.2 GB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [(&str, f64); 3] = [("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    UNITS
        .iter()
        .find(|(_, size)| n as f64 >= *size)
        .map_or(format!("{n} B"), |(unit, size)| {
            format!("{:.1} {unit}", n as f64 / size)
        })
}

fn percent(done: u64, total: u64) -> u64 {
    if total == 0 {
        return 100;
    }
    (done.min(total) as u128 * 100 / total as u128) as u64
}

/// `4s`, `2m05s`, `1h02m`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(done: u64, total: Option<u64>, received: u64, ms: u64) -> Snapshot {
        Snapshot {
            done,
            total,
            received,
            elapsed: Duration::from_millis(ms),
        }
    }

    #[test]
    fn lines() {
        let table = [
            (snap(0, Some(100_000_000), 0, 0), "0 B / 100.0 MB    0%"),
            (
                snap(50_000_000, Some(100_000_000), 10_000_000, 1000),
                "50.0 MB / 100.0 MB   50%  10.0 MB/s  ETA 5s",
            ),
            // The rate counts this run's bytes only, not the resumed ones.
            (
                snap(90_000_000, Some(100_000_000), 1_000_000, 2000),
                "90.0 MB / 100.0 MB   90%  500.0 KB/s  ETA 20s",
            ),
            (snap(1_500, None, 1_500, 1000), "1.5 KB  1.5 KB/s"),
            (snap(7, Some(7), 7, 10), "7 B / 7 B  100%"),
        ];
        for (s, want) in table {
            assert_eq!(line(&s), want, "{s:?}");
        }
    }

    #[test]
    fn bars_clocks_and_sizes() {
        assert_eq!(bar(0, 10, 4), "[----]");
        assert_eq!(bar(5, 10, 4), "[##--]");
        assert_eq!(bar(12, 10, 4), "[####]");
        assert_eq!(bar(0, 0, 2), "[##]");
        assert_eq!(clock(Duration::from_secs(125)), "2m05s");
        assert_eq!(clock(Duration::from_secs(3720)), "1h02m");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_200_000_000), "1.2 GB");
    }
}
