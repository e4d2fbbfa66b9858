//! Read-only git: `status`, `diff`, `log`, `show`, `blame` and `rev-list`, and nothing that could
//! make git run another program, write a file, or read one the read tools may not.
//!
//! harvey builds the whole command line: `git --no-pager --no-optional-locks
//! --literal-pathspecs` plus `-c` settings that turn off the repository-configured
//! programs (fsmonitor, pager, hooks, external diff, signature programs, submodule
//! recursion) and every configured filter and diff driver ([`drivers`]), then the
//! subcommand with `--no-textconv` (and `--no-ext-diff`). What the user or the model
//! gives comes after the subcommand and is refused when it names an option that changes
//! where git reads its config, runs a program, reads a file given by name or writes
//! output (`-c`, `--exec-path`, `--output`, `--ext-diff`, `--contents`, `--no-index`, …),
//! or a path the read sandbox refuses ([`paths`]).

pub mod actions;
pub mod drivers;
pub mod patch;
pub mod paths;

use super::CommandError;

/// The subcommands `/git` and the `git` tool run (`rev-list` for the tool's
/// `commit_count`: it only lists or counts commits).
pub const SUBCOMMANDS: &[&str] = &["status", "diff", "log", "show", "blame", "rev-list"];

/// Options refused anywhere (exactly, or as `OPTION=value`).
const REFUSED: &[&str] = &[
    "-c",
    "--exec-path",
    "--config-env",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--output",
    "--ext-diff",
    "--textconv",
    "--no-index",
    "--contents",
    "--show-signature",
    "--ignore-submodules",
    "--submodule",
    "--recurse-submodules",
    "--paginate",
    "--upload-pack",
    "--open-files-in-pager",
];

/// Subcommands whose long options git accepts abbreviated (`--conten` for `--contents`).
const ABBREVIATING: &[&str] = &["blame", "status"];

/// Options put before the subcommand: no pager, no index refresh written back, and
/// pathspecs taken literally (no globs or `:(magic)` that could match a refused name).
const GLOBAL_OPTIONS: &[&str] = &["--no-pager", "--no-optional-locks", "--literal-pathspecs"];

/// Settings put before the subcommand, so the repository's own config cannot make a
/// read run a program (the configured filter and diff drivers are added per repository
/// by [`drivers::neutralising`]).
const SAFE_CONFIG: &[&str] = &[
    "core.fsmonitor=false",
    "core.pager=cat",
    "diff.external=",
    "core.hooksPath=/dev/null",
    "log.showSignature=false",
    "gpg.program=gpg",
    "gpg.openpgp.program=gpg",
    "gpg.x509.program=gpgsm",
    "gpg.ssh.program=ssh-keygen",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "submodule.recurse=false",
];

/// The output of a git command harvey itself runs to look at the workspace (listing its
/// files, reading its history), with no pager, no optional locks, no fsmonitor and none of
/// the caller's `GIT_*` variables; `None` when git is missing, fails or takes longer
/// than `timeout`.
pub fn quiet(
    root: &std::path::Path,
    args: &[&str],
    timeout: std::time::Duration,
) -> Option<Vec<u8>> {
    use crate::command::exec::{self, Ending};
    let path_var = std::env::var_os("PATH");
    let git = crate::command::policy::resolve("git", root, path_var.as_deref()).ok()?;
    let args: Vec<String> = [
        "--no-pager",
        "--no-optional-locks",
        "-c",
        "core.fsmonitor=false",
    ]
    .iter()
    .chain(args)
    .map(|s| s.to_string())
    .collect();
    let vars = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| !k.starts_with("GIT_"));
    let spec = exec::Spec {
        program: &git,
        args: &args,
        cwd: root,
        env: crate::command::env::cleaned(vars),
        timeout,
    };
    let mut all = Vec::new();
    let outcome = exec::run(&spec, &mut |chunk| all.extend_from_slice(chunk), &|| false).ok()?;
    (outcome.ending == Ending::Exited(0)).then_some(all)
}

