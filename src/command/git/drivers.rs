//! What a repository's config could make a read run, switched off before the read.
//!
//! `.gitattributes` can send any file through a filter driver (`filter.NAME.clean`,
//! `.smudge`, `.process`: run by `diff` and `status` on changed files) or a diff driver
//! (`diff.NAME.textconv`, `.command`). git has no switch that turns filters off, so
//! harvey lists the configured driver names (`git config --name-only --list`, every
//! scope, includes followed) and overrides each on the command line: an empty `process`
//! makes git skip the driver's `clean` and `smudge` too (tried on git 2.47), `required`
//! false keeps git from failing instead. Textconv and external diff are also off by
//! `--no-textconv` / `--no-ext-diff` (see [`super::argv`]). A config that moves the work
//! tree (`core.worktree`) is refused: the paths checked would no longer be the ones read.
//!
//! `diff` outside a git work tree would compare files directly (`--no-index`), so it is
//! refused there.

use std::path::Path;
use std::time::Duration;

use crate::command::exec::{self, Ending};
use crate::command::CommandError;

/// How long the config listing may take (it reads a few small files).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The `-c` settings (without the `-c`) that switch off every configured driver in
/// `workspace`'s repository, or why git must not run there.
pub fn neutralising(git: &Path, workspace: &Path, sub: &str) -> Result<Vec<String>, CommandError> {
    if sub == "diff" && !is_work_tree(git, workspace)? {
        return Err(CommandError::Refused(
            "the workspace is not a git work tree: git diff would compare files directly (--no-index), which harvey does not allow; read files with read_file instead".into(),
        ));
    }
    let (ok, listing) = probe(
        git,
        workspace,
        &["config", "--null", "--name-only", "--list"],
    )?;
    if !ok {
        return Err(CommandError::Refused(format!(
            "cannot list the repository's git config ({}), so its filter and diff drivers cannot be switched off; git was not run. Fix the config (git config --list shows the error)",
            listing.trim()
        )));
    }
    settings_for(listing.split('\0').filter(|n| !n.is_empty()))
}

/// The overrides for a list of config names.
pub fn settings_for<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, CommandError> {
    let mut out = Vec::new();
    for name in names {
        if name.eq_ignore_ascii_case("core.worktree") {
            return Err(CommandError::Refused(
                "the repository's config sets core.worktree (its work tree is elsewhere), so git reads could reach files outside the workspace; harvey does not run git here".into(),
            ));
        }
        let Some((section, rest)) = name.split_once('.') else {
            continue;
        };
        let Some((driver, _key)) = rest.rsplit_once('.') else {
            continue;
        };
        let section = section.to_ascii_lowercase();
        let keys: &[&str] = match section.as_str() {
            "filter" => &["process=", "clean=", "smudge=", "required=false"],
            "diff" => &["textconv=", "command="],
            _ => continue,
        };
        for key in keys {
            let setting = format!("{section}.{driver}.{key}");
            if !out.contains(&setting) {
                out.push(setting);
            }
        }
    }
    Ok(out)
}

fn is_work_tree(git: &Path, workspace: &Path) -> Result<bool, CommandError> {
    let (ok, out) = probe(git, workspace, &["rev-parse", "--is-inside-work-tree"])?;
    Ok(ok && out.trim() == "true")
}

/// Runs `git --no-pager -c core.fsmonitor=false ARGS` in the workspace: whether it
/// exited 0, and all it printed.
fn probe(git: &Path, workspace: &Path, args: &[&str]) -> Result<(bool, String), CommandError> {
    let args: Vec<String> = ["--no-pager", "-c", "core.fsmonitor=false"]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect();
    let vars = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    let spec = exec::Spec {
        program: git,
        args: &args,
        cwd: workspace,
        env: super::super::env::cleaned(vars),
        timeout: PROBE_TIMEOUT,
    };
    let mut all = Vec::new();
    let outcome = exec::run(&spec, &mut |chunk| all.extend_from_slice(chunk), &|| false)?;
    let text = String::from_utf8_lossy(&all).into_owned();
    Ok((outcome.ending == Ending::Exited(0), text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_configured_driver_is_switched_off() {
        let names = [
            "user.name",
            "filter.lfs.clean",
            "filter.lfs.smudge",
            "filter.Evil.Name.process",
            "diff.pdf.textconv",
            "diff.x.command",
            "diff.renames",
            "core.bare",
        ];
        let s = settings_for(names).unwrap();
        assert_eq!(
            s,
            [
                "filter.lfs.process=",
                "filter.lfs.clean=",
                "filter.lfs.smudge=",
                "filter.lfs.required=false",
                "filter.Evil.Name.process=",
                "filter.Evil.Name.clean=",
                "filter.Evil.Name.smudge=",
                "filter.Evil.Name.required=false",
                "diff.pdf.textconv=",
                "diff.pdf.command=",
                "diff.x.textconv=",
                "diff.x.command=",
            ]
        );
        let e = settings_for(["core.worktree"]).unwrap_err().to_string();
        assert!(e.contains("core.worktree"), "{e}");
    }
}
