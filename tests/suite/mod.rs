mod cli;
mod config;
mod engine;
mod long;
mod memory;
mod repl;
mod sessions;
mod tools;
