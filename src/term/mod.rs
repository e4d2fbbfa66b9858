//! The terminal both faces share (the REPL and `harvey run`): the input echo kept off
//! while a reply streams, and a turn's events drawn as text. Below the faces; knows
//! nothing of the REPL's command table or `rustyline`.

pub mod echo;
pub mod events;
