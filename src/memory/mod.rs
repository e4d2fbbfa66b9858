//! Typed memories (placeholder until the memory issue lands).
