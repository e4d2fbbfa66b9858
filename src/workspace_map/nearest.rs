//! Paths that forgive a small model: a path that does not exist is matched against the
//! workspace listing ([`super::list`]) before the read tools give up.
//!
//! In order, the first rule that finds anything decides: the workspace's own folder name
//! in front (`myproj/src/main.rs`), a difference in case only (`readme.md`), the same
//! path further down the tree (`main.rs` → `src/main.rs`), the same file name in another
//! folder (`docs/README.md` → `README.md`), the path without its extension
//! (`commands_memory` → `commands_memory.go`), the same name with another
//! extension or suffix (`LICENSE.md` → `LICENSE-MIT`, `LICENSE-APACHE`). Exactly one
//! match is read and the result says which path that was; several (or only similar
//! names) fail with the nearest real paths.
//!
//! The sandbox never loosens: only a `NotFound` from [`crate::sandbox::resolve`] is
//! forgiven (never a refusal), candidates come from the listing (which holds no secret,
//! nothing in `agents/` or `.git/`, nothing through a symlink), and the chosen path is
//! resolved by the sandbox again.

use std::path::{Path, PathBuf};

use crate::sandbox::{resolve, SandboxError};

/// What the tool expects at the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    File,
    Dir,
    Either,
}

/// A resolved path and, when it is not the one asked for, the path read instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub path: PathBuf,
    /// The real path (relative to the root) when the request was forgiven.
    pub instead: Option<String>,
}

impl Resolved {
    /// `(myproj/src/main.rs is not in the workspace; shown: src/main.rs)`, or `None` when
    /// nothing was forgiven. `what` says what was done with the real path ("shown",
    /// "searched"). Not "read X for Y": asked how to run the tests, the 1.5B answered with
    /// the command "read scripts/test.sh", the note's words.
    pub fn note(&self, what: &str, requested: &str) -> Option<String> {
        self.instead.as_ref().map(|real| {
            format!(
                "({} is not in the workspace; {what}: {real})",
                requested.trim()
            )
        })
    }
}

/// The real path a forgiven result's first line names ([`Resolved::note`]), if it does.
pub fn forgiven_path(result: &str) -> Option<&str> {
    let first = result
        .lines()
        .next()?
        .strip_prefix('(')?
        .strip_suffix(')')?;
    let (_, rest) = first.split_once(" is not in the workspace; ")?;
    let (_, real) = rest.split_once(": ")?;
    Some(real.trim())
}

/// Most paths suggested in an error.
const MAX_SUGGESTIONS: usize = 3;

