//! Sessions: the Fountain record written as the session happens, the sessions index and
//! per-session stats, records whose summary is pending, and the budget advice drawn
//! from them.

pub mod advice;
pub mod fountain;
pub mod go_manifest;
mod go_record;
pub mod grounding;
pub mod index;
pub mod mining;
pub mod pending;
mod record;
pub mod recorder;

pub use index::{SessionEntry, SessionIndex, SessionSilo, SessionStats};
pub use recorder::Recorder;
