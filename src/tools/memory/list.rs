//! `memory_list`: the memory index as `MEMORY.md` shows it (the same lines, in the same
//! order, from `memory::overview`), cut to [`MAX_LINES`] so a
//! tool result stays small; the user's `/memory index` and `/memory list` show more.

use serde_json::{Map, Value};

use super::super::{Param, Tool, ToolError};
use super::{failed, MemoryPlace};
use crate::memory::overview;
use crate::memory::store::now_unix;

/// Most lines of the listing, the closing "… and N more" line included (the heading is
/// one more): 40 one-line memories are ~1000 tokens, well inside a tool result.
pub const MAX_LINES: usize = 40;

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
    /// None: small models filled an optional type filter with a type nobody keeps
    /// ("List all memory files" became `{"type": "workspace_profile", "limit": 5}`, and
    /// the answer was that there are none); the user's `/memory list TYPE` filters.
    fn params(&self) -> &'static [Param] {
        &[]
    }
    fn answers_as_is(&self) -> bool {
        true
    }
    fn finds_nothing(&self) -> bool {
        !self.0.holds_memory()
    }
    fn writes(&self) -> bool {
        false
    }
    fn call(&self, _args: &Map<String, Value>) -> Result<String, ToolError> {
        let rows = self.0.open()?.list(None, None).map_err(failed)?;
        let live = overview::ordered(&rows, now_unix());
        if live.is_empty() {
            return Ok("no memories yet (memory_write keeps a note when the user asks)".into());
        }
        let noun = if live.len() == 1 {
            "memory"
        } else {
            "memories"
        };
        let text = format!(
            "{} active {noun}, most useful first (`id` (type, confidence) description; memory_read shows one in full):\n{}",
            live.len(),
            overview::lines(&live, MAX_LINES, MORE)
        );
        Ok(text.trim_end().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Draft, MemoryStore};

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
    }
}
