//! `harvey model pull URL`: runs `harvey::model::pull` and draws its progress on stderr (a
//! redrawn bar on a terminal, a line every few seconds otherwise). Ctrl-C keeps the part
//! file for a resume and exits 130.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use harvey::model::catalog;
use harvey::model::pull::{self, progress, PullError, PullEvent, PullRequest, Target};

/// How often the bar is redrawn on a terminal, and a line is written otherwise.
const REDRAW: Duration = Duration::from_millis(100);
const LINE_EVERY: Duration = Duration::from_secs(5);
/// A Ctrl-C that the download loop has not answered by then (a read that is waiting on
/// the network) ends the process from the handler, the part file kept all the same.
const ABORT_GRACE: Duration = Duration::from_secs(1);
/// Exit status after Ctrl-C, as a shell reports a process ended by SIGINT.
const INTERRUPTED: u8 = 130;

pub fn run(req: PullRequest) -> Result<ExitCode> {
    let target = match pull::target(&req) {
        Ok(t) => t,
        Err(e @ PullError::BadSha256(_)) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
        Err(e) => return Err(e.into()),
    };
    let abort = install_interrupt(&target)?;
    eprintln!("pulling {}\n   into {}", req.url, target.dest.display());
    let mut meter = Meter::new(std::io::stderr().is_terminal());
    let result = pull::pull(&req, &abort, &mut |event| meter.show(event));
    meter.end_line();
    match result {
        Ok(pulled) => {
            let resumed = if pulled.resumed_from > 0 {
                format!(
                    ", resumed at {}",
                    progress::human_bytes(pulled.resumed_from)
                )
            } else {
                String::new()
            };
            println!(
                "pulled {} ({}{resumed})\nsha256 {}\n{}",
                pulled.path.display(),
                progress::human_bytes(pulled.bytes),
                pulled.sha256,
                catalog::list_line(&pulled.path, false)
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ PullError::Interrupted(_)) => {
            eprintln!("{e}");
            Ok(ExitCode::from(INTERRUPTED))
        }
        Err(e) => Err(e.into()),
    }
}

/// The abort flag Ctrl-C raises. A second Ctrl-C, or a first one the loop has not seen
/// within [`ABORT_GRACE`], exits at once: the part file is a prefix of the file either way.
fn install_interrupt(target: &Target) -> Result<Arc<AtomicBool>> {
    let abort = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&abort);
    let target = target.clone();
    ctrlc::set_handler(move || {
        if !flag.swap(true, Ordering::SeqCst) {
            std::thread::sleep(ABORT_GRACE);
        }
        match pull::kept(&target) {
            Some(kept) => eprintln!("\ninterrupted: {kept}"),
            None => eprintln!("\ninterrupted"),
        }
        std::process::exit(i32::from(INTERRUPTED));
    })
    .context("cannot install the Ctrl-C handler")?;
    Ok(abort)
}

/// Draws [`PullEvent`]s on stderr.
struct Meter {
    is_tty: bool,
    started: Instant,
    from: u64,
    done: u64,
    total: Option<u64>,
    drawn_at: Option<Instant>,
    /// A bar is on screen without its line end.
    is_open: bool,
}

impl Meter {
    fn new(is_tty: bool) -> Self {
        Self {
            is_tty,
            started: Instant::now(),
            from: 0,
            done: 0,
            total: None,
            drawn_at: None,
            is_open: false,
        }
    }

    fn show(&mut self, event: PullEvent) {
        match event {
            PullEvent::Started { from, total } => {
                (self.started, self.from, self.done, self.total) =
                    (Instant::now(), from, from, total);
                if from > 0 {
                    self.note(&format!("resuming at {}", progress::human_bytes(from)));
                }
            }
            PullEvent::StartedOver { why } => self.note(&format!("starting over: {why}")),
            PullEvent::Hashing { bytes } => self.note(&format!(
                "hashing the {} downloaded before…",
                progress::human_bytes(bytes)
            )),
            PullEvent::Progress { done, total } => {
                (self.done, self.total) = (done, total);
                let every = if self.is_tty { REDRAW } else { LINE_EVERY };
                if self.drawn_at.is_none_or(|at| at.elapsed() >= every) {
                    self.draw();
                }
            }
            PullEvent::Checking => {
                self.draw();
                self.end_line();
                self.note("checking the file…");
            }
        }
    }

    fn snapshot(&self) -> progress::Snapshot {
        progress::Snapshot {
            done: self.done,
            total: self.total,
            received: self.done.saturating_sub(self.from),
            elapsed: self.started.elapsed(),
        }
    }

    fn draw(&mut self) {
        let line = progress::line(&self.snapshot());
        let mut err = std::io::stderr().lock();
        if self.is_tty {
            let bar = self
                .total
                .map_or(String::new(), |t| progress::bar(self.done, t, 24) + " ");
            let _ = write!(err, "\r{bar}{line}\x1b[K");
            self.is_open = true;
        } else {
            let _ = writeln!(err, "  {line}");
        }
        let _ = err.flush();
        self.drawn_at = Some(Instant::now());
    }

    fn end_line(&mut self) {
        if std::mem::take(&mut self.is_open) {
            eprintln!();
        }
    }

    fn note(&mut self, text: &str) {
        self.end_line();
        eprintln!("{text}");
    }
}
