//! What the user sees before saying yes to `memory_update` or `memory_forget`: the
//! fields that change, old then new, or the memory that goes and where it is kept.
//! Pure text from memories the store read; the store checks and the call write.

use crate::memory::store::day_of;
use crate::memory::Memory;

/// The question's line: `memory_update tool_use_a3f891 (tool_use)`.
pub(super) fn question(tool: &str, m: &Memory) -> String {
    format!("{tool} {} ({})", m.id, m.mtype)
}

/// The fields `new` says differently from `old`, each as `- field: old` then
/// `+ field: new`; a multi-line value continues on indented lines.
pub(super) fn update_diff(old: &Memory, new: &Memory) -> String {
    let tags = |m: &Memory| m.tags.join(", ");
    let fields = [
        (
            "description",
            old.description.clone(),
            new.description.clone(),
        ),
        ("summary", old.summary.clone(), new.summary.clone()),
        ("body", old.body.clone(), new.body.clone()),
        ("tags", tags(old), tags(new)),
    ];
    let mut out = format!(
        "  memory {} ({}), updated {}\n",
        old.id,
        old.mtype,
        day_of(&old.updated_at)
    );
    let mut changed = false;
    for (field, was, will) in &fields {
        if was != will {
            changed = true;
            out.push_str(&side('-', field, was));
            out.push_str(&side('+', field, will));
        }
    }
    if !changed {
        out.push_str("  nothing changes but its updated date: the memory already says this\n");
    }
    out
}

/// The memory that goes, and that it is kept at `kept_at` rather than deleted.
pub(super) fn forget_diff(m: &Memory, kept_at: &str) -> String {
    let mut out = format!(
        "- memory {} ({}), updated {}\n",
        m.id,
        m.mtype,
        day_of(&m.updated_at)
    );
    out.push_str(&side('-', "description", &m.description));
    if !m.summary.is_empty() {
        out.push_str(&side('-', "summary", &m.summary));
    }
    out.push_str(&format!(
        "  archived, not deleted: it moves to {kept_at} and is never recalled again\n"
    ));
    out
}

/// `- field: value` (`(empty)` for nothing); further lines of the value indented under it.
fn side(sign: char, field: &str, value: &str) -> String {
    let mut lines = value.lines();
    let first = if value.is_empty() {
        "(empty)"
    } else {
        lines.next().unwrap_or("")
    };
    let mut out = format!("{sign} {field}: {first}\n");
    for line in lines {
        out.push_str(&format!("{sign}     {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryType;

    fn memory() -> Memory {
        Memory {
            id: "tool_use_a3f891".into(),
            mtype: MemoryType::ToolUse,
            kind: None,
            created_at: "2025-01-02T03:04:05Z".into(),
            updated_at: "2025-02-03T04:05:06Z".into(),
            supersedes: Vec::new(),
            tags: vec!["git".into()],
            description: "Run git init when git says not a repository".into(),
            summary: String::new(),
            action: None,
            confidence: 0.5,
            source_session: None,
            expires_at: None,
            evidence: None,
            body: "first line\nsecond line".into(),
            extra: Default::default(),
        }
    }

    #[test]
    fn an_update_shows_only_the_fields_that_change_old_then_new() {
        let old = memory();
        let new = Memory {
            summary: "It worked.".into(),
            tags: vec!["git".into(), "init".into()],
            ..old.clone()
        };
        assert_eq!(
            update_diff(&old, &new),
            "  memory tool_use_a3f891 (tool_use), updated 2025-02-03\n\
             - summary: (empty)\n\
             + summary: It worked.\n\
             - tags: git\n\
             + tags: git, init\n"
        );
        let body = Memory {
            body: "one\ntwo".into(),
            ..old.clone()
        };
        let diff = update_diff(&old, &body);
        assert!(
            diff.contains("- body: first line\n-     second line\n+ body: one\n+     two\n"),
            "{diff}"
        );
        assert!(update_diff(&old, &old).contains("nothing changes"));
        assert_eq!(
            question("memory_update", &old),
            "memory_update tool_use_a3f891 (tool_use)"
        );
    }

    #[test]
    fn a_forget_names_the_memory_and_where_it_is_kept() {
        let m = Memory {
            summary: "It worked.".into(),
            ..memory()
        };
        let diff = forget_diff(&m, "agents/memories/archive/tool_use/tool_use_a3f891.spmd");
        assert_eq!(
            diff,
            "- memory tool_use_a3f891 (tool_use), updated 2025-02-03\n\
             - description: Run git init when git says not a repository\n\
             - summary: It worked.\n  \
             archived, not deleted: it moves to agents/memories/archive/tool_use/tool_use_a3f891.spmd and is never recalled again\n"
        );
    }
}
