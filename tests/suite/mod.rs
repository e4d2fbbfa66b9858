mod cli;
mod config;
mod engine;
mod repl;
