//! `/memory …` and `/context`.

use std::io::{self, Write};

use crate::app::App;
use crate::memory::index::Row;
use crate::memory::{Draft, MemoryStore, MemoryType};
use crate::ops::memory::{self as ops, ListRequest, RecallRequest};
use crate::session::mining;

const USAGE: &str = "usage: /memory list [--type T] [--kind K] | show ID | add TYPE TEXT | edit ID | forget ID | flag ID | recall QUERY | index | mine [FILE] [--force] | profile show|edit | status";

pub fn command(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let (sub, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    let rest = rest.trim();
    if sub == "status" || sub.is_empty() {
        return status(app, out);
    }
    let Some(store) = app.memory_mut() else {
        return writeln!(
            out,
            "memory is off (memory.enabled is false, or the store could not be opened — see the notes at startup)"
        );
    };
    match sub {
        "list" => list(store, rest, out),
        "show" => show(store, rest, out),
        "add" => add(store, rest, out),
        "edit" => edit(store, rest, out),
        "forget" => match ops::forget(store, rest) {
            Ok(()) => writeln!(out, "archived {rest}: it will not be recalled again"),
            Err(e) => writeln!(out, "error: {e}"),
        },
        "flag" => match ops::flag(store, rest) {
            Ok(f) if f.archived => writeln!(
                out,
                "{rest}: confidence {:.1} — archived (at or below 0.2)",
                f.confidence
            ),
            Ok(f) => writeln!(out, "{rest}: confidence now {:.1}", f.confidence),
            Err(e) => writeln!(out, "error: {e}"),
        },
        "index" => match ops::index(store) {
            Ok(text) => write!(out, "{text}"),
            Err(e) => writeln!(out, "error: {e}"),
        },
        "recall" => recall(app, rest, out),
        "mine" => mine(app, rest, out),
        "profile" => profile(store, rest, out),
        other => writeln!(out, "unknown /memory subcommand {other:?}\n{USAGE}"),
    }
}

/// `/memory mine [FILE] [--force]`: proposals from a recorded session (the newest one not
/// mined yet by default), reviewed one by one: accept, edit, skip or replace an id.
fn mine(app: &mut App, args: &str, out: &mut impl Write) -> io::Result<()> {
    let force = args.split_whitespace().any(|w| w == "--force");
    let name = args.split_whitespace().find(|w| *w != "--force");
    let (file, exchanges) = match session_to_mine(app, name, force) {
        Ok(found) => found,
        Err(message) => return writeln!(out, "{message}"),
    };
    writeln!(
        out,
        "[mining {file}: {} exchanges… (Ctrl-C to stop)]",
        exchanges.len()
    )?;
    app.abort().clear();
    let workspace = mining::workspace_texts(app.workspace(), &exchanges);
    let abort = app.abort().clone();
    let mined = mining::mine_report(app.engine_mut(), &exchanges, &workspace, &abort);
    let mut mined = match mined {
        Ok(m) => m,
        Err(e) => return writeln!(out, "error: {e}"),
    };
    if let Some(index) = app.sessions() {
        let _ = index.mark_mined(&file);
    }
    let ask = app.asker();
    let Some(store) = app.memory_mut() else {
        return Ok(());
    };
    mining::screen(store, &mut mined);
    for r in &mined.rejected {
        writeln!(out, "  dropped ({}): {}", r.reason.as_str(), r.description)?;
    }
    if mined.drops().total() > 0 {
        writeln!(
            out,
            "  {} dropped: {}",
            mined.drops().total(),
            mined.drops()
        )?;
    }
    if mined.proposals.is_empty() {
        return writeln!(out, "no new memories proposed");
    }
    for (i, p) in mined.proposals.into_iter().enumerate() {
        let d = p.draft;
        writeln!(
            out,
            "{}. [{}] {}: {}\n   evidence: \"{}\"",
            i + 1,
            d.mtype,
            d.description,
            d.summary,
            p.evidence
        )?;
        let Some(ask) = ask.as_ref() else {
            writeln!(
                out,
                "   (not saved: reviewing needs an interactive session)"
            )?;
            continue;
        };
        match review(ask.as_ref(), d) {
            Ok(mut d) => {
                d.source_session = Some(file.clone());
                match store.write(&d) {
                    Ok(o) => writeln!(out, "   {}", o.describe())?,
                    Err(e) => writeln!(out, "   error: {e}")?,
                }
            }
            Err(skipped) => writeln!(out, "   {skipped}")?,
        }
    }
    Ok(())
}

/// The session `/memory mine` works on (named, or the newest not yet mined) and its
/// exchanges; `Err` is the message to show instead.
fn session_to_mine(
    app: &App,
    name: Option<&str>,
    force: bool,
) -> Result<(String, Vec<(String, String)>), String> {
    let Some(index) = app.sessions() else {
        return Err("the sessions index is unavailable".into());
    };
    let file = match name {
        Some(n) => app
            .find_session(Some(n))
            .map_err(|e| format!("error: {e}"))?
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        None => index
            .recent(100)
            .unwrap_or_default()
            .into_iter()
            .find(|e| !index.is_mined(&e.file).unwrap_or(true))
            .map(|e| e.file)
            .ok_or(
                "every recorded session has been mined (/memory mine FILE --force mines one again)",
            )?,
    };
    if !force && index.is_mined(&file).unwrap_or(false) {
        return Err(format!(
            "{file} was mined already; add --force to mine it again"
        ));
    }
    let path = index.sessions_dir().join(&file);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("error: {}: {e}", path.display()))?;
    let exchanges = crate::session::fountain::parse(&text)
        .exchanges
        .iter()
        .map(|e| (e.user.clone(), e.reply.clone()))
        .collect();
    Ok((file, exchanges))
}

