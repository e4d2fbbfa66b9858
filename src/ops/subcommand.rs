//! What the `/rag` and `/kb` sub-command parsers and runners share: splitting off the
//! first word, and an error type that keeps the user's error (shown, the loop goes on)
//! apart from a broken output stream (which ends the command).

use std::fmt::Display;
use std::io;

/// The first word of `s` and the trimmed rest (`("", "")` for blank input).
pub(super) fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim();
    s.split_once(char::is_whitespace)
        .map(|(a, b)| (a, b.trim()))
        .unwrap_or((s, ""))
}

/// Why a sub-command handler stopped.
#[derive(Debug)]
pub(super) enum Fail {
    /// The command failed: show this to the user.
    User(String),
    /// Writing the output failed: the caller stops.
    Output(io::Error),
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Self {
        Fail::Output(e)
    }
}

/// Turns any displayable error into the user's error, so handlers can use `?`.
pub(super) trait OrUser<T> {
    fn or_user(self) -> Result<T, Fail>;
}

impl<T, E: Display> OrUser<T> for Result<T, E> {
    fn or_user(self) -> Result<T, Fail> {
        self.map_err(|e| Fail::User(e.to_string()))
    }
}

/// The shape the public runners return: output errors outside, the user's inside.
pub(super) fn settle<T>(result: Result<T, Fail>) -> io::Result<Result<T, String>> {
    match result {
        Ok(v) => Ok(Ok(v)),
        Err(Fail::User(e)) => Ok(Err(e)),
        Err(Fail::Output(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_word_trims_both_parts() {
        assert_eq!(split_word("  add  NAME  a desc "), ("add", "NAME  a desc"));
        assert_eq!(split_word(" list "), ("list", ""));
        assert_eq!(split_word(""), ("", ""));
    }

    #[test]
    fn settle_keeps_user_errors_apart_from_output_errors() {
        let user: Result<(), Fail> = Err(Fail::User("no store".into()));
        assert_eq!(settle(user).ok(), Some(Err("no store".to_string())));
        let broken: Result<(), Fail> = Err(io::Error::other("pipe").into());
        assert!(settle(broken).is_err());
        assert_eq!(
            settle(Err::<u8, _>("bad").or_user()).ok(),
            Some(Err("bad".into()))
        );
    }
}
