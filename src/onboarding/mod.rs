//! First-run onboarding: a few questions that become one `workspace_profile` memory, and
//! `project_fact`s read from the manifests the workspace already has.

use std::path::Path;

use crate::memory::types::normalize_description;
use crate::memory::{Draft, MemoryStore, MemoryType, StoreError};

mod commands;
mod depends;

/// The onboarding questions, in order (Enter skips one).
pub const QUESTIONS: [(&str, &str); 4] = [
    ("name", "What should I call you?"),
    (
        "role",
        "What is your role (e.g. backend developer, student)?",
    ),
    ("tools", "Which languages and tools do you mainly use here?"),
    ("notes", "Anything else I should always keep in mind?"),
];

/// Asks the questions through `ask` (which returns `None` when input ends) and turns the
/// answers into one profile memory; `None` when every answer was skipped.
pub fn ask_profile(ask: &mut dyn FnMut(&str) -> Option<String>) -> Option<Draft> {
    let mut answers = Vec::new();
    for (key, question) in QUESTIONS {
        let Some(answer) = ask(question) else { break };
        let answer = answer.trim().to_string();
        if !answer.is_empty() {
            answers.push((key, answer));
        }
    }
    if answers.is_empty() {
        return None;
    }
    let get = |k: &str| {
        answers
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, a)| a.as_str())
    };
    let who = match (get("name"), get("role")) {
        (Some(n), Some(r)) => format!("{n}, {r}"),
        (Some(n), None) => n.to_string(),
        (None, Some(r)) => r.to_string(),
        (None, None) => "the user".to_string(),
    };
    // Every answer goes into the summary, which is what the memory context shows.
    let summary = answers
        .iter()
        .map(|(k, a)| format!("{k}: {a}"))
        .collect::<Vec<_>>()
        .join("; ");
    Some(Draft {
        mtype: MemoryType::WorkspaceProfile.as_str().into(),
        description: format!("User profile: {who}"),
        summary,
        tags: vec!["profile".into()],
        confidence: Some(0.9),
        ..Draft::default()
    })
}

/// Whether the store has no workspace profile yet (onboarding is due).
pub fn needs_profile(store: &MemoryStore) -> bool {
    store
        .list(Some(MemoryType::WorkspaceProfile), None)
        .map(|rows| rows.is_empty())
        .unwrap_or(false)
}

/// Largest manifest read, in bytes.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// One `project_fact` per manifest found at the workspace root.
pub fn manifest_facts(workspace: &Path) -> Vec<Draft> {
    type Reader = fn(&Path, &str) -> Option<Draft>;
    let manifests: [(&str, Reader); 6] = [
        ("Cargo.toml", cargo_fact),
        ("pyproject.toml", |_, text| pyproject_fact(text)),
        ("package.json", |_, text| package_json_fact(text)),
        ("go.mod", go_mod_fact),
        ("pom.xml", |_, text| pom_fact(text)),
        ("codemeta.json", |_, text| codemeta_fact(text)),
    ];
    let read = |name: &str| read_small(workspace, name);
    let mut facts: Vec<Draft> = manifests
        .iter()
        .filter_map(|(name, reader)| reader(workspace, &read(name)?))
        .collect();
    facts.extend(commands::test_fact(workspace));
    facts.extend(read(".git/config").and_then(|t| origin_fact(&t)));
    facts
}

/// The text of the root file `name`: regular files only (a pipe named package.json must
/// not hang the start), and small ones (a manifest is a few KB).
fn read_small(workspace: &Path, name: &str) -> Option<String> {
    crate::regular_file::read_text(&workspace.join(name), Some(MAX_MANIFEST_BYTES))
        .ok()
        .flatten()
}

fn cargo_fact(workspace: &Path, text: &str) -> Option<Draft> {
    let v = text.parse::<toml::Table>().ok()?;
    let pkg = v.get("package");
    let name = pkg.and_then(|p| p.get("name")).and_then(|n| n.as_str());
    let mut entry = Vec::new();
    if let Some(bins) = v.get("bin").and_then(|b| b.as_array()) {
        entry.extend(bins.iter().filter_map(|b| {
            b.get("path")
                .or_else(|| b.get("name"))
                .and_then(|p| p.as_str())
                .map(str::to_string)
        }));
    }
    for f in ["src/main.rs", "src/lib.rs"] {
        if workspace.join(f).is_file() && !entry.iter().any(|e| e == f) {
            entry.push(f.into());
        }
    }
    let description = pkg
        .and_then(|p| p.get("description"))
        .and_then(|d| d.as_str());
    let needs = pkg
        .and_then(|p| p.get("rust-version"))
        .and_then(|v| v.as_str())
        .map(|v| oldest("Rust", v, "rust-version"));
    let f = fact("Cargo.toml", name, "Rust", description, &entry);
    Some(needing(depends::with(f, depends::cargo(&v)), needs))
}

