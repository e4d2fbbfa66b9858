//! Project guidance for the system prompt (`HARVEY.md`, then `AGENTS.md`, at the workspace
//! root) and harvey's own `.gitignore` under `agents/`.
//!
//! Guidance is the project's authoritative word, so it goes into the stable system prompt
//! (cache-friendly), capped in tokens; no tool can write it.

use std::path::Path;

use crate::tokens::TokenCounter;

/// Files read as project guidance, in order.
pub const GUIDANCE_FILES: &[&str] = &["HARVEY.md", "AGENTS.md"];

/// The guidance text and notes for the user (e.g. that it was cut).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Guidance {
    pub text: String,
    pub notices: Vec<String>,
}

/// Reads the guidance files, keeping at most `max_tokens` of them in total.
pub fn read_guidance(workspace: &Path, counter: &dyn TokenCounter, max_tokens: usize) -> Guidance {
    let mut guidance = Guidance::default();
    let mut left = max_tokens;
    for name in GUIDANCE_FILES {
        let path = workspace.join(name);
        // Regular files only: a pipe named AGENTS.md must not hang the start.
        let text = match crate::regular_file::read_text(&path, None) {
            Ok(Some(text)) => text,
            Ok(None) => {
                guidance
                    .notices
                    .push(format!("{name} is not readable UTF-8 text; ignored"));
                continue;
            }
            Err(_) if !path.exists() => continue,
            Err(e) => {
                guidance.notices.push(format!("{e}; ignored"));
                continue;
            }
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let (kept, cut) = fit_tokens(text, counter, left);
        if cut {
            let tokens = counter.count_tokens(text);
            guidance.notices.push(format!(
                "{name} has {tokens} tokens; only the first {} fit in the guidance budget ({max_tokens} tokens) — shorten it",
                counter.count_tokens(&kept)
            ));
        }
        if !kept.is_empty() {
            left = left.saturating_sub(counter.count_tokens(&kept));
            guidance.text.push_str(&format!("From {name}:\n{kept}\n\n"));
        }
    }
    guidance.text = guidance.text.trim_end().to_string();
    guidance
}

/// The longest prefix of `text` (cut at a line end when possible) within `max_tokens`.
pub fn fit_tokens(text: &str, counter: &dyn TokenCounter, max_tokens: usize) -> (String, bool) {
    if counter.count_tokens(text) <= max_tokens {
        return (text.to_string(), false);
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let candidate: String = chars[..mid].iter().collect();
        if counter.count_tokens(&candidate) <= max_tokens {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let kept: String = chars[..lo].iter().collect();
    let kept = match kept.rfind('\n') {
        Some(at) if at >= kept.len() / 2 => kept[..at].to_string(),
        _ => kept,
    };
    (kept, true)
}

/// What `agents/.gitignore` keeps out of git: everything private. Memory files stay
/// shareable on purpose (see the README).
pub const AGENTS_GITIGNORE: &str = "# Written by harvey: private state stays out of git.\n\
# Memory files (memories/<type>/*.spmd, MEMORY.md) are left shareable on purpose.\n\
sessions/\ncache/\nrag/\nhistory\naudit.jsonl\nharvey-audit.jsonl\n*.db\n*.db-wal\n*.db-shm\n*.vectors\n*.vectors.tmp.*\n*.postings\n*.postings.tmp.*\nmemories/archive/\n";

/// Lines added to [`AGENTS_GITIGNORE`] after it was first written, each with the line
/// that tells whether a file has it: the stores' vector scan copies
/// (`vector::sidecar_path`), harvey's own audit log and the memory index's saved
/// full-text postings (`harvey-index.db.postings`).
const LATER_LINES: &[(&str, &str)] = &[
    ("*.vectors\n", "*.vectors\n*.vectors.tmp.*\n"),
    ("*.postings\n", "*.postings\n*.postings.tmp.*\n"),
    ("harvey-audit.jsonl\n", "harvey-audit.jsonl\n"),
];

/// Writes `agents/.gitignore` if it does not exist yet. Returns whether it was written.
/// One that harvey wrote before the vector copies or its own audit log existed gains
/// their lines.
pub fn ensure_agents_gitignore(agents_dir: &Path) -> std::io::Result<bool> {
    let path = agents_dir.join(".gitignore");
    if path.exists() {
        let text = std::fs::read_to_string(&path)?;
        let missing: String = LATER_LINES
            .iter()
            .filter(|(probe, _)| !text.contains(probe))
            .map(|(_, lines)| *lines)
            .collect();
        if text.starts_with("# Written by harvey") && !missing.is_empty() {
            let sep = if text.ends_with('\n') { "" } else { "\n" };
            crate::memory::file::write_atomic(&path, format!("{text}{sep}{missing}").as_bytes())?;
        }
        return Ok(false);
    }
    std::fs::create_dir_all(agents_dir)?;
    // Whole or not at all: an empty file on a full disk would hide nothing from git.
    crate::memory::file::write_atomic(&path, AGENTS_GITIGNORE.as_bytes())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::WordCounter;

    #[test]
    fn guidance_is_read_in_order_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("HARVEY.md"), "Use tabs.\nRun make test.").unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "word ".repeat(100)).unwrap();
        let g = read_guidance(dir.path(), &WordCounter, 20);
        assert!(
            g.text
                .starts_with("From HARVEY.md:\nUse tabs.\nRun make test.\n\nFrom AGENTS.md:\n"),
            "{}",
            g.text
        );
        assert!(WordCounter.count_tokens(&g.text) <= 20 + 6);
        assert_eq!(g.notices.len(), 1);
        assert!(
            g.notices[0].contains("AGENTS.md has 100 tokens"),
            "{:?}",
            g.notices
        );
        let none = read_guidance(tempfile::tempdir().unwrap().path(), &WordCounter, 20);
        assert_eq!(none, Guidance::default());
    }

    #[test]
    fn fit_prefers_line_ends() {
        let (kept, cut) = fit_tokens("a b c\nd e f g h", &WordCounter, 5);
        assert!(cut);
        assert_eq!(kept, "a b c");
        assert_eq!(
            fit_tokens("a b", &WordCounter, 5),
            ("a b".to_string(), false)
        );
    }

    #[test]
    fn gitignore_written_once() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        assert!(ensure_agents_gitignore(&agents).unwrap());
        std::fs::write(agents.join(".gitignore"), "custom").unwrap();
        assert!(!ensure_agents_gitignore(&agents).unwrap());
        assert_eq!(
            std::fs::read_to_string(agents.join(".gitignore")).unwrap(),
            "custom"
        );
    }

    #[test]
    fn an_older_harvey_gitignore_gains_the_later_lines_once() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        let mut older = AGENTS_GITIGNORE.to_string();
        let mut added = String::new();
        for (_, lines) in LATER_LINES {
            assert!(older.contains(lines));
            older = older.replace(lines, "");
            added.push_str(lines);
        }
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join(".gitignore"), &older).unwrap();
        assert!(!ensure_agents_gitignore(&agents).unwrap());
        assert!(!ensure_agents_gitignore(&agents).unwrap());
        assert_eq!(
            std::fs::read_to_string(agents.join(".gitignore")).unwrap(),
            format!("{older}{added}")
        );
    }
}
