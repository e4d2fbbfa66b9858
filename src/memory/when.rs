//! Dates a query names ("on May 3, 2023", "in July 2023", "in June", "yesterday") as a
//! time window that recall matches against when a memory was said, not only against its
//! words: a turn says "I went camping yesterday", the question asks what happened "in
//! June 2023", and no word is shared — only the memory's date is. Pure functions; the
//! store decides what a match is worth (`rank::Ranking::date_weight`).
//!
//! Deliberately small: absolute dates in English word order (day month year, month day
//! year, month year, month, year) and a few relative ones taken from `now`. A date the
//! parser does not understand leaves the query as it was.

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words before a bare month that make it a date ("in May", not "may I").
const MONTH_LEADS: [&str; 8] = ["in", "on", "of", "during", "since", "early", "late", "mid"];

/// A span of days a query names; `year` unknown means the same span in any year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    year: Option<i32>,
    /// First and last day inclusive, as (month, day).
    from: (u32, u32),
    to: (u32, u32),
    /// Days outside the span that still count, fading linearly.
    slack: i64,
}

/// A date found in a query: its window and the query without the date's words (so the
/// words "May" and "2023" do not match turns that merely mention a May).
#[derive(Debug, Clone, PartialEq)]
pub struct Dated {
    pub window: Window,
    pub rest: String,
}

/// The first date `query` names, if any. `now` (unix seconds) anchors relative dates.
pub fn dated(query: &str, now: i64) -> Option<Dated> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let (window, used) = absolute(&words).or_else(|| relative(&words, now))?;
    let rest = words
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(i))
        .map(|(_, w)| w.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    Some(Dated { window, rest })
}

fn month_of(w: &str) -> Option<u32> {
    let full = MONTHS.iter().position(|m| *m == w);
    let short = (w.len() == 3 && w != "may" && w != "mar")
        .then(|| MONTHS.iter().position(|m| m.starts_with(w)))
        .flatten();
    full.or(short).and_then(|i| u32::try_from(i + 1).ok())
}

fn day_of(w: &str) -> Option<u32> {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    let ok_suffix = matches!(suffix, "" | "st" | "nd" | "rd" | "th");
    let d: u32 = digits.parse().ok()?;
    (ok_suffix && (1..=31).contains(&d) && digits.len() <= 2).then_some(d)
}

fn year_of(w: &str) -> Option<i32> {
    let y: i32 = w.parse().ok()?;
    (w.len() == 4 && (1900..=2100).contains(&y)).then_some(y)
}

/// Month with an optional day before or after it and an optional year after it; else a
/// year alone. Returns the window and the indices of the words it used.
fn absolute(words: &[String]) -> Option<(Window, Vec<usize>)> {
    let at = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    for (i, w) in words.iter().enumerate() {
        let Some(month) = month_of(w) else { continue };
        let mut used = vec![i];
        let before = i.checked_sub(1).and_then(|j| day_of(at(j)).map(|d| (j, d)));
        let before = before.or_else(|| {
            // "the 3rd of May"
            (i >= 2 && at(i - 1) == "of")
                .then(|| day_of(at(i - 2)).map(|d| (i - 2, d)))
                .flatten()
        });
        let after = day_of(at(i + 1)).map(|d| (i + 1, d));
        let day = before.or(after);
        let year_at = day.map_or(i, |(j, _)| j.max(i)) + 1;
        let year = year_of(at(year_at)).map(|y| (year_at, y));
        let is_date = day.is_some()
            || year.is_some()
            || i.checked_sub(1)
                .is_some_and(|j| MONTH_LEADS.contains(&at(j)));
        if !is_date {
            continue;
        }
        used.extend(day.map(|(j, _)| j));
        if day.is_some_and(|(j, _)| j + 2 == i) {
            used.push(i - 1);
        }
        used.extend(year.map(|(j, _)| j));
        let window = match day {
            Some((_, d)) => Window::day(year.map(|y| y.1), month, d),
            None => Window::month(year.map(|y| y.1), month),
        };
        return Some((window, used));
    }
    let (i, y) = words
        .iter()
        .enumerate()
        .find_map(|(i, w)| year_of(w).map(|y| (i, y)))?;
    Some((Window::year(y), vec![i]))
}

