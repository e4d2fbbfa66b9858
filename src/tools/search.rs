//! `search_files`: lines matching a pattern across the workspace (through the sandbox,
//! skipping build folders and files too big to be source), and the walk the read tools
//! share when they look for a name.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::workspace::{visible_entries, with_note};
use super::{arg_str, misses, Param, ParamKind, Tool, ToolError};
use crate::sandbox::{display, is_secret_name};
use crate::workspace_map::nearest::{resolve_forgiving, Want};

const MAX_MATCHES: usize = 50;
const MAX_SEARCH_FILE_BYTES: u64 = 1024 * 1024;
const SKIP_DIRS: &[&str] = &["target", "node_modules", ".venv", "__pycache__"];

pub struct SearchFiles {
    pub root: PathBuf,
}

impl Tool for SearchFiles {
    fn name(&self) -> &'static str {
        "search_files"
    }
    fn route(&self) -> Option<&'static str> {
        Some("find where a function or name is defined or used, which files mention a word, TODO comments")
    }
    fn description(&self) -> &'static str {
        "Find lines matching a regular expression (case-insensitive) in workspace files."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[
            Param {
                name: "pattern",
                kind: ParamKind::Str { max_len: 100 },
                required: true,
                help: "regular expression (Rust regex syntax; plain words match themselves)",
            },
            Param {
                name: "path",
                kind: ParamKind::Str { max_len: 200 },
                required: false,
                help: "directory or file to search (default: the root)",
            },
        ];
        P
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let pattern = arg_str(args, "pattern").unwrap_or_default();
        let regex = compile(&widened(pattern))?;
        if matches_any_line(&regex) {
            // Asked the default of express's `etag` setting, the 0.5B searched `.*` in
            // `docs` twice and answered "1" (it is 'weak').
            return Err(ToolError::BadArguments(format!(
                "the pattern {pattern:?} matches every line, so it finds nothing in \
particular: search for a word the answer's line holds (a name, a setting, a phrase)"
            )));
        }
        let requested = arg_str(args, "path").unwrap_or(".");
        let (resolved, mut note) = match resolve_forgiving(&self.root, requested, Want::Either) {
            Ok(r) => {
                let note = r.note("searched", requested);
                (r, note)
            }
            // A scope that is not there is no reason not to search: asked where the sitemap
            // is generated, the 1.5B gave the hint's three file names as one `path`
            // ("src/site.rs, src/render/sitemap.rs, tests/sitemap.rs"), failed, and
            // answered from a second search's test file. The sandbox's refusals stand.
            Err(crate::sandbox::SandboxError::NotFound(_)) => (
                resolve_forgiving(&self.root, ".", Want::Dir)?,
                Some(format!(
                    "({} is not in the workspace; searched all of it:)",
                    requested.trim()
                )),
            ),
            Err(e) => return Err(e.into()),
        };
        let (mut matches, mut total) = self.matching(&regex, &resolved.path)?;
        // A search held to a folder that misses there looks in the whole workspace: asked
        // to search the project for TODO comments, the 1.5B searched `notes/` (a file
        // there is named todo.md) and answered "No lines match".
        let root = self
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.root.clone());
        if matches.is_empty() && resolved.path != root {
            (matches, total) = self.matching(&regex, &root)?;
            if !matches.is_empty() {
                let shown = display(&self.root, &resolved.path);
                note = Some(format!(
                    "(no lines match {pattern:?} in {shown}; in the whole workspace:)"
                ));
            }
        }
        if matches.is_empty() {
            let mut everywhere = walk_all(&self.root);
            let found = misses::by_words(&self.root, pattern, &mut everywhere)
                .unwrap_or_else(|| format!("no lines match {pattern:?}"));
            return Ok(with_note(note, found));
        }
        let mut out = matches.join("\n");
        if total > MAX_MATCHES {
            out.push_str(&format!(
                "\n[cut: showed {MAX_MATCHES} of {total} matching lines]"
            ));
        }
        let mut everywhere = walk_all(&self.root);
        if let Some(found) = misses::definition_after_search(&self.root, pattern, &mut everywhere) {
            out.push_str(&format!("\n{found}"));
        }
        Ok(with_note(note, out))
    }
}

