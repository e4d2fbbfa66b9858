//! Splitting a command line into arguments the way a shell quotes, and nothing more.
//!
//! Whitespace separates words; `'…'` keeps everything literally; `"…"` keeps everything
//! but lets `\` escape `"`, `\`, `$` and `` ` ``; a `\` outside quotes escapes the next
//! character. There is no expansion of any kind: `|`, `>`, `;`, `&&`, `$(…)`, `*` and
//! `~` are ordinary characters and reach the program as (parts of) plain arguments.

/// Why a line could not be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgvError {
    #[error("unterminated {0} quote: close it, or escape it with \\")]
    Unterminated(&'static str),
    #[error("a \\ at the end of the line escapes nothing")]
    TrailingBackslash,
    #[error("nothing to run: give a program and its arguments")]
    Empty,
}

/// The words of `line`; at least one (the program) or an error.
pub fn split(line: &str) -> Result<Vec<String>, ArgvError> {
    let mut words = Vec::new();
    let mut word = String::new();
    // A word exists once any character (or an empty pair of quotes) started it.
    let mut started = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            '\'' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(ArgvError::Unterminated("single")),
                    }
                }
            }
            '"' => {
                started = true;
                double_quoted(&mut chars, &mut word)?;
            }
            '\\' => {
                started = true;
                match chars.next() {
                    // A backslash-newline joins lines, as in a shell.
                    Some('\n') => {}
                    Some(c) => word.push(c),
                    None => return Err(ArgvError::TrailingBackslash),
                }
            }
            c => {
                started = true;
                word.push(c);
            }
        }
    }
    if started {
        words.push(word);
    }
    if words.is_empty() {
        return Err(ArgvError::Empty);
    }
    Ok(words)
}

fn double_quoted(chars: &mut std::str::Chars<'_>, word: &mut String) -> Result<(), ArgvError> {
    loop {
        match chars.next() {
            Some('"') => return Ok(()),
            Some('\\') => match chars.next() {
                Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                Some('\n') => {}
                Some(c) => {
                    word.push('\\');
                    word.push(c);
                }
                None => return Err(ArgvError::Unterminated("double")),
            },
            Some(c) => word.push(c),
            None => return Err(ArgvError::Unterminated("double")),
        }
    }
}

/// A command line as a user would retype it: words with spaces or quotes are quoted.
pub fn display(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./=:,+@%^".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        split(line).unwrap()
    }

    #[test]
    fn metacharacters_are_plain_arguments() {
        assert_eq!(words("echo a; rm x"), ["echo", "a;", "rm", "x"]);
        assert_eq!(
            words("grep -r foo | wc -l > out.txt"),
            ["grep", "-r", "foo", "|", "wc", "-l", ">", "out.txt"]
        );
        assert_eq!(
            words("echo $(whoami) `id` *.rs ~"),
            ["echo", "$(whoami)", "`id`", "*.rs", "~"]
        );
        assert_eq!(words("a&&b||c"), ["a&&b||c"]);
    }

    #[test]
    fn quoting_table() {
        assert_eq!(words("  ls   -la  "), ["ls", "-la"]);
        assert_eq!(words("echo 'a b' \"c d\""), ["echo", "a b", "c d"]);
        assert_eq!(
            words(r#"echo "say \"hi\" \$HOME \n""#),
            ["echo", r#"say "hi" $HOME \n"#]
        );
        assert_eq!(words(r"echo a\ b \'"), ["echo", "a b", "'"]);
        assert_eq!(words("echo '' \"\""), ["echo", "", ""]);
        assert_eq!(words("echo 'it'\"'\"'s'"), ["echo", "it's"]);
        assert_eq!(
            words("sh -c 'sleep 100 & sleep 100'"),
            ["sh", "-c", "sleep 100 & sleep 100"]
        );
    }

    #[test]
    fn errors() {
        assert_eq!(split("echo 'a"), Err(ArgvError::Unterminated("single")));
        assert_eq!(split("echo \"a"), Err(ArgvError::Unterminated("double")));
        assert_eq!(split("echo a\\"), Err(ArgvError::TrailingBackslash));
        assert_eq!(split("   "), Err(ArgvError::Empty));
    }

    #[test]
    fn display_round_trips() {
        for line in [
            "echo 'a b' c",
            "grep -n 'it'\\''s' x",
            "ls ''",
            "echo '$(x)'",
        ] {
            let w = words(line);
            assert_eq!(words(&display(&w)), w, "{line}");
        }
        assert_eq!(display(&words("git log -n 3")), "git log -n 3");
    }
}
