//! git for the fixture workspaces: a fixed identity and no user or system config, so
//! every run makes the same commits and no signing program or hook runs. Shared by the
//! tide fixture ([`super::fixture`]) and the project fixture ([`super::project`]).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use super::AgentBenchError;

/// Whether a `git` program runs at all (git tasks are skipped without one).
pub fn available() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// git in `dir` with a fixed identity and no user or system config.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args);
    cmd
}

/// Runs `cmd`; git's own message when it fails.
pub fn run(mut cmd: Command, dir: &Path) -> Result<(), AgentBenchError> {
    let out = cmd.output().map_err(|e| io(dir, e))?;
    checked(&out)
}

/// Runs `git args` in `dir` with `input` on its standard input (`fast-import`).
pub fn run_with_input(dir: &Path, args: &[&str], input: &[u8]) -> Result<(), AgentBenchError> {
    let mut child = command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| io(dir, e))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input).map_err(|e| io(dir, e))?;
    }
    let out = child.wait_with_output().map_err(|e| io(dir, e))?;
    checked(&out)
}

fn checked(out: &std::process::Output) -> Result<(), AgentBenchError> {
    if out.status.success() {
        Ok(())
    } else {
        Err(AgentBenchError::Git(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }
}

/// An I/O error on `path`, as the benchmark reports it.
pub fn io(path: &Path, source: std::io::Error) -> AgentBenchError {
    AgentBenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}
