//! What a memory is: five types, the Go tool's front-matter fields, and the body.

use serde::{Deserialize, Serialize};

/// The five memory types. Factual ones are injected first under their own cap;
/// experiential ones are retrieved by relevance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryType {
    WorkspaceProfile,
    ProjectFact,
    ToolUse,
    Workflow,
    UserPreference,
}

impl MemoryType {
    pub const ALL: [MemoryType; 5] = [
        MemoryType::WorkspaceProfile,
        MemoryType::ProjectFact,
        MemoryType::ToolUse,
        MemoryType::Workflow,
        MemoryType::UserPreference,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::WorkspaceProfile => "workspace_profile",
            MemoryType::ProjectFact => "project_fact",
            MemoryType::ToolUse => "tool_use",
            MemoryType::Workflow => "workflow",
            MemoryType::UserPreference => "user_preference",
        }
    }

    /// Accepts `project_fact`, `project-fact` and `ProjectFact`-style spellings.
    pub fn parse(text: &str) -> Option<Self> {
        let norm: String = text
            .trim()
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        Self::ALL
            .into_iter()
            .find(|t| t.as_str().replace('_', "") == norm)
    }

    /// Workspace profile and project facts: always injected first.
    pub fn is_factual(self) -> bool {
        matches!(self, MemoryType::WorkspaceProfile | MemoryType::ProjectFact)
    }

    /// `workspace_profile | project_fact | …`, for error messages and `--help`.
    pub fn choices() -> String {
        Self::ALL.map(Self::as_str).join(" | ")
    }
}

impl std::fmt::Display for MemoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Default confidence of a memory that does not say.
pub const DEFAULT_CONFIDENCE: f64 = 0.5;

/// One memory: front matter plus body. `extra` keeps front-matter keys harvey does not
/// know, so a rewrite never drops what another tool (or a person) put there.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    pub id: String,
    pub mtype: MemoryType,
    pub kind: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub supersedes: Vec<String>,
    pub tags: Vec<String>,
    pub description: String,
    pub summary: String,
    pub action: Option<String>,
    pub confidence: f64,
    pub source_session: Option<String>,
    pub expires_at: Option<String>,
    /// The words a memory the model wrote rests on, and who said them (`user: "…"`).
    pub evidence: Option<String>,
    pub body: String,
    pub extra: crate::text::front_matter::Fields,
}

/// What a caller supplies to write a memory; the store fills in id and timestamps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Draft {
    #[serde(rename = "type")]
    pub mtype: String,
    pub description: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default, deserialize_with = "tags_field")]
    pub tags: Vec<String>,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub supersedes: Vec<String>,
    #[serde(default)]
    pub source_session: Option<String>,
    #[serde(default)]
    pub expires_at: Option<String>,
    #[serde(default)]
    pub evidence: Option<String>,
}

/// Tags as a list or as one comma-separated string.
fn tags_field<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Tags {
        List(Vec<String>),
        Text(String),
    }
    Ok(match Tags::deserialize(d)? {
        Tags::List(list) => list,
        Tags::Text(text) => split_tags(&text),
    })
}

/// `"git, build ,ci"` → `["git", "build", "ci"]`.
pub fn split_tags(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Lowercased words of a description, for duplicate detection.
pub fn normalize_description(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse_in_several_spellings() {
        assert_eq!(
            MemoryType::parse("project-fact"),
            Some(MemoryType::ProjectFact)
        );
        assert_eq!(MemoryType::parse("ToolUse"), Some(MemoryType::ToolUse));
        assert_eq!(MemoryType::parse("nonsense"), None);
        assert!(MemoryType::WorkspaceProfile.is_factual());
        assert!(!MemoryType::Workflow.is_factual());
    }

    #[test]
    fn descriptions_normalize_for_dedupe() {
        assert_eq!(
            normalize_description("  Run `git init` -- when GIT says: not a repo! "),
            "run git init when git says not a repo"
        );
    }

    #[test]
    fn drafts_take_tags_as_text_or_list() {
        let a: Draft =
            serde_json::from_str(r#"{"type":"workflow","description":"d","tags":"a, b"}"#).unwrap();
        let b: Draft =
            serde_json::from_str(r#"{"type":"workflow","description":"d","tags":["a","b"]}"#)
                .unwrap();
        assert_eq!(a.tags, vec!["a", "b"]);
        assert_eq!(a.tags, b.tags);
    }
}
