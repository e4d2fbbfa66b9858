//! `/kb …`: parsed here once and run by the REPL and by `harvey kb` alike (the CLI adds
//! `--json`).

use std::io::{self, Write};

use super::subcommand::{settle, split_word, Fail, OrUser};
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

/// Parses the words after `/kb`.
pub fn parse_kb(args: &str) -> Result<KbOp, String> {
    let (sub, rest) = split_word(args);
    Ok(match sub {
        "" | "status" => KbOp::Status,
        "project" | "projects" => parse_project(rest)?,
        "observe" => parse_observe(rest)?,
        "concept" | "concepts" => parse_concept(rest)?,
        "link" => parse_link(rest)?,
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

/// `NAME [DESCRIPTION]` after `add`; `usage` is the error when the name is missing.
fn name_and_description(rest: &str, usage: &str) -> Result<(String, String), String> {
    let (name, description) = split_word(rest);
    if name.is_empty() {
        return Err(usage.into());
    }
    Ok((name.into(), description.into()))
}

fn parse_project(rest: &str) -> Result<KbOp, String> {
    let (verb, rest) = split_word(rest);
    Ok(match verb {
        "" | "list" => KbOp::ProjectList,
        "add" => {
            let (name, description) =
                name_and_description(rest, "usage: /kb project add NAME [DESCRIPTION]")?;
            KbOp::ProjectAdd { name, description }
        }
        "use" if !rest.is_empty() => KbOp::ProjectUse(rest.into()),
        _ => return Err("usage: /kb project list | add NAME [DESC] | use NAME".into()),
    })
}

fn parse_observe(rest: &str) -> Result<KbOp, String> {
    let (first, after) = split_word(rest);
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
    Ok(KbOp::Observe {
        kind,
        text: text.into(),
    })
}

fn parse_concept(rest: &str) -> Result<KbOp, String> {
    let (verb, rest) = split_word(rest);
    Ok(match verb {
        "" | "list" => KbOp::ConceptList,
        "add" => {
            let (name, description) =
                name_and_description(rest, "usage: /kb concept add NAME [DESCRIPTION]")?;
            KbOp::ConceptAdd { name, description }
        }
        _ => return Err("usage: /kb concept list | add NAME [DESC]".into()),
    })
}

fn parse_link(rest: &str) -> Result<KbOp, String> {
    let (id, concept) = split_word(rest);
    let observation = id
        .trim_start_matches("kb:")
        .parse::<i64>()
        .map_err(|_| "usage: /kb link OBS_ID CONCEPT (OBS_ID is a number from /kb search)")?;
    if concept.is_empty() {
        return Err("usage: /kb link OBS_ID CONCEPT".into());
    }
    Ok(KbOp::Link {
        observation,
        concept: concept.into(),
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
    let shown = match op {
        KbOp::Status => status(kb, json, out),
        KbOp::ProjectList => project_list(kb, json, out),
        KbOp::ProjectAdd { name, description } => project_add(kb, &name, &description, out),
        KbOp::ProjectUse(name) => project_use(kb, &name, out),
        KbOp::Observe { kind, text } => observe(kb, &kind, &text, json, out),
        KbOp::ConceptList => concept_list(kb, json, out),
        KbOp::ConceptAdd { name, description } => concept_add(kb, &name, &description, out),
        KbOp::Link {
            observation,
            concept,
        } => link(kb, observation, &concept, out),
        KbOp::Search { terms, k } => search(kb, &terms, k, json, out),
        KbOp::Import => Err(Fail::User(
            "/kb import replaces the open knowledge base: the REPL and `harvey kb import` run it"
                .into(),
        )),
        KbOp::Inject(project) => return settle(inject(kb, project, json, out)),
    };
    settle(shown.map(|()| None))
}

fn status(kb: &KnowledgeBase, json: bool, out: &mut dyn Write) -> Result<(), Fail> {
    let s = kb.status().or_user()?;
    if json {
        writeln!(out, "{}", serde_json::json!(s))?;
        return Ok(());
    }
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
    Ok(())
}

fn project_list(kb: &KnowledgeBase, json: bool, out: &mut dyn Write) -> Result<(), Fail> {
    let projects = kb.projects().or_user()?;
    if json {
        writeln!(out, "{}", serde_json::json!(projects))?;
        return Ok(());
    }
    for p in projects {
        let mark = if p.current { "*" } else { " " };
        writeln!(
            out,
            "{mark} {} ({} observations){}",
            p.name,
            p.observations,
            dash(&p.description)
        )?;
    }
    Ok(())
}

fn project_add(
    kb: &KnowledgeBase,
    name: &str,
    description: &str,
    out: &mut dyn Write,
) -> Result<(), Fail> {
    kb.add_project(name, description).or_user()?;
    writeln!(
        out,
        "added project {name} (/kb project use {name} switches to it)"
    )?;
    Ok(())
}

fn project_use(kb: &KnowledgeBase, name: &str, out: &mut dyn Write) -> Result<(), Fail> {
    kb.use_project(name).or_user()?;
    writeln!(out, "current project: {name}")?;
    Ok(())
}

/// ` — DESCRIPTION`, or nothing for an empty one.
fn dash(description: &str) -> String {
    if description.is_empty() {
        String::new()
    } else {
        format!(" — {description}")
    }
}

fn observe(
    kb: &KnowledgeBase,
    kind: &str,
    text: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Fail> {
    let o = kb.observe(kind, text).or_user()?;
    if json {
        writeln!(out, "{}", serde_json::json!(o))?;
    } else {
        writeln!(
            out,
            "observation {} ({}) saved in {}",
            o.id, o.kind, o.project
        )?;
    }
    Ok(())
}

fn concept_list(kb: &KnowledgeBase, json: bool, out: &mut dyn Write) -> Result<(), Fail> {
    let concepts = kb.concepts().or_user()?;
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
                dash(&c.description)
            )?;
        }
    }
    Ok(())
}

fn concept_add(
    kb: &KnowledgeBase,
    name: &str,
    description: &str,
    out: &mut dyn Write,
) -> Result<(), Fail> {
    kb.add_concept(name, description).or_user()?;
    writeln!(out, "concept {name} saved")?;
    Ok(())
}

fn link(
    kb: &KnowledgeBase,
    observation: i64,
    concept: &str,
    out: &mut dyn Write,
) -> Result<(), Fail> {
    let created = kb.link(observation, concept).or_user()?;
    writeln!(
        out,
        "linked observation {observation} to {concept}{}",
        if created { " (new concept)" } else { "" }
    )?;
    Ok(())
}

fn search(
    kb: &KnowledgeBase,
    terms: &str,
    k: Option<usize>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Fail> {
    let hits = kb.search(terms, None, k.unwrap_or(10)).or_user()?;
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
    Ok(())
}

fn inject(
    kb: &KnowledgeBase,
    project: Option<String>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Option<String>, Fail> {
    let project = match project {
        Some(p) => p,
        None => kb.current_project().or_user()?,
    };
    let recent = kb.recent(&project, INJECT_MAX).or_user()?;
    if recent.is_empty() {
        writeln!(
            out,
            "project {project} has no observations yet (/kb observe TEXT)"
        )?;
        return Ok(None);
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
    Ok(Some(block))
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
