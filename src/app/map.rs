//! The `[workspace files]` block at the head of the session-start context: built once
//! per session (at the first message, or when the stable prefix is prepared before it),
//! so it stays fixed while the session runs and the KV cache survives; a new session
//! (or a model switch) builds it again, so it follows the files. It sits before the
//! memory context and is part of the saved prompt prefix: the prefix key (a hash of the
//! prefix tokens) changes exactly when the map's text does.

use super::App;
use crate::workspace_map::fit::{build, MapBlock};

impl App {
    /// This session's map (`None`: the map is off, tools are off, or there are no files).
    pub fn workspace_map(&self) -> Option<&MapBlock> {
        self.workspace_map
            .get_or_init(|| self.build_workspace_map())
            .as_ref()
    }

    /// The map's text, empty when there is none.
    pub(crate) fn workspace_map_text(&self) -> String {
        self.workspace_map()
            .map(|m| m.text.clone())
            .unwrap_or_default()
    }

    /// Builds the map again at the next use (a new session, another model's tokenizer).
    pub(crate) fn forget_workspace_map(&mut self) {
        self.workspace_map = std::cell::OnceCell::new();
    }

    fn build_workspace_map(&self) -> Option<MapBlock> {
        let pct = self.config.tools.workspace_map_pct;
        if !self.config.tools.enabled || pct <= 0.0 {
            return None;
        }
        let budget = map_budget(self.engine.info().n_ctx, pct);
        let files = crate::workspace_map::list(&self.workspace);
        build(&files, self.engine.as_ref(), budget)
    }
}

/// `floor(n_ctx × pct)`.
pub fn map_budget(n_ctx: u32, pct: f64) -> usize {
    (f64::from(n_ctx) * pct).floor() as usize
}

#[cfg(test)]
mod tests {
    #[test]
    fn budget_is_a_share_of_the_window() {
        assert_eq!(super::map_budget(4096, 0.06), 245);
        assert_eq!(super::map_budget(2048, 0.0), 0);
    }
}
