//! Reading `agents/harvey.yaml` and turning serde errors into messages that name the
//! file, the line and column, and the bad key or value.

use std::path::{Path, PathBuf};

use super::raw::RawConfig;
use super::resolve::resolve;
use super::upstream::{translate, Upstream};
use super::Config;

/// The workspace config file, relative to the workspace root.
pub const CONFIG_FILE: &str = "agents/harvey.yaml";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read: fix its permissions.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Bad YAML, an unknown key or a value of the wrong type: edit the file there.
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// Saving a setting failed: the file is as it was.
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file cannot be edited safely: the message says what to do instead.
    #[error("{path}: {message}")]
    Edit { path: PathBuf, message: String },
    /// A value of the right type but out of range.
    #[error("{path}{}: {key} {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        path: PathBuf,
        key: String,
        line: Option<usize>,
        message: String,
    },
}

/// Loads the workspace config, or the built-in defaults when the file does not exist.
/// A file written by the Go tool gets one line in `Config::notices` naming its keys.
pub fn load(workspace: &Path) -> Result<Config, ConfigError> {
    let path = workspace.join(CONFIG_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let (mut config, upstream) = parse_noted(&text, &path)?;
            config
                .notices
                .extend(upstream.warning(Path::new(CONFIG_FILE)));
            Ok(config)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(source) => Err(ConfigError::Read { path, source }),
    }
}

/// Parses config text; `path` is only used in error messages.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    parse_noted(text, path).map(|(config, _)| config)
}

/// Parses config text and says what was made of the Go tool's keys.
pub fn parse_noted(text: &str, path: &Path) -> Result<(Config, Upstream), ConfigError> {
    let syntax = |e: serde_yaml::Error| {
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        let message = e.to_string();
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_string();
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    };
    // An empty file (or one with only comments) means "all defaults".
    let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(syntax)?;
    let mut raw: RawConfig = if value.is_null() {
        RawConfig::default()
    } else {
        serde_yaml::from_str(text).map_err(syntax)?
    };
    let invalid = |(key, message): (String, String)| ConfigError::Invalid {
        path: path.to_path_buf(),
        line: line_of_key(text, &key),
        key,
        message,
    };
    let upstream = translate(&mut raw, &value).map_err(invalid)?;
    Ok((resolve(raw).map_err(invalid)?, upstream))
}

/// The 1-based line where the last part of a dotted key is set, if it is in the file.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let last = key.rsplit('.').next()?;
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            line.strip_prefix(last)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, Path::new("agents/harvey.yaml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn empty_and_comment_only_files_are_defaults() {
        let p = Path::new("x.yaml");
        assert_eq!(parse("", p).unwrap(), Config::default());
        assert_eq!(parse("# nothing\n", p).unwrap(), Config::default());
    }

    #[test]
    fn unknown_key_names_line_column_and_key() {
        let e = err("engine:\n  n_ctx: 2048\n  n_ctxx: 1\n");
        assert!(e.starts_with("agents/harvey.yaml:3:3: "), "{e}");
        assert!(e.contains("unknown field `n_ctxx`"), "{e}");
    }

    #[test]
    fn wrong_type_names_line_column_and_value() {
        let e = err("sampling:\n  temperature: hot\n");
        assert!(e.starts_with("agents/harvey.yaml:2:16: "), "{e}");
        assert!(e.contains("invalid type") && e.contains("hot"), "{e}");
    }

    #[test]
    fn out_of_range_value_names_key_and_line() {
        let e = err("memory:\n  budget_pct: 1.5\n");
        assert_eq!(
            e,
            "agents/harvey.yaml:2: memory.budget_pct must be in (0, 1]"
        );
    }

    #[test]
    fn template_setting_is_validated_with_the_choices_listed() {
        let e = err("model:\n  template: gemma3\n");
        assert!(
            e.starts_with("agents/harvey.yaml:2: model.template 'gemma3' is not a chat format"),
            "{e}"
        );
        assert!(e.contains("auto, chatml, gemma, llama3"), "{e}");
        let parsed = |t: &str| {
            parse(&format!("model:\n  template: {t}\n"), Path::new("x"))
                .unwrap()
                .model
                .template
        };
        assert_eq!(parsed("gemma"), Some("gemma".to_string()));
        assert_eq!(parsed("auto"), None);
    }

    #[test]
    fn kv_cache_type_is_read_and_a_bad_one_names_the_key_and_the_choices() {
        use crate::engine::KvCacheType;
        let kv = |v: &str| parse(&format!("engine:\n  kv_cache_type: {v}\n"), Path::new("x"));
        assert_eq!(kv("q8_0").unwrap().engine.kv_cache_type, KvCacheType::Q8_0);
        assert_eq!(kv("f16").unwrap().engine.kv_cache_type, KvCacheType::F16);
        assert_eq!(Config::default().engine.kv_cache_type, KvCacheType::F16);
        let e = err("engine:\n  n_ctx: 2048\n  kv_cache_type: q4_0\n");
        assert!(
            e.starts_with("agents/harvey.yaml:3: engine.kv_cache_type \"q4_0\" is not"),
            "{e}"
        );
        assert!(e.contains("f16 or q8_0"), "{e}");
    }

    #[test]
    fn lookup_is_read_and_a_bad_one_names_the_key_and_the_choices() {
        use crate::engine::LookupMode;
        let read = |v: &str| parse(&format!("engine:\n  lookup: {v}\n"), Path::new("x"));
        assert_eq!(read("off").unwrap().engine.lookup, LookupMode::Off);
        assert_eq!(read("ON").unwrap().engine.lookup, LookupMode::On);
        assert_eq!(Config::default().engine.lookup, LookupMode::Auto);
        let e = err("engine:\n  lookup: always\n");
        assert!(
            e.starts_with("agents/harvey.yaml:2: engine.lookup \"always\" is not"),
            "{e}"
        );
        assert!(e.contains("auto, on or off"), "{e}");
    }

    #[test]
    fn mmap_is_read_and_a_bad_one_names_the_key_and_the_choices() {
        use crate::engine::MmapMode;
        assert_eq!(Config::default().engine.mmap, MmapMode::Auto);
        let read = |v: &str| parse(&format!("engine:\n  mmap: {v}\n"), Path::new("x"));
        assert_eq!(read("on").unwrap().engine.mmap, MmapMode::On);
        assert_eq!(read("Off").unwrap().engine.mmap, MmapMode::Off);
        let e = err("engine:\n  mmap: sometimes\n");
        assert!(
            e.starts_with("agents/harvey.yaml:2: engine.mmap \"sometimes\" is not"),
            "{e}"
        );
        assert!(e.contains("auto, on"), "{e}");
    }

    #[test]
    fn values_are_read() {
        let c = parse(
            "engine:\n  n_ctx: 2048\n  threads: 3\nmemory:\n  embedder: none\n",
            Path::new("x"),
        )
        .unwrap();
        assert_eq!(c.engine.n_ctx, 2048);
        assert_eq!(c.engine.threads, Some(3));
        assert_eq!(c.engine.threads_batch, None);
        assert_eq!(c.memory.embedder, super::super::Embedder::None);
    }
}
