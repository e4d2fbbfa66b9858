//! Files into the context against the real default model (its tokenizer and chat
//! template): the same checks as `files.rs` — exact token counts, refusal before
//! anything is sent, the pinned prefix reused across `/clear`, `/context` adding up.

use harvey::app::App;

use super::files::{
    context_parts_add_up, line, pinned_survives_clear_and_the_prefix_is_reused,
    read_fits_and_rides_on_the_next_message, too_big_is_refused_with_both_numbers, workspace,
    write_notes,
};
use crate::support::engine;

fn app(ws: &std::path::Path, n_ctx: u32) -> App {
    let config = harvey::config::load(ws).unwrap();
    App::with_engine(
        ws.canonicalize().unwrap(),
        config,
        Box::new(engine(n_ctx, 512)),
    )
}

#[test]
fn real_model_read_counts_exactly_and_refuses_what_does_not_fit() {
    let ws = workspace();
    write_notes(ws.path());
    let mut app = app(ws.path(), 1024);
    read_fits_and_rides_on_the_next_message(&mut app);
    too_big_is_refused_with_both_numbers(&mut app, ws.path());
}

#[test]
fn real_model_pin_survives_clear_with_the_prefix_reused_and_context_adds_up() {
    let ws = workspace();
    write_notes(ws.path());
    let mut app = app(ws.path(), 2048);
    pinned_survives_clear_and_the_prefix_is_reused(&mut app);
    line(&mut app, "/attach notes.md");
    context_parts_add_up(&mut app);
    let out = line(&mut app, "/compact the codename");
    assert!(out.contains("[compacted 1 turns into a summary: "), "{out}");
    assert!(app.conversation().turns().is_empty() && app.conversation().summary().is_some());
}