/// [`resolve`], forgiving a path that does not exist when exactly one real path fits.
pub fn resolve_forgiving(
    root: &Path,
    requested: &str,
    want: Want,
) -> Result<Resolved, SandboxError> {
    let missing = match resolve(root, requested) {
        Ok(path) => {
            return Ok(Resolved {
                path,
                instead: None,
            })
        }
        Err(SandboxError::NotFound(m)) => m,
        Err(e) => return Err(e),
    };
    let candidates = candidates(root, want);
    let folder = root
        .canonicalize()
        .ok()
        .and_then(|r| r.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    match matches(&candidates, requested, &folder) {
        Match::One(real) => {
            let path = resolve(root, &real)?;
            Ok(Resolved {
                path,
                instead: Some(real),
            })
        }
        Match::Several(paths) => Err(SandboxError::NotFound(did_you_mean(&missing, &paths))),
        Match::None => {
            let near = similar(&candidates, requested);
            Err(SandboxError::NotFound(did_you_mean(&missing, &near)))
        }
    }
}

fn did_you_mean(missing: &str, paths: &[String]) -> String {
    match paths {
        [] => missing.to_string(),
        [one] => format!("{missing}; did you mean {one}?"),
        _ => {
            let shown: Vec<&str> = paths
                .iter()
                .take(MAX_SUGGESTIONS)
                .map(String::as_str)
                .collect();
            let (last, rest) = shown.split_last().unwrap_or((&"", &[]));
            format!("{missing}; did you mean {} or {last}?", rest.join(", "))
        }
    }
}

/// Listed files, or the folders that hold them, or both (paths relative to the root).
fn candidates(root: &Path, want: Want) -> Vec<String> {
    let files: Vec<String> = super::list(root).into_iter().map(|e| e.path).collect();
    let mut dirs: Vec<String> = files
        .iter()
        .flat_map(|p| {
            let parts: Vec<&str> = p.split('/').collect();
            (1..parts.len())
                .map(|n| parts[..n].join("/"))
                .collect::<Vec<_>>()
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    match want {
        Want::File => files,
        Want::Dir => dirs,
        Want::Either => files.into_iter().chain(dirs).collect(),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    One(String),
    Several(Vec<String>),
    None,
}

/// Whether a listed path (first) fits what was asked (second).
type Rule = dyn Fn(&str, &str) -> bool;

/// The rules in order over `candidates` (see the module doc); `folder` is the
/// workspace's own folder name.
pub fn matches(candidates: &[String], requested: &str, folder: &str) -> Match {
    let asked = normalize(requested);
    let mut variants = vec![asked.clone()];
    if let Some(rest) = strip_folder(&asked, folder) {
        variants.insert(0, rest);
    }
    let rules: [&Rule; 6] = [
        &|c, v| c == v,
        &|c, v| c.eq_ignore_ascii_case(v),
        &|c, v| {
            let (c, v) = (c.to_ascii_lowercase(), v.to_ascii_lowercase());
            c.ends_with(&format!("/{v}"))
        },
        // The path without its extension (`commands_memory` → `commands_memory.go`): the
        // 0.5B asked for it three times over and answered "210K".
        &|c, v| without_extension(c).is_some_and(|bare| bare.eq_ignore_ascii_case(v)),
        // The same file name in another folder (`docs/README.md` → `README.md`).
        &|c, v| v.contains('/') && file_name(c).eq_ignore_ascii_case(file_name(v)),
        &|c, v| same_stem(c, v),
    ];
    for rule in rules {
        let mut found: Vec<String> = candidates
            .iter()
            .filter(|c| variants.iter().any(|v| !v.is_empty() && rule(c, v)))
            .cloned()
            .collect();
        found.sort_by_key(|p| (p.matches('/').count(), p.clone()));
        found.dedup();
        match found.len() {
            0 => continue,
            1 => return Match::One(found.remove(0)),
            _ => return Match::Several(found),
        }
    }
    Match::None
}

/// `path` without its file name's extension (`src/a.rs` → `src/a`); `None` without one.
fn without_extension(path: &str) -> Option<&str> {
    let (bare, ext) = path.rsplit_once('.')?;
    (!ext.contains('/') && !bare.is_empty() && !bare.ends_with('/')).then_some(bare)
}

/// The last part of a listed or asked path.
fn file_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// `./a//b/` → `a/b`; a leading `/` is dropped (a model's "root" is the workspace).
fn normalize(requested: &str) -> String {
    let parts: Vec<&str> = requested
        .trim()
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    parts.join("/")
}

/// `myproj/src/main.rs` → `src/main.rs` when the workspace folder is `myproj` (any case).
fn strip_folder(asked: &str, folder: &str) -> Option<String> {
    if folder.is_empty() {
        return None;
    }
    let (first, rest) = asked.split_once('/').unwrap_or((asked, ""));
    first.eq_ignore_ascii_case(folder).then(|| rest.to_string())
}

/// Same folder (any case) and the same name up to its first `.`, `-` or `_`:
/// `LICENSE.md` and `LICENSE-MIT`, `readme` and `README.md`.
fn same_stem(candidate: &str, asked: &str) -> bool {
    let split = |p: &str| -> (String, String) {
        let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
        let stem = name
            .split(['.', '-', '_'])
            .next()
            .unwrap_or(name)
            .to_ascii_lowercase();
        (dir.to_ascii_lowercase(), stem)
    };
    let (cd, cs) = split(candidate);
    let (ad, a_stem) = split(asked);
    cd == ad && cs.len() >= 3 && cs == a_stem
}

/// The nearest listed paths by the edit distance of their names (close enough to be a
/// typo), nearest first.
fn similar(candidates: &[String], requested: &str) -> Vec<String> {
    let asked = normalize(requested).to_ascii_lowercase();
    let asked_name = asked.rsplit('/').next().unwrap_or(&asked).to_string();
    let limit = (asked_name.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &String)> = candidates
        .iter()
        .filter_map(|c| {
            let lower = c.to_ascii_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            let d = distance(name, &asked_name);
            (d <= limit).then_some((d, c))
        })
        .collect();
    scored.sort_by_key(|(d, c)| (*d, c.matches('/').count(), (*c).clone()));
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, c)| c.clone())
        .collect()
}

/// Levenshtein distance in characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j] + 1).min(row[j + 1] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace_map::tests::sample;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn rules_table() {
        let listed = s(&[
            "Cargo.toml",
            "LICENSE-APACHE",
            "LICENSE-MIT",
            "README.md",
            "docs/deploy.md",
            "src/lib.rs",
            "src/main.rs",
            "src/tools/mod.rs",
            "tests/mod.rs",
            "commands.go",
            "commands_memory.go",
            "commands_memory_test.go",
        ]);
        let one = |p: &str| Match::One(p.to_string());
        let table = [
            ("myproj/src/main.rs", one("src/main.rs")),
            ("./MyProj/Cargo.toml", one("Cargo.toml")),
            ("readme.md", one("README.md")),
            ("SRC/Main.rs", one("src/main.rs")),
            ("main.rs", one("src/main.rs")),
            ("tools/mod.rs", one("src/tools/mod.rs")),
            ("/deploy.md", one("docs/deploy.md")),
            ("README", one("README.md")),
            ("docs/README.md", one("README.md")),
            ("lib/main.rs", one("src/main.rs")),
            (
                "LICENSE.md",
                Match::Several(s(&["LICENSE-APACHE", "LICENSE-MIT"])),
            ),
            (
                "mod.rs",
                Match::Several(s(&["tests/mod.rs", "src/tools/mod.rs"])),
            ),
            ("commands_memory", one("commands_memory.go")),
            ("src/tools/mod", one("src/tools/mod.rs")),
            ("config/app.toml", Match::None),
            ("", Match::None),
        ];
        for (asked, want) in table {
            assert_eq!(matches(&listed, asked, "myproj"), want, "{asked}");
        }
        assert_eq!(distance("main.rs", "mian.rs"), 2);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn forgiven_reads_say_which_path_and_misses_name_the_nearest() {
        let (_keep, root) = sample();
        let r = resolve_forgiving(&root, "myproj/src/main.rs", Want::File).unwrap();
        assert_eq!(r.instead.as_deref(), Some("src/main.rs"));
        assert!(r.path.ends_with("src/main.rs"));
        assert_eq!(
            r.note("shown", "myproj/src/main.rs").unwrap(),
            "(myproj/src/main.rs is not in the workspace; shown: src/main.rs)"
        );
        let note = r.note("shown", "myproj/src/main.rs").unwrap();
        assert_eq!(
            forgiven_path(&format!("{note}\n    1| fn main() {{}}")),
            Some("src/main.rs")
        );
        assert_eq!(forgiven_path("    1| fn main() {}"), None);
        let exact = resolve_forgiving(&root, "src/main.rs", Want::File).unwrap();
        assert_eq!(exact.instead, None);
        assert_eq!(exact.note("shown", "src/main.rs"), None);
        let e = resolve_forgiving(&root, "LICENSE.md", Want::File)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "not found: LICENSE.md does not exist in the workspace; did you mean LICENSE-APACHE or LICENSE-MIT?"
        );
        let e = resolve_forgiving(&root, "src/mian.rs", Want::File)
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("did you mean src/main.rs?"), "{e}");
        let d = resolve_forgiving(&root, "myproj/src", Want::Dir).unwrap();
        assert_eq!(d.instead.as_deref(), Some("src"));
        let d = resolve_forgiving(&root, "tools", Want::Dir).unwrap();
        assert_eq!(d.instead.as_deref(), Some("src/tools"));
    }

    #[test]
    fn no_candidate_is_a_secret_private_or_outside() {
        let (_keep, root) = sample();
        // `out` links outside; `main2.rs` links to a file outside; `.env` and
        // `server.key` are secrets; `agents/` and `.git/` are private.
        for asked in [
            "outside.rs",
            "myproj/outside.rs",
            "out/outside.rs",
            "main2.rs",
            "env",
            ".ENV",
            "myproj/.env",
            "server.KEY",
            "server",
            "a.md",
            "memories/a.md",
            "config",
            "harvey",
            "debug/harvey",
        ] {
            match resolve_forgiving(&root, asked, Want::Either) {
                Ok(r) => panic!("{asked} resolved to {:?}", r.path),
                Err(e) => {
                    let e = e.to_string();
                    for leak in ["outside", ".env", "server.key", "agents", ".git", "target"] {
                        assert!(
                            !e.contains(&format!("mean {leak}"))
                                && !e.contains(&format!(", {leak}")),
                            "{asked}: {e}"
                        );
                    }
                }
            }
        }
        for want in [Want::File, Want::Dir, Want::Either] {
            for c in candidates(&root, want) {
                let first = c.split('/').next().unwrap();
                assert!(
                    !matches!(first, "agents" | ".git" | "target" | "out")
                        && !c.contains(".env")
                        && !c.ends_with(".key")
                        && c != "main2.rs",
                    "{c}"
                );
            }
        }
        // A refusal is never forgiven into something else.
        let e = resolve_forgiving(&root, "../outside.rs", Want::File).unwrap_err();
        assert!(matches!(e, SandboxError::Refused(_)), "{e}");
        let e = resolve_forgiving(&root, ".env", Want::File).unwrap_err();
        assert!(matches!(e, SandboxError::Refused(_)), "{e}");
    }
}
