mod cli;
mod config;
mod engine;
mod long;
mod repl;
mod tools;
