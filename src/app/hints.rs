//! What rides with a request, to the router and the model alike: the files whose names
//! echo it (`(files named like this: …)`) and the memories about it (`(already known:
//! …)`). Both go on the user message of this turn only, so the cached prefix stays.

use super::App;
use crate::chat::agent::TurnEvent;
use crate::memory::recall::{MemorySilo, Silo};

/// A request with its hint lines.
pub(crate) struct Hinted {
    pub text: String,
    /// A memory about the request is among the lines.
    pub remembered: bool,
    /// A workspace `[evidence]` block is among the lines: the model chooses the first step.
    pub evidence: bool,
}

/// Memories drawn from the silo for one request before [`crate::memory::about`] picks.
const MEMORY_POOL: usize = 4;

impl App {
    /// `text` with its hint lines, each on its own line after it; a notice names the
    /// memories shown.
    pub(crate) fn with_hints(
        &self,
        text: &str,
        evidence: Option<&crate::evidence::Block>,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Hinted {
        let mut out = Hinted {
            text: text.to_string(),
            remembered: false,
            evidence: false,
        };
        // The evidence block holds the files and memories that rank for the request: the
        // name hint and the memory gate would only repeat it less well.
        if let Some(block) = evidence {
            out.text = format!("{}\n\n{text}\n{}", block.text.trim_end(), block.note());
            // A block of memories leaves the first step to the memory's own steps.
            out.evidence = block.scope == crate::evidence::Scope::Workspace;
            return out;
        }
        if let Some(hint) = self.named_hint(text) {
            out.text.push('\n');
            out.text.push_str(&hint);
        }
        if let Some((hint, names)) = self.remembered_hint(text) {
            on_event(TurnEvent::Notice(format!("remembered: {names}")));
            out.text.push('\n');
            out.text.push_str(&hint);
            out.remembered = true;
        }
        out
    }

    /// `(files named like this: …)` for a request whose words echo file names
    /// ([`crate::workspace_map::named`]); `None` when none does or the map is off.
    pub(crate) fn named_hint(&self, request: &str) -> Option<String> {
        if !self.tools_enabled || self.config.tools.workspace_map_pct <= 0.0 {
            return None;
        }
        let files = crate::workspace_map::list(&self.workspace);
        crate::workspace_map::named::hint(&crate::workspace_map::named::named_like(&files, request))
    }

    /// `(already known: …)` and the memories' descriptions for a request that memories speak to
    /// ([`crate::memory::about`]); `None` when memory or tools are off, or none does. A
    /// recall that fails here only loses the hint.
    fn remembered_hint(&self, request: &str) -> Option<(String, String)> {
        if !self.tools_enabled || !self.config.memory.enabled {
            return None;
        }
        let store = self.memory.as_ref()?;
        let mut candidates = match MemorySilo(store).candidates(request, MEMORY_POOL) {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("memories for the request: {e}");
                return None;
            }
        };
        // What onboarding read from the manifests is the files' to say, not memory's:
        // "What does this project do?" was answered from it ("a Rust project with entry
        // points …") instead of from the README.
        candidates.retain(|c| {
            !store
                .index()
                .get(&c.id)
                .ok()
                .flatten()
                .is_some_and(|row| row.tags.split([',', ' ']).any(|t| t.trim() == "manifest"))
        });
        let cosines: std::collections::HashMap<String, f32> = store
            .similar(request, MEMORY_POOL)
            .map(|v| v.into_iter().map(|(row, c)| (row.id, c)).collect())
            .unwrap_or_default();
        // With embeddings, a memory outside the nearest few is not close to the request.
        let cosine = |c: &crate::memory::pack::Candidate| {
            (!cosines.is_empty()).then(|| cosines.get(&c.id).copied().unwrap_or(0.0))
        };
        let about = crate::memory::about::about(&candidates, cosine, request);
        let names: Vec<&str> = about
            .iter()
            .map(|c| {
                c.text
                    .trim_start_matches("- ")
                    .split(": ")
                    .next()
                    .unwrap_or("")
            })
            .collect();
        Some((crate::memory::about::hint(&about)?, names.join("; ")))
    }
}
