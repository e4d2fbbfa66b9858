//! Running one program: no shell, in its own process group, stdin closed, stdout and
//! stderr merged into one pipe, a timeout, and a stop check (Ctrl-C) that kills the
//! whole group — children a program left behind included.
//!
//! Output streams to the caller as it comes (the whole of it, for the screen); what is
//! kept for the model is capped: the head and the tail, with a note of what was cut.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::CommandError;

/// Bytes of output kept for the model.
pub const CONTEXT_CAP: usize = 8 * 1024;

/// How long to keep reading after the program ended and its group was killed (a
/// process that left the group may still hold the pipe).
const DRAIN: Duration = Duration::from_secs(1);

/// What to run.
pub struct Spec<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    /// Ended by a signal it did not get from harvey.
    Signaled(i32),
    /// Killed (with its process group) at the timeout.
    TimedOut,
    /// Killed (with its process group) by Ctrl-C.
    Interrupted,
}

impl Ending {
    /// `exit 0`, `killed after the 2s timeout`, …
    pub fn describe(&self, timeout: Duration) -> String {
        match self {
            Self::Exited(n) => format!("exit {n}"),
            Self::Signaled(s) => format!("ended by signal {s}"),
            Self::TimedOut => format!(
                "killed after the {} timeout",
                crate::text::duration::format_duration(timeout)
            ),
            Self::Interrupted => "stopped by Ctrl-C".into(),
        }
    }

    /// The exit code, when it exited.
    pub fn code(&self) -> Option<i32> {
        match self {
            Self::Exited(n) => Some(*n),
            _ => None,
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub ending: Ending,
    pub duration: Duration,
    /// All bytes of output.
    pub bytes: u64,
    /// The output kept for the model (at most [`CONTEXT_CAP`] bytes plus the cut note).
    pub kept: String,
    /// Bytes left out of `kept`.
    pub cut: u64,
}

/// Runs `spec`; output chunks go to `on_output` as they arrive; `stop` is polled and
/// ends the run (killing the group) when it returns true.
pub fn run(
    spec: &Spec<'_>,
    on_output: &mut dyn FnMut(&[u8]),
    stop: &dyn Fn() -> bool,
) -> Result<Outcome, CommandError> {
    let start = Instant::now();
    let (child, pipe) = spawn(spec)?;
    let chunks = read_in_background(pipe);
    let mut capture = Capture::new(CONTEXT_CAP);
    let ending = supervise(
        spec,
        child,
        &chunks,
        &mut |chunk| {
            capture.push(chunk);
            on_output(chunk);
        },
        stop,
    )?;
    let (kept, cut) = capture.finish();
    Ok(Outcome {
        ending,
        duration: start.elapsed(),
        bytes: capture.total,
        kept,
        cut,
    })
}

/// Starts the program in its own process group, stdout and stderr on one pipe.
fn spawn(spec: &Spec<'_>) -> Result<(Child, std::fs::File), CommandError> {
    let failed = |e: std::io::Error| CommandError::Start(spec.program.display().to_string(), e);
    let (reader, writer) = nix::unistd::pipe().map_err(|e| failed(e.into()))?;
    let mut command = Command::new(spec.program);
    command
        .args(spec.args)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone().map_err(failed)?))
        .stderr(Stdio::from(writer))
        .process_group(0);
    let spawned = command.spawn();
    // The command holds the pipe's write end: drop it so the reader sees the end.
    drop(command);
    Ok((spawned.map_err(failed)?, std::fs::File::from(reader)))
}