/// Asks the user about one proposed memory: the draft to save (accepted, with a new
/// description, or replacing an id), or why it is skipped.
fn review(
    ask: &dyn Fn(&str) -> Option<String>,
    mut d: crate::memory::Draft,
) -> Result<crate::memory::Draft, &'static str> {
    let answer = ask("   accept / edit / skip / replace ID? [a/e/s/r ID] ").unwrap_or_default();
    let mut words = answer.split_whitespace();
    match words.next().map(str::to_lowercase).as_deref() {
        Some("a") | Some("accept") => Ok(d),
        Some("e") | Some("edit") => {
            let text = ask("   description: ").filter(|t| !t.trim().is_empty());
            let text = text.ok_or("skipped")?;
            d.description = text.trim().to_string();
            Ok(d)
        }
        Some("r") | Some("replace") => {
            let id = words.next().ok_or("skipped (replace needs an id)")?;
            d.supersedes = vec![id.to_string()];
            Ok(d)
        }
        _ => Err("skipped"),
    }
}

/// `/memory profile show|edit`: the workspace profile memories.
fn profile(store: &mut MemoryStore, args: &str, out: &mut impl Write) -> io::Result<()> {
    let profile = ListRequest {
        mtype: Some(MemoryType::WorkspaceProfile),
        ..ListRequest::default()
    };
    let rows = match ops::list(store, &profile) {
        Ok(r) => r,
        Err(e) => return writeln!(out, "error: {e}"),
    };
    match args {
        "" | "show" if rows.is_empty() => writeln!(
            out,
            "no workspace profile yet: /memory add workspace_profile TEXT, or /memory profile edit"
        ),
        "" | "show" => {
            for r in &rows {
                writeln!(out, "{}  {}", r.id, crate::memory::recall::memory_line(r))?;
            }
            Ok(())
        }
        "edit" => {
            let id = match rows.first() {
                Some(r) => r.id.clone(),
                None => {
                    let draft = Draft {
                        mtype: MemoryType::WorkspaceProfile.as_str().into(),
                        description: "User profile".into(),
                        summary: "name: ; role: ; tools: ; notes: ".into(),
                        ..Draft::default()
                    };
                    match ops::add(store, &draft) {
                        Ok(o) => o.id().to_string(),
                        Err(e) => return writeln!(out, "error: {e}"),
                    }
                }
            };
            edit(store, &id, out)
        }
        other => writeln!(out, "usage: /memory profile show|edit (not {other:?})"),
    }
}

/// `--type T` and `--kind K` after `/memory list`; `Err` is the message to show.
fn list_request(args: &str) -> Result<ListRequest, String> {
    let mut request = ListRequest::default();
    let mut words = args.split_whitespace();
    while let Some(w) = words.next() {
        match (w, words.next()) {
            ("--type", Some(t)) => request.mtype = Some(ops::parse_type(t)?),
            ("--kind", Some(k)) => request.kind = Some(k.to_string()),
            _ => return Err("usage: /memory list [--type T] [--kind K]".into()),
        }
    }
    Ok(request)
}

fn list(store: &MemoryStore, args: &str, out: &mut impl Write) -> io::Result<()> {
    let request = match list_request(args) {
        Ok(r) => r,
        Err(message) => return writeln!(out, "{message}"),
    };
    match ops::list(store, &request) {
        Ok(rows) if rows.is_empty() => {
            writeln!(out, "no memories (add one with /memory add TYPE TEXT)")
        }
        Ok(rows) => {
            for r in &rows {
                writeln!(out, "{}", list_line(r))?;
            }
            writeln!(out, "{} memories", rows.len())
        }
        Err(e) => writeln!(out, "error: {e}"),
    }
}

