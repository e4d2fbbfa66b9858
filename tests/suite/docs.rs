//! The documentation stays true: every `harvey.yaml` key is on the configuration page, every
//! slash command of `/help` is in the guide, every guide page is reachable from the README,
//! every relative link and anchor resolves, and CHANGELOG.md's newest version is the
//! crate's. No model is needed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use harvey::repl::commands::COMMANDS;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The guide's pages, `docs/*.md`, sorted.
fn guide_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    pages
}

/// Every Markdown file a reader is sent to: the README, the changelog and the guide.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    files.extend(guide_pages());
    files
}

/// The dotted path of every key in a YAML mapping, sections and leaves alike.
fn key_paths(value: &serde_yaml::Value, prefix: &str, out: &mut Vec<(String, bool)>) {
    let Some(map) = value.as_mapping() else {
        return;
    };
    for (key, child) in map {
        let path = format!("{prefix}{}", key.as_str().unwrap());
        let is_section = child.is_mapping();
        if is_section {
            key_paths(child, &format!("{path}."), out);
        }
        out.push((path, is_section));
    }
}

#[test]
fn every_harvey_yaml_key_is_on_the_configuration_page() {
    let yaml: serde_yaml::Value = serde_yaml::from_str(&read("harvey.yaml")).unwrap();
    let mut keys = Vec::new();
    key_paths(&yaml, "", &mut keys);
    let page = read("docs/configuration.md");
    let leaves: Vec<&str> = keys
        .iter()
        .filter(|(_, is_section)| !is_section)
        .map(|(k, _)| k.as_str())
        .collect();
    assert!(
        leaves.len() > 40,
        "only {} keys in harvey.yaml",
        leaves.len()
    );
    let missing: Vec<&&str> = leaves
        .iter()
        .filter(|k| !page.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/configuration.md does not describe {missing:?}"
    );
    for (section, _) in keys.iter().filter(|(k, s)| *s && !k.contains('.')) {
        assert!(
            page.contains(&format!("## `{section}`")),
            "docs/configuration.md has no `## `{section}`` heading"
        );
    }
}

#[test]
fn every_slash_command_of_help_is_in_the_guide() {
    let guide: String = guide_pages()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let mut missing = Vec::new();
    for spec in COMMANDS {
        for name in std::iter::once(spec.name).chain(spec.aliases.iter().copied()) {
            if !guide.contains(&format!("`/{name}")) {
                missing.push(format!("/{name}"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/ never mentions {missing:?}");
}

#[test]
fn every_guide_page_is_linked_from_the_readme() {
    let readme = read("README.md");
    for page in guide_pages() {
        let name = page.file_name().unwrap().to_string_lossy();
        assert!(
            readme.contains(&format!("(docs/{name}")),
            "README.md does not link docs/{name}"
        );
    }
}

#[test]
fn the_readme_stays_short() {
    let lines = read("README.md").lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; move detail into docs/"
    );
}

#[test]
fn the_changelogs_newest_version_is_the_crates() {
    let changelog = read("CHANGELOG.md");
    // `## [Unreleased]` collects what is not in a version yet.
    let newest = changelog
        .lines()
        .filter_map(|l| l.strip_prefix("## ["))
        .filter_map(|l| l.split(']').next())
        .find(|v| *v != "Unreleased")
        .expect("CHANGELOG.md has no `## [VERSION]` heading");
    assert_eq!(newest, env!("CARGO_PKG_VERSION"));
}

#[test]
fn no_page_numbers_the_work_by_stops() {
    let stop = regex::Regex::new(r"(?i)\bstops? [0-9]").unwrap();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        if let Some(m) = stop.find(&text) {
            panic!(
                "{}: {:?} (dates and versions tell history)",
                file.display(),
                m.as_str()
            );
        }
    }
}

/// The lines outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`, and a
/// `-1`, `-2` … for repeats.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for line in prose(text) {
        let Some(title) = line
            .strip_prefix('#')
            .map(|t| t.trim_start_matches('#'))
            .and_then(|t| t.strip_prefix(' '))
        else {
            continue;
        };
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while !seen.insert(anchor.clone()) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
    }
    seen
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = file.parent().unwrap();
        for line in prose(&text) {
            for target in link.captures_iter(line).map(|c| c[1].to_string()) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let linked = if path.is_empty() {
                    file.clone()
                } else {
                    dir.join(path)
                };
                let ok = linked.exists()
                    && (anchor.is_empty()
                        || std::fs::read_to_string(&linked)
                            .is_ok_and(|t| anchors(&t).contains(anchor)));
                if !ok {
                    broken.push(format!("{}: {target}", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_githubs() {
    let a = anchors("# A `model`: x, y\n## Budgets and `/memory status` advice\n## A\n## A\n```\n# not a heading\n```\n");
    for expected in [
        "a-model-x-y",
        "budgets-and-memory-status-advice",
        "a",
        "a-1",
    ] {
        assert!(a.contains(expected), "{expected} not in {a:?}");
    }
    assert!(!a.contains("not-a-heading"));
}
