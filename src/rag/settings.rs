//! Which RAG stores recall uses: `agents/rag/settings.json`, written by `/rag use` and
//! `/rag on|off` so the choice holds for later sessions and for `harvey rag`. Without the
//! file, `memory.rag.active` and `memory.rag.enabled` from the config apply.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::rag_dir;
use crate::config::RagConfig;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RagSettings {
    /// Stores recall draws from.
    pub active: Vec<String>,
    /// Whether recall uses RAG at all.
    pub enabled: bool,
}

fn file(agents_dir: &Path) -> PathBuf {
    rag_dir(agents_dir).join("settings.json")
}

impl RagSettings {
    /// The saved settings, else the config's.
    pub fn load(agents_dir: &Path, config: &RagConfig) -> Result<Self, String> {
        let path = file(agents_dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{}: {e} (fix it or delete it; `/rag use NAME` writes it again)",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self {
                active: config.active.iter().cloned().collect(),
                enabled: config.enabled,
            }),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    pub fn save(&self, agents_dir: &Path) -> Result<(), String> {
        let path = file(agents_dir);
        let dir = rag_dir(agents_dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        crate::memory::file::write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}