fn pyproject_fact(text: &str) -> Option<Draft> {
    let v = text.parse::<toml::Table>().ok()?;
    let project = v.get("project");
    let field = |key: &str| project.and_then(|p| p.get(key)).and_then(|n| n.as_str());
    let scripts: Vec<String> = project
        .and_then(|p| p.get("scripts"))
        .and_then(|s| s.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    let needs = field("requires-python").map(|v| oldest("Python", v, "requires-python"));
    let f = fact(
        "pyproject.toml",
        field("name"),
        "Python",
        field("description"),
        &scripts,
    );
    Some(needing(depends::with(f, depends::pyproject(&v)), needs))
}

fn package_json_fact(text: &str) -> Option<Draft> {
    let v = serde_json::from_str::<serde_json::Value>(text).ok()?;
    let mut entry: Vec<String> = v["main"].as_str().map(str::to_string).into_iter().collect();
    if let Some(scripts) = v["scripts"].as_object() {
        entry.extend(scripts.keys().map(|k| format!("npm run {k}")));
    }
    let needs = v["engines"]["node"]
        .as_str()
        .map(|n| oldest("Node.js", n, "engines.node"));
    let f = fact(
        "package.json",
        v["name"].as_str(),
        "JavaScript/TypeScript",
        v["description"].as_str(),
        &entry,
    );
    Some(needing(depends::with(f, depends::package_json(&v)), needs))
}

fn go_mod_fact(workspace: &Path, text: &str) -> Option<Draft> {
    let module = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("module "))
        .map(str::trim);
    let entry: Vec<String> = ["main.go", "cmd"]
        .iter()
        .filter(|f| workspace.join(f).exists())
        .map(|f| f.to_string())
        .collect();
    let needs = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("go "))
        .map(|v| oldest("Go", v.trim(), "the go line of go.mod"));
    let f = fact("go.mod", module, "Go", None, &entry);
    Some(needing(depends::with(f, depends::go_mod(text)), needs))
}

/// A Maven project: its coordinates and version, and the oldest Java it compiles for.
fn pom_fact(text: &str) -> Option<Draft> {
    let pom = crate::evidence::markup::read_pom(text)?;
    let name = pom.name.as_deref().or(pom.artifact.as_deref());
    let mut f = fact(
        "pom.xml",
        name,
        "Java (Maven)",
        pom.description.as_deref(),
        &[],
    );
    let coordinates = [pom.group.as_deref(), pom.artifact.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(":");
    if let Some(v) = &pom.version {
        let of = if coordinates.is_empty() {
            String::new()
        } else {
            format!(" of {coordinates}")
        };
        f.summary
            .push_str(&format!(". The Maven build's version{of}: {v}"));
        // Maven's convention: a -SNAPSHOT is the next version, still in development.
        if v.ends_with("-SNAPSHOT") {
            f.summary
                .push_str(" (a SNAPSHOT: the next version in development, not released yet)");
        }
    }
    let needs = pom
        .java
        .as_deref()
        .map(|v| oldest("Java", v, "the compiler settings of pom.xml"));
    Some(needing(depends::with(f, depends::pom(&pom)), needs))
}

fn codemeta_fact(text: &str) -> Option<Draft> {
    let v = serde_json::from_str::<serde_json::Value>(text).ok()?;
    let language = match &v["programmingLanguage"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items
            .iter()
            .filter_map(|i| i.as_str().or_else(|| i["name"].as_str()))
            .collect::<Vec<_>>()
            .join(", "),
        other => other["name"].as_str().unwrap_or("").to_string(),
    };
    Some(fact(
        "codemeta.json",
        v["name"].as_str(),
        &language,
        v["description"].as_str(),
        &[],
    ))
}

/// The git remote origin, without credentials, unless it still looks like a secret.
fn origin_fact(git_config: &str) -> Option<Draft> {
    let url = origin_url(git_config)
        .map(|u| without_credentials(&u))
        .filter(|u| crate::memory::guard::find_secret(u).is_none())?;
    Some(Draft {
        mtype: MemoryType::ProjectFact.as_str().into(),
        description: "The git remote origin of this workspace".into(),
        summary: format!("origin is {url}"),
        tags: vec!["git".into(), "manifest".into()],
        confidence: Some(0.8),
        ..Draft::default()
    })
}

fn fact(
    source: &str,
    name: Option<&str>,
    language: &str,
    description: Option<&str>,
    entry: &[String],
) -> Draft {
    let name = name.filter(|n| !n.trim().is_empty()).unwrap_or("(unnamed)");
    let mut summary = format!("{name} is a {language} project ({source})");
    if let Some(d) = description.filter(|d| !d.trim().is_empty()) {
        summary.push_str(&format!(": {}", d.trim().trim_end_matches('.')));
    }
    if !entry.is_empty() {
        summary.push_str(&format!(". Entry points: {}", entry.join(", ")));
    }
    Draft {
        mtype: MemoryType::ProjectFact.as_str().into(),
        description: format!("Project {name} as described by {source}"),
        summary,
        tags: vec!["project".into(), "manifest".into()],
        confidence: Some(0.8),
        ..Draft::default()
    }
}

/// The oldest version of the language a manifest says the project supports, worded as
/// questions ask for it ("the oldest Python", "the minimum Rust version").
fn oldest(language: &str, requirement: &str, key: &str) -> String {
    let requirement: String = requirement.chars().take(60).collect();
    format!("Minimum (oldest supported) {language} version: {requirement} ({key})")
}

/// `fact` with the language version it needs appended, when the manifest says one.
fn needing(mut fact: Draft, needs: Option<String>) -> Draft {
    if let Some(n) = needs {
        fact.summary.push_str(&format!(". {n}"));
    }
    fact
}

/// `url` of `[remote "origin"]` in a git config.
fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line == "[remote \"origin\"]";
        } else if in_origin {
            if let Some(url) = line
                .strip_prefix("url")
                .map(str::trim)
                .and_then(|l| l.strip_prefix('='))
            {
                return Some(url.trim().to_string());
            }
        }
    }
    None
}