/// Passes output on until the program ended and the pipe closed (or [`DRAIN`] passed);
/// kills the group at the timeout, on `stop`, and when the program exits.
fn supervise(
    spec: &Spec<'_>,
    mut child: Child,
    chunks: &mpsc::Receiver<Vec<u8>>,
    on_output: &mut dyn FnMut(&[u8]),
    stop: &dyn Fn() -> bool,
) -> Result<Ending, CommandError> {
    let failed = |e: std::io::Error| CommandError::Start(spec.program.display().to_string(), e);
    let start = Instant::now();
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let mut status: Option<ExitStatus> = None;
    let mut killed: Option<Ending> = None;
    let mut ended_at: Option<Instant> = None;
    loop {
        match chunks.recv_timeout(Duration::from_millis(20)) {
            Ok(chunk) => on_output(&chunk),
            Err(RecvTimeoutError::Disconnected) if status.is_some() => break,
            Err(RecvTimeoutError::Disconnected) | Err(RecvTimeoutError::Timeout) => {}
        }
        if status.is_none() {
            if let Some(s) = child.try_wait().map_err(failed)? {
                status = Some(s);
                ended_at = Some(Instant::now());
                // Whatever it started in the background ends with it.
                let _ = killpg(group, Signal::SIGKILL);
            } else if killed.is_none() {
                killed = if stop() {
                    Some(Ending::Interrupted)
                } else if start.elapsed() >= spec.timeout {
                    Some(Ending::TimedOut)
                } else {
                    None
                };
                if killed.is_some() {
                    let _ = killpg(group, Signal::SIGKILL);
                }
            }
        }
        if ended_at.is_some_and(|t| t.elapsed() > DRAIN) {
            break;
        }
    }
    Ok(match (killed, status) {
        (Some(k), _) => k,
        (None, Some(s)) => ending_of(s),
        (None, None) => Ending::Interrupted,
    })
}

fn ending_of(status: ExitStatus) -> Ending {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(sig)) => Ending::Signaled(sig),
        (None, None) => Ending::Exited(-1),
    }
}

fn read_in_background(mut pipe: std::fs::File) -> mpsc::Receiver<Vec<u8>> {
    // Bounded: a program that floods its output waits for the screen instead of
    // filling memory.
    let (tx, rx) = mpsc::sync_channel(16);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

/// The first and last `cap / 2` bytes of a stream, and its length.
struct Capture {
    half: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    fn new(cap: usize) -> Self {
        Self {
            half: cap / 2,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.half.saturating_sub(self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..room]);
        bytes = &bytes[room..];
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(self.half);
        self.tail.drain(..over);
    }

    /// The kept text (a note where bytes were cut) and how many were cut.
    fn finish(&self) -> (String, u64) {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let cut = self.total - kept;
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        if cut == 0 {
            (format!("{head}{tail}"), 0)
        } else {
            let note = format!(
                "\n[… {cut} of {} bytes cut here: the first and last {} KB are kept …]\n",
                self.total,
                self.half / 1024
            );
            (format!("{head}{note}{tail}"), cut)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration, stop: &dyn Fn() -> bool) -> (Outcome, String) {
        let args = vec!["-c".to_string(), script.to_string()];
        let dir = tempfile::tempdir().unwrap();
        let spec = Spec {
            program: Path::new("/bin/sh"),
            args: &args,
            cwd: dir.path(),
            env: vec![("ONLY".into(), "this".into())],
            timeout,
        };
        let mut screen = Vec::new();
        let outcome = run(&spec, &mut |c| screen.extend_from_slice(c), stop).unwrap();
        (outcome, String::from_utf8(screen).unwrap())
    }

    #[test]
    fn the_child_gets_only_the_given_environment_and_both_streams() {
        let (o, screen) = sh(
            "echo \"$ONLY $HOME\"; echo err >&2; exit 3",
            Duration::from_secs(10),
            &|| false,
        );
        assert_eq!(o.ending, Ending::Exited(3));
        assert_eq!(screen, "this \nerr\n");
        assert_eq!(o.kept, screen);
        assert_eq!(o.bytes, 10);
    }

    #[test]
    fn stop_kills_the_group_at_once() {
        let start = Instant::now();
        let stop = move || start.elapsed() > Duration::from_millis(300);
        let (o, screen) = sh(
            "sleep 100 & echo up; sleep 100",
            Duration::from_secs(60),
            &stop,
        );
        assert_eq!(o.ending, Ending::Interrupted);
        assert_eq!(screen, "up\n");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(
            o.ending.describe(Duration::from_secs(60)),
            "stopped by Ctrl-C"
        );
    }

    #[test]
    fn capture_keeps_everything_under_the_cap() {
        let mut c = Capture::new(16);
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.finish(), ("hello world".into(), 0));
    }

    #[test]
    fn capture_keeps_head_and_tail_and_says_what_was_cut() {
        let mut c = Capture::new(8);
        for chunk in [b"abc".as_slice(), b"defgh", b"ijklmnop", b"qrstuvwxyz"] {
            c.push(chunk);
        }
        let (text, cut) = c.finish();
        assert_eq!(cut, 26 - 8);
        assert!(text.starts_with("abcd\n[… 18 of 26 bytes cut"), "{text}");
        assert!(text.ends_with("…]\nwxyz"), "{text}");
    }
}
