//! `/rag …` and `/kb …`: parsed here once and run by the REPL and by `harvey rag|kb`
//! alike (the CLI adds `--json`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::kb::{observation_line, KnowledgeBase, KINDS};
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

pub const RAG_USAGE: &str = "/rag new NAME | use NAME… | list | status [NAME] | on | off | drop NAME | ingest PATH… | query TEXT | prune";

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
                    let foreign = if ragmod::written_by_go(&agents, n) {
                        "  (written by the Go harvey: searched by full text, never written)"
                    } else {
                        ""
                    };
                    writeln!(out, "{mark} {n}{foreign}")?;
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
            drop(store);
            let path = ragmod::rag_dir(&agents).join(format!("{name}.db"));
            for suffix in ["", "-wal", "-shm"] {
                let p = PathBuf::from(format!("{}{suffix}", path.display()));
                if p.exists() {
                    tryf!(std::fs::remove_file(&p).map_err(|e| format!("{}: {e}", p.display())));
                }
            }
            let mut settings = tryf!(place.settings());
            settings.active.retain(|n| *n != name);
            tryf!(settings.save(&agents));
            writeln!(out, "dropped RAG store {name}")?;
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

/// What `/kb` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KbOp {
    Status,
    ProjectList,
    ProjectAdd { name: String, description: String },
    ProjectUse(String),
    Observe { kind: String, text: String },
    ConceptList,
    ConceptAdd { name: String, description: String },
    Link { observation: i64, concept: String },
    Search { terms: String, k: Option<usize> },
    Inject(Option<String>),
}

pub const KB_USAGE: &str = "/kb status | project list|add NAME [DESC]|use NAME | observe [KIND] TEXT | concept list|add NAME [DESC] | link OBS_ID CONCEPT | search TERMS | inject [PROJECT]";

fn split1(s: &str) -> (&str, &str) {
    let s = s.trim();
    s.split_once(char::is_whitespace)
        .map(|(a, b)| (a, b.trim()))
        .unwrap_or((s, ""))
}

/// Parses the words after `/kb`.
pub fn parse_kb(args: &str) -> Result<KbOp, String> {
    let (sub, rest) = split1(args);
    Ok(match sub {
        "" | "status" => KbOp::Status,
        "project" | "projects" => {
            let (verb, rest) = split1(rest);
            match verb {
                "" | "list" => KbOp::ProjectList,
                "add" => {
                    let (name, description) = split1(rest);
                    if name.is_empty() {
                        return Err("usage: /kb project add NAME [DESCRIPTION]".into());
                    }
                    KbOp::ProjectAdd {
                        name: name.into(),
                        description: description.into(),
                    }
                }
                "use" if !rest.is_empty() => KbOp::ProjectUse(rest.into()),
                _ => return Err("usage: /kb project list | add NAME [DESC] | use NAME".into()),
            }
        }
        "observe" => {
            let (first, after) = split1(rest);
            let (kind, text) = if KINDS.contains(&first.to_ascii_lowercase().as_str()) {
                (first.to_ascii_lowercase(), after)
            } else {
                ("note".to_string(), rest)
            };
            if text.is_empty() {
                return Err(format!(
                    "usage: /kb observe [KIND] TEXT (KIND: {}; default note)",
                    KINDS.join(", ")
                ));
            }
            KbOp::Observe {
                kind,
                text: text.into(),
            }
        }
        "concept" | "concepts" => {
            let (verb, rest) = split1(rest);
            match verb {
                "" | "list" => KbOp::ConceptList,
                "add" => {
                    let (name, description) = split1(rest);
                    if name.is_empty() {
                        return Err("usage: /kb concept add NAME [DESCRIPTION]".into());
                    }
                    KbOp::ConceptAdd {
                        name: name.into(),
                        description: description.into(),
                    }
                }
                _ => return Err("usage: /kb concept list | add NAME [DESC]".into()),
            }
        }
        "link" => {
            let (id, concept) = split1(rest);
            let observation = id.trim_start_matches("kb:").parse::<i64>().map_err(|_| {
                "usage: /kb link OBS_ID CONCEPT (OBS_ID is a number from /kb search)"
            })?;
            if concept.is_empty() {
                return Err("usage: /kb link OBS_ID CONCEPT".into());
            }
            KbOp::Link {
                observation,
                concept: concept.into(),
            }
        }
        "search" if !rest.is_empty() => KbOp::Search {
            terms: rest.into(),
            k: None,
        },
        "search" => return Err("usage: /kb search TERMS".into()),
        "inject" => KbOp::Inject((!rest.is_empty()).then(|| rest.to_string())),
        other => return Err(format!("unknown /kb command {other:?}; {KB_USAGE}")),
    })
}

/// Observations `/kb inject` attaches at most.
const INJECT_MAX: usize = 20;

