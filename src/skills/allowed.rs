//! `allowed-tools`: the tools a skill's turn may call. The Agent Skills format writes
//! them space-separated (`read_file search_files`); other agents' skills use commas, a
//! YAML list, and Claude Code's names (`Read`, `Grep`, `Bash(git:*)`), which are taken
//! as the harvey tool that does the same. Any other word is an error naming it.

use crate::tools::TOOL_NAMES;

/// Other agents' tool names and the harvey tools that do the same.
const ALIASES: &[(&str, &[&str])] = &[
    ("Read", &["read_file"]),
    ("Write", &["write_file"]),
    ("Edit", &["edit_file"]),
    ("MultiEdit", &["edit_file"]),
    ("Glob", &["list_files"]),
    ("LS", &["list_files"]),
    ("Grep", &["search_files"]),
    ("Bash", &["run_command"]),
];

/// The words of an `allowed-tools` text: split at whitespace and commas, except inside
/// parentheses (`Bash(git log:*)` is one word).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c.is_whitespace() || c == ',') {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The harvey tools one word names, or what is wrong with it.
pub fn resolve(word: &str) -> Result<Vec<&'static str>, String> {
    if let Some(name) = TOOL_NAMES.iter().find(|n| **n == word) {
        return Ok(vec![name]);
    }
    let (head, inner) = match word.split_once('(') {
        Some((head, rest)) => (head, rest.strip_suffix(')').unwrap_or(rest).trim()),
        None => (word, ""),
    };
    // Claude Code's `Bash(git …)`: harvey's read-only git tool.
    if head == "Bash" && (inner == "git" || inner.starts_with("git ") || inner.starts_with("git:"))
    {
        return Ok(vec!["git"]);
    }
    match ALIASES.iter().find(|(alias, _)| *alias == head) {
        Some((_, names)) => Ok(names.to_vec()),
        None => Err(format!(
            "allowed-tools names {word:?}, which is no harvey tool: use {} (or Read, Write, Edit, Glob, Grep, Bash)",
            TOOL_NAMES.join(", ")
        )),
    }
}

/// Every word resolved, duplicates dropped, in the order written.
pub fn resolve_all(words: &[String]) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    for word in words {
        for name in resolve(word)? {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_parentheses_together() {
        assert_eq!(
            words("read_file  search_files"),
            ["read_file", "search_files"]
        );
        assert_eq!(
            words("Read, Grep, Bash(git log:*), Bash(npm run:*)"),
            ["Read", "Grep", "Bash(git log:*)", "Bash(npm run:*)"]
        );
        assert!(words("  ").is_empty());
    }

    #[test]
    fn names_and_aliases_resolve_and_strangers_are_named() {
        let all = resolve_all(&words("read_file Read Grep Bash(git:*) Bash")).unwrap();
        assert_eq!(all, ["read_file", "search_files", "git", "run_command"]);
        let e = resolve("fetch_url").unwrap_err();
        assert!(
            e.contains("\"fetch_url\"") && e.contains("read_file"),
            "{e}"
        );
        assert!(resolve("WebFetch").is_err());
    }
}