/// The arguments for `git` given what follows `git` (subcommand first) and the
/// repository's driver overrides (`-c` values), or why not.
pub fn argv(words: &[String], drivers: &[String]) -> Result<Vec<String>, CommandError> {
    let refuse = |why: String| Err(CommandError::Refused(why));
    let Some(sub) = words.first() else {
        return refuse(format!("give a subcommand: {}", SUBCOMMANDS.join(", ")));
    };
    if sub.starts_with('-') {
        return refuse(format!(
            "git options before the subcommand ({sub}) are not allowed: harvey sets them itself"
        ));
    }
    if !SUBCOMMANDS.contains(&sub.as_str()) {
        return refuse(format!(
            "git {sub} is not allowed: only {} (read-only)",
            SUBCOMMANDS.join(", ")
        ));
    }
    for arg in &words[1..] {
        if let Some(bad) = refused_option(sub, arg) {
            return refuse(format!("git option {bad} is not allowed (it could run a program, read a file outside the read sandbox, read another config or write a file)"));
        }
        if arg.contains("%G") {
            return refuse(format!(
                "{arg}: the %G… placeholders verify signatures, which runs a program; leave them out"
            ));
        }
    }
    let mut out: Vec<String> = GLOBAL_OPTIONS.iter().map(|s| s.to_string()).collect();
    for setting in SAFE_CONFIG
        .iter()
        .map(|s| s.to_string())
        .chain(drivers.iter().cloned())
    {
        out.push("-c".into());
        out.push(setting);
    }
    out.push(sub.clone());
    if matches!(sub.as_str(), "diff" | "log" | "show") {
        out.push("--no-ext-diff".into());
    }
    if !matches!(sub.as_str(), "status" | "rev-list") {
        out.push("--no-textconv".into());
    }
    out.extend(words[1..].iter().cloned());
    Ok(out)
}

fn refused_option(sub: &str, arg: &str) -> Option<&'static str> {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    let abbreviates = ABBREVIATING.contains(&sub) && name.len() > 2 && name.starts_with("--");
    REFUSED.iter().copied().find(|opt| {
        arg == *opt
            || arg
                .strip_prefix(opt)
                .is_some_and(|rest| rest.starts_with('=') || (opt.len() == 2 && !rest.is_empty()))
            || (abbreviates && opt.starts_with(name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        super::super::argv::split(line).unwrap()
    }

    fn argv(words: &[String]) -> Result<Vec<String>, CommandError> {
        super::argv(words, &[])
    }

    #[test]
    fn tricks_are_refused() {
        for (line, why) in [
            ("-c core.pager=evil log", "before the subcommand"),
            ("--exec-path=/tmp log", "before the subcommand"),
            ("config core.pager evil", "git config is not allowed"),
            ("push origin main", "git push is not allowed"),
            ("commit -m x", "not allowed"),
            ("lg", "not allowed"),
            ("log -c core.pager=evil", "-c"),
            ("log -ccore.pager=evil", "-c"),
            ("diff --output=/tmp/x", "--output"),
            ("log --ext-diff", "--ext-diff"),
            ("show --textconv HEAD", "--textconv"),
            ("diff --no-index /etc/passwd x", "--no-index"),
            ("blame --contents .env a.txt", "--contents"),
            ("blame --conten .env a.txt", "--contents"),
            ("blame --contents=.env a.txt", "--contents"),
            ("log --show-signature", "--show-signature"),
            ("log --format=%G?", "%G"),
            ("status --ignore-submodules=none", "--ignore-submodules"),
            ("status --git-dir=/elsewhere", "--git-dir"),
            ("", "give a subcommand"),
        ] {
            let e = argv(&if line.is_empty() {
                Vec::new()
            } else {
                words(line)
            })
            .unwrap_err()
            .to_string();
            assert!(e.contains(why), "{line}: {e}");
        }
    }

    #[test]
    fn allowed_reads_get_the_safe_prefix() {
        let a = argv(&words("log -n 3 --oneline")).unwrap();
        assert_eq!(
            a[..3],
            ["--no-pager", "--no-optional-locks", "--literal-pathspecs"]
        );
        assert!(a.contains(&"core.fsmonitor=false".to_string()));
        let at = a.iter().position(|w| w == "log").unwrap();
        assert_eq!(
            &a[at..],
            [
                "log",
                "--no-ext-diff",
                "--no-textconv",
                "-n",
                "3",
                "--oneline"
            ]
        );
        let s = argv(&words("status --short")).unwrap();
        assert_eq!(s[s.len() - 2..], ["status", "--short"]);
        let b = argv(&words("blame -L 1,5 src/main.rs")).unwrap();
        assert!(b.contains(&"--no-textconv".to_string()), "{b:?}");
        let d = super::argv(&words("diff"), &["filter.x.process=".into()]).unwrap();
        let at = d.iter().position(|w| w == "filter.x.process=").unwrap();
        assert!(d[at - 1] == "-c" && at < d.iter().position(|w| w == "diff").unwrap());
        // `--text` (diff) is not an abbreviation of the refused `--textconv` there.
        assert!(argv(&words("diff --text")).is_ok());
        // `-p` (patch) and `--cc` are ordinary log options, not the refused `-c`.
        assert!(argv(&words("log -p --cc")).is_ok());
    }
}
