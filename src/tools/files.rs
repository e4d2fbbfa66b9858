//! The model's file-writing tools: `write_file(path, content)` and
//! `edit_file(path, old, new)`. Both ask, like `run_command`: the session shows the diff
//! ([`Tool::preview`]) and asks `[y/N]`; where nobody can answer (`harvey run`,
//! `harvey tool call`, a REPL whose input is not a terminal) a write is refused unless
//! `tools.allow_writes` is on. Paths go through the write sandbox
//! ([`crate::sandbox::resolve_write`]), bytes through [`atomic::write`], and every decision gets
//! an audit line.
//!
//! The change is planned twice: once for the preview, once when it runs. If the file
//! changed in between (the user edited it while deciding), the write is refused rather
//! than clobbering what the user did.

use std::cell::RefCell;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{arg_str, atomic, diff, Approval, Param, ParamKind, Preview, Tool, ToolError};
use crate::command::{AuditLog, Decision, Entry, Who};
use crate::sandbox::{resolve_write, WriteTarget};

/// Longest `content` of one `write_file` call, in characters.
pub const MAX_CONTENT_CHARS: usize = 4000;
/// Longest `old` / `new` of one `edit_file` call, in characters.
pub const MAX_EDIT_CHARS: usize = 2000;

/// What the file tools need: the workspace, the audit log, and whether writes may go
/// ahead where nobody can confirm them (`tools.allow_writes`).
#[derive(Debug, Clone)]
pub struct FilePlace {
    pub root: PathBuf,
    pub audit: AuditLog,
    pub allow_unattended: bool,
}

/// One planned write: where, what is there now, what will be.
#[derive(Debug, Clone)]
pub struct Change {
    pub target: WriteTarget,
    pub old: Option<String>,
    pub new: String,
}

impl Change {
    /// The diff (or a new file's head and size) for the user.
    pub fn diff(&self) -> String {
        match &self.old {
            Some(old) => diff::unified(old, &self.new, &self.target.shown),
            None => diff::new_file(&self.new, &self.target.shown),
        }
    }

    /// `+3 −1` (lines added and removed).
    pub fn stat(&self) -> String {
        let (add, del) = diff::stat(self.old.as_deref().unwrap_or(""), &self.new);
        format!("+{add} −{del}")
    }

    fn fingerprint(&self) -> (PathBuf, u64) {
        let mut h = DefaultHasher::new();
        self.old.hash(&mut h);
        self.new.hash(&mut h);
        (self.target.path.clone(), h.finish())
    }
}

/// The current text of a write target (`None`: a new file).
pub fn current_text(target: &WriteTarget) -> Result<Option<String>, ToolError> {
    if !target.exists {
        return Ok(None);
    }
    let bytes = crate::regular_file::read(&target.path, None).map_err(|e| match e {
        crate::regular_file::OpenError::NotRegular { .. } => {
            ToolError::Refused(e.shown_as(&target.shown).to_string())
        }
        _ => ToolError::Failed(e.shown_as(&target.shown).to_string()),
    })?;
    String::from_utf8(bytes).map(Some).map_err(|_| {
        ToolError::Refused(format!(
            "{} is not a UTF-8 text file; harvey does not overwrite it",
            target.shown
        ))
    })
}

/// Writes the change atomically (creating missing parent directories) and audits it;
/// returns the line for the model or the user.
pub fn commit(
    change: &Change,
    audit: &AuditLog,
    who: Who,
    program: &str,
    decision: Decision,
) -> Result<String, ToolError> {
    let shown = &change.target.shown;
    if let Some(dir) = &change.target.missing_parent {
        std::fs::create_dir_all(dir)
            .map_err(|e| ToolError::Failed(format!("cannot create the folder for {shown}: {e}")))?;
    }
    atomic::write(&change.target.path, change.new.as_bytes())
        .map_err(|e| ToolError::Failed(format!("cannot write {shown}: {e}")))?;
    let verb = if change.old.is_some() {
        "wrote"
    } else {
        "created"
    };
    let line = format!(
        "{verb} {shown} ({} bytes, {} lines; {})",
        change.new.len(),
        change.new.lines().count(),
        change.stat()
    );
    let note = record(audit, who, program, change, decision, &line);
    Ok(line + &note)
}

