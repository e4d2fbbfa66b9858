//! The environment a command gets: harvey's own, minus every variable whose name looks
//! like it holds a secret (keys, tokens, passwords, credentials) or whose value carries
//! one (a URL with `user:password@`, a token the memory guard recognises), so a program
//! the model asked for cannot read them.

/// Parts of a name (split at `_`) that mark a secret on their own.
const SECRET_PARTS: &[&str] = &["KEY", "KEYS", "PASS", "PAT", "PIN", "AUTH", "COOKIE"];

/// Substrings that mark a secret anywhere in a name.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "APIKEY",
    "PRIVATE",
    "ACCESSKEY",
    "SIGNATURE",
];

/// Whether a variable name looks like it holds a secret (case-insensitive).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
        || upper
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|part| SECRET_PARTS.contains(&part))
}

/// Whether a value carries a credential: a URL whose user info has a password
/// (`postgres://user:pass@host/db`, `redis://:pass@host`), or text the memory guard
/// takes for a secret (a GitHub token, an `sk-…` key, a JWT, …).
pub fn is_secret_value(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let authority = value[at + 3..]
            .split(|c: char| matches!(c, '/' | '?' | '#' | ',' | ';') || c.is_whitespace())
            .next()
            .unwrap_or_default();
        authority
            .rsplit_once('@')
            .and_then(|(info, _)| info.split_once(':'))
            .is_some_and(|(_, password)| !password.is_empty())
    }) || crate::memory::guard::find_secret(value).is_some()
}

fn is_secret(name: &str, value: &str) -> bool {
    is_secret_name(name) || is_secret_value(value)
}

/// `vars` without the secret-looking ones, plus the settings that keep a program from
/// waiting for a pager or a password prompt (no one can type into it).
pub fn cleaned(vars: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(k, v)| !is_secret(k, v))
        .filter(|(k, _)| !matches!(k.as_str(), "PAGER" | "GIT_PAGER" | "GIT_EXTERNAL_DIFF"))
        .collect();
    out.push(("PAGER".into(), "cat".into()));
    out.push(("GIT_PAGER".into(), "cat".into()));
    out.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    out
}

/// The names [`cleaned`] removes from `vars` (for the README's rule and tests).
pub fn removed(vars: impl IntoIterator<Item = (String, String)>) -> Vec<String> {
    vars.into_iter()
        .filter(|(k, v)| is_secret(k, v))
        .map(|(k, _)| k)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "DB_PASSWORD",
            "MYSQL_PWD_PASSWD",
            "HF_TOKEN",
            "npm_config__authToken",
            "SSH_AUTH_SOCK",
            "GPG_PASSPHRASE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "STRIPE_KEY",
            "apikey",
            "PRIVATE_KEY_PATH",
            "SENTRY_AUTH",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "PWD",
            "LANG",
            "TERM",
            "USER",
            "SHELL",
            "CARGO_HOME",
            "RUST_LOG",
            "KEYBOARD",
            "MONKEY",
            "TMPDIR",
            "EDITOR",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn values_that_carry_credentials() {
        for value in [
            "postgres://user:pass@db.example.com/app",
            "redis://:s3cret@localhost:6379/0",
            "mysql://u:p@h/db?sslmode=require",
            "first=https://a.example, second=amqp://guest:guest@mq/",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ] {
            assert!(is_secret_value(value), "{value}");
        }
        for value in [
            "/usr/bin:/bin",
            "ssh://git@github.com/o/r.git",
            "https://example.com/a:b@c",
            "http://proxy.example:3128",
            "user:pass",
            "postgres://user:@host/db",
        ] {
            assert!(!is_secret_value(value), "{value}");
        }
    }

    #[test]
    fn cleaned_drops_secrets_and_sets_pagers() {
        let vars = [
            ("PATH", "/bin"),
            ("GITHUB_TOKEN", "x"),
            ("PAGER", "less"),
            ("DATABASE_URL", "postgres://user:pass@host/db"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let out = cleaned(vars.clone());
        assert!(out.contains(&("PATH".into(), "/bin".into())));
        assert!(!out.iter().any(|(k, _)| k == "GITHUB_TOKEN"));
        assert!(!out.iter().any(|(k, _)| k == "DATABASE_URL"));
        assert!(out.contains(&("PAGER".into(), "cat".into())));
        assert!(!out.contains(&("PAGER".into(), "less".into())));
        assert_eq!(removed(vars), ["GITHUB_TOKEN", "DATABASE_URL"]);
    }
}
