//! `/rag …`: parsed here once and run by the REPL and by `harvey rag` alike (the CLI
//! adds `--json`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::rag::ingest::{IngestOptions, IngestReport, Progress};
use crate::rag::settings::RagSettings;
use crate::rag::{self as ragmod, chunk_line, RagStore};
use crate::tokens::Embedder;

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
    let args = args.trim();
    let (sub, rest) = args
        .split_once(char::is_whitespace)
        .map(|(a, b)| (a, b.trim()))
        .unwrap_or((args, ""));
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
    let agents = place.agents();
    let unchanged = RagOutcome {
        settings_changed: false,
    };
    let changed = RagOutcome {
        settings_changed: true,
    };
    macro_rules! tryf {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => return Ok(Err(e.to_string())),
            }
        };
    }
    match op {
        RagOp::New(name) => {
            let store = tryf!(RagStore::create(&agents, &name, place.embedder.clone()));
            let mut settings = tryf!(place.settings());
            let first = settings.active.is_empty();
            if first {
                settings.active.push(name.clone());
                tryf!(settings.save(&agents));
            }
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"created": name, "path": store.path(), "active": first})
                )?;
            } else {
                writeln!(out, "created RAG store {name} ({})", store.path().display())?;
                if first {
                    writeln!(out, "recall now uses it; /rag ingest PATH… adds documents")?;
                } else {
                    writeln!(out, "/rag use {name} makes recall use it")?;
                }
            }
            Ok(Ok(if first { changed } else { unchanged }))
        }
        RagOp::Use(names) => {
            for n in &names {
                tryf!(place.open(n));
            }
            let mut settings = tryf!(place.settings());
            settings.active = names.clone();
            settings.enabled = true;
            tryf!(settings.save(&agents));
            if json {
                writeln!(out, "{}", serde_json::json!({"active": names}))?;
            } else {
                writeln!(out, "recall uses: {}", names.join(", "))?;
            }
            Ok(Ok(changed))
        }
        RagOp::List => {
            let settings = tryf!(place.settings());
            let names = ragmod::list(&agents);
            if json {
                let items: Vec<_> = names
                    .iter()
                    .map(|n| {
                        serde_json::json!({
                            "name": n,
                            "active": settings.active.contains(n),
                            "foreign": ragmod::written_by_go(&agents, n),
                            "imported": ragmod::is_imported(&agents, n),
                        })
                    })
                    .collect();
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"stores": items, "enabled": settings.enabled})
                )?;
            } else if names.is_empty() {
                writeln!(out, "no RAG stores yet (/rag new NAME)")?;
            } else {
                for n in &names {
                    let mark = if settings.active.contains(n) {
                        "*"
                    } else {
                        " "
                    };
                    writeln!(out, "{mark} {n}{}", origin(&agents, n))?;
                }
                writeln!(
                    out,
                    "(* = used by recall{})",
                    if settings.enabled {
                        ""
                    } else {
                        "; RAG is off: /rag on"
                    }
                )?;
            }
            Ok(Ok(unchanged))
        }
        RagOp::Status(named) => {
            let settings = tryf!(place.settings());
            let names: Vec<String> = match named {
                Some(n) => vec![n],
                None => settings.active.clone(),
            };
            let mut all = Vec::new();
            for n in &names {
                let store = tryf!(place.open(n));
                all.push(tryf!(store.status()));
            }
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"enabled": settings.enabled, "active": settings.active, "stores": all})
                )?;
                return Ok(Ok(unchanged));
            }
            writeln!(
                out,
                "RAG in recall: {}",
                if settings.enabled { "on" } else { "off" }
            )?;
            if all.is_empty() {
                writeln!(out, "no store in use (/rag use NAME)")?;
            }
            for s in all {
                writeln!(
                    out,
                    "{}: {} files, {} chunks, {} with vectors, {:.1} MB  ({})",
                    s.name,
                    s.files,
                    s.chunks,
                    s.vectors,
                    s.bytes as f64 / 1e6,
                    s.path.display()
                )?;
                writeln!(
                    out,
                    "  embedder: {}",
                    s.embedder
                        .as_deref()
                        .unwrap_or("none (full-text search only)")
                )?;
            }
            Ok(Ok(unchanged))
        }
        RagOp::On | RagOp::Off => {
            let mut settings = tryf!(place.settings());
            settings.enabled = op == RagOp::On;
            tryf!(settings.save(&agents));
            writeln!(
                out,
                "RAG in recall: {}",
                if settings.enabled { "on" } else { "off" }
            )?;
            Ok(Ok(changed))
        }
        RagOp::Drop(name) => {
            let store = tryf!(place.open(&name));
            tryf!(store.writable());
            let path = store.path().to_path_buf();
            drop(store);
            for suffix in ["", "-wal", "-shm"] {
                let p = PathBuf::from(format!("{}{suffix}", path.display()));
                if p.exists() {
                    tryf!(std::fs::remove_file(&p).map_err(|e| format!("{}: {e}", p.display())));
                }
            }
            writeln!(out, "dropped RAG store {name}")?;
            if !ragmod::written_by_go(&agents, &name) {
                let mut settings = tryf!(place.settings());
                settings.active.retain(|n| *n != name);
                tryf!(settings.save(&agents));
            } else {
                writeln!(
                    out,
                    "the Go harvey's store {name} (unchanged) is searched again; /rag import {name} copies it anew"
                )?;
            }
            Ok(Ok(changed))
        }
        RagOp::Import(name) => {
            let done = tryf!(ragmod::import::import(
                &agents,
                &name,
                place.embedder.clone()
            ));
            if json {
                writeln!(out, "{}", serde_json::json!({ "imported": done }))?;
            } else {
                import_summary(out, &done)?;
            }
            Ok(Ok(changed))
        }
        RagOp::Ingest { store, paths } => {
            let name = tryf!(place.target(store.as_deref()));
            let mut rag = tryf!(place.open(&name));
            let paths: Vec<PathBuf> = paths
                .into_iter()
                .map(|p| {
                    if p.is_absolute() {
                        p
                    } else {
                        place.workspace.join(p)
                    }
                })
                .collect();
            let opts = IngestOptions {
                workspace: place.workspace,
                chunk_tokens: place.config.memory.rag.chunk_tokens,
            };
            let report = tryf!(rag.ingest(&paths, &opts, progress, cancel));
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"store": name, "report": report})
                )?;
            } else {
                ingest_summary(out, &name, &report)?;
            }
            Ok(Ok(unchanged))
        }
        RagOp::Query { store, text, k } => {
            let name = tryf!(place.target(store.as_deref()));
            let rag = tryf!(place.open(&name));
            let k = k.unwrap_or(place.config.memory.rag.top_k).max(1);
            let hits = tryf!(rag.query(&text, k));
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"store": name, "query": text, "hits": hits})
                )?;
            } else if hits.is_empty() {
                writeln!(out, "nothing in {name} matches {text:?}")?;
            } else {
                for (i, h) in hits.iter().enumerate() {
                    writeln!(out, "{:>2}. {:.3} {}", i + 1, h.score, h.source())?;
                    let line = chunk_line(h);
                    let preview: String = line.chars().take(240).collect();
                    writeln!(out, "    {preview}")?;
                }
            }
            Ok(Ok(unchanged))
        }
        RagOp::Prune(named) => {
            let name = tryf!(place.target(named.as_deref()));
            let rag = tryf!(place.open(&name));
            let (files, chunks) = tryf!(rag.prune_missing(place.workspace));
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"store": name, "files_removed": files, "chunks_removed": chunks})
                )?;
            } else {
                writeln!(
                    out,
                    "{name}: removed {files} missing file(s), {chunks} chunk(s)"
                )?;
            }
            Ok(Ok(unchanged))
        }
    }
}

