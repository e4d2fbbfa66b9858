//! Read-only workspace tools: `read_file`, `list_files` (and `search_files`, in
//! [`super::search`]). Every path goes through the sandbox; outputs are capped with a
//! note saying what was cut.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{arg_int, arg_str, misses, Param, ParamKind, Tool, ToolError};
use crate::sandbox::{check_relative, display};
use crate::workspace_map::nearest::{resolve_forgiving, Want};

use super::search::walk_all;
pub use super::search::SearchFiles;

const MAX_READ_LINES: usize = 200;
const MAX_READ_BYTES: usize = 16 * 1024;
const MAX_LIST: usize = 200;

const PATH: Param = Param {
    name: "path",
    kind: ParamKind::Str { max_len: 200 },
    required: true,
    help: "file path relative to the workspace",
};

pub struct ReadFile {
    pub root: PathBuf,
}

impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }
    fn route(&self) -> Option<&'static str> {
        Some("show or open a file, or answer from one: the README, Cargo.toml, the license, the version, what some code does")
    }
    fn description(&self) -> &'static str {
        "Read a text file in the workspace (optionally a line range)."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[
            PATH,
            Param {
                name: "start_line",
                kind: ParamKind::Int {
                    min: 1,
                    max: 10_000_000,
                },
                required: false,
                help: "first line (1-based)",
            },
            Param {
                name: "end_line",
                kind: ParamKind::Int {
                    min: 1,
                    max: 10_000_000,
                },
                required: false,
                help: "last line (inclusive)",
            },
            Param {
                name: "start_char",
                kind: ParamKind::Int {
                    min: 1,
                    max: 100_000_000,
                },
                required: false,
                help: "first character of start_line (1-based), to read on in a very long line",
            },
        ];
        P
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let requested = arg_str(args, "path").unwrap_or_default();
        let resolved = match resolve_forgiving(&self.root, requested, Want::File) {
            Ok(resolved) => resolved,
            // A bare name with no near path is looked up as a definition.
            Err(e @ crate::sandbox::SandboxError::NotFound(_)) => {
                let mut everywhere = walk_all(&self.root);
                let near = e.to_string().contains("did you mean");
                // Near paths win over a bare name's definition, not over an identifier
                // the guessed file was named after.
                let stem_named = requested.contains(['/', '.']);
                return match (
                    near && !stem_named,
                    misses::definition(&self.root, requested, &mut everywhere),
                ) {
                    (false, Some(found)) => Ok(found),
                    (false, None) => misses::mentions(&self.root, requested, &mut everywhere)
                        .ok_or_else(|| e.into()),
                    _ => Err(e.into()),
                };
            }
            Err(e) => return Err(e.into()),
        };
        let path = resolved.path.clone();
        // A folder is listed: asked "Where is the documentation kept?", both Qwen models
        // read `docs`, were told to list it, and read it again.
        if path.is_dir() {
            let listed = listing(&self.root, &path)?;
            return Ok(format!(
                "({} is a folder, not a file; its files and folders:)\n{listed}",
                display(&self.root, &path)
            ));
        }
        let bytes = crate::regular_file::read(&path, None).map_err(|e| match e {
            crate::regular_file::OpenError::NotRegular { .. } => {
                ToolError::Refused(e.shown_as(requested).to_string())
            }
            _ => ToolError::Failed(e.shown_as(requested).to_string()),
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::Refused(format!("{requested} is not a text file")))?;
        let start = arg_int(args, "start_line").unwrap_or(1).max(1) as usize;
        let end = arg_int(args, "end_line").map(|e| e as usize);
        let from_char = arg_int(args, "start_char").unwrap_or(1).max(1) as usize;
        let window = if from_char > 1
            || text
                .lines()
                .nth(start - 1)
                .is_some_and(|l| l.len() > MAX_READ_BYTES)
        {
            long_line_window(&text, start, from_char)
        } else {
            small_file_whole(&text, start, end).unwrap_or_else(|| line_window(&text, start, end))
        };
        Ok(with_note(resolved.note("shown", requested), window))
    }
}