/// Appends the audit line; returns a note when it could not be written.
fn record(
    audit: &AuditLog,
    who: Who,
    program: &str,
    change: &Change,
    decision: Decision,
    reason: &str,
) -> String {
    let words = [program.to_string(), change.target.shown.clone()];
    let root = change.target.path.parent().unwrap_or(&change.target.path);
    match audit.append(&Entry::new(who, &words, root, decision, Some(reason))) {
        Ok(()) => String::new(),
        Err(e) => format!(" (the audit line could not be written: {e})"),
    }
}

/// The shared part of both tools: remembering what was shown and deciding.
struct Writer {
    place: FilePlace,
    name: &'static str,
    /// The change last shown to the user (path and content fingerprint).
    shown: RefCell<Option<(PathBuf, u64)>>,
}

impl Writer {
    fn new(place: FilePlace, name: &'static str) -> Self {
        Self {
            place,
            name,
            shown: RefCell::new(None),
        }
    }

    fn preview(&self, change: Change) -> Preview {
        *self.shown.borrow_mut() = Some(change.fingerprint());
        Preview {
            question: format!("{} {} ({})", self.name, change.target.shown, change.stat()),
            diff: change.diff(),
        }
    }

    fn decide(&self, change: Change, approval: Approval) -> Result<String, ToolError> {
        let audit = &self.place.audit;
        let refuse = |decision, why: String| {
            let note = record(audit, Who::Model, self.name, &change, decision, &why);
            Err(ToolError::Refused(why + &note))
        };
        match approval {
            Approval::Allowed => {
                match self.shown.borrow_mut().take() {
                    Some(shown) if shown == change.fingerprint() => {}
                    Some(_) => return refuse(Decision::Refused, format!("{} changed while the user was deciding, so nothing was written; read it again before editing", change.target.shown)),
                    None => return refuse(Decision::Refused, format!("the change to {} was not shown to the user first, so nothing was written", change.target.shown)),
                }
                commit(&change, audit, Who::Model, self.name, Decision::Confirmed)
            }
            Approval::NobodyToAsk if self.place.allow_unattended => {
                commit(&change, audit, Who::Model, self.name, Decision::AllowWrites)
            }
            Approval::Declined => refuse(
                Decision::Declined,
                format!("the user declined this change to {}; nothing was written. Do not retry it; ask the user what they want instead", change.target.shown),
            ),
            Approval::NobodyToAsk => refuse(
                Decision::Refused,
                format!("nothing was written to {}: file writes need the user's yes and this session cannot ask (harvey run, harvey tool call, or input that is not a terminal). Tell the user what you would change; they can allow unattended writes with tools.allow_writes: true in agents/harvey.yaml", change.target.shown),
            ),
        }
    }
}

const PATH: Param = Param {
    name: "path",
    kind: ParamKind::Str { max_len: 200 },
    required: true,
    help: "file path relative to the workspace",
};

const WRITE_PARAMS: &[Param] = &[
    PATH,
    Param {
        name: "content",
        kind: ParamKind::Str {
            max_len: MAX_CONTENT_CHARS,
        },
        required: true,
        help: "the whole new content of the file",
    },
];

const EDIT_PARAMS: &[Param] = &[
    PATH,
    Param {
        name: "old",
        kind: ParamKind::Str {
            max_len: MAX_EDIT_CHARS,
        },
        required: true,
        help: "the exact text to replace; it must occur exactly once in the file",
    },
    Param {
        name: "new",
        kind: ParamKind::Str {
            max_len: MAX_EDIT_CHARS,
        },
        required: true,
        help: "the text to put in its place",
    },
];

/// `write_file(path, content)`: creates or replaces a whole file.
pub struct WriteFile(Writer);

impl WriteFile {
    pub fn new(place: FilePlace) -> Self {
        Self(Writer::new(place, "write_file"))
    }

    fn plan(&self, args: &Map<String, Value>) -> Result<Change, ToolError> {
        let target = resolve_write(&self.0.place.root, arg_str(args, "path").unwrap_or(""))?;
        let old = current_text(&target)?;
        let new = arg_str(args, "content").unwrap_or_default().to_string();
        if old.as_deref() == Some(new.as_str()) {
            return Err(ToolError::BadArguments(format!(
                "{} already holds exactly this content; nothing to write",
                target.shown
            )));
        }
        Ok(Change { target, old, new })
    }
}

/// `edit_file(path, old, new)`: replaces one exact, unique occurrence.
pub struct EditFile(Writer);

impl EditFile {
    pub fn new(place: FilePlace) -> Self {
        Self(Writer::new(place, "edit_file"))
    }

