//! The storage boundary: every SQLite file harvey reads or writes (memory index, sessions
//! index, RAG stores, knowledge base, the vectors beside them) is reached through this
//! folder, and it is the only code that imports `rusqlite`.
//!
//! It holds the connection handling ([`connection`]: WAL, busy retries, hints), the
//! schema steps, the counts and the vector join the stores share ([`shared`]), and one
//! table gateway per store. The domain modules (`memory/`, `rag/`, `kb/`, `session/`,
//! `vector/`) keep their logic (ranking, chunking, embedding) and call these functions;
//! nothing here imports them back, except `vector`'s arithmetic and scan copy.

pub mod connection;
pub mod evidence;
#[cfg(test)]
pub mod fixtures;
pub mod kb;
pub mod memories;
pub mod rag;
pub mod sessions;
pub mod shared;
pub mod vectors;

pub use connection::{
    columns, copy_to_new, has_meta_value, immediate, immediate_with, open, open_untouched,
    relocate, retry, written_by_harvey, written_elsewhere, BUSY_TIMEOUT,
};

/// A SQLite failure as the domain modules carry it. Its message and its source chain are
/// SQLite's own (rusqlite's), unchanged: only the type is harvey's.
pub struct Error(rusqlite::Error);

/// A result of the storage boundary.
pub type Result<T> = std::result::Result<T, Error>;

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Self(e)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// What to do about `e`, for the end of an error message (see [`connection::hint`]).
pub fn hint(e: &Error, otherwise: &'static str) -> &'static str {
    connection::hint(&e.0, otherwise)
}

/// "database is locked" or "database table is locked".
pub fn is_busy(e: &Error) -> bool {
    connection::is_busy(&e.0)
}