impl SearchFiles {
    /// The lines under `start` that `regex` matches (at most [`MAX_MATCHES`], as
    /// `path:line: text`) and how many there are.
    fn matching(
        &self,
        regex: &regex::Regex,
        start: &Path,
    ) -> Result<(Vec<String>, usize), ToolError> {
        let mut matches = Vec::new();
        let mut total = 0;
        walk(&self.root, start, &mut |path, text| {
            for (i, line) in text.lines().enumerate() {
                if regex.is_match(line) {
                    total += 1;
                    if matches.len() < MAX_MATCHES {
                        let shown: String = line.trim().chars().take(200).collect();
                        matches.push(format!("{}:{}: {shown}", display(&self.root, path), i + 1));
                    }
                }
            }
        })?;
        Ok((matches, total))
    }
}

/// Visits readable text files under `start` (no symlinks, private dirs or secrets).
pub(super) fn walk(
    root: &Path,
    start: &Path,
    visit: &mut dyn FnMut(&Path, &str),
) -> Result<(), ToolError> {
    if start.is_file() {
        if let Some(text) = small_text(start) {
            visit(start, &text);
        }
        return Ok(());
    }
    let mut stack = vec![start.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries = visible_entries(root, &dir)?;
        entries.sort();
        for (path, is_dir) in entries {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if is_dir {
                if !SKIP_DIRS.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if !is_secret_name(&name) {
                if let Some(text) = small_text(&path) {
                    visit(&path, &text);
                }
            }
        }
    }
    Ok(())
}

/// [`walk`] over the whole workspace, for [`misses`] (a failure reads as no file).
pub(super) fn walk_all(root: &Path) -> impl FnMut(&mut misses::Visit<'_>) + '_ {
    move |visit| {
        let _ = walk(root, root, visit);
    }
}

/// Bounds for a model-written pattern: the regex crate matches in linear time, and
/// these cap the memory its compiled program and lazy DFA may take.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const REGEX_DFA_SIZE_LIMIT: usize = 2 << 20;

/// The search pattern as a case-insensitive regular expression, or an error naming it.
pub fn compile(pattern: &str) -> Result<regex::Regex, ToolError> {
    if pattern.trim().is_empty() {
        return Err(ToolError::BadArguments("pattern is empty".into()));
    }
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let why = e.to_string();
            let last = why.lines().last().unwrap_or("").trim().to_string();
            ToolError::BadArguments(format!(
                "pattern {pattern:?} is not a valid regular expression ({last}); escape special characters such as ( [ . * with a backslash to match them literally"
            ))
        })
}

/// The file's text if it is small and UTF-8.
/// A regular text file up to the search limit; anything else (too big, binary, a pipe,
/// socket or device) is skipped without blocking.
fn small_text(path: &Path) -> Option<String> {
    crate::regular_file::read_text(path, Some(MAX_SEARCH_FILE_BYTES))
        .ok()
        .flatten()
}

/// A pattern of plain words ("default port") as it would also be written in code:
/// the words joined by nothing, `_` or `-` as well as a space (`DEFAULT_PORT`,
/// `defaultPort`, `default-port`; the search ignores case). Asked who changed the line
/// that sets the default port, the 1.5B searched "default port", found only the
/// changelog's sentence, and never saw `pub const DEFAULT_PORT: u16 = 4717;`. Any other
/// pattern is used as written.
fn widened(pattern: &str) -> String {
    let words: Vec<&str> = pattern.split(' ').collect();
    let plain = words.len() > 1
        && words
            .iter()
            .all(|w| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric()));
    if plain {
        words.join("[ _-]?")
    } else {
        pattern.to_string()
    }
}

