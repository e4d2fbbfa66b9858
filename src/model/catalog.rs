//! The GGUF files in the model directories, described from their headers (no weights
//! loaded): shared by `harvey model list|show` and the REPL's `/model`. Returns text and
//! data; the callers print.

use std::path::{Path, PathBuf};

use crate::model::gguf::{self, GgufInfo};

/// Every `.gguf` in `dirs`, each directory sorted by name, the same file listed once.
pub fn gguf_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut here: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
            })
            .filter(|p| !files.iter().any(|f| same_file(f, p)))
            .collect();
        here.sort();
        files.extend(here);
    }
    files
}

/// One line per file: `*` marks `chosen`, then what the header says.
pub fn list_line(path: &Path, chosen: bool) -> String {
    let mark = if chosen { "*" } else { " " };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    match gguf::read(path) {
        Ok(i) => format!(
            "{mark} {name}  {}  {}  {}  ctx {}  {}  {} MB  ({})",
            i.architecture,
            gguf::human_count(i.parameters),
            i.quantization.as_deref().unwrap_or("?"),
            i.training_context
                .map_or("?".to_string(), |c| c.to_string()),
            kind(&i),
            i.file_bytes / 1_000_000,
            path.parent().unwrap_or(path).display()
        ),
        Err(e) => format!("{mark} {name}  unreadable: {e}"),
    }
}

/// A path as given, or a file name (with or without `.gguf`) in the model directories.
pub fn named(name: &str, dirs: &[PathBuf]) -> Result<PathBuf, String> {
    let path = PathBuf::from(name);
    if path.is_file() {
        return Ok(path);
    }
    for dir in dirs {
        for candidate in [dir.join(name), dir.join(format!("{name}.gguf"))] {
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(format!(
        "no model {name:?}: not a file, and not in {} (model list shows them)",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

pub fn kind(i: &GgufInfo) -> &'static str {
    match (i.embedding, i.has_chat_template) {
        (true, _) => "embedding",
        (false, true) => "chat template",
        (false, false) => "no chat template",
    }
}

/// The header as labelled rows.
pub fn describe(i: &GgufInfo) -> String {
    let mut out = format!("{}\n", i.path.display());
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<18}{v}\n"));
    row("name", i.name.clone().unwrap_or_else(|| "-".into()));
    row("architecture", i.architecture.clone());
    row(
        "parameters",
        format!("{} ({})", gguf::human_count(i.parameters), i.parameters),
    );
    row(
        "quantization",
        i.quantization.clone().unwrap_or_else(|| "-".into()),
    );
    row(
        "training context",
        i.training_context
            .map_or("-".to_string(), |c| format!("{c} tokens")),
    );
    row("kind", kind(i).to_string());
    if let Some(fallback) = &i.template_fallback {
        row("template", format!("{fallback}, llama.cpp built-in"));
    }
    row(
        "file",
        format!(
            "{} MB, GGUF v{}, {} tensors",
            i.file_bytes / 1_000_000,
            i.version,
            i.tensors
        ),
    );
    out
}

pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
