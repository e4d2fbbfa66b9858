//! `/kb …`: parsed here once and run by the REPL and by `harvey kb` alike (the CLI adds
//! `--json`).

use std::io::{self, Write};

use crate::kb::{observation_line, KnowledgeBase, KINDS};

/// What `/kb` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KbOp {
    Status,
    ProjectList,
    ProjectAdd {
        name: String,
        description: String,
    },
    ProjectUse(String),
    Observe {
        kind: String,
        text: String,
    },
    ConceptList,
    ConceptAdd {
        name: String,
        description: String,
    },
    Link {
        observation: i64,
        concept: String,
    },
    Search {
        terms: String,
        k: Option<usize>,
    },
    Inject(Option<String>),
    /// Copy the Go tool's knowledge base into harvey's (run before one is open: see
    /// [`import_summary`]).
    Import,
}

pub const KB_USAGE: &str = "/kb status | project list|add NAME [DESC]|use NAME | observe [KIND] TEXT | concept list|add NAME [DESC] | link OBS_ID CONCEPT | search TERMS | inject [PROJECT] | import";

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
        "import" if rest.is_empty() => KbOp::Import,
        "import" => {
            return Err("usage: /kb import (copies agents/knowledge.db of the Go harvey)".into())
        }
        other => return Err(format!("unknown /kb command {other:?}; {KB_USAGE}")),
    })
}

/// What `/kb import` did, for the REPL and `harvey kb import`.
pub fn import_summary(
    out: &mut dyn Write,
    done: &crate::kb::import::Imported,
    json: bool,
) -> io::Result<()> {
    if json {
        return writeln!(out, "{}", serde_json::json!({ "imported": done }));
    }
    writeln!(
        out,
        "imported the Go harvey's knowledge base: {} project(s), {} observation(s), {} concept(s), {} link(s); {} embedded ({})",
        done.projects,
        done.observations,
        done.concepts,
        done.links,
        done.vectors,
        done.embedder.as_deref().unwrap_or("no embedder: full-text search only")
    )?;
    writeln!(
        out,
        "harvey uses {} from now on, and /kb observe adds to it; {} is unchanged and no longer used",
        done.path.display(),
        done.from.display()
    )
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
        KbOp::Import => return Ok(Err(
            "/kb import replaces the open knowledge base: the REPL and `harvey kb import` run it"
                .into(),
        )),
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
        assert_eq!(parse_kb("import"), Ok(KbOp::Import));
    }
}