/// Whether `regex` matches any line at all (`.*`, `.`, `^`).
fn matches_any_line(regex: &regex::Regex) -> bool {
    regex.is_match("") || ["a", "Z", "0", "-", " "].iter().all(|s| regex.is_match(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_that_matches_every_line_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.js"), "this.set('etag', 'weak');\n").unwrap();
        let tool = SearchFiles {
            root: dir.path().to_path_buf(),
        };
        let args = |json: &str| serde_json::from_str::<Map<String, Value>>(json).unwrap();
        for every in [".*", ".", "^"] {
            let json = format!(r#"{{"pattern": {every:?}}}"#);
            match tool.call(&args(&json)) {
                Err(ToolError::BadArguments(m)) => {
                    assert!(m.contains("matches every line"), "{every}: {m}")
                }
                other => panic!("{every}: {other:?}"),
            }
        }
        for some in ["etag", "[a-z]+", "\\w"] {
            let json = format!(r#"{{"pattern": {some:?}}}"#);
            assert!(tool.call(&args(&json)).is_ok(), "{some}");
        }
    }

    #[test]
    fn a_scope_that_is_not_there_searches_the_whole_workspace_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/render")).unwrap();
        std::fs::write(
            dir.path().join("src/render/sitemap.rs"),
            "pub fn sitemap() {}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".env"), "sitemap=secret\n").unwrap();
        let tool = SearchFiles {
            root: dir.path().to_path_buf(),
        };
        let args = |json: &str| serde_json::from_str::<Map<String, Value>>(json).unwrap();
        let out = tool
            .call(&args(r#"{"pattern": "sitemap", "path": "docs, src"}"#))
            .unwrap();
        assert!(
            out.starts_with("(docs, src is not in the workspace; searched all of it:)"),
            "{out}"
        );
        assert!(
            out.contains("src/render/sitemap.rs:1: pub fn sitemap() {}"),
            "{out}"
        );
        assert!(!out.contains("secret"), "{out}");
        // Outside the workspace is still refused.
        assert!(tool
            .call(&args(r#"{"pattern": "sitemap", "path": "../elsewhere"}"#))
            .is_err());
    }

    #[test]
    fn a_search_that_misses_in_its_folder_shows_the_whole_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("notes")).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("notes/todo.md"), "- check the list\n").unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "// TODO: leap years\n").unwrap();
        let search = SearchFiles {
            root: dir.path().to_path_buf(),
        };
        let args = |json: &str| serde_json::from_str::<Map<String, Value>>(json).unwrap();
        let out = search
            .call(&args(r#"{"pattern": "TODO", "path": "notes"}"#))
            .unwrap();
        assert_eq!(
            out,
            "(no lines match \"TODO\" in notes; in the whole workspace:)\nsrc/lib.rs:1: // TODO: leap years"
        );
        // Found where it was asked: no note, nothing from elsewhere.
        let out = search
            .call(&args(r#"{"pattern": "check", "path": "notes"}"#))
            .unwrap();
        assert_eq!(out, "notes/todo.md:1: - check the list");
        // Missing everywhere: the usual answer.
        let out = search
            .call(&args(r#"{"pattern": "FIXME", "path": "notes"}"#))
            .unwrap();
        assert_eq!(out, "no lines match \"FIXME\"");
    }

    #[test]
    fn patterns_are_bounded_regexes_with_clear_errors() {
        assert!(compile(r"fn\s+\w+\(")
            .unwrap()
            .is_match("pub FN answer() {"));
        assert!(compile("deploy").unwrap().is_match("Deploy with it"));
        let e = compile("foo(bar").unwrap_err().to_string();
        assert!(
            e.contains("pattern \"foo(bar\" is not a valid regular expression"),
            "{e}"
        );
        assert!(e.contains("unclosed group"), "{e}");
        // Too big to compile within the size limit: an error, not a hang or an OOM.
        let e = compile(r"\w{1000}{1000}").unwrap_err().to_string();
        assert!(e.contains("not a valid regular expression"), "{e}");
        assert!(compile("  ").is_err());
    }

    #[test]
    fn plain_words_also_match_as_one_name_in_code() {
        assert_eq!(widened("default port"), "default[ _-]?port");
        assert_eq!(widened("TODO"), "TODO");
        assert_eq!(widened("fn  main"), "fn  main", "not plain words");
        assert_eq!(widened("a.b c"), "a.b c");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.rs"),
            "// the default port\npub const DEFAULT_PORT: u16 = 4717;\nlet defaultPort = 1;\nx-default-port\ndefault ports\n",
        )
        .unwrap();
        let search = SearchFiles {
            root: dir.path().to_path_buf(),
        };
        let args = serde_json::json!({"pattern": "default port"});
        let out = search.call(args.as_object().unwrap()).unwrap();
        assert_eq!(
            out.lines().filter(|l| l.starts_with("config.rs:")).count(),
            5,
            "{out}"
        );
    }
}