/// How `/rag list` describes where a store comes from.
fn origin(agents: &Path, name: &str) -> String {
    if ragmod::written_by_go(agents, name) {
        format!("  (the Go harvey's: searched by full text, never written; /rag import {name} makes it harvey's)")
    } else if ragmod::is_imported(agents, name) {
        "  (imported from the Go harvey's store, which is no longer used)".into()
    } else {
        String::new()
    }
}

fn import_summary(out: &mut dyn Write, done: &ragmod::import::Imported) -> io::Result<()> {
    writeln!(
        out,
        "imported the Go harvey's RAG store {}: {} file(s), {} chunk(s), {} embedded ({})",
        done.name,
        done.files,
        done.chunks,
        done.vectors,
        done.embedder
            .as_deref()
            .unwrap_or("no embedder: full-text search only")
    )?;
    writeln!(
        out,
        "harvey uses {} from now on; {} is unchanged and no longer used",
        done.path.display(),
        done.from.display()
    )
}

fn ingest_summary(out: &mut dyn Write, name: &str, r: &IngestReport) -> io::Result<()> {
    writeln!(
        out,
        "{name}: {} file(s) ingested, {} unchanged, {} removed; {} chunk(s) added, {} removed, {} embedded in {:.1} s{}",
        r.files_ingested,
        r.files_unchanged,
        r.files_removed,
        r.chunks_added,
        r.chunks_removed,
        r.vectors_added,
        r.seconds,
        if r.cancelled { " — stopped; what was ingested is kept" } else { "" }
    )?;
    for s in &r.skipped {
        writeln!(out, "  skipped {}: {}", s.path, s.reason)?;
    }
    Ok(())
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
