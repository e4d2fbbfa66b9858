//! Finding the chat model file: `--model`, `model.path`, `$HARVEY_MODEL`, the workspace's
//! `models/`, the repository's `models/`, `~/Models` — first hit wins.
//!
//! Pure except for existence checks, so the order is table-tested.

use std::path::{Path, PathBuf};

/// The default chat models, best first: Qwen2.5-Coder-1.5B-Instruct, the Pi model
/// (`scripts/fetch-models.sh --qwen`, which `scripts/start.sh` runs), then SmolLM2-135M,
/// the small and fast one the test suite runs (`scripts/fetch-models.sh`).
pub const DEFAULT_MODEL_FILES: &[&str] = &[
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
];
/// The default chat model (fetched by `scripts/fetch-models.sh --qwen`).
pub const DEFAULT_MODEL_FILE: &str = DEFAULT_MODEL_FILES[0];
/// The command that fetches the default model, for error messages.
pub const FETCH_COMMAND: &str = "scripts/fetch-models.sh --qwen";

/// Where the lookup may look, in order.
#[derive(Debug, Clone, Default)]
pub struct ModelSources {
    pub cli: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub env: Option<PathBuf>,
    /// Directories searched for a GGUF, in order.
    pub dirs: Vec<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum ModelLookupError {
    /// A file was named explicitly but is not there: fix the path.
    #[error("model file {path} (from {origin}) does not exist")]
    Missing { path: PathBuf, origin: &'static str },
    /// Nothing found anywhere: fetch a model.
    #[error("no GGUF model found; looked in:\n{}\nfetch the default model with `{FETCH_COMMAND}`, download one with `harvey model pull URL`, or pass --model PATH", searched.iter().map(|p| format!("  {}", p.display())).collect::<Vec<_>>().join("\n"))]
    NotFound { searched: Vec<PathBuf> },
}

impl ModelSources {
    /// The standard sources for a workspace: config paths are relative to it.
    pub fn standard(
        cli: Option<PathBuf>,
        config_path: Option<&Path>,
        models_dir: &Path,
        workspace: &Path,
    ) -> Self {
        let dirs = search_dirs(models_dir, workspace);
        Self {
            cli,
            config: config_path.map(|p| workspace.join(p)),
            env: std::env::var_os("HARVEY_MODEL")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            dirs,
        }
    }

    /// Resolves the model file.
    pub fn find(&self) -> Result<PathBuf, ModelLookupError> {
        let named = [
            (&self.cli, "--model"),
            (&self.config, "model.path"),
            (&self.env, "$HARVEY_MODEL"),
        ];
        if let Some((path, origin)) = named.iter().find_map(|(p, o)| p.as_ref().map(|p| (p, *o))) {
            return if path.is_file() {
                Ok(path.clone())
            } else {
                Err(ModelLookupError::Missing {
                    path: path.clone(),
                    origin,
                })
            };
        }
        self.dirs
            .iter()
            .find_map(|dir| model_in_dir(dir))
            .ok_or_else(|| ModelLookupError::NotFound {
                searched: self.dirs.clone(),
            })
    }
}

/// Where model files are looked for: `models_dir` in the workspace, the repository's
/// `models/`, `~/Models`.
pub fn search_dirs(models_dir: &Path, workspace: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![workspace.join(models_dir)];
    let repo_models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    if !dirs.contains(&repo_models) {
        dirs.push(repo_models);
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join("Models"));
    }
    dirs
}

/// The first default model present in `dir`, else the first chat GGUF by name. A file
/// whose header does not read, and an embedding model (by its header, or a name
/// containing `minilm` or `embed`), is never chosen for chat.
pub fn model_in_dir(dir: &Path) -> Option<PathBuf> {
    if let Some(default) = DEFAULT_MODEL_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
    {
        return Some(default);
    }
    let mut ggufs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && is_chat_gguf(p))
        .collect();
    ggufs.sort();
    ggufs.into_iter().next()
}

fn is_chat_gguf(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name.ends_with(".gguf")
        && !name.contains("minilm")
        && !name.contains("embed")
        && crate::model::gguf::read(path).is_ok_and(|info| !info.embedding && info.tensors > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_order_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let chat = crate::model::gguf::sample::header("llama");
        std::fs::write(b.join("zeta.gguf"), &chat).unwrap();
        std::fs::write(b.join("all-minilm-l6-v2.gguf"), &chat).unwrap();
        std::fs::write(b.join("alpha.gguf"), &chat).unwrap();
        // Not chosen: not a GGUF, and an encoder by its header.
        std::fs::write(b.join("aaa-broken.gguf"), b"x").unwrap();
        std::fs::write(
            b.join("aab-encoder.gguf"),
            crate::model::gguf::sample::header("bert"),
        )
        .unwrap();
        let explicit = b.join("zeta.gguf");

        let mut s = ModelSources {
            dirs: vec![a.clone(), b.clone()],
            ..ModelSources::default()
        };
        assert_eq!(s.find().unwrap(), b.join("alpha.gguf"));

        // The defaults win over other files, the Pi model over the small one.
        std::fs::write(b.join(DEFAULT_MODEL_FILES[1]), &chat).unwrap();
        assert_eq!(s.find().unwrap(), b.join(DEFAULT_MODEL_FILES[1]));
        std::fs::write(b.join(DEFAULT_MODEL_FILE), &chat).unwrap();
        assert_eq!(s.find().unwrap(), b.join(DEFAULT_MODEL_FILE));

        s.env = Some(explicit.clone());
        assert_eq!(s.find().unwrap(), explicit);
        s.config = Some(dir.path().join("missing.gguf"));
        let err = s.find().unwrap_err().to_string();
        assert!(
            err.contains("missing.gguf") && err.contains("model.path"),
            "{err}"
        );
        s.cli = Some(explicit.clone());
        assert_eq!(s.find().unwrap(), explicit);

        let empty = ModelSources {
            dirs: vec![a.clone()],
            ..ModelSources::default()
        };
        let err = empty.find().unwrap_err().to_string();
        assert!(
            err.contains(&a.display().to_string()) && err.contains(FETCH_COMMAND),
            "{err}"
        );
    }
}
