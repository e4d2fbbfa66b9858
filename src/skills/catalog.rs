//! The skills of a workspace: every folder of `agents/skills/` read, a good one as a
//! [`Skill`], a bad one as a [`SkillError`] beside them (one bad file hides nothing).
//!
//! Paths are checked before anything is read: a skill folder, its `SKILL.md` or a file
//! under `scripts/` that is a symlink must lead inside the workspace, and a script must
//! stay inside its skill's folder — a skill can never make harvey read or run what
//! lies elsewhere.

use std::path::{Path, PathBuf};

use super::{parse::parse, Skill, SkillError, SKILLS_DIR};

/// Longest `SKILL.md` read (a skill is instructions, not data).
const MAX_BYTES: u64 = 256 * 1024;

/// Deepest folder level under `scripts/` listed.
const MAX_DEPTH: usize = 4;

/// The workspace's skills, by name.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub skills: Vec<Skill>,
    pub broken: Vec<SkillError>,
}

impl Catalog {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The error of the folder called `name`, when it is a bad skill.
    pub fn problem(&self, name: &str) -> Option<&SkillError> {
        self.broken.iter().find(|e| e.folder == name)
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty() && self.broken.is_empty()
    }

    /// One short line per skill for the model (`- name: first sentence`).
    pub fn prompt_lines(&self) -> String {
        self.skills
            .iter()
            .map(|s| format!("- {}: {}\n", s.name, summary(&s.description)))
            .collect()
    }
}

/// A description's first sentence, whitespace collapsed, cut at a word near 80
/// characters (the Go tool's rule for its catalog).
pub fn summary(description: &str) -> String {
    let text = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let sentence = match text.find(". ") {
        Some(i) => &text[..=i],
        None => &text,
    };
    if sentence.chars().count() <= 80 {
        return sentence.to_string();
    }
    let cut: String = sentence.chars().take(80).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}...", cut.trim_end_matches(['.', ',', ';', ':']))
}

/// Reads every skill folder of the workspace (sorted by name; hidden folders skipped).
/// No `agents/skills/` is an empty catalog.
pub fn load(workspace: &Path) -> Catalog {
    let mut catalog = Catalog::default();
    let root = workspace.join(SKILLS_DIR);
    let Ok(entries) = std::fs::read_dir(&root) else {
        return catalog;
    };
    let mut folders: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    folders.sort();
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    for folder in folders {
        match read_skill(&ws, &root, &folder) {
            Ok(Some(skill)) => catalog.skills.push(skill),
            Ok(None) => {}
            Err(e) => catalog.broken.push(e),
        }
    }
    catalog
}

/// One folder: `Ok(None)` when it is a plain file (not a skill at all).
fn read_skill(ws: &Path, root: &Path, folder: &str) -> Result<Option<Skill>, SkillError> {
    let dir = root.join(folder);
    let rel = |p: &Path| {
        p.strip_prefix(ws)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let file = Path::new(SKILLS_DIR).join(folder).join("SKILL.md");
    let fail = |line: Option<usize>, message: String| SkillError {
        folder: folder.to_string(),
        file: file.clone(),
        line,
        message,
    };
    let real_dir = inside(ws, &dir).map_err(|m| fail(None, m))?;
    if !real_dir.is_dir() {
        return Ok(None);
    }
    let md = dir.join("SKILL.md");
    let real_md = match inside(ws, &md) {
        Ok(p) => p,
        Err(_) if !md.exists() && std::fs::symlink_metadata(&md).is_err() => {
            return Err(fail(None, format!("no SKILL.md in {}: add one (a `---` header with name and description, then the steps)", rel(&dir).display())));
        }
        Err(m) => return Err(fail(Some(1), m)),
    };
    if !real_md.starts_with(&real_dir) {
        return Err(fail(
            None,
            "SKILL.md leads outside its skill folder: make it a plain file".into(),
        ));
    }
    let meta =
        std::fs::metadata(&real_md).map_err(|e| fail(None, format!("cannot read it: {e}")))?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Err(fail(
            None,
            format!("not a text file of at most {} KB", MAX_BYTES / 1024),
        ));
    }
    let text = std::fs::read_to_string(&real_md)
        .map_err(|e| fail(None, format!("cannot read it as UTF-8 text: {e}")))?;
    let mut skill = parse(&text, folder).map_err(|p| fail(p.line, p.message))?;
    skill.scripts = scripts(ws, &real_dir, &dir).map_err(|m| fail(None, m))?;
    skill.dir = real_dir;
    Ok(Some(skill))
}

/// `path` with symlinks followed, when it stays inside the workspace; else what is
/// wrong (a symlink out of the workspace).
fn inside(ws: &Path, path: &Path) -> Result<PathBuf, String> {
    let real = path.canonicalize().map_err(|e| {
        format!(
            "{} does not resolve ({e}): remove the broken link",
            shown(ws, path)
        )
    })?;
    if real.starts_with(ws) {
        Ok(real)
    } else {
        Err(format!(
            "{} is a symlink out of the workspace (to {}): skills run only what lies in the workspace; copy the file in instead",
            shown(ws, path),
            real.display()
        ))
    }
}

fn shown(ws: &Path, path: &Path) -> String {
    path.strip_prefix(ws)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// The files under `scripts/` (relative to the folder), each checked to stay inside the
/// workspace and the skill's folder.
fn scripts(ws: &Path, real_dir: &Path, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack = vec![(PathBuf::from("scripts"), 0usize)];
    while let Some((rel, depth)) = stack.pop() {
        let path = dir.join(&rel);
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let real = inside(ws, &path)?;
        if !real.starts_with(real_dir) {
            return Err(format!(
                "script path {} leads outside the skill folder (to {}): keep a skill's scripts inside its own folder",
                shown(ws, &path),
                shown(ws, &real)
            ));
        }
        if real.is_dir() {
            if depth >= MAX_DEPTH {
                continue;
            }
            let mut names: Vec<_> = std::fs::read_dir(&real)
                .map_err(|e| format!("cannot list {}: {e}", shown(ws, &path)))?
                .filter_map(Result::ok)
                .map(|e| e.file_name())
                .collect();
            names.sort();
            stack.extend(names.into_iter().rev().map(|n| (rel.join(n), depth + 1)));
        } else if real.is_file() {
            out.push(rel);
        }
    }
    out.sort();
    Ok(out)
}