/// Part of one line (`start_char` on, 1-based, at most [`MAX_READ_BYTES`] bytes), for a
/// line too long to show whole (minified code, one-line JSON), with a note saying how
/// to read on.
pub fn long_line_window(text: &str, line: usize, start_char: usize) -> String {
    let Some(whole) = text.lines().nth(line - 1) else {
        let total = text.lines().count();
        return format!("(the file has {total} lines; start_line {line} is past the end)");
    };
    let chars = whole.chars().count();
    if start_char > chars.max(1) {
        return format!(
            "(line {line} has {chars} characters; start_char {start_char} is past its end)"
        );
    }
    let rest: String = whole.chars().skip(start_char - 1).collect();
    let mut shown = String::new();
    for c in rest.chars() {
        if shown.len() + c.len_utf8() > MAX_READ_BYTES {
            break;
        }
        shown.push(c);
    }
    let last = start_char - 1 + shown.chars().count();
    let mut out = format!("{line:>5}| {shown}\n");
    if last < chars {
        out.push_str(&format!(
            "[cut within line {line}: showed characters {start_char}–{last} of {chars}; call again with start_line {line} and start_char {} for more, or search_files for a pattern]\n",
            last + 1
        ));
    }
    out
}

/// Lines `start..=end` (1-based), capped in lines and bytes, with a note on what was cut.
/// Files of at most this many lines are shown whole even when a range was asked for.
const SMALL_FILE_LINES: usize = 40;

/// A small file whole, when the call asked for only part of it: asked for the version,
/// the 1.5B read lines 1–2 of a five-line `Cargo.toml` and answered "1.0" (the version
/// was line 3). `None` when the file is bigger or the range is the whole file anyway.
fn small_file_whole(text: &str, start: usize, end: Option<usize>) -> Option<String> {
    let total = text.lines().count();
    let partial = start > 1 || end.is_some_and(|e| e < total);
    if !partial || total > SMALL_FILE_LINES || text.len() > MAX_READ_BYTES {
        return None;
    }
    let asked = match end {
        Some(e) => format!("{start}–{e}"),
        None => format!("{start} on"),
    };
    Some(format!(
        "(lines {asked} were asked for; the file has only {total} lines, all shown)\n{}",
        line_window(text, 1, None)
    ))
}

pub fn line_window(text: &str, start: usize, end: Option<usize>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if total == 0 {
        return "(empty file)".into();
    }
    if start > total {
        return format!("(the file has {total} lines; start_line {start} is past the end)");
    }
    let wanted_end = end.unwrap_or(total).clamp(start, total);
    let mut out = String::new();
    let mut last = start - 1;
    for (i, line) in lines[start - 1..wanted_end].iter().enumerate() {
        let n = start + i;
        if n - start >= MAX_READ_LINES || out.len() + line.len() > MAX_READ_BYTES {
            break;
        }
        out.push_str(&format!("{n:>5}| {line}\n"));
        last = n;
    }
    if last < wanted_end {
        out.push_str(&format!(
            "[cut: showed lines {start}–{last} of {total}; call again with start_line {} for more]\n",
            last + 1
        ));
    }
    out
}

pub struct ListFiles {
    pub root: PathBuf,
}

impl Tool for ListFiles {
    fn name(&self) -> &'static str {
        "list_files"
    }
    fn route(&self) -> Option<&'static str> {
        Some("which files or folders are in a directory")
    }
    fn description(&self) -> &'static str {
        "List the files and directories in a workspace directory."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[Param {
            name: "path",
            kind: ParamKind::Str { max_len: 200 },
            required: false,
            help: "directory relative to the workspace (default: the root)",
        }];
        P
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let requested = arg_str(args, "path").unwrap_or(".");
        let resolved = resolve_forgiving(&self.root, requested, Want::Dir)?;
        let dir = resolved.path.clone();
        if !dir.is_dir() {
            return Err(ToolError::BadArguments(format!(
                "{requested} is a file; use read_file"
            )));
        }
        let out = listing(&self.root, &dir)?;
        Ok(with_note(resolved.note("listed", requested), out))
    }
}

/// The entries of `dir` the tools may show, one per line (folders end in `/`), sorted,
/// at most [`MAX_LIST`].
fn listing(root: &Path, dir: &Path) -> Result<String, ToolError> {
    let mut names: Vec<String> = visible_entries(root, dir)?
        .into_iter()
        .map(|(path, is_dir)| {
            let shown = display(root, &path);
            if is_dir {
                format!("{shown}/")
            } else {
                shown
            }
        })
        .collect();
    names.sort();
    let total = names.len();
    names.truncate(MAX_LIST);
    let mut out = names.join("\n");
    if total > MAX_LIST {
        out.push_str(&format!("\n[cut: showed {MAX_LIST} of {total} entries]"));
    }
    Ok(if out.is_empty() {
        "(empty directory)".into()
    } else {
        out
    })
}