/// `url` without the credentials a remote may carry (`https://user:token@host/…`, or a
/// token alone as the user name): the user part of a `scheme://` URL is dropped. An
/// scp-style `user@host:path` keeps its user (ssh user names are not secrets) unless it
/// holds a password.
fn without_credentials(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find('/').unwrap_or(rest.len());
        return match rest[..authority_end].rfind('@') {
            Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
            None => url.to_string(),
        };
    }
    match url.split_once('@') {
        Some((user, host)) if user.contains(':') => host.to_string(),
        _ => url.to_string(),
    }
}

/// Saves manifest facts that are not in the store yet (an unchanged manifest writes
/// nothing; a changed one updates its fact). Returns the ids written.
pub fn save_manifest_facts(
    store: &mut MemoryStore,
    workspace: &Path,
) -> Result<Vec<String>, StoreError> {
    let mut written = Vec::new();
    for draft in manifest_facts(workspace) {
        let norm = normalize_description(&draft.description);
        let current = store
            .list(Some(MemoryType::ProjectFact), None)?
            .into_iter()
            .find(|r| normalize_description(&r.description) == norm);
        if current.is_some_and(|r| r.summary == draft.summary) {
            continue;
        }
        written.push(store.write(&draft)?.id().to_string());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_stripped_from_remote_urls() {
        let cases = [
            (
                "https://ada:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/ada/x.git",
                "https://github.com/ada/x.git",
            ),
            (
                "https://oauth2:glpat-secret1234@gitlab.com/a/b",
                "https://gitlab.com/a/b",
            ),
            (
                "https://ghp_tokenalone@github.com/a/b",
                "https://github.com/a/b",
            ),
            ("ssh://git@host:2222/a/b.git", "ssh://host:2222/a/b.git"),
            ("https://github.com/a/b@v1", "https://github.com/a/b@v1"),
            ("git@github.com:a/b.git", "git@github.com:a/b.git"),
            ("ada:hunter22@host:a/b.git", "host:a/b.git"),
            ("/srv/git/b.git", "/srv/git/b.git"),
        ];
        for (url, want) in cases {
            assert_eq!(without_credentials(url), want, "{url}");
        }
    }

    #[test]
    fn the_origin_fact_never_holds_a_token() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join(".git")).unwrap();
        std::fs::write(
            ws.path().join(".git/config"),
            "[remote \"origin\"]\n\turl = https://ada:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/ada/x.git\n",
        )
        .unwrap();
        let facts = manifest_facts(ws.path());
        let origin = facts
            .iter()
            .find(|f| f.description.contains("git remote origin"))
            .expect("an origin fact");
        assert_eq!(origin.summary, "origin is https://github.com/ada/x.git");
    }

    #[test]
    fn a_maven_project_is_a_fact_with_its_version_and_oldest_java() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("pom.xml"),
            "<?xml version=\"1.0\"?>\n<project>\n  <groupId>org.ex</groupId>\n  <artifactId>demo</artifactId>\n  <version>2.4.1</version>\n  <properties>\n    <maven.compiler.release>11</maven.compiler.release>\n  </properties>\n</project>\n",
        )
        .unwrap();
        let facts = manifest_facts(ws.path());
        let pom = facts
            .iter()
            .find(|f| f.description.contains("pom.xml"))
            .expect("a pom.xml fact");
        assert_eq!(
            pom.summary,
            "demo is a Java (Maven) project (pom.xml). The Maven build's version of org.ex:demo: 2.4.1. \
             Minimum (oldest supported) Java version: 11 (the compiler settings of pom.xml)"
        );
        // A -SNAPSHOT version is said to be unreleased.
        let text = std::fs::read_to_string(ws.path().join("pom.xml")).unwrap();
        std::fs::write(
            ws.path().join("pom.xml"),
            text.replace("2.4.1<", "2.5.0-SNAPSHOT<"),
        )
        .unwrap();
        let facts = manifest_facts(ws.path());
        let pom = facts
            .iter()
            .find(|f| f.description.contains("pom.xml"))
            .unwrap();
        assert!(
            pom.summary.contains(
                "org.ex:demo: 2.5.0-SNAPSHOT (a SNAPSHOT: the next version in development, not released yet)."
            ),
            "{}",
            pom.summary
        );
    }
}