/// Runs a `/kb` command. `Inject` returns the block to attach to the next message.
pub fn run_kb(
    kb: &KnowledgeBase,
    op: KbOp,
    json: bool,
    out: &mut dyn Write,
) -> io::Result<Result<Option<String>, String>> {
    macro_rules! tryf {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => return Ok(Err(e.to_string())),
            }
        };
    }
    match op {
        KbOp::Status => {
            let s = tryf!(kb.status());
            if json {
                writeln!(out, "{}", serde_json::json!(s))?;
            } else {
                writeln!(out, "knowledge base {}", s.path.display())?;
                writeln!(out, "  current project: {}", s.current_project)?;
                writeln!(
                    out,
                    "  {} project(s), {} observation(s) ({} with vectors), {} concept(s), {} link(s)",
                    s.projects, s.observations, s.vectors, s.concepts, s.links
                )?;
                if s.embedder.is_none() {
                    writeln!(out, "  no embedder: search is full-text only")?;
                }
            }
        }
        KbOp::ProjectList => {
            let projects = tryf!(kb.projects());
            if json {
                writeln!(out, "{}", serde_json::json!(projects))?;
            } else {
                for p in projects {
                    let mark = if p.current { "*" } else { " " };
                    let desc = if p.description.is_empty() {
                        String::new()
                    } else {
                        format!(" — {}", p.description)
                    };
                    writeln!(
                        out,
                        "{mark} {} ({} observations){desc}",
                        p.name, p.observations
                    )?;
                }
            }
        }
        KbOp::ProjectAdd { name, description } => {
            tryf!(kb.add_project(&name, &description));
            writeln!(
                out,
                "added project {name} (/kb project use {name} switches to it)"
            )?;
        }
        KbOp::ProjectUse(name) => {
            tryf!(kb.use_project(&name));
            writeln!(out, "current project: {name}")?;
        }
        KbOp::Observe { kind, text } => {
            let o = tryf!(kb.observe(&kind, &text));
            if json {
                writeln!(out, "{}", serde_json::json!(o))?;
            } else {
                writeln!(
                    out,
                    "observation {} ({}) saved in {}",
                    o.id, o.kind, o.project
                )?;
            }
        }
        KbOp::ConceptList => {
            let concepts = tryf!(kb.concepts());
            if json {
                writeln!(out, "{}", serde_json::json!(concepts))?;
            } else if concepts.is_empty() {
                writeln!(out, "no concepts yet (/kb concept add NAME [DESC])")?;
            } else {
                for c in concepts {
                    writeln!(
                        out,
                        "{} ({} linked){}",
                        c.name,
                        c.observations,
                        if c.description.is_empty() {
                            String::new()
                        } else {
                            format!(" — {}", c.description)
                        }
                    )?;
                }
            }
        }
        KbOp::ConceptAdd { name, description } => {
            tryf!(kb.add_concept(&name, &description));
            writeln!(out, "concept {name} saved")?;
        }
        KbOp::Link {
            observation,
            concept,
        } => {
            let created = tryf!(kb.link(observation, &concept));
            writeln!(
                out,
                "linked observation {observation} to {concept}{}",
                if created { " (new concept)" } else { "" }
            )?;
        }
        KbOp::Search { terms, k } => {
            let hits = tryf!(kb.search(&terms, None, k.unwrap_or(10)));
            if json {
                writeln!(out, "{}", serde_json::json!(hits))?;
            } else if hits.is_empty() {
                writeln!(out, "no observation matches {terms:?}")?;
            } else {
                for o in hits {
                    let concepts = if o.concepts.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", o.concepts.join(", "))
                    };
                    writeln!(
                        out,
                        "{:>4} {:.3} {:<10} {}: {}{concepts}",
                        o.id, o.score, o.kind, o.project, o.text
                    )?;
                }
            }
        }
        KbOp::Inject(project) => {
            let project = match project {
                Some(p) => p,
                None => tryf!(kb.current_project()),
            };
            let recent = tryf!(kb.recent(&project, INJECT_MAX));
            if recent.is_empty() {
                writeln!(
                    out,
                    "project {project} has no observations yet (/kb observe TEXT)"
                )?;
                return Ok(Ok(None));
            }
            let mut block = format!("[knowledge: project {project}]\n");
            for o in recent.iter().rev() {
                block.push_str(&observation_line(o));
                block.push('\n');
            }
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"project": project, "block": block})
                )?;
            } else {
                writeln!(
                    out,
                    "{} observation(s) of {project} will be attached to your next message",
                    recent.len()
                )?;
            }
            return Ok(Ok(Some(block)));
        }
    }
    Ok(Ok(None))
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
        assert!(parse_rag("frob")
            .unwrap_err()
            .contains("unknown /rag command"));
    }

    #[test]
    fn kb_commands_parse() {
        assert_eq!(
            parse_kb("observe decision use WAL"),
            Ok(KbOp::Observe {
                kind: "decision".into(),
                text: "use WAL".into()
            })
        );
        assert_eq!(
            parse_kb("observe the fan is loud"),
            Ok(KbOp::Observe {
                kind: "note".into(),
                text: "the fan is loud".into()
            })
        );
        assert_eq!(
            parse_kb("link kb:12 storage engines"),
            Ok(KbOp::Link {
                observation: 12,
                concept: "storage engines".into()
            })
        );
        assert!(parse_kb("link x y").unwrap_err().contains("OBS_ID"));
        assert_eq!(parse_kb("project"), Ok(KbOp::ProjectList));
        assert_eq!(parse_kb("inject"), Ok(KbOp::Inject(None)));
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
