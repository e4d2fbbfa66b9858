//! Read-only git: `status`, `diff`, `log`, `show` and `blame`, and nothing that could
//! make git run another program or write a file.
//!
//! harvey builds the whole command line: `git --no-pager` plus `-c` settings that turn
//! off the repository-configured programs (fsmonitor, pager, external diff, textconv),
//! then the subcommand. What the user or the model gives comes after the subcommand and
//! is refused when it names an option that changes where git reads its config, runs a
//! program, or writes output (`-c`, `--exec-path`, `--output`, `--ext-diff`, …).

use super::CommandError;

/// The subcommands `/git` and the `git` tool run.
pub const SUBCOMMANDS: &[&str] = &["status", "diff", "log", "show", "blame"];

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
    "--paginate",
    "--upload-pack",
    "--open-files-in-pager",
];

/// Settings put before the subcommand, so the repository's own config cannot make a
/// read run a program.
const SAFE_CONFIG: &[&str] = &[
    "core.fsmonitor=false",
    "core.pager=cat",
    "diff.external=",
    "core.hooksPath=/dev/null",
];

/// The arguments for `git` given what follows `git` (subcommand first), or why not.
pub fn argv(words: &[String]) -> Result<Vec<String>, CommandError> {
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
        if let Some(bad) = refused_option(arg) {
            return refuse(format!("git option {bad} is not allowed (it could run a program, read another config or write a file)"));
        }
    }
    let mut out = vec!["--no-pager".to_string()];
    for setting in SAFE_CONFIG {
        out.push("-c".into());
        out.push(setting.to_string());
    }
    out.push(sub.clone());
    if matches!(sub.as_str(), "diff" | "log" | "show") {
        out.push("--no-ext-diff".into());
        out.push("--no-textconv".into());
    }
    out.extend(words[1..].iter().cloned());
    Ok(out)
}

fn refused_option(arg: &str) -> Option<&'static str> {
    REFUSED.iter().copied().find(|opt| {
        arg == *opt
            || arg
                .strip_prefix(opt)
                .is_some_and(|rest| rest.starts_with('=') || (opt.len() == 2 && !rest.is_empty()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        super::super::argv::split(line).unwrap()
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
        assert_eq!(a[0], "--no-pager");
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
        assert!(argv(&words("blame -L 1,5 src/main.rs")).is_ok());
        // `-p` (patch) and `--cc` are ordinary log options, not the refused `-c`.
        assert!(argv(&words("log -p --cc")).is_ok());
    }
}