/// `id  type/kind  confidence  description`
pub fn list_line(r: &Row) -> String {
    let kind = r
        .kind
        .as_deref()
        .map(|k| format!("/{k}"))
        .unwrap_or_default();
    format!(
        "{:<26} {:<28} {:.2}  {}",
        r.id,
        format!("{}{kind}", r.mtype),
        r.confidence,
        r.description
    )
}

fn show(store: &MemoryStore, id: &str, out: &mut impl Write) -> io::Result<()> {
    match ops::show(store, id) {
        Ok(shown) => {
            writeln!(out, "{}", shown.path.display())?;
            write!(out, "{}", shown.text)
        }
        Err(e) => writeln!(out, "error: {e}"),
    }
}

fn add(store: &mut MemoryStore, args: &str, out: &mut impl Write) -> io::Result<()> {
    let Some((t, text)) = args.split_once(char::is_whitespace) else {
        return writeln!(
            out,
            "usage: /memory add TYPE TEXT (TYPE: {})",
            MemoryType::choices()
        );
    };
    let draft = Draft {
        mtype: t.to_string(),
        description: text.trim().to_string(),
        source_session: None,
        ..Draft::default()
    };
    match ops::add(store, &draft) {
        Ok(outcome) => writeln!(out, "{}", outcome.describe()),
        Err(e) => writeln!(out, "error: {e}"),
    }
}

fn edit(store: &mut MemoryStore, id: &str, out: &mut impl Write) -> io::Result<()> {
    let path = match store.path_of(id) {
        Ok(p) => p,
        Err(e) => return writeln!(out, "error: {e}"),
    };
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let mut parts = editor.split_whitespace();
    let Some(program) = parts.next() else {
        return writeln!(out, "error: $EDITOR is empty");
    };
    let status = std::process::Command::new(program)
        .args(parts)
        .arg(&path)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            return writeln!(
                out,
                "the editor exited with {s}; the memory was not re-indexed"
            )
        }
        Err(e) => return writeln!(out, "error: cannot start {program:?} ($EDITOR): {e}"),
    }
    match store.reindex(id) {
        Ok(row) => writeln!(out, "re-indexed {}: {}", row.id, row.description),
        Err(e) => writeln!(
            out,
            "error: the edited file does not load: {e}\nfix it with /memory edit {id}; until then the index keeps the previous version"
        ),
    }
}

/// What the session-start injection packs: the budget has no item cap (`top_k` is the
/// length of `/memory recall` lists only).
fn budget_line(n_ctx: u32, pct: f64, budget: usize, share: f64, top_k: usize) -> String {
    let own = crate::memory::recall::budget(n_ctx, pct);
    let cut = if budget < own {
        format!(" (cut to {budget} by engine.fixed_prompt_pct)")
    } else {
        String::new()
    };
    format!(
        "budget    n_ctx {n_ctx} × budget_pct {pct} = {own} tokens{cut}: factual items first (up to {:.0}% of it), then as many relevant items as fit (no item cap; /memory recall lists {top_k})",
        share * 100.0
    )
}

/// `/memory recall QUERY`: the session-start ranking as a list of `memory.top_k` items
/// (after the factual ones), from every source — the same list as `harvey memory recall`.
fn recall(app: &App, query: &str, out: &mut impl Write) -> io::Result<()> {
    let Some(store) = app.memory() else {
        return Ok(());
    };
    if query.is_empty() {
        return writeln!(out, "usage: /memory recall QUERY");
    }
    let request = RecallRequest {
        query: query.to_string(),
        k: None,
        budget: None,
    };
    let limits = ops::recall_limits(&app.config().memory, &request);
    match app.recall_with(store, query, limits) {
        Ok(found) if found.items.is_empty() => writeln!(out, "nothing matches {query:?}"),
        Ok(found) => {
            writeln!(out, "rank  score  tokens  source  id / text")?;
            for (i, p) in found.items.iter().enumerate() {
                let c = &p.candidate;
                writeln!(
                    out,
                    "{:>4}  {:>5.2}  {:>6}  {}  {} ({})\n      {}",
                    i + 1,
                    c.score,
                    p.tokens,
                    c.source,
                    c.id,
                    c.section.header().trim_matches(['[', ']']),
                    c.text
                )?;
            }
            Ok(())
        }
        Err(e) => writeln!(out, "error: {e}"),
    }
}

