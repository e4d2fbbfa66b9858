//! Durations as the Go tool writes them: `2m`, `90s`, `1m30s`, `500ms`, `1h` (a bare
//! number is seconds).

use std::time::Duration;

/// Parses `2m`, `1m30s`, `500ms`, `45` (seconds); `None` when it is not a duration.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.')?;
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += Duration::try_from_secs_f64(number * scale).ok()?;
    }
    Some(total)
}

/// The shortest form [`parse_duration`] reads back: `2m`, `1m30s`, `500ms`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 1000 != 0 {
        return format!("{ms}ms");
    }
    let secs = ms / 1000;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    for (n, unit) in [(h, "h"), (m, "m"), (s, "s")] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    if out.is_empty() {
        out.push_str("0s");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let s = Duration::from_secs;
        assert_eq!(parse_duration("2m"), Some(s(120)));
        assert_eq!(parse_duration("300s"), Some(s(300)));
        assert_eq!(parse_duration("1m30s"), Some(s(90)));
        assert_eq!(parse_duration("1h"), Some(s(3600)));
        assert_eq!(parse_duration("45"), Some(s(45)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        for bad in ["", "m", "2 minutes", "5x", "-1s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        for d in ["2m", "1m30s", "500ms", "1h", "0s", "2h5s"] {
            assert_eq!(format_duration(parse_duration(d).unwrap()), d);
        }
    }
}
