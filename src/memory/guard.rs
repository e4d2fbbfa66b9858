//! What may go into a memory: no secrets, no transcripts, no machine-specific paths.

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

/// Largest body, in bytes: a memory is a fact, not a transcript.
pub const MAX_BODY_BYTES: usize = 4096;

/// Patterns that look like credentials, with the name shown when one matches.
const SECRET_PATTERNS: &[(&str, &str)] = &[
    (
        "a private-key header",
        r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----",
    ),
    ("an AWS access key id", r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    (
        "a GitHub token",
        r"\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
    ),
    ("an OpenAI-style API key", r"\bsk-[A-Za-z0-9_-]{20,}"),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("a bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*"),
    (
        "a JSON web token",
        r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    ),
    (
        "a password or secret assignment",
        r#"(?i)\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b\s*[:=]\s*["']?[^\s"']{6,}"#,
    ),
];

fn compiled() -> &'static [(&'static str, Regex)] {
    static CELL: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    CELL.get_or_init(|| {
        SECRET_PATTERNS
            .iter()
            .filter_map(|(name, pattern)| Regex::new(pattern).ok().map(|r| (*name, r)))
            .collect()
    })
}

/// The kind of secret `text` seems to contain, if any.
pub fn find_secret(text: &str) -> Option<&'static str> {
    compiled()
        .iter()
        .find(|(_, r)| r.is_match(text))
        .map(|(name, _)| *name)
}

/// `text` with every credential-like match replaced by `[redacted: <what>]`, and what was
/// redacted. For text that is kept as a whole (a session summary) rather than dropped.
pub fn redact_secrets(text: &str) -> (String, Vec<&'static str>) {
    let mut out = text.to_string();
    let mut found = Vec::new();
    for (name, pattern) in compiled() {
        if pattern.is_match(&out) {
            out = pattern
                .replace_all(&out, format!("[redacted: {name}]").as_str())
                .into_owned();
            found.push(*name);
        }
    }
    (out, found)
}

/// Replaces the workspace's absolute path by `<workspace>` so memories stay valid when
/// the workspace moves (and do not leak the machine's layout).
pub fn relativize(text: &str, workspace: &Path) -> String {
    let Some(root) = workspace.to_str().filter(|r| r.len() > 1) else {
        return text.to_string();
    };
    text.replace(root.trim_end_matches('/'), "<workspace>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_named() {
        let cases = [
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
                "a private-key header",
            ),
            ("key AKIAIOSFODNN7EXAMPLE here", "an AWS access key id"),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "a GitHub token"),
            (
                "export OPENAI=sk-proj-abcdefghijklmnopqrstuv",
                "an OpenAI-style API key",
            ),
            (
                "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
                "a bearer token",
            ),
            ("password = hunter22", "a password or secret assignment"),
            ("API_KEY: 'abc123def456'", "a password or secret assignment"),
        ];
        for (text, what) in cases {
            assert_eq!(find_secret(text), Some(what), "{text}");
        }
    }

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(compiled().len(), SECRET_PATTERNS.len());
    }

    #[test]
    fn ordinary_text_is_not_a_secret() {
        for text in [
            "Run git init when git reports not a repository",
            "the password prompt appears after sudo",
            "use the token counter, not chars/4",
            "sk-learn is spelled scikit-learn",
        ] {
            assert_eq!(find_secret(text), None, "{text}");
        }
    }

    #[test]
    fn secrets_are_redacted_and_the_rest_kept() {
        let (text, found) = redact_secrets(
            "The user pushed with ghp_abcdefghijklmnopqrstuvwxyz0123456789 and set password = hunter22 before the deploy.",
        );
        assert_eq!(find_secret(&text), None, "{text}");
        assert!(
            text.starts_with("The user pushed with [redacted: a GitHub token]"),
            "{text}"
        );
        assert!(text.ends_with("before the deploy."), "{text}");
        assert_eq!(found, ["a GitHub token", "a password or secret assignment"]);
        let plain = "We fixed the build and wrote tests.";
        assert_eq!(redact_secrets(plain), (plain.to_string(), Vec::new()));
    }

    #[test]
    fn workspace_paths_become_placeholders() {
        let ws = Path::new("/home/pi/project");
        assert_eq!(
            relativize("edit /home/pi/project/src/main.rs", ws),
            "edit <workspace>/src/main.rs"
        );
        assert_eq!(relativize("/etc/hosts", ws), "/etc/hosts");
    }
}