    fn plan(&self, args: &Map<String, Value>) -> Result<Change, ToolError> {
        let requested = arg_str(args, "path").unwrap_or("");
        let target = resolve_write(&self.0.place.root, requested)?;
        let Some(text) = current_text(&target)? else {
            return Err(ToolError::NotFound(format!(
                "{requested} does not exist; use write_file to create it"
            )));
        };
        let old = arg_str(args, "old").unwrap_or_default();
        let new = arg_str(args, "new").unwrap_or_default();
        let edited = replace_once(&text, old, new, &target.shown)?;
        Ok(Change {
            target,
            old: Some(text),
            new: edited,
        })
    }
}

/// `text` with the single occurrence of `old` replaced by `new`, or an error saying what
/// was found instead.
pub fn replace_once(text: &str, old: &str, new: &str, shown: &str) -> Result<String, ToolError> {
    if old.is_empty() {
        return Err(ToolError::BadArguments(
            "`old` is empty; give the exact text to replace".into(),
        ));
    }
    if old == new {
        return Err(ToolError::BadArguments(
            "`old` and `new` are the same; nothing would change".into(),
        ));
    }
    let starts: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
    let line_of = |i: usize| text[..i].matches('\n').count() + 1;
    match starts.as_slice() {
        [at] => Ok(format!("{}{new}{}", &text[..*at], &text[at + old.len()..])),
        [] => {
            let mut message = format!(
                "`old` was not found in {shown} ({} lines); read the file and copy the text exactly, including spaces and indentation",
                text.lines().count()
            );
            let trimmed = old.trim();
            if trimmed != old && !trimmed.is_empty() {
                if let Some(i) = text.find(trimmed) {
                    message.push_str(&format!(
                        "; the text without its leading and trailing whitespace occurs at line {}",
                        line_of(i)
                    ));
                }
            }
            Err(ToolError::NotFound(message))
        }
        many => {
            let lines: Vec<String> = many.iter().map(|&i| line_of(i).to_string()).collect();
            let listed = match lines.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
                _ => lines.join(""),
            };
            Err(ToolError::BadArguments(format!(
                "`old` occurs {} times in {shown}, at lines {listed}; include more surrounding text so it matches exactly once",
                many.len()
            )))
        }
    }
}

macro_rules! file_tool {
    ($tool:ident, $name:literal, $description:literal, $route:literal, $params:ident) => {
        impl Tool for $tool {
            fn name(&self) -> &'static str {
                $name
            }
            fn route(&self) -> Option<&'static str> {
                Some($route)
            }
            fn description(&self) -> &'static str {
                $description
            }
            fn params(&self) -> &'static [Param] {
                $params
            }
            fn writes(&self) -> bool {
                true
            }
            fn asks(&self) -> bool {
                true
            }
            fn writes_files(&self) -> bool {
                true
            }
            fn preview(&self, args: &Map<String, Value>) -> Result<Option<Preview>, ToolError> {
                self.plan(args).map(|c| Some(self.0.preview(c)))
            }
            fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
                self.call_approved(args, Approval::NobodyToAsk)
            }
            fn call_approved(
                &self,
                args: &Map<String, Value>,
                approval: Approval,
            ) -> Result<String, ToolError> {
                self.0.decide(self.plan(args)?, approval)
            }
        }
    };
}

file_tool!(
    WriteFile,
    "write_file",
    "Create or replace a workspace file with the given content (the user sees the diff and approves).",
    "create a new file in the project, or replace a file's whole text",
    WRITE_PARAMS
);
file_tool!(
    EditFile,
    "edit_file",
    "Replace one exact, unique piece of text in a workspace file (the user sees the diff and approves).",
    "change, rename or fix some text in a file that exists",
    EDIT_PARAMS
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_once_says_what_it_found() {
        let text = "a\nfoo\nb\nfoo\nc\n";
        assert_eq!(
            replace_once("x foo y", "foo", "bar", "f").unwrap(),
            "x bar y"
        );
        let e = replace_once(text, "foo", "bar", "f.txt")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("occurs 2 times in f.txt, at lines 2 and 4; include more surrounding text"),
            "{e}"
        );
        let e = replace_once("1\nx\nx\nx\n", "x", "y", "f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("at lines 2, 3 and 4"), "{e}");
        let e = replace_once(text, "zzz", "y", "f.txt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not found in f.txt (5 lines)"), "{e}");
        let e = replace_once(text, "  b  ", "y", "f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("occurs at line 3"), "{e}");
        assert!(replace_once(text, "", "y", "f").is_err());
        assert!(replace_once(text, "a", "a", "f").is_err());
    }
}