/// "yesterday", "last week", "last month", "last year", from `now`.
fn relative(words: &[String], now: i64) -> Option<(Window, Vec<usize>)> {
    let today = DateTime::<Utc>::from_timestamp(now, 0)?.date_naive();
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).map(String::as_str);
        let found = match (w.as_str(), next) {
            ("yesterday", _) => Some((Window::span(today - Duration::days(1), 0, 1), vec![i])),
            ("last", Some("week")) => Some((
                Window::span(today - Duration::days(7), 6, 2),
                vec![i, i + 1],
            )),
            ("last", Some("month")) => {
                let m = today - Duration::days(i64::from(today.day()));
                Some((Window::month(Some(m.year()), m.month()), vec![i, i + 1]))
            }
            ("last", Some("year")) => Some((Window::year(today.year() - 1), vec![i, i + 1])),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

impl Window {
    fn day(year: Option<i32>, month: u32, day: u32) -> Self {
        Self {
            year,
            from: (month, day),
            to: (month, day),
            slack: 3,
        }
    }

    fn month(year: Option<i32>, month: u32) -> Self {
        Self {
            year,
            from: (month, 1),
            to: (month, 31),
            slack: 7,
        }
    }

    fn year(year: i32) -> Self {
        Self {
            year: Some(year),
            from: (1, 1),
            to: (12, 31),
            slack: 14,
        }
    }

    /// `days + 1` days from `start`, with `slack`.
    fn span(start: NaiveDate, days: i64, slack: i64) -> Self {
        let end = start + Duration::days(days);
        Self {
            year: Some(start.year()),
            from: (start.month(), start.day()),
            to: (end.month(), end.day()),
            slack,
        }
    }

    /// How well a memory said at `at` (unix seconds) falls in the window: 1 inside,
    /// fading to 0 over `slack` days outside.
    pub fn closeness(&self, at: i64) -> f64 {
        let Some(date) = DateTime::<Utc>::from_timestamp(at, 0).map(|t| t.date_naive()) else {
            return 0.0;
        };
        let years = match self.year {
            Some(y) => vec![y],
            None => vec![date.year() - 1, date.year(), date.year() + 1],
        };
        years
            .into_iter()
            .filter_map(|y| self.distance(y, date))
            .map(|d| {
                if d == 0 {
                    1.0
                } else {
                    (1.0 - d as f64 / (self.slack + 1) as f64).max(0.0)
                }
            })
            .fold(0.0, f64::max)
    }

    /// Days between `date` and the window placed in `year` (0 inside it).
    fn distance(&self, year: i32, date: NaiveDate) -> Option<i64> {
        let from = NaiveDate::from_ymd_opt(year, self.from.0, self.from.1)?;
        let to = last_valid(year, self.to.0, self.to.1)?;
        // A window that wraps the new year ("last week" on 2 January).
        let to = if to < from {
            last_valid(year + 1, self.to.0, self.to.1)?
        } else {
            to
        };
        Some(if date < from {
            (from - date).num_days()
        } else if date > to {
            (date - to).num_days()
        } else {
            0
        })
    }

    /// Whether anything said at `at` counts at all.
    pub fn contains(&self, at: i64) -> bool {
        self.closeness(at) > 0.0
    }
}

/// The day, or the month's last day when `day` is past it (31 → 30 June).
fn last_valid(year: i32, month: u32, day: u32) -> Option<NaiveDate> {
    (0..4).find_map(|back| NaiveDate::from_ymd_opt(year, month, day.checked_sub(back)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(y: i32, m: u32, d: u32) -> i64 {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp()
    }

    /// A query, the day it names (year, month, day) and the words left without it.
    type Case = (&'static str, Option<(i32, u32, u32)>, &'static str);

    #[test]
    fn dates_in_queries() {
        let now = ts(2023, 6, 15);
        let cases: &[Case] = &[
            (
                "Who did Maria have dinner with on May 3, 2023?",
                Some((2023, 5, 3)),
                "who did maria have dinner with on",
            ),
            (
                "What did Gina find on 1 February, 2023?",
                Some((2023, 2, 1)),
                "what did gina find on",
            ),
            (
                "What painting did she show on October 13th?",
                Some((2023, 10, 13)),
                "what painting did she show on",
            ),
            (
                "What happened on the 3rd of May 2023",
                Some((2023, 5, 3)),
                "what happened on the",
            ),
            (
                "When did Melanie go camping in June?",
                Some((2022, 6, 20)),
                "when did melanie go camping in",
            ),
            (
                "What did John attend in March 2023?",
                Some((2023, 3, 31)),
                "what did john attend in",
            ),
            (
                "How many times at the beach in 2023?",
                Some((2023, 12, 1)),
                "how many times at the beach in",
            ),
            (
                "What did I do yesterday",
                Some((2023, 6, 14)),
                "what did i do",
            ),
            ("May I ask about the pump?", None, ""),
            ("How do I fix git?", None, ""),
        ];
        for (query, inside, rest) in cases {
            let got = dated(query, now);
            match inside {
                None => assert_eq!(got, None, "{query}"),
                Some((y, m, d)) => {
                    let got = got.unwrap_or_else(|| panic!("{query}: no date"));
                    assert_eq!(
                        got.window.closeness(ts(*y, *m, *d)),
                        1.0,
                        "{query}: {got:?}"
                    );
                    assert_eq!(got.rest, *rest, "{query}");
                }
            }
        }
    }

    #[test]
    fn closeness_fades_outside_the_window() {
        let w = Window::day(Some(2023), 5, 3);
        assert_eq!(w.closeness(ts(2023, 5, 3)), 1.0);
        let near = w.closeness(ts(2023, 5, 5));
        assert!(near > 0.0 && near < 1.0, "{near}");
        assert_eq!(w.closeness(ts(2023, 5, 20)), 0.0);
        assert_eq!(w.closeness(ts(2022, 5, 3)), 0.0, "another year");
        let june = Window::month(None, 6);
        assert_eq!(june.closeness(ts(2021, 6, 30)), 1.0, "any year");
        assert!(june.contains(ts(2021, 7, 3)) && !june.contains(ts(2021, 8, 1)));
        let wrap = Window::span(NaiveDate::from_ymd_opt(2022, 12, 28).unwrap(), 6, 0);
        assert_eq!(wrap.closeness(ts(2023, 1, 2)), 1.0, "across the new year");
    }
}
