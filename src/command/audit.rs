//! `agents/harvey-audit.jsonl`: one JSON line per command harvey ran or refused — when,
//! who asked (the user or the model), the program and arguments, where, the decision, and
//! for a run its exit, duration and bytes of output. Append-only; `/audit N` reads the
//! last lines back.
//!
//! The Go harvey appends `{ts, action, details, status}` lines to `agents/audit.jsonl`
//! (its `audit.go`). Those four fields cannot hold who asked, the arguments, the exit or
//! the duration, and mixed schemas in one file would break both readers, so harvey keeps
//! its own file and never writes the Go tool's.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file, relative to `agents/`.
pub const AUDIT_FILE: &str = "harvey-audit.jsonl";

/// The Go harvey's audit log, relative to `agents/`: never written.
pub const GO_AUDIT_FILE: &str = "audit.jsonl";

/// Who asked for a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Who {
    User,
    Model,
}

/// Why a command ran, or did not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// On the safe-mode allowlist.
    Allowlisted,
    /// Safe mode was off.
    SafeModeOff,
    /// The user said yes.
    Confirmed,
    /// The user said no.
    Declined,
    /// Not allowed at all (policy, nobody to ask, not found, bad arguments).
    Refused,
    /// A read-only git subcommand.
    ReadOnly,
    /// A file write nobody could confirm, allowed by `tools.allow_writes`.
    AllowWrites,
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub at: String,
    pub who: Who,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The exit code (`None` when it did not run or was killed).
    #[serde(default)]
    pub exit: Option<i32>,
    /// How it ended when it ran: `exit 0`, `killed after the 2s timeout`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub bytes: Option<u64>,
}

impl Entry {
    /// An entry before the run's numbers are known (a refusal has only a reason).
    pub fn new(
        who: Who,
        words: &[String],
        cwd: &Path,
        decision: Decision,
        reason: Option<&str>,
    ) -> Self {
        Self {
            at: now(),
            who,
            program: words.first().cloned().unwrap_or_default(),
            args: words.iter().skip(1).cloned().collect(),
            cwd: cwd.display().to_string(),
            decision,
            reason: reason.map(str::to_string),
            exit: None,
            ended: None,
            duration_ms: None,
            bytes: None,
        }
    }

    /// One line for `/audit`.
    pub fn line(&self) -> String {
        let who = match self.who {
            Who::User => "user",
            Who::Model => "model",
        };
        let command = super::argv::display(
            &std::iter::once(self.program.clone())
                .chain(self.args.iter().cloned())
                .collect::<Vec<_>>(),
        );
        let decision = serde_json::to_value(self.decision)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let mut line = format!("{}  {who:<5}  {decision:<13}  {command}", self.at);
        if let Some(ended) = &self.ended {
            let ms = self.duration_ms.unwrap_or(0);
            let bytes = self.bytes.unwrap_or(0);
            line.push_str(&format!("  → {ended}, {ms} ms, {bytes} bytes"));
        }
        if let Some(reason) = &self.reason {
            line.push_str(&format!("  ({reason})"));
        }
        line
    }
}

/// The current time as the log writes it (UTC, seconds).
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The audit log of one workspace.
#[derive(Debug, Clone)]
pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    pub fn new(agents_dir: &Path) -> Self {
        Self {
            path: agents_dir.join(AUDIT_FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line (creating `agents/` and the file as needed).
    pub fn append(&self, entry: &Entry) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        // One write per line, so concurrent appenders do not interleave within a line.
        file.write_all(line.as_bytes())
    }

    /// The last `n` entries, oldest first; lines that do not parse are skipped and
    /// counted.
    pub fn last(&self, n: usize) -> std::io::Result<(Vec<Entry>, usize)> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
            Err(e) => return Err(e),
        };
        let mut bad = 0;
        let entries: Vec<Entry> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter_map(|l| serde_json::from_str(l).map_err(|_| bad += 1).ok())
            .collect();
        let skip = entries.len().saturating_sub(n);
        Ok((entries.into_iter().skip(skip).collect(), bad))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_go_tools_audit_log_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        std::fs::create_dir_all(&agents).unwrap();
        let go_line = "{\"ts\":\"2026-05-25T12:00:00Z\",\"action\":\"command\",\"details\":\"ls\",\"status\":\"allowed\"}\n";
        std::fs::write(agents.join(GO_AUDIT_FILE), go_line).unwrap();
        let log = AuditLog::new(&agents);
        let words = vec!["git".to_string(), "status".to_string()];
        let entry = Entry::new(Who::Model, &words, dir.path(), Decision::ReadOnly, None);
        log.append(&entry).unwrap();
        assert_eq!(
            std::fs::read_to_string(agents.join(GO_AUDIT_FILE)).unwrap(),
            go_line,
            "the Go tool's file is untouched"
        );
        assert_eq!(log.path(), agents.join("harvey-audit.jsonl"));
        assert_eq!(log.last(5).unwrap(), (vec![entry], 0));
    }

    #[test]
    fn entries_round_trip_and_last_n_is_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(&dir.path().join("agents"));
        assert_eq!(log.last(5).unwrap(), (Vec::new(), 0));
        for i in 0..4 {
            let words = vec!["echo".to_string(), i.to_string()];
            log.append(&Entry::new(
                Who::Model,
                &words,
                dir.path(),
                Decision::Declined,
                Some("no"),
            ))
            .unwrap();
        }
        std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .unwrap()
            .write_all(b"not json\n")
            .unwrap();
        let (last, bad) = log.last(2).unwrap();
        assert_eq!(bad, 1);
        assert_eq!(
            last.iter().map(|e| e.args[0].as_str()).collect::<Vec<_>>(),
            ["2", "3"]
        );
        let line = last[0].line();
        assert!(
            line.contains("model") && line.contains("declined") && line.contains("echo 2"),
            "{line}"
        );
    }
}
