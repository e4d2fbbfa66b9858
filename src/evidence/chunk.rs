//! Chunks by structure, so that a snippet is a unit a model can quote: code by definition
//! (its doc comment and attributes with it), Markdown and reStructuredText by heading
//! (changelogs by version heading, the heading kept with its entry so a date cannot come
//! from another version), config files by section, task files by target
//! ([`super::tasks`]), anything else by windows of lines.
//! A long unit is cut into pieces that each keep the unit's heading. Pure: text in,
//! chunks out.

use super::terms::{names_in, split_forms};

/// Most lines in one chunk; a longer unit is cut into pieces of this size.
pub const MAX_LINES: usize = 40;

/// What a chunk is, as the ranking and the block treat it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Code,
    Doc,
    Config,
    Text,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Code => "code",
            Kind::Doc => "doc",
            Kind::Config => "config",
            Kind::Text => "text",
        }
    }
}

/// One unit of a file: lines `first..=last` (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub kind: Kind,
    pub first: usize,
    pub last: usize,
    /// The unit's heading: a definition's first line, a section's heading path.
    pub heading: String,
    /// The names it defines (code) or its section names (documents, config).
    pub names: String,
    pub text: String,
}

/// The format a file is chunked by, from its name.
pub fn kind_of(path: &str) -> Kind {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "md" | "markdown" | "rst" | "adoc" | "txt" if !name.starts_with("cmakelists") => Kind::Doc,
        "toml" | "ini" | "cfg" | "conf" | "yml" | "yaml" | "json" | "properties" => Kind::Config,
        "rs" | "py" | "go" | "js" | "mjs" | "cjs" | "ts" | "tsx" | "jsx" | "c" | "h" | "cc"
        | "cpp" | "hpp" | "cxx" | "java" | "kt" | "kts" | "rb" | "cs" | "swift" | "php"
        | "scala" | "lua" | "sh" | "bash" | "zsh" | "pl" | "ex" | "exs" | "zig" | "dart" | "m"
        | "mm" | "r" | "jl" | "hs" | "ml" | "clj" | "vue" | "svelte" | "cmake" => Kind::Code,
        _ if is_prose_name(&name) => Kind::Doc,
        _ if super::tasks::is_task_file(&name) || super::markup::is_markup(&name) => Kind::Config,
        _ => Kind::Text,
    }
}

/// Files without an extension that are documents (`CHANGES`, `README`, `NEWS`).
fn is_prose_name(name: &str) -> bool {
    [
        "readme",
        "changes",
        "changelog",
        "history",
        "news",
        "contributing",
        "authors",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// The chunks of `text`, the file at `path`.
pub fn chunks(path: &str, text: &str) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    let kind = kind_of(path);
    let units = match kind {
        Kind::Code => super::code::code_units(&lines),
        Kind::Doc => doc_units(&lines),
        Kind::Config if super::tasks::is_task_file(path) => super::tasks::target_units(&lines),
        Kind::Config if super::markup::is_markup(path) => super::markup::element_units(&lines),
        Kind::Config => config_units(&lines, path.rsplit('.').next().unwrap_or("")),
        Kind::Text => vec![Unit::plain(0, lines.len())],
    };
    let mut out = Vec::new();
    for unit in units {
        for (from, to) in pieces(unit.start, unit.end) {
            let body = lines[from..to].join("\n");
            if body.trim().is_empty() {
                continue;
            }
            out.push(Chunk {
                kind,
                first: from + 1,
                last: to,
                heading: unit.heading.clone(),
                names: unit.names.clone(),
                text: body,
            });
        }
    }
    out
}

/// A unit before it is cut to size: lines `start..end` (0-based, end exclusive).
pub(super) struct Unit {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) heading: String,
    pub(super) names: String,
}

impl Unit {
    pub(super) fn plain(start: usize, end: usize) -> Self {
        Self {
            start,
            end,
            heading: String::new(),
            names: String::new(),
        }
    }
}

/// `start..end` cut into pieces of at most [`MAX_LINES`].
fn pieces(start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = start;
    while from < end {
        let to = (from + MAX_LINES).min(end);
        out.push((from, to));
        from = to;
    }
    out
}

/// Units that start at each of `starts` (sorted line indexes), the lines before the first
/// one a unit of their own.
pub(super) fn units_at(lines: &[&str], starts: &[(usize, String, String)]) -> Vec<Unit> {
    let mut out = Vec::new();
    let first = starts.first().map_or(lines.len(), |s| s.0);
    if first > 0 {
        out.push(Unit::plain(0, first));
    }
    for (i, (start, heading, names)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(lines.len(), |s| s.0);
        out.push(Unit {
            start: *start,
            end,
            heading: heading.clone(),
            names: names.clone(),
        });
    }
    out
}

