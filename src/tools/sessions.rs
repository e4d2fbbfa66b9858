//! `session_search` and `session_read`: the model looks up past sessions. Session ids
//! are file names from the sessions index, checked against it and never joined to a path
//! the model chose.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{arg_int, arg_str, Param, ParamKind, Tool, ToolError};
use crate::session::fountain::parse;
use crate::session::SessionIndex;

/// Longest session text returned by `session_read`, in characters.
const READ_CAP: usize = 6000;

pub struct SessionSearch(pub PathBuf);
pub struct SessionRead(pub PathBuf);

fn open(agents: &std::path::Path) -> Result<SessionIndex, ToolError> {
    SessionIndex::open(agents).map_err(|e| ToolError::Failed(format!("sessions index: {e}")))
}

impl Tool for SessionSearch {
    fn name(&self) -> &'static str {
        "session_search"
    }
    fn description(&self) -> &'static str {
        "Find past sessions by topic (ids, dates, summaries)."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[
            Param {
                name: "query",
                kind: ParamKind::Str { max_len: 200 },
                required: true,
                help: "topic",
            },
            Param {
                name: "k",
                kind: ParamKind::Int { min: 1, max: 10 },
                required: false,
                help: "how many (default 3)",
            },
        ];
        P
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let query = arg_str(args, "query").unwrap_or_default();
        let k = arg_int(args, "k").unwrap_or(3).clamp(1, 10) as usize;
        let found = open(&self.0)?
            .search(query, k)
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        if found.is_empty() {
            return Ok(format!("no past session matches {query:?}"));
        }
        Ok(found
            .iter()
            .map(|(e, _)| {
                let summary = if e.summary.trim().is_empty() {
                    "no summary; the words were found in its exchanges (session_read shows them)"
                } else {
                    e.summary.as_str()
                };
                format!(
                    "{} ({}, {} turns) [{}]: {summary}",
                    e.file,
                    e.started,
                    e.turns,
                    e.tags.join(", "),
                )
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

impl Tool for SessionRead {
    fn name(&self) -> &'static str {
        "session_read"
    }
    fn description(&self) -> &'static str {
        "Read a past session's exchanges by id."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[Param {
            name: "id",
            kind: ParamKind::Str { max_len: 80 },
            required: true,
            help: "session id from session_search",
        }];
        P
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let id = arg_str(args, "id").unwrap_or_default().trim();
        let index = open(&self.0)?;
        let entry = index
            .get(id)
            .map_err(|e| ToolError::Failed(e.to_string()))?
            .ok_or_else(|| {
                ToolError::NotFound(format!("no session {id:?} (session_search finds ids)"))
            })?;
        let path = index.sessions_dir().join(&entry.file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ToolError::Failed(format!("cannot read the session: {e}")))?;
        let record = parse(&text);
        let mut out = format!(
            "Session {} ({})\nSummary: {}\n",
            entry.file, entry.started, entry.summary
        );
        for ex in &record.exchanges {
            out.push_str(&format!("\nUser: {}\nHarvey: {}\n", ex.user, ex.reply));
        }
        Ok(super::call::clip(&out, READ_CAP))
    }
}
