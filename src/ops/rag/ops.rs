//! One handler per `/rag` operation; [`super::run_rag`] picks the one to run. Handlers
//! write their report to `out` and fail with [`Fail`]: a user error is shown, a write
//! error ends the command.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{Place, RagOutcome};
use crate::ops::subcommand::{Fail, OrUser};
use crate::rag::ingest::{IngestOptions, IngestReport, Progress};
use crate::rag::{self as ragmod, chunk_line, RagStore};

type Done = Result<RagOutcome, Fail>;

fn outcome(settings_changed: bool) -> Done {
    Ok(RagOutcome { settings_changed })
}

pub(super) fn new(place: &Place<'_>, name: &str, json: bool, out: &mut dyn Write) -> Done {
    let agents = place.agents();
    let store = RagStore::create(&agents, name, place.embedder.clone()).or_user()?;
    let mut settings = place.settings().or_user()?;
    let first = settings.active.is_empty();
    if first {
        settings.active.push(name.to_string());
        settings.save(&agents).or_user()?;
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
    outcome(first)
}

pub(super) fn use_stores(
    place: &Place<'_>,
    names: Vec<String>,
    json: bool,
    out: &mut dyn Write,
) -> Done {
    for n in &names {
        place.open(n).or_user()?;
    }
    let mut settings = place.settings().or_user()?;
    settings.active = names.clone();
    settings.enabled = true;
    settings.save(&place.agents()).or_user()?;
    if json {
        writeln!(out, "{}", serde_json::json!({"active": names}))?;
    } else {
        writeln!(out, "recall uses: {}", names.join(", "))?;
    }
    outcome(true)
}

pub(super) fn list(place: &Place<'_>, json: bool, out: &mut dyn Write) -> Done {
    let agents = place.agents();
    let settings = place.settings().or_user()?;
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
    outcome(false)
}

pub(super) fn status(
    place: &Place<'_>,
    named: Option<String>,
    json: bool,
    out: &mut dyn Write,
) -> Done {
    let settings = place.settings().or_user()?;
    let names: Vec<String> = match named {
        Some(n) => vec![n],
        None => settings.active.clone(),
    };
    let mut all = Vec::new();
    for n in &names {
        let store = place.open(n).or_user()?;
        all.push(store.status().or_user()?);
    }
    if json {
        writeln!(
            out,
            "{}",
            serde_json::json!({"enabled": settings.enabled, "active": settings.active, "stores": all})
        )?;
        return outcome(false);
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
    outcome(false)
}

pub(super) fn switch(place: &Place<'_>, is_on: bool, out: &mut dyn Write) -> Done {
    let mut settings = place.settings().or_user()?;
    settings.enabled = is_on;
    settings.save(&place.agents()).or_user()?;
    writeln!(
        out,
        "RAG in recall: {}",
        if settings.enabled { "on" } else { "off" }
    )?;
    outcome(true)
}

pub(super) fn drop_store(place: &Place<'_>, name: &str, out: &mut dyn Write) -> Done {
    let agents = place.agents();
    let store = place.open(name).or_user()?;
    store.writable().or_user()?;
    let path = store.path().to_path_buf();
    drop(store);
    for suffix in ["", "-wal", "-shm", ".vectors"] {
        let p = PathBuf::from(format!("{}{suffix}", path.display()));
        if p.exists() {
            std::fs::remove_file(&p)
                .map_err(|e| format!("{}: {e}", p.display()))
                .or_user()?;
        }
    }
    writeln!(out, "dropped RAG store {name}")?;
    if !ragmod::written_by_go(&agents, name) {
        let mut settings = place.settings().or_user()?;
        settings.active.retain(|n| n != name);
        settings.save(&agents).or_user()?;
    } else {
        writeln!(
            out,
            "the Go harvey's store {name} (unchanged) is searched again; /rag import {name} copies it anew"
        )?;
    }
    outcome(true)
}

pub(super) fn import(place: &Place<'_>, name: &str, json: bool, out: &mut dyn Write) -> Done {
    let done = ragmod::import::import(&place.agents(), name, place.embedder.clone()).or_user()?;
    if json {
        writeln!(out, "{}", serde_json::json!({ "imported": done }))?;
    } else {
        import_summary(out, &done)?;
    }
    outcome(true)
}

pub(super) fn ingest(
    place: &Place<'_>,
    store: Option<&str>,
    paths: Vec<PathBuf>,
    json: bool,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(Progress),
    cancel: &dyn Fn() -> bool,
) -> Done {
    let name = place.target(store).or_user()?;
    let mut rag = place.open(&name).or_user()?;
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
    let report = rag.ingest(&paths, &opts, progress, cancel).or_user()?;
    if json {
        writeln!(
            out,
            "{}",
            serde_json::json!({"store": name, "report": report})
        )?;
    } else {
        ingest_summary(out, &name, &report)?;
    }
    outcome(false)
}

pub(super) fn query(
    place: &Place<'_>,
    store: Option<&str>,
    text: &str,
    k: Option<usize>,
    json: bool,
    out: &mut dyn Write,
) -> Done {
    let name = place.target(store).or_user()?;
    let rag = place.open(&name).or_user()?;
    let k = k.unwrap_or(place.config.memory.rag.top_k).max(1);
    let hits = rag.query(text, k).or_user()?;
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
    outcome(false)
}

pub(super) fn prune(
    place: &Place<'_>,
    named: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Done {
    let name = place.target(named).or_user()?;
    let rag = place.open(&name).or_user()?;
    let (files, chunks) = rag.prune_missing(place.workspace).or_user()?;
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
    outcome(false)
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
