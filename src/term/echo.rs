//! Keeps what the user types while a reply streams out of the reply.
//!
//! While a reply streams nobody reads the terminal, so the terminal driver itself echoes
//! each keystroke into the middle of the reply on screen. [`EchoOff`] turns off `ECHO`
//! and `ICANON` on the input terminal for as long as it lives (generation, tool calls)
//! and restores the saved settings when dropped: on return, on Ctrl-C (the abort ends
//! the turn and the guard goes out of scope) and on a panic (drop runs while unwinding).
//! `ISIG` stays on, so Ctrl-C still raises SIGINT and stops the reply.
//!
//! What was typed meanwhile is discarded (`tcflush(TCIFLUSH)`) rather than kept for the
//! next prompt: the user never saw it, and a typed Enter would otherwise send a line
//! nobody reviewed. Not a terminal (a pipe, a test): nothing is done.

use std::os::fd::{AsFd, OwnedFd};

use nix::sys::termios::{self, FlushArg, LocalFlags, SetArg, Termios};

/// Echo and line editing off on one terminal until dropped.
pub struct EchoOff {
    /// A duplicate of the terminal's descriptor (the settings belong to the terminal,
    /// so any descriptor of it restores them).
    fd: OwnedFd,
    saved: Termios,
}

impl EchoOff {
    /// On standard input, when it is a terminal.
    pub fn stdin() -> Option<Self> {
        Self::on(std::io::stdin())
    }

    /// Turns echo and canonical mode off on `fd`; `None` when it is not a terminal or
    /// its settings cannot be changed (then nothing was changed).
    pub fn on(fd: impl AsFd) -> Option<Self> {
        let saved = termios::tcgetattr(fd.as_fd()).ok()?;
        let fd = fd.as_fd().try_clone_to_owned().ok()?;
        termios::tcsetattr(&fd, SetArg::TCSANOW, &quiet(&saved)).ok()?;
        Some(Self { fd, saved })
    }
}

/// Drops what was typed on standard input and not read yet (when it is a terminal).
pub fn discard_typed() {
    let stdin = std::io::stdin();
    if termios::tcgetattr(stdin.as_fd()).is_ok() {
        let _ = termios::tcflush(stdin.as_fd(), FlushArg::TCIFLUSH);
    }
}

/// The settings while a reply streams: no echo, no line editing, signals still on.
fn quiet(saved: &Termios) -> Termios {
    let mut t = saved.clone();
    t.local_flags.remove(LocalFlags::ECHO | LocalFlags::ICANON);
    t
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        // Restoring can only fail if the terminal went away; nothing is left to fix then.
        let _ = termios::tcflush(&self.fd, FlushArg::TCIFLUSH);
        let _ = termios::tcsetattr(&self.fd, SetArg::TCSANOW, &self.saved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn flags(fd: impl AsFd) -> LocalFlags {
        termios::tcgetattr(fd.as_fd()).unwrap().local_flags
    }

    #[test]
    fn not_a_terminal_is_left_alone() {
        let file = tempfile::tempfile().unwrap();
        assert!(EchoOff::on(&file).is_none());
    }

    #[test]
    fn echo_is_off_while_held_and_restored_with_typed_bytes_discarded() {
        let pty = nix::pty::openpty(None, None).unwrap();
        let before = flags(&pty.slave);
        assert!(before.contains(LocalFlags::ECHO | LocalFlags::ICANON | LocalFlags::ISIG));
        let guard = EchoOff::on(&pty.slave).unwrap();
        let during = flags(&pty.slave);
        assert!(!during.intersects(LocalFlags::ECHO | LocalFlags::ICANON));
        assert!(
            during.contains(LocalFlags::ISIG),
            "Ctrl-C must still stop a reply"
        );
        // Typed while the reply streams: nothing comes back as echo...
        let mut master = std::fs::File::from(pty.master);
        master.write_all(b"typed ahead\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let echoed = pending(&master);
        assert!(echoed.is_empty(), "echoed {echoed:?}");
        drop(guard);
        assert_eq!(flags(&pty.slave), before);
        // ...and it is gone when the next prompt reads.
        let slave = std::fs::File::from(pty.slave);
        assert!(pending(&slave).is_empty());
    }

    #[test]
    fn a_panic_while_held_still_restores_the_terminal() {
        let pty = nix::pty::openpty(None, None).unwrap();
        let before = flags(&pty.slave);
        let slave = &pty.slave;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _guard = EchoOff::on(slave);
            panic!("generation failed");
        }));
        assert!(result.is_err());
        assert_eq!(flags(&pty.slave), before);
    }

    /// What can be read without blocking.
    fn pending(file: &std::fs::File) -> Vec<u8> {
        use nix::fcntl::{fcntl, FcntlArg, OFlag};
        use std::os::fd::AsRawFd;
        let mut f = file.try_clone().unwrap();
        let fd = f.as_raw_fd();
        let old = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL).unwrap());
        fcntl(fd, FcntlArg::F_SETFL(old | OFlag::O_NONBLOCK)).unwrap();
        let mut buf = [0u8; 256];
        let n = f.read(&mut buf).unwrap_or(0);
        fcntl(fd, FcntlArg::F_SETFL(old)).unwrap();
        buf[..n].to_vec()
    }
}
