//! The model wing: finding a model file (`find`), describing it from its GGUF header
//! (`gguf`, `catalog`), which chat template it gets (`template`), and downloading it
//! (`pull`, the only importer of `ureq`).
//!
//! Below the engine: the engine asks this wing (the template by family, the header checks
//! before a load); nothing here imports the engine or `llama_cpp_2`.

pub mod catalog;
pub mod find;
pub mod gguf;
pub mod pull;
pub mod template;
