//! `Content-Range` headers of 206 and 416 answers (RFC 9110 §14.4). Pure.

/// `bytes START-END/TOTAL` (TOTAL may be `*`) → (START, TOTAL).
pub fn parse_content_range(value: &str) -> Option<(u64, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (span, total) = rest.split_once('/')?;
    let (start, end) = span.trim().split_once('-')?;
    let start: u64 = start.trim().parse().ok()?;
    let end: u64 = end.trim().parse().ok()?;
    if end < start {
        return None;
    }
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse::<u64>().ok().filter(|t| *t > end)?),
    };
    Some((start, total))
}

/// `bytes */TOTAL` of a 416 answer → TOTAL.
pub fn parse_unsatisfied_total(value: &str) -> Option<u64> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    rest.strip_prefix("*/")?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parsed = Option<(u64, Option<u64>)>;

    #[test]
    fn content_ranges() {
        let table: &[(&str, Parsed)] = &[
            ("bytes 0-99/100", Some((0, Some(100)))),
            ("bytes 49-99/100", Some((49, Some(100)))),
            ("bytes 49-99/*", Some((49, None))),
            (" bytes  7-7/8 ", Some((7, Some(8)))),
            ("bytes 49-99/99", None),
            ("bytes 50-49/100", None),
            ("bytes */100", None),
            ("items 0-1/2", None),
            ("bytes x-1/2", None),
            ("", None),
        ];
        for (value, want) in table {
            assert_eq!(parse_content_range(value), *want, "{value:?}");
        }
    }

    #[test]
    fn unsatisfied_totals() {
        assert_eq!(parse_unsatisfied_total("bytes */1234"), Some(1234));
        assert_eq!(parse_unsatisfied_total("bytes 0-1/2"), None);
        assert_eq!(parse_unsatisfied_total("bytes */*"), None);
    }
}
