//! The model wing: what a model file is and which chat template it gets.
//!
//! Below the engine: the engine asks this wing (the template by family, the GGUF header
//! checks); nothing here imports the engine or `llama_cpp_2`.

pub mod template;
