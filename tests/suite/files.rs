//! Files into the context (issue 14), with the scripted engine (a token is a word):
//! `/read` and `/attach` counted before anything is sent, refused when they do not fit,
//! binary files and sandbox escapes refused, PDF pages, pinned context that survives
//! `/clear` with the prefix reused, `/context` parts that add up, and `/compact`.

use std::path::Path;

use harvey::app::App;
use harvey::engine::scripted::ScriptedEngine;
use harvey::repl::handle_line;

use crate::support::pdf::{has_pdftotext, pdf};

/// A workspace without memory (no embedder) and with tools off: one generation a turn.
pub fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("agents")).unwrap();
    std::fs::write(
        ws.path().join("agents/harvey.yaml"),
        "memory:\n  enabled: false\ntools:\n  enabled: false\nsampling:\n  max_tokens: 16\n",
    )
    .unwrap();
    ws
}

fn app(ws: &Path, n_ctx: u32, replies: &[&str]) -> App {
    let config = harvey::config::load(ws).unwrap();
    let engine = ScriptedEngine::new(n_ctx, replies.iter().copied());
    App::with_engine(ws.canonicalize().unwrap(), config, Box::new(engine))
}

pub fn line(app: &mut App, text: &str) -> String {
    let mut out = Vec::new();
    handle_line(app, text, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The number right after `before` in `text`.
pub fn number_after(text: &str, before: &str) -> usize {
    let at = text
        .find(before)
        .unwrap_or_else(|| panic!("{before:?} in {text}"))
        + before.len();
    let digits: String = text[at..]
        .chars()
        .skip_while(|c| *c == ' ')
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("a number after {before:?} in {text}"))
}

/// The attachment block of the last user message: what precedes `text`.
pub fn block_before(app: &App, text: &str) -> String {
    let messages = app.conversation().messages();
    let sent = &messages
        .iter()
        .rev()
        .find(|m| m.role == harvey::engine::Role::User)
        .unwrap()
        .content;
    sent.strip_suffix(&format!("\n\n{text}"))
        .unwrap_or_else(|| panic!("{sent}"))
        .to_string()
}

/// `/read FILE 2-3` then a message: the lines ride on it, counted exactly; the session
/// record notes path, lines and tokens, not the text again.
pub fn read_fits_and_rides_on_the_next_message(app: &mut App) {
    let out = line(app, "/read notes.md 2-3");
    assert!(
        out.starts_with("[attached file notes.md lines 2–3: "),
        "{out}"
    );
    let tokens = number_after(&out, "lines 2–3: ");
    assert_eq!(app.attachments().tokens(), tokens);
    line(app, "What do these lines say?");
    let block = block_before(app, "What do these lines say?");
    assert!(
        block.contains("bravo line two") && block.contains("charlie line three"),
        "{block}"
    );
    assert!(
        !block.contains("alpha") && !block.contains("delta"),
        "{block}"
    );
    assert_eq!(app.engine().count_tokens(&block), tokens, "{block}");
    assert!(
        app.attachments().is_empty(),
        "attachments ride on one message only"
    );
    let record = std::fs::read_to_string(app.recorder().path().unwrap()).unwrap();
    assert!(
        record.contains(&format!(
            "attached file notes.md lines 2–3 ({tokens} tokens)"
        )),
        "{record}"
    );
    assert!(
        !record.contains("bravo line two"),
        "the record does not repeat the file"
    );
}

pub fn write_notes(ws: &Path) {
    std::fs::write(
        ws.join("notes.md"),
        "alpha line one\nbravo line two\ncharlie line three\ndelta line four\n",
    )
    .unwrap();
}

#[test]
fn read_that_fits_is_in_the_next_prompt_with_its_exact_token_count() {
    let ws = workspace();
    write_notes(ws.path());
    let mut app = app(ws.path(), 4096, &["They list words."]);
    read_fits_and_rides_on_the_next_message(&mut app);
}

/// A file larger than what is free is refused with both numbers; nothing is attached
/// or sent, and the line range it offers does fit.
pub fn too_big_is_refused_with_both_numbers(app: &mut App, ws: &Path) {
    let big: String = (1..=400)
        .map(|i| format!("line {i} of a long file about nothing much\n"))
        .collect();
    std::fs::write(ws.join("big.txt"), big).unwrap();
    let turns = app.turns().len();
    let free = app.room().unwrap().free;
    let whole = harvey::files::read(ws, "big.txt", &[]).unwrap();
    let tokens = app.engine().count_tokens(&whole.text);
    assert!(
        tokens > free,
        "the test file must not fit: {tokens} ≤ {free}"
    );
    let out = line(app, "/read big.txt");
    assert!(
        out.contains(&format!(
            "file big.txt has {tokens} tokens but only {free} are free"
        )),
        "{out}"
    );
    assert!(out.contains("nothing was attached"), "{out}");
    assert!(app.attachments().is_empty());
    assert_eq!(app.turns().len(), turns, "nothing was sent");
    let lines = number_after(&out, "/read big.txt 1-");
    assert!((1..400).contains(&lines), "{out}");
    let fits = line(app, &format!("/read big.txt 1-{lines}"));
    assert!(
        fits.starts_with("[attached file big.txt lines 1–"),
        "{fits}"
    );
    let one_more = harvey::files::read(
        ws,
        "big.txt",
        &[harvey::files::Range {
            start: 1,
            end: Some(lines + 1),
        }],
    )
    .unwrap();
    assert!(
        app.engine().count_tokens(&one_more.text) > free,
        "the offered range is the largest that fits"
    );
    let used = app.context_used().unwrap();
    let out = line(app, "/context pin big.txt");
    assert!(
        out.contains("file big.txt has ") && out.contains("nothing was pinned"),
        "{out}"
    );
    assert!(app.conversation().pins().is_empty());
    assert_eq!(app.context_used().unwrap(), used, "the prompt is as it was");
}

#[test]
fn read_that_does_not_fit_is_refused_with_both_numbers_and_nothing_is_sent() {
    let ws = workspace();
    let mut app = app(ws.path(), 1024, &["ok"]);
    too_big_is_refused_with_both_numbers(&mut app, ws.path());
}

#[test]
fn attach_takes_whole_files_and_refuses_binaries_and_escapes() {
    let ws = workspace();
    write_notes(ws.path());
    std::fs::write(ws.path().join("tool.bin"), b"\x7fELF\x02\x01\x00\x00data").unwrap();
    std::fs::write(ws.path().join(".env"), "TOKEN=x").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outside text").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        ws.path().join("link.txt"),
    )
    .unwrap();
    let mut app = app(ws.path(), 4096, &["ok"]);
    let out = line(&mut app, "/attach notes.md");
    assert!(out.starts_with("[attached file notes.md: "), "{out}");
    assert!(app.attachments().list()[0].text.contains("delta line four"));
    let refusals = [
        (
            "/attach tool.bin",
            "tool.bin looks like a binary file (it contains NUL bytes)",
        ),
        ("/read ../outside.txt", "outside the workspace"),
        ("/read link.txt", "outside the workspace"),
        ("/read agents/harvey.yaml", "inside agents/"),
        ("/read .env", "looks like a secret"),
        ("/read missing.md", "does not exist"),
        (
            "/read notes.md 9-12",
            "notes.md has 4 lines; line 9 is past the end",
        ),
        ("/read notes.md 5-2", "ends before it starts"),
        ("/read", "usage: /read FILE"),
        ("/attach", "usage: /attach FILE"),
    ];
    for (command, needle) in refusals {
        let out = line(&mut app, command);
        assert!(out.contains(needle), "{command}: {out}");
    }
    assert_eq!(
        app.attachments().list().len(),
        1,
        "only notes.md was attached"
    );
}

