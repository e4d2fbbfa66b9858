//! `/rag …`: parsed here once and run by the REPL and by `harvey rag` alike (the CLI
//! adds `--json`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::subcommand::{settle, split_word};
use crate::config::Config;
use crate::rag::ingest::Progress;
use crate::rag::settings::RagSettings;
use crate::rag::RagStore;
use crate::tokens::Embedder;

mod ops;

/// What `/rag` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RagOp {
    New(String),
    Use(Vec<String>),
    List,
    Status(Option<String>),
    On,
    Off,
    Drop(String),
    Import(String),
    Ingest {
        store: Option<String>,
        paths: Vec<PathBuf>,
    },
    Query {
        store: Option<String>,
        text: String,
        k: Option<usize>,
    },
    Prune(Option<String>),
}

pub const RAG_USAGE: &str = "/rag new NAME | use NAME… | list | status [NAME] | on | off | drop NAME | import NAME | ingest PATH… | query TEXT | prune";

/// Parses the words after `/rag`.
pub fn parse_rag(args: &str) -> Result<RagOp, String> {
    let (sub, rest) = split_word(args);
    let one = |what: &str| -> Result<String, String> {
        if rest.is_empty() || rest.contains(char::is_whitespace) {
            Err(format!("usage: /rag {sub} {what}"))
        } else {
            Ok(rest.to_string())
        }
    };
    Ok(match sub {
        "" | "list" => RagOp::List,
        "new" => RagOp::New(one("NAME")?),
        "use" if !rest.is_empty() => {
            RagOp::Use(rest.split_whitespace().map(String::from).collect())
        }
        "use" => return Err("usage: /rag use NAME [NAME…]".into()),
        "status" => RagOp::Status((!rest.is_empty()).then(|| rest.to_string())),
        "on" => RagOp::On,
        "off" => RagOp::Off,
        "drop" => RagOp::Drop(one("NAME")?),
        "import" => RagOp::Import(one("NAME")?),
        "ingest" if !rest.is_empty() => RagOp::Ingest {
            store: None,
            paths: split_paths(rest),
        },
        "ingest" => return Err("usage: /rag ingest PATH… (files or directories)".into()),
        "query" if !rest.is_empty() => RagOp::Query {
            store: None,
            text: rest.to_string(),
            k: None,
        },
        "query" => return Err("usage: /rag query TEXT".into()),
        "prune" => RagOp::Prune((!rest.is_empty()).then(|| rest.to_string())),
        other => return Err(format!("unknown /rag command {other:?}; {RAG_USAGE}")),
    })
}

/// Paths separated by spaces; `"…"` or `'…'` keep spaces inside one path.
fn split_paths(s: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for ch in s.chars() {
        match (quote, ch) {
            (None, '"' | '\'') => quote = Some(ch),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if !current.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            (_, c) => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(PathBuf::from(current));
    }
    out
}

/// Where the commands work.
pub struct Place<'a> {
    pub workspace: &'a Path,
    pub config: &'a Config,
    pub embedder: Option<Arc<dyn Embedder>>,
}

impl Place<'_> {
    fn agents(&self) -> PathBuf {
        self.workspace.join("agents")
    }

    fn settings(&self) -> Result<RagSettings, String> {
        RagSettings::load(&self.agents(), &self.config.memory.rag)
    }

    /// The store a command names, else the first active one.
    fn target(&self, named: Option<&str>) -> Result<String, String> {
        if let Some(n) = named {
            return Ok(n.to_string());
        }
        self.settings()?.active.into_iter().next().ok_or_else(|| {
            "no RAG store is in use: /rag new NAME makes one, /rag use NAME picks one".to_string()
        })
    }

    fn open(&self, name: &str) -> Result<RagStore, String> {
        RagStore::open(&self.agents(), name, self.embedder.clone()).map_err(|e| e.to_string())
    }
}

/// What a `/rag` command changed, so the session can reload its stores.
pub struct RagOutcome {
    pub settings_changed: bool,
}

/// Runs a `/rag` command. `progress` gets a redrawn status line during ingests (pass
/// a sink to draw nothing); `cancel` is polled between files.
pub fn run_rag(
    place: &Place<'_>,
    op: RagOp,
    json: bool,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(Progress),
    cancel: &dyn Fn() -> bool,
) -> io::Result<Result<RagOutcome, String>> {
    settle(match op {
        RagOp::New(name) => ops::new(place, &name, json, out),
        RagOp::Use(names) => ops::use_stores(place, names, json, out),
        RagOp::List => ops::list(place, json, out),
        RagOp::Status(named) => ops::status(place, named, json, out),
        RagOp::On => ops::switch(place, true, out),
        RagOp::Off => ops::switch(place, false, out),
        RagOp::Drop(name) => ops::drop_store(place, &name, out),
        RagOp::Import(name) => ops::import(place, &name, json, out),
        RagOp::Ingest { store, paths } => {
            ops::ingest(place, store.as_deref(), paths, json, out, progress, cancel)
        }
        RagOp::Query { store, text, k } => ops::query(place, store.as_deref(), &text, k, json, out),
        RagOp::Prune(named) => ops::prune(place, named.as_deref(), json, out),
    })
}

/// A one-line progress bar: `[#####     ] 12/40 files, 321 chunks, 85.2 chunks/s`.
pub fn progress_line(p: &Progress) -> String {
    let width = 20;
    let done = (p.files_done * width)
        .checked_div(p.files_total)
        .unwrap_or(width);
    format!(
        "[{}{}] {}/{} files, {} chunks, {:.1} chunks/s",
        "#".repeat(done),
        " ".repeat(width - done),
        p.files_done,
        p.files_total,
        p.chunks,
        p.embed_rate
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rag_commands_parse() {
        assert_eq!(parse_rag("new docs"), Ok(RagOp::New("docs".into())));
        assert_eq!(parse_rag(""), Ok(RagOp::List));
        assert_eq!(
            parse_rag("ingest docs \"my notes\" a.md"),
            Ok(RagOp::Ingest {
                store: None,
                paths: vec!["docs".into(), "my notes".into(), "a.md".into()]
            })
        );
        assert!(parse_rag("new").unwrap_err().contains("usage"));
        assert_eq!(parse_rag("import notes"), Ok(RagOp::Import("notes".into())));
        assert!(parse_rag("frob")
            .unwrap_err()
            .contains("unknown /rag command"));
    }

    #[test]
    fn progress_line_fills_with_the_files_done() {
        let p = Progress {
            files_done: 5,
            files_total: 10,
            chunks: 42,
            embed_rate: 12.5,
        };
        assert_eq!(
            progress_line(&p),
            "[##########          ] 5/10 files, 42 chunks, 12.5 chunks/s"
        );
    }
}