fn status(app: &App, out: &mut impl Write) -> io::Result<()> {
    let m = &app.config().memory;
    let n_ctx = app.engine().info().n_ctx;
    let Some(store) = app.memory() else {
        return writeln!(out, "memory is off");
    };
    let status = ops::status(store);
    writeln!(out, "store     {}", status.dir.display())?;
    match status.counts {
        Ok(counts) => {
            for (t, active, archived) in counts {
                writeln!(
                    out,
                    "  {:<18} {active:>5} active  {archived:>5} archived",
                    t.as_str()
                )?;
            }
        }
        Err(e) => writeln!(out, "error: {e}")?,
    }
    match status.vectors {
        Some(v) => {
            let (with, without) = v.coverage.unwrap_or((0, 0));
            writeln!(
                out,
                "vectors   {with} of {} active memories ({})",
                with + without,
                v.model
            )?;
        }
        None => writeln!(out, "vectors   none: no embedder, recall is full-text only")?,
    }
    writeln!(out, "sources   {}", app.sources(store).names().join(", "))?;
    writeln!(
        out,
        "{}",
        budget_line(
            n_ctx,
            m.budget_pct,
            app.memory_budget(),
            m.factual_share,
            m.top_k
        )
    )?;
    writeln!(
        out,
        "inject    {}",
        if m.inject_on_start {
            "at the first message of every session"
        } else {
            "off (memory.inject_on_start: false)"
        }
    )?;
    match app.injection() {
        Some(i) => writeln!(out, "this session: {}", i.summary_line())?,
        None => writeln!(
            out,
            "this session: not injected yet (it is built from your first message)"
        )?,
    }
    let stats = app
        .sessions()
        .and_then(|s| s.stats().ok())
        .unwrap_or_default();
    budget_advice(out, &stats, m.budget_pct)
}

/// The advice block of `/memory status` (numbers first, then what they suggest).
pub fn budget_advice(
    out: &mut impl Write,
    stats: &[crate::session::SessionStats],
    budget_pct: f64,
) -> io::Result<()> {
    use crate::session::advice::{advise, MIN_SESSIONS};
    match advise(stats, budget_pct) {
        None => writeln!(
            out,
            "advice    after {MIN_SESSIONS} sessions ({} so far): how full the memory context gets and how fast replies are",
            stats.len()
        ),
        Some(a) => {
            writeln!(
                out,
                "advice    over {} sessions: memory context {:.0}% full on average, {:.1} tok/s, rolling summary in {:.0}% of sessions",
                a.sessions,
                a.saturation * 100.0,
                a.avg_tokens_per_sec,
                a.compressed_share * 100.0
            )?;
            for line in a.lines {
                writeln!(out, "          {line}")?;
            }
            Ok(())
        }
    }
}

pub fn context(app: &App, out: &mut impl Write) -> io::Result<()> {
    match app.injection() {
        Some(i) if !i.text.is_empty() => {
            writeln!(
                out,
                "[memory context: {} of {} tokens, {} items]",
                i.tokens,
                i.budget,
                i.items.len()
            )?;
            write!(out, "{}", i.text)
        }
        Some(_) => writeln!(
            out,
            "no memory context this session: nothing matched the first message"
        ),
        None => writeln!(
            out,
            "no memory context yet: it is recalled from your first message{}",
            if app.config().memory.enabled && app.config().memory.inject_on_start {
                ""
            } else {
                " (injection is off in the config)"
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SessionStats;

    #[test]
    fn the_budget_line_says_what_the_budget_packs() {
        let line = budget_line(4096, 0.25, 1024, 0.4, 5);
        assert_eq!(
            line,
            "budget    n_ctx 4096 × budget_pct 0.25 = 1024 tokens: factual items first (up to 40% of it), then as many relevant items as fit (no item cap; /memory recall lists 5)"
        );
        assert!(!line.contains("up to 5 relevant items"));
    }

    fn rows(n: usize, injected: i64, tps: f64, compressed: bool) -> Vec<SessionStats> {
        (0..n)
            .map(|i| SessionStats {
                session_id: format!("s{i}"),
                budget_tokens: 1024,
                injected_tokens: injected,
                compressed,
                avg_tokens_per_sec: tps,
                recorded_at: String::new(),
            })
            .collect()
    }

    fn render(stats: &[SessionStats]) -> String {
        let mut out = Vec::new();
        budget_advice(&mut out, stats, 0.25).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn advice_snapshots() {
        insta::assert_snapshot!("advice_too_few", render(&rows(3, 1000, 5.0, false)));
        insta::assert_snapshot!("advice_full", render(&rows(12, 1000, 5.0, true)));
        insta::assert_snapshot!("advice_slow", render(&rows(10, 800, 1.2, false)));
        insta::assert_snapshot!("advice_fine", render(&rows(10, 400, 9.0, false)));
    }
}
