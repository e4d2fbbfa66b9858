//! Which program a word names, and whether it may run without asking.
//!
//! Safe mode matches the allowlist on the *resolved* program: the word must be a bare
//! name (`ls`, not `./ls` or `/usr/bin/ls`), found in an absolute `PATH` directory,
//! whose real file (symlinks followed) has that same name and lies outside the
//! workspace. So a script called `ls` in the workspace, a symlink named `ls` pointing at
//! `rm`, or a path to anything never passes as `ls`: such programs are asked about.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::CommandError;

/// The allowlist safe mode starts with: the Go tool's (`ls cat grep head tail wc find
/// stat jq`) plus programs that only read and print.
pub const DEFAULT_ALLOWED: &[&str] = &[
    "ls", "cat", "grep", "head", "tail", "wc", "find", "stat", "jq", "echo", "pwd", "date",
    "uname", "du", "df", "file", "diff", "which",
];

/// `find` arguments that run, delete or write: an allowlisted `find` with one of them
/// is asked about like any other program.
const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// The session's command settings (`security:` in the config, changed by `/safemode`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub safe_mode: bool,
    pub allowed: Vec<String>,
    pub timeout: Duration,
}

impl Settings {
    /// The default allowlist as owned names.
    pub fn default_allowed() -> Vec<String> {
        DEFAULT_ALLOWED.iter().map(|s| s.to_string()).collect()
    }
}

/// Whether a program may run as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// On the allowlist (resolved as described above).
    Allowlisted,
    /// Safe mode is off: everything runs.
    SafeModeOff,
    /// Only with the user's yes; the text says why.
    NeedsConsent(String),
}

/// Whether `name` can be put on the allowlist (a bare program name).
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
        Err(format!(
            "{name:?} is not a program name: the allowlist takes bare names like `ls` (paths never match it)"
        ))
    } else {
        Ok(())
    }
}

/// The file `word` runs: a path (with `/`) relative to `cwd`, else the first executable
/// file of that name in the absolute directories of `path_var` (relative `PATH`
/// entries such as `.` are skipped).
pub fn resolve(word: &str, cwd: &Path, path_var: Option<&OsStr>) -> Result<PathBuf, CommandError> {
    let not_found = || CommandError::NotFound(word.to_string());
    if word.contains('/') {
        let p = cwd.join(word);
        return is_executable(&p).then_some(p).ok_or_else(not_found);
    }
    if word.is_empty() {
        return Err(not_found());
    }
    let dirs = path_var.map(std::env::split_paths).into_iter().flatten();
    dirs.filter(|d| d.is_absolute())
        .map(|d| d.join(word))
        .find(|p| is_executable(p))
        .ok_or_else(not_found)
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `words` (program first) may run without asking, `resolved` being the file
/// [`resolve`] found for the program.
pub fn verdict(
    settings: &Settings,
    words: &[String],
    resolved: &Path,
    workspace: &Path,
) -> Verdict {
    if !settings.safe_mode {
        return Verdict::SafeModeOff;
    }
    let Some(word) = words.first() else {
        return Verdict::NeedsConsent("nothing to run".into());
    };
    let ask = |why: String| Verdict::NeedsConsent(why);
    if word.contains('/') {
        return ask(format!(
            "{word} is a path; only bare names (found in PATH) can match the allowlist"
        ));
    }
    if !settings.allowed.iter().any(|a| a == word) {
        return ask(format!(
            "{word} is not on the allowlist (/safemode allow {word})"
        ));
    }
    let real = resolved
        .canonicalize()
        .unwrap_or_else(|_| resolved.to_path_buf());
    let real_name = real.file_name().map(|n| n.to_string_lossy().into_owned());
    if real_name.as_deref() != Some(word.as_str()) {
        return ask(format!(
            "{word} resolves to {}, which is not {word}",
            real.display()
        ));
    }
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    if real.starts_with(&ws) {
        return ask(format!(
            "{word} resolves to {} inside the workspace",
            real.display()
        ));
    }
    if word == "find" {
        if let Some(a) = words[1..]
            .iter()
            .find(|a| FIND_ACTIONS.contains(&a.as_str()))
        {
            return ask(format!("find {a} runs, deletes or writes"));
        }
    }
    Verdict::Allowlisted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            safe_mode: true,
            allowed: Settings::default_allowed(),
            timeout: Duration::from_secs(1),
        }
    }

    fn words(line: &str) -> Vec<String> {
        super::super::argv::split(line).unwrap()
    }

    /// A PATH with one directory holding what `setup` puts there.
    fn check(line: &str, ws: &Path, path: &OsStr) -> Verdict {
        let w = words(line);
        match resolve(&w[0], ws, Some(path)) {
            Ok(p) => verdict(&settings(), &w, &p, ws),
            Err(e) => Verdict::NeedsConsent(e.to_string()),
        }
    }

    #[test]
    fn allowlist_matches_the_resolved_program_only() {
        let ws = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let real_rm = resolve("rm", ws.path(), Some(OsStr::new("/usr/bin:/bin"))).unwrap();
        let real_ls = resolve("ls", ws.path(), Some(OsStr::new("/usr/bin:/bin"))).unwrap();
        std::os::unix::fs::symlink(&real_rm, bin.path().join("ls")).unwrap();
        std::os::unix::fs::symlink(&real_rm, ws.path().join("ls")).unwrap();
        let system = OsStr::new("/usr/bin:/bin");
        assert_eq!(check("ls -la", ws.path(), system), Verdict::Allowlisted);
        assert_eq!(check("cat x", ws.path(), system), Verdict::Allowlisted);
        for (line, path, why) in [
            ("./ls", system, "is a path"),
            ("/usr/bin/rm -rf x", system, "is a path"),
            (real_ls.to_str().unwrap(), system, "is a path"),
            ("rm x", system, "not on the allowlist"),
            ("ls", bin.path().as_os_str(), "which is not ls"),
            ("find . -delete", system, "find -delete"),
            ("find . -exec rm {} ;", system, "find -exec"),
        ] {
            match check(line, ws.path(), path) {
                Verdict::NeedsConsent(reason) => assert!(reason.contains(why), "{line}: {reason}"),
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_program_inside_the_workspace_is_not_allowlisted_even_by_name() {
        let ws = tempfile::tempdir().unwrap();
        let bin = ws.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let script = bin.join("cat");
        std::fs::write(&script, "#!/bin/sh\nrm -rf /\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        match check("cat x", ws.path(), bin.as_os_str()) {
            Verdict::NeedsConsent(r) => assert!(r.contains("inside the workspace"), "{r}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn relative_path_entries_are_skipped_and_safe_mode_off_allows_all() {
        let ws = tempfile::tempdir().unwrap();
        let script = ws.path().join("tool");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(resolve("tool", ws.path(), Some(OsStr::new(".:bin"))).is_err());
        assert!(resolve("./tool", ws.path(), None).is_ok());
        assert!(resolve("nope-such-program", ws.path(), Some(OsStr::new("/usr/bin"))).is_err());
        let mut s = settings();
        s.safe_mode = false;
        assert_eq!(
            verdict(&s, &words("./tool"), &script, ws.path()),
            Verdict::SafeModeOff
        );
    }

    #[test]
    fn names_for_the_allowlist() {
        assert!(check_name("cargo").is_ok());
        for bad in ["", "./ls", "/bin/ls", "a b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