#[test]
fn pdf_page_ranges_read_through_pdftotext() {
    if !has_pdftotext("pdf_page_ranges_read_through_pdftotext") {
        return;
    }
    let ws = workspace();
    std::fs::write(
        ws.path().join("doc.pdf"),
        pdf(&[
            "Page one says alpha",
            "Page two says bravo",
            "Page three says charlie",
            "Page four says delta",
        ]),
    )
    .unwrap();
    let mut app = app(ws.path(), 4096, &["ok"]);
    let out = line(&mut app, "/read doc.pdf 2-3");
    assert!(
        out.starts_with("[attached PDF doc.pdf pages 2–3: "),
        "{out}"
    );
    let text = &app.attachments().list()[0].text;
    assert!(text.starts_with("[PDF doc.pdf, pages 2–3]\n"), "{text}");
    assert!(
        text.contains("Page two says bravo") && text.contains("Page three says charlie"),
        "{text}"
    );
    assert!(!text.contains("alpha") && !text.contains("delta"), "{text}");
    let out = line(&mut app, "/read doc.pdf 9-10");
    assert!(out.contains("pdftotext could not read doc.pdf"), "{out}");
    assert_eq!(app.attachments().list().len(), 1);
}

/// `/context add` then a turn, `/clear`, another turn: the pin is still in the prompt
/// and only the new message is evaluated (the system prompt and the pin stay cached).
pub fn pinned_survives_clear_and_the_prefix_is_reused(app: &mut App) {
    let pin =
        "Project codename is Bluefin. The team ships every Tuesday and answers in short sentences.";
    let used = app.context_used().unwrap();
    let out = line(app, &format!("/context add {pin}"));
    assert!(out.starts_with("[pinned text: "), "{out}");
    let pin_tokens = number_after(&out, "[pinned text: ");
    assert_eq!(
        pin_tokens,
        app.context_used().unwrap() - used,
        "what the pin costs"
    );
    assert!(
        pin_tokens > app.engine().count_tokens(pin),
        "header and template count too"
    );
    line(app, "Hello there, who are you?");
    let first = app.turns().last().unwrap().clone();
    let record = std::fs::read_to_string(app.recorder().path().unwrap()).unwrap();
    assert!(
        record.contains(&format!("pinned text ({pin_tokens} tokens)")),
        "{record}"
    );
    assert_eq!(
        first.evaluated_tokens, first.prompt_tokens,
        "a cold cache evaluates all"
    );
    let before_clear = app.conversation().messages();
    assert_eq!(
        line(app, "/clear"),
        "[conversation cleared; 1 pinned items kept]\n"
    );
    line(app, "Quickly, what is the codename?");
    let messages = app.conversation().messages();
    assert!(
        messages.iter().any(|m| m.content.contains(pin)),
        "the pin survived /clear"
    );
    let second = app.turns().last().unwrap().clone();
    let old = app
        .engine()
        .prompt_ids(&before_clear[..before_clear.len() - 1])
        .unwrap();
    let new = app
        .engine()
        .prompt_ids(&messages[..messages.len() - 1])
        .unwrap();
    let common = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    assert_eq!(second.prompt_tokens, new.len());
    assert_eq!(
        second.evaluated_tokens,
        new.len() - common,
        "only the tokens after the cached system prompt and pin are evaluated"
    );
    assert!(
        second.evaluated_tokens < second.prompt_tokens - pin_tokens,
        "the pin was not evaluated again: {second:?}"
    );
}