/// Documents: a unit per heading (Markdown `#`, or a reStructuredText/Setext title
/// underlined with `=`, `-`, `~`, `^`, `*`, `+`), its heading path as its heading.
fn doc_units(lines: &[&str]) -> Vec<Unit> {
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut starts = Vec::new();
    let mut in_fence = false;
    let mut underline_levels: Vec<char> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if in_fence {
            continue;
        }
        let heading = if let Some(rest) = t.strip_prefix('#') {
            let level = 1 + rest.chars().take_while(|&c| c == '#').count();
            let title = rest.trim_start_matches('#').trim();
            (level <= 6 && rest.starts_with(['#', ' ']) && !title.is_empty())
                .then(|| (i, level, title.to_string()))
        } else {
            underlined(lines, i).map(|c| {
                let level = match underline_levels.iter().position(|&u| u == c) {
                    Some(p) => p + 1,
                    None => {
                        underline_levels.push(c);
                        underline_levels.len()
                    }
                };
                (i, level, t.to_string())
            })
        };
        if let Some((at, level, title)) = heading {
            path.retain(|(l, _)| *l < level);
            path.push((level, title.clone()));
            let full: Vec<&str> = path.iter().map(|(_, t)| t.as_str()).collect();
            starts.push((at, full.join(" > "), title));
        }
    }
    units_at(lines, &starts)
}

/// The underline character when line `i` is a title underlined on the next line.
fn underlined(lines: &[&str], i: usize) -> Option<char> {
    let title = lines[i].trim();
    let under = lines.get(i + 1)?.trim();
    let c = under.chars().next()?;
    let is_rule = "=-~^*+#".contains(c) && under.chars().all(|x| x == c) && under.len() >= 3;
    (is_rule && !title.is_empty() && !title.starts_with(['-', '*', '|', '`', '='])).then_some(c)
}

/// Config: a unit per `[section]` (TOML, INI) or per top-level key (YAML, JSON; `ext`
/// says which).
fn config_units(lines: &[&str], ext: &str) -> Vec<Unit> {
    let ext = ext.to_ascii_lowercase();
    let (yaml, json) = (ext == "yml" || ext == "yaml", ext == "json");
    let starts: Vec<(usize, String, String)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let t = line.trim_end();
            let section = t.starts_with('[') && t.ends_with(']') && !t.contains(',');
            let yaml_key = yaml
                && !t.starts_with([' ', '\t', '#', '-', '{', '}', '[', ']'])
                && t.contains(':')
                && !t.is_empty();
            let json_key =
                json && t.starts_with("  \"") && !t.starts_with("   ") && t.contains("\":");
            (section || yaml_key || json_key).then(|| {
                let head = t.trim().to_string();
                // A section's words too (`devDependencies`, `[dev-dependencies]` are
                // dependencies), so a word that stands for the section finds it.
                let names = format!("{} {}", names_in(&head).join(" "), split_forms(&head));
                (i, head, names.trim().to_string())
            })
        })
        .collect();
    // Many tiny keys (a flat YAML file) are better read together.
    let mut units = if starts.len() > 3 && starts.len() * 4 > lines.len() {
        vec![Unit::plain(0, lines.len())]
    } else {
        units_at(lines, &starts)
    };
    // A setting's key is the name a config unit defines, as a function's is in code: the
    // `version`, `rust-version` or `engines`/`node` a question names is found in the unit
    // that sets it, not in every line that mentions the word. Not YAML's: its nested keys
    // are a workflow's or a chart's structure (`run`, `with`, `node-version` in every job).
    for unit in units.iter_mut().filter(|_| !yaml) {
        let mut names: Vec<String> = unit.names.split_whitespace().map(str::to_string).collect();
        for key in lines[unit.start..unit.end]
            .iter()
            .filter_map(|l| config_key(l))
        {
            if names.len() >= MAX_CONFIG_NAMES {
                break;
            }
            if !names.iter().any(|n| n == key) {
                names.push(key.to_string());
            }
        }
        unit.names = names.join(" ");
    }
    units
}

/// At most this many names per config unit (its section's and its keys').
const MAX_CONFIG_NAMES: usize = 24;

