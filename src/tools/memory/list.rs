//! `memory_list`: the memory index as `MEMORY.md` shows it (the same lines, in the same
//! order, from `memory::overview`), optionally of one type, cut to [`MAX_LINES`] so a
//! tool result stays small; the user's `/memory index` and `/memory list` show more.

use serde_json::{Map, Value};

use super::super::{arg_int, arg_str, Param, ParamKind, Tool, ToolError};
use super::{failed, MemoryPlace};
use crate::memory::store::now_unix;
use crate::memory::{overview, MemoryType};

/// Most lines of the listing, the closing "… and N more" line included (the heading is
/// one more): 40 one-line memories are ~1000 tokens, well inside a tool result.
pub const MAX_LINES: usize = 40;

/// Every memory type, the workspace profile included: listing one writes nothing.
const ALL_TYPES: &[&str] = &[
    "workspace_profile",
    "project_fact",
    "tool_use",
    "workflow",
    "user_preference",
];

/// Where the user sees every memory, for the line that says how many more there are.
const MORE: &str = "the user's `/memory index` shows the index, `/memory list` every memory";

pub struct MemoryList(pub MemoryPlace);

impl Tool for MemoryList {
    fn name(&self) -> &'static str {
        "memory_list"
    }
    fn route(&self) -> Option<&'static str> {
        Some("list what you remember: the memory index")
    }
    fn description(&self) -> &'static str {
        "List your memory notes, most useful first (ids, types, descriptions)."
    }
    fn params(&self) -> &'static [Param] {
        const P: &[Param] = &[
            Param {
                name: "type",
                kind: ParamKind::Enum { values: ALL_TYPES },
                required: false,
                help: "only this kind of note",
            },
            Param {
                name: "limit",
                kind: ParamKind::Int {
                    min: 1,
                    max: MAX_LINES as i64,
                },
                required: false,
                help: "most notes to show",
            },
        ];
        P
    }
    fn finds_nothing(&self) -> bool {
        !self.0.holds_memory()
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, args: &Map<String, Value>) -> Result<String, ToolError> {
        let mtype = match arg_str(args, "type") {
            Some(t) => Some(MemoryType::parse(t).ok_or_else(|| {
                ToolError::BadArguments(format!(
                    "unknown memory type {t:?}: one of {}",
                    ALL_TYPES.join(", ")
                ))
            })?),
            None => None,
        };
        let rows = self.0.open()?.list(mtype, None).map_err(failed)?;
        let live = overview::ordered(&rows, now_unix());
        let of_type = mtype.map(|t| format!(" {t}")).unwrap_or_default();
        if live.is_empty() {
            return Ok(format!(
                "no{of_type} memories yet (memory_write keeps a note when the user asks)"
            ));
        }
        // Up to `limit` notes, and the line saying how many more when some are left out.
        let limit = arg_int(args, "limit").map_or(usize::MAX, |k| k.max(1) as usize);
        let max_lines = limit.saturating_add(1).min(MAX_LINES);
        let noun = if live.len() == 1 {
            "memory"
        } else {
            "memories"
        };
        let text = format!(
            "{} active{of_type} {noun}, most useful first (`id` (type, confidence) description; memory_read shows one in full):\n{}",
            live.len(),
            overview::lines(&live, max_lines, MORE)
        );
        Ok(text.trim_end().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Draft, MemoryStore};

    #[test]
    fn every_memory_type_can_be_listed() {
        let all: Vec<&str> = MemoryType::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(ALL_TYPES, all.as_slice());
    }

    fn place(dir: &std::path::Path) -> MemoryPlace {
        MemoryPlace {
            agents_dir: dir.join("agents"),
            workspace: dir.to_path_buf(),
            embedder: None,
            config: crate::config::Config::default().memory,
        }
    }

    fn args(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_list_is_the_index_lines_cut_with_how_many_more() {
        let dir = tempfile::tempdir().unwrap();
        let tool = MemoryList(place(dir.path()));
        let (mut store, _) = MemoryStore::open(&dir.path().join("agents"), dir.path()).unwrap();
        assert!(tool.finds_nothing(), "an empty store");
        assert!(tool
            .call(&args("{}"))
            .unwrap()
            .starts_with("no memories yet"));
        let draft = |mtype: &str, description: String| Draft {
            mtype: mtype.into(),
            description,
            ..Draft::default()
        };
        for i in 0..50 {
            store
                .write(&draft("workflow", format!("step {i:02} of the release")))
                .unwrap();
        }
        store
            .write(&draft("project_fact", "the server listens on 9090".into()))
            .unwrap();
        assert!(!tool.finds_nothing());

        let all = tool.call(&args("{}")).unwrap();
        assert!(
            all.starts_with("51 active memories, most useful first"),
            "{all}"
        );
        assert_eq!(all.lines().count(), 1 + MAX_LINES, "{all}");
        // The same lines as MEMORY.md, in its order: the project fact first.
        let index = store.overview().unwrap();
        let shown: Vec<&str> = all.lines().skip(1).take(MAX_LINES - 1).collect();
        let head: Vec<&str> = index
            .lines()
            .filter(|l| l.starts_with("- `"))
            .take(MAX_LINES - 1)
            .collect();
        assert_eq!(shown, head);
        assert!(shown[0].contains("(project_fact, 0.50) the server listens on 9090"));
        let last = all.lines().last().unwrap();
        assert!(
            last.contains("and 12 more") && last.contains("/memory index"),
            "{last}"
        );

        let facts = tool.call(&args(r#"{"type": "project_fact"}"#)).unwrap();
        assert!(
            facts.starts_with("1 active project_fact memory,"),
            "{facts}"
        );
        assert_eq!(facts.lines().count(), 2, "{facts}");
        let few = tool
            .call(&args(r#"{"type": "workflow", "limit": 3}"#))
            .unwrap();
        assert_eq!(few.lines().count(), 1 + 3 + 1, "{few}");
        assert!(few.ends_with("and 47 more (the user's `/memory index` shows the index, `/memory list` every memory)"), "{few}");
        let none = tool.call(&args(r#"{"type": "user_preference"}"#)).unwrap();
        assert!(
            none.starts_with("no user_preference memories yet"),
            "{none}"
        );
    }
}
