//! Opening the SQLite files harvey shares between processes (memory index, sessions,
//! RAG stores, knowledge base) the same way everywhere: WAL, a busy timeout, and set-up
//! done under the write lock.
//!
//! SQLite's busy handler does not cover every wait: switching a new file to WAL while
//! another process creates it, or upgrading a read to a write, can return "database is
//! locked" at once. Those steps are retried here until [`BUSY_TIMEOUT`] runs out.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

/// How long a process waits for another one's write before it reports the lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Opens `path` in WAL mode with the busy timeout set first.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    retry(|| conn.pragma_update(None, "journal_mode", "WAL"))?;
    retry(|| conn.pragma_update(None, "synchronous", "NORMAL"))?;
    conn.pragma_update(None, "cache_size", -512)?;
    Ok(conn)
}

/// Opens a file harvey does not own for reading only, as immutable: no lock, no `-shm`,
/// no journal, nothing written beside it. (A `-wal` it may have is not read.)
pub fn open_untouched(path: &Path) -> rusqlite::Result<Connection> {
    let text = path.to_string_lossy();
    let escaped = text
        .replace('%', "%25")
        .replace('?', "%3f")
        .replace('#', "%23");
    Connection::open_with_flags(
        format!("file:{escaped}?immutable=1"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
}

/// The column names of `table` (none when it does not exist).
pub fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |r| r.get(0))?;
    names.collect()
}

/// Whether another program wrote the SQLite file at `path`: it has tables and no `meta`
/// table (every file harvey writes has one). Read without touching the file.
pub fn written_elsewhere(path: &Path) -> bool {
    let Ok(conn) = open_untouched(path) else {
        return false;
    };
    let tables = |name: Option<&str>| -> rusqlite::Result<i64> {
        conn.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND (?1 IS NULL OR name = ?1)",
            [name],
            |r| r.get(0),
        )
    };
    matches!((tables(None), tables(Some("meta"))), (Ok(n), Ok(0)) if n > 0)
}

/// Whether harvey wrote the SQLite file at `path`: it has a `meta` table (every file
/// harvey writes has one; the Go tool's have none). Read without touching the file.
pub fn written_by_harvey(path: &Path) -> bool {
    let Ok(conn) = open_untouched(path) else {
        return false;
    };
    conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .is_ok_and(|n| n > 0)
}

/// Whether the SQLite file at `path` has a `meta` row `key` (a text value). Read without
/// touching the file.
pub fn has_meta_value(path: &Path, key: &str) -> bool {
    let Ok(conn) = open_untouched(path) else {
        return false;
    };
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| {
        r.get::<_, String>(0)
    })
    .is_ok()
}

/// Writes a consistent copy of the database `conn` to `path`, which must not exist:
/// first under a temporary name beside it, then linked to `path` only if no other
/// process got there first (`Ok(false)` then). An interrupted copy leaves no `path`.
pub fn copy_to_new(conn: &Connection, path: &Path) -> rusqlite::Result<bool> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let copied = conn.execute("VACUUM INTO ?1", [temp.to_string_lossy()]);
    let linked = copied.is_ok() && std::fs::hard_link(&temp, path).is_ok();
    let _ = std::fs::remove_file(&temp);
    copied.map(|_| linked)
}

/// Gives the database at `old` the name `new` (which must not exist), as a consistent
/// copy; the old file and its `-wal`/`-shm` are removed once the copy is in place.
pub fn relocate(old: &Path, new: &Path) -> rusqlite::Result<()> {
    let conn =
        rusqlite::Connection::open_with_flags(old, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let moved = copy_to_new(&conn, new)?;
    drop(conn);
    if moved {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", old.display()));
        }
    }
    Ok(())
}

/// Runs `f` in one `BEGIN IMMEDIATE` transaction, or inside the one already open.
pub fn immediate<T>(
    conn: &Connection,
    f: impl FnOnce() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    immediate_with(conn, |e| e, f)
}

/// [`immediate`] for a caller with its own error type (`lift` wraps SQLite's).
pub fn immediate_with<T, E>(
    conn: &Connection,
    lift: impl Fn(rusqlite::Error) -> E,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    if !conn.is_autocommit() {
        return f();
    }
    retry(|| conn.execute_batch("BEGIN IMMEDIATE")).map_err(&lift)?;
    match f() {
        Ok(v) => {
            conn.execute_batch("COMMIT").map_err(&lift)?;
            Ok(v)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Repeats `f` while another process holds the lock, up to [`BUSY_TIMEOUT`].
pub fn retry<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// What to do about `e`, for the end of an error message: a full disk is not fixed by
/// rebuilding an index, and a lock is not fixed by deleting it. `otherwise` is the
/// caller's advice for a damaged file or an unknown error (it knows what can be rebuilt).
pub fn hint(e: &rusqlite::Error, otherwise: &'static str) -> &'static str {
    match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => {
            "the disk is full: free some space and try again; what was written before is unchanged"
        }
        Some(ErrorCode::SystemIoFailure | ErrorCode::CannotOpen) => {
            "it could not be written (a full disk, a file-size limit or permissions?): \
             check free space and permissions, then try again; what was written before is unchanged"
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            "another harvey process held the lock for 30 s: try again when it has finished"
        }
        Some(ErrorCode::ReadOnly) => "the file is read-only: check its permissions",
        _ => otherwise,
    }
}

/// "database is locked" or "database table is locked".
pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_connections_open_a_new_file_at_once_without_a_lock_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let conn = open(&path)?;
                    immediate(&conn, || {
                        conn.execute_batch("CREATE TABLE IF NOT EXISTS t(v INTEGER)")?;
                        conn.execute("INSERT INTO t(v) VALUES (?1)", [i])
                    })
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let conn = open(&path).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 8);
    }

    #[test]
    fn a_failing_transaction_rolls_back() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open(&dir.path().join("y.db")).unwrap();
        conn.execute_batch("CREATE TABLE t(v INTEGER)").unwrap();
        let r: rusqlite::Result<()> = immediate(&conn, || {
            conn.execute("INSERT INTO t(v) VALUES (1)", [])?;
            Err(rusqlite::Error::QueryReturnedNoRows)
        });
        assert!(r.is_err());
        assert!(conn.is_autocommit());
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }
}
