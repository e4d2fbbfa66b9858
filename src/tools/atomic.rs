//! Writing a file so that a crash at any moment leaves either the old file or the new
//! one under its name, never a mix: the bytes go to a temporary file in the same
//! directory, are flushed to disk, get the old file's permissions, and the temporary
//! file is renamed over the target (rename within a directory is atomic on POSIX);
//! then the directory itself is synced so the rename survives a power cut.
//!
//! A crash can leave the temporary file behind (`.NAME.harvey-PID-N.tmp`); it never
//! carries the final name. Replacing a file gives it a new inode: other hard links keep
//! the old content.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temporary name for `path`, in its directory.
fn temp_path(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{} has no file name", path.display())))?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = format!(
        ".{}.harvey-{}-{n}.tmp",
        name.to_string_lossy(),
        std::process::id()
    );
    Ok(path.with_file_name(temp))
}

/// Replaces (or creates) `path` with `bytes` atomically, keeping an existing file's
/// permissions (a new file gets the process's default, as `umask` allows).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let old_permissions = match std::fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let temp = temp_path(path)?;
    let result = fill(&temp, bytes, old_permissions).and_then(|()| {
        std::fs::rename(&temp, path)?;
        sync_dir(path)
    });
    if result.is_err() {
        // Nothing useful can be done if removing the leftover fails too.
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn fill(temp: &Path, bytes: &[u8], permissions: Option<std::fs::Permissions>) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(temp)?;
    file.write_all(bytes)?;
    if let Some(p) = permissions {
        file.set_permissions(p)?;
    }
    file.sync_all()
}

fn sync_dir(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => File::open(dir)?.sync_all(),
        _ => File::open(".")?.sync_all(),
    }
}

/// Whether `name` is one of this module's temporary files.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".harvey-")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_keeps_the_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["run.sh"]);
        write(&dir.path().join("fresh.txt"), b"x").unwrap();
        assert_eq!(std::fs::read(dir.path().join("fresh.txt")).unwrap(), b"x");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a directory: the rename fails after the temp file was written.
        let target = dir.path().join("d");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "x").unwrap();
        assert!(write(&target, b"data").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["d"]);
        assert!(is_temp_name(".a.txt.harvey-12-0.tmp") && !is_temp_name("a.tmp"));
    }
}