/// The key a config line sets: `key = …` (TOML, INI), `key: …` (YAML, a list item's too)
/// or `"key": …` (JSON). `None` for comments, section headers and values alone.
fn config_key(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let t = t.strip_prefix("- ").unwrap_or(t);
    if t.starts_with(['#', ';', '[', '{', '}']) || t.starts_with("//") {
        return None;
    }
    let key = if let Some(rest) = t.strip_prefix('"') {
        let (key, after) = rest.split_once('"')?;
        after.trim_start().starts_with(':').then_some(key)?
    } else {
        let end = t.find(['=', ':'])?;
        if t[end + 1..].starts_with("//") {
            return None; // a URL, not a key
        }
        t[..end].trim_end()
    };
    let plain = !key.is_empty()
        && key.len() <= 40
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    plain.then_some(key)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// `(first line, last line, heading)` of each chunk (the code chunker's tests too).
    pub(in crate::evidence) fn headings(path: &str, text: &str) -> Vec<(usize, usize, String)> {
        chunks(path, text)
            .into_iter()
            .map(|c| (c.first, c.last, c.heading))
            .collect()
    }

    #[test]
    fn markdown_by_heading_with_its_path() {
        let md = "# Tool\nintro\n## Install\nrun it\n```\n# not a heading\n```\n## Usage\nuse it\n";
        let h = headings("README.md", md);
        assert_eq!(
            h,
            [
                (1, 2, "Tool".into()),
                (3, 7, "Tool > Install".into()),
                (8, 9, "Tool > Usage".into())
            ]
        );
    }

    #[test]
    fn changelog_versions_keep_their_heading_and_date() {
        let rst = "Changes\n=======\n\nVersion 2.2.0\n-------------\n\nReleased 2024-04-16\n\n- one\n\nVersion 2.1.2\n-------------\n\nReleased 2023-03-06\n";
        let c = chunks("CHANGES.rst", rst);
        let v22 = c
            .iter()
            .find(|c| c.heading.ends_with("Version 2.2.0"))
            .unwrap();
        assert!(v22.text.contains("2024-04-16") && !v22.text.contains("2023-03-06"));
        let md = "4.19.0 / 2024-03-20\n==========\n\n  * fix\n\n4.18.3 / 2024-02-26\n==========\n";
        let h = headings("History.md", md);
        assert_eq!(h[0].2, "4.19.0 / 2024-03-20");
        assert_eq!(h[1].2, "4.18.3 / 2024-02-26");
    }

    #[test]
    fn config_by_section() {
        let toml = "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\nclap = \"4\"\nserde = \"1\"\n";
        let h = headings("Cargo.toml", toml);
        assert_eq!(
            h,
            [(1, 4, "[package]".into()), (5, 7, "[dependencies]".into())]
        );
    }

    #[test]
    fn a_config_unit_names_the_keys_it_sets() {
        let toml = "[package]\nname = \"x\"\nversion = \"0.1.0\"\nrust-version = \"1.80\"\n# note = 1\n\n[dependencies]\nclap = \"4\"\n";
        let c = chunks("Cargo.toml", toml);
        // `package` is a keyword to the code-name reader, so the section adds no name.
        assert_eq!(c[0].names, "name version rust-version");
        assert_eq!(c[1].names, "dependencies clap");
        let json = "{\n  \"version\": \"5.2.1\",\n  \"engines\": {\n    \"node\": \">= 18\"\n  },\n  \"files\": [\n    \"lib/\"\n  ]\n}\n";
        let c = chunks("package.json", json);
        let engines = c.iter().find(|c| c.heading.contains("engines")).unwrap();
        assert_eq!(engines.names, "engines node");
        let ini = "[metadata]\nname = x\n\n[options]\npython_requires = >=3.8\n";
        let c = chunks("setup.cfg", ini);
        assert_eq!(c[1].names, "options python_requires");
        let yaml = "jobs:\n  test:\n    steps:\n      - run: cargo test\n";
        assert_eq!(chunks("ci.yml", yaml)[0].names, "jobs");
        assert_eq!(config_key("      - run: cargo test"), Some("run"));
        assert_eq!(config_key("https://example.com/x"), None);
        assert_eq!(config_key("  a value with spaces = 1"), None);
    }

    #[test]
    fn long_units_are_cut_and_keep_the_heading() {
        let md: String = std::iter::once("# Big\n".to_string())
            .chain((0..100).map(|i| format!("line {i}\n")))
            .collect();
        let c = chunks("doc.md", &md);
        assert_eq!(c.len(), 3);
        assert!(c
            .iter()
            .all(|c| c.heading == "Big" && c.last - c.first < MAX_LINES));
        assert_eq!(c.last().unwrap().last, 101);
    }
}
