//! SQLite files written by hand for unit tests elsewhere: a Go tool's store (a plain
//! connection, as another program writes it), a file of an earlier harvey (opened as
//! harvey opens its own), and one value read back. Tests only; so the tests of `memory`,
//! `rag` and `kb` need no SQLite of their own.

use std::path::Path;

use rusqlite::Connection;

/// Runs `sql` on the file at `path` through a plain connection (rollback journal, no
/// busy timeout), as a program other than harvey writes it.
pub fn write_foreign(path: &Path, sql: &str) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
}

/// Runs `sql` on the file at `path` opened as harvey opens its own ([`super::open`]).
pub fn write_harvey(path: &Path, sql: &str) {
    let conn = super::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
}

/// The first column of the first row `sql` returns from the file at `path`, as text.
pub fn read_text(path: &Path, sql: &str) -> String {
    let conn = Connection::open(path).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}
