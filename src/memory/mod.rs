//! Typed memories: one file per memory under `agents/memories/` (the truth, in the Go
//! tool's format), a derived SQLite/FTS5 index, and the one budgeted recall path that
//! builds the `[memory context]` block injected at session start.

pub mod about;
mod clock;
pub mod file;
pub mod guard;
pub mod index;
pub mod keys;
pub mod lexical;
pub mod location;
pub mod overview;
pub mod pack;
pub mod query;
pub mod rank;
pub mod recall;
pub mod search;
pub mod store;
pub mod transfer;
pub mod types;
mod upkeep;
pub mod when;

pub use recall::{Candidate, Injection, Limits, MemorySilo, Section, Silo};
pub use store::{MemoryStore, Patch, Reconciled, StoreError, Warning, WriteOutcome};
pub use types::{normalize_description, Draft, Memory, MemoryType};