#[test]
fn pinned_text_survives_clear_and_the_prefix_is_reused_on_the_next_turn() {
    let ws = workspace();
    let mut app = app(ws.path(), 4096, &["I am Harvey.", "Bluefin."]);
    pinned_survives_clear_and_the_prefix_is_reused(&mut app);
    let out = line(&mut app, "/context clear");
    assert_eq!(out, "[pinned context cleared: 1 items]\n");
    assert!(app.conversation().pins().is_empty());
}

/// `/context` rows add up to the context in use, and with what is attached and free to
/// n_ctx.
pub fn context_parts_add_up(app: &mut App) {
    let out = context_parts_add_up_without_pins(app);
    let row = |name: &str| number_after(&out, &format!("\n  {name}"));
    assert!(row("pinned") > 0 && row("conversation") > 0, "{out}");
}

/// [`context_parts_add_up`] when nothing need be pinned; returns the table.
pub fn context_parts_add_up_without_pins(app: &mut App) -> String {
    let out = line(app, "/context");
    let row = |name: &str| number_after(&out, &format!("\n  {name}"));
    let parts: usize = [
        "instructions",
        "tools",
        "guidance",
        "workspace files",
        "memory context",
        "pinned",
        "conversation",
    ]
    .iter()
    .map(|n| row(n))
    .sum();
    let used = row("= in use");
    assert_eq!(used, app.context_used().unwrap(), "{out}");
    assert_eq!(parts, used, "{out}");
    let fixed: usize = [
        "instructions",
        "tools",
        "guidance",
        "workspace files",
        "memory context",
    ]
    .iter()
    .map(|n| row(n))
    .sum();
    assert_eq!(row("before 1st msg"), fixed, "{out}");
    let n_ctx = number_after(&out, "context of ");
    assert_eq!(used + row("attachments") + row("free"), n_ctx, "{out}");
    assert_eq!(row("attachments"), app.attachments().tokens(), "{out}");
    out
}

#[test]
fn context_parts_add_up_to_the_context_used() {
    let ws = workspace();
    write_notes(ws.path());
    std::fs::write(
        ws.path().join("HARVEY.md"),
        "Use British spelling in every answer.\n",
    )
    .unwrap();
    let mut app = app(ws.path(), 4096, &["ok then", "fine"]);
    line(&mut app, "/context pin notes.md");
    line(&mut app, "first question");
    line(&mut app, "/attach notes.md");
    context_parts_add_up(&mut app);
    let out = line(&mut app, "/context");
    assert!(
        number_after(&out, "\n  guidance") > 0,
        "HARVEY.md counts: {out}"
    );
    assert!(out.contains("  pinned: file notes.md"), "{out}");
    for bad in [
        "/context bogus",
        "/context add",
        "/context pin",
        "/context clear now",
    ] {
        let out = line(&mut app, bad);
        assert!(out.starts_with("usage: /context"), "{bad}: {out}");
    }
}

#[test]
fn compact_folds_the_conversation_now_and_prints_tokens_before_and_after() {
    let ws = workspace();
    let mut app = app(
        ws.path(),
        4096,
        &[
            "one two three four",
            "five six seven",
            "eight nine",
            "a short summary",
        ],
    );
    assert!(line(&mut app, "/compact").contains("nothing to compact"));
    line(&mut app, "/context add keep me");
    for q in ["first question here", "second question here", "third one"] {
        line(&mut app, q);
    }
    let before = app.context_used().unwrap();
    let out = line(&mut app, "/compact the questions asked");
    assert!(
        out.contains(&format!("[compacted 3 turns into a summary: {before} → ")),
        "{out}"
    );
    let after = number_after(&out, "→");
    assert_eq!(after, app.context_used().unwrap());
    assert!(after < before, "{out}");
    assert_eq!(app.conversation().summary(), Some("a short summary"));
    assert_eq!(app.conversation().turns().len(), 0);
    assert_eq!(app.conversation().pins().len(), 1, "pins are never folded");
}
