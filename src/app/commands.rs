//! The session's side of running commands: the settings from `security:`, the user's
//! `!prog` / `/run` / `/git` (the output attached to the next message, a note in the
//! session record), and `/safemode` changes saved in the workspace's config.

use std::path::PathBuf;

use crate::chat::attachment::Attachment;
use crate::command::{self, argv, Ask, Place, Report, Settings, Who};
use crate::config::{ConfigError, SecurityConfig};

use super::App;

/// A yes/no question through the REPL's `ask` (`prefix` + the question + `? [y/N]`);
/// no answer (or no one to ask) is a no.
pub fn yes_no(ask: Option<std::rc::Rc<super::Ask>>, prefix: &str) -> impl Fn(&str) -> bool {
    let prefix = prefix.to_string();
    move |what: &str| {
        ask.as_ref().is_some_and(|ask| {
            ask(&format!("{prefix}{what} — allow? [y/N] "))
                .is_some_and(|r| matches!(r.trim().to_lowercase().as_str(), "y" | "yes"))
        })
    }
}

/// The session's command settings as the config sets them.
pub fn settings(c: &SecurityConfig) -> Settings {
    Settings {
        safe_mode: c.safe_mode,
        allowed: c.allowed_commands.clone(),
        timeout: c.run_timeout,
    }
}

impl App {
    /// Attaches `text` to the next user message; returns its size in tokens.
    pub fn attach(&mut self, label: &str, text: String) -> usize {
        let tokens = self.engine.count_tokens(&text);
        self.attachments.push(Attachment {
            label: label.to_string(),
            text,
            tokens,
        });
        tokens
    }

    fn command_place(&self) -> Place<'_> {
        Place {
            workspace: &self.workspace,
            settings: &self.security,
            audit: &self.audit,
            env: &[],
        }
    }

    /// `!prog args…` / `/run prog args…` for the user: split without a shell, checked
    /// against safe mode (`ask` answers for programs off the allowlist; `None` refuses
    /// them), run, audited, and when it ran its output attached to the next message.
    /// Ctrl-C (the app's abort flag) kills it. `Err` = the line does not split.
    pub fn run_user_command(
        &mut self,
        line: &str,
        ask: Option<Ask<'_>>,
        on_output: &mut dyn FnMut(&[u8]),
    ) -> Result<(Report, Option<usize>), argv::ArgvError> {
        let words = argv::split(line)?;
        self.abort.clear();
        let abort = self.abort.clone();
        let stop = move || abort.is_raised();
        let report = command::run_program(
            &self.command_place(),
            Who::User,
            words,
            false,
            ask,
            on_output,
            &stop,
        );
        let tokens = self.after_command(&report);
        Ok((report, tokens))
    }

    /// `/git SUBCOMMAND args…`: read-only git, never asks; like [`Self::run_user_command`]
    /// otherwise.
    pub fn run_user_git(
        &mut self,
        line: &str,
        on_output: &mut dyn FnMut(&[u8]),
    ) -> Result<(Report, Option<usize>), argv::ArgvError> {
        let words = match argv::split(line) {
            Ok(w) => w,
            Err(argv::ArgvError::Empty) => Vec::new(),
            Err(e) => return Err(e),
        };
        self.abort.clear();
        let abort = self.abort.clone();
        let stop = move || abort.is_raised();
        let report = command::run_git(&self.command_place(), Who::User, words, on_output, &stop);
        let tokens = self.after_command(&report);
        Ok((report, tokens))
    }

    /// The session record's note, and the attachment when the command ran; returns the
    /// attachment's tokens.
    pub(super) fn after_command(&mut self, report: &Report) -> Option<usize> {
        let note = report.note();
        if self.recorder.path().is_some() {
            if self.recorder.note(&note).is_err() {
                self.pending_notes.push(note);
            }
        } else {
            self.pending_notes.push(note);
        }
        let text = report.attachment()?;
        Some(self.attach(&format!("command {}", argv::display(&report.words)), text))
    }

    /// `/safemode on|off`; returns whether it changed.
    pub fn set_safe_mode(&mut self, on: bool) -> bool {
        let changed = self.security.safe_mode != on;
        self.security.safe_mode = on;
        changed
    }

    /// `/safemode allow PROG`: puts `name` on the allowlist; returns whether it was new.
    pub fn allow_program(&mut self, name: &str) -> bool {
        let new = !self.security.allowed.iter().any(|a| a == name);
        if new {
            self.security.allowed.push(name.to_string());
        }
        new
    }

    /// `/safemode deny PROG`: takes `name` off the allowlist; returns whether it was on.
    pub fn deny_program(&mut self, name: &str) -> bool {
        let before = self.security.allowed.len();
        self.security.allowed.retain(|a| a != name);
        before != self.security.allowed.len()
    }

    /// `/safemode reset`: safe mode on, the default allowlist; returns whether it changed.
    pub fn reset_security(&mut self) -> bool {
        let was = (self.security.safe_mode, self.security.allowed.clone());
        self.security.safe_mode = true;
        self.security.allowed = Settings::default_allowed();
        was != (self.security.safe_mode, self.security.allowed.clone())
    }

    /// Saves the session's safe mode and allowlist in `security:` of
    /// `agents/harvey.yaml` (only that section is rewritten).
    pub fn save_security(&self) -> Result<PathBuf, ConfigError> {
        crate::config::save_security(
            &self.workspace,
            self.security.safe_mode,
            &self.security.allowed,
            self.security.timeout,
        )
    }
}