/// `text` after the note saying which path was used instead of the one asked for.
pub(super) fn with_note(note: Option<String>, text: String) -> String {
    match note {
        Some(note) => format!("{note}\n{text}"),
        None => text,
    }
}

/// Entries of `dir` the tools may show: no symlinks, no private dirs, no secrets.
pub(super) fn visible_entries(root: &Path, dir: &Path) -> Result<Vec<(PathBuf, bool)>, ToolError> {
    let root = root
        .canonicalize()
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let entries =
        std::fs::read_dir(dir).map_err(|e| ToolError::Failed(format!("cannot list: {e}")))?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(&root) else {
            continue;
        };
        if check_relative(rel, "").is_err() {
            continue;
        }
        out.push((path, kind.is_dir()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_a_folder_lists_it_without_what_the_tools_hide() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs/api")).unwrap();
        std::fs::write(dir.path().join("docs/index.rst"), "Welcome\n").unwrap();
        std::fs::write(dir.path().join("docs/.env"), "TOKEN=x\n").unwrap();
        let read = ReadFile {
            root: dir.path().to_path_buf(),
        };
        let args = serde_json::json!({"path": "docs"});
        let shown = read.call(args.as_object().unwrap()).unwrap();
        assert_eq!(
            shown,
            "(docs is a folder, not a file; its files and folders:)\ndocs/api/\ndocs/index.rst"
        );
        // Outside the workspace is refused as before, not listed.
        let args = serde_json::json!({"path": ".."});
        assert!(read.call(args.as_object().unwrap()).is_err());
    }

    #[test]
    fn a_range_of_a_small_file_shows_it_whole() {
        let toml = "[package]\nname = \"tidepool\"\nversion = \"0.3.1\"\n";
        let w = small_file_whole(toml, 1, Some(2)).unwrap();
        assert!(
            w.starts_with("(lines 1–2 were asked for; the file has only 3 lines, all shown)"),
            "{w}"
        );
        assert!(w.contains("    3| version = \"0.3.1\""), "{w}");
        assert_eq!(
            small_file_whole(toml, 1, None),
            None,
            "the whole file was asked for"
        );
        assert_eq!(small_file_whole(toml, 1, Some(3)), None);
        let big: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        assert_eq!(
            small_file_whole(&big, 10, Some(20)),
            None,
            "a big file keeps its range"
        );
    }

    #[test]
    fn line_window_caps_and_notes() {
        let text: String = (1..=500).map(|i| format!("line {i}\n")).collect();
        let w = line_window(&text, 1, None);
        assert!(w.contains("    1| line 1\n") && w.contains("  200| line 200\n"));
        assert!(!w.contains("line 201\n"));
        assert!(
            w.contains("[cut: showed lines 1–200 of 500; call again with start_line 201"),
            "{w}"
        );
        let w = line_window(&text, 499, Some(900));
        assert_eq!(w, "  499| line 499\n  500| line 500\n");
        assert!(line_window(&text, 900, None).contains("past the end"));
        assert_eq!(line_window("", 1, None), "(empty file)");
        // One line longer than the cap: shown cut within the line, never as zero lines.
        let long = format!("{}\nsecond\n", "é".repeat(MAX_READ_BYTES));
        let w = long_line_window(&long, 1, 1);
        let shown = MAX_READ_BYTES / 2;
        assert!(w.starts_with("    1| éé"), "{}", &w[..40]);
        assert!(w.contains(&format!("[cut within line 1: showed characters 1–{shown} of {MAX_READ_BYTES}; call again with start_line 1 and start_char {} for more", shown + 1)), "{}", &w[w.len() - 200..]);
        assert!(!w.contains("lines 1–0"));
        let w = long_line_window(&long, 1, shown + 1);
        assert!(
            w.contains(&format!("characters {}–{MAX_READ_BYTES} of", shown + 1))
                || !w.contains("[cut"),
            "{w}"
        );
        assert!(
            !w.contains("[cut"),
            "the rest fits: {}",
            &w[w.len() - 100..]
        );
        assert!(long_line_window(&long, 1, MAX_READ_BYTES + 5).contains("past its end"));
    }
}
