//! The storage boundary: every SQLite file harvey reads or writes (memory index, sessions
//! index, RAG stores, knowledge base, the vectors beside them) is reached through this
//! folder, and it is the only code that imports `rusqlite`.
//!
//! It holds the connection handling ([`connection`]: WAL, busy retries, hints), the
//! schema steps, the counts and the vector join the stores share, and one table gateway
//! per store. The domain modules (`memory/`, `rag/`, `kb/`, `session/`, `vector/`) keep
//! their logic (ranking, chunking, embedding) and call these functions; nothing here
//! imports them back.

pub mod connection;

pub use connection::{
    columns, copy_to_new, hint, immediate, immediate_with, is_busy, open, open_untouched,
    relocate, retry, written_by_harvey, written_elsewhere, BUSY_TIMEOUT,
};
