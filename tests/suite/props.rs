//! Property tests of the parsers and round trips: the Fountain session record, memory
//! front matter, the config loader, the FTS5 query builder and the RAG chunker. Random
//! input never panics; what is written reads back exactly. 256 cases each by default
//! (`PROPTEST_CASES` raises it).

use std::path::Path;

use harvey::memory::file;
use harvey::memory::query::fts_query;
use harvey::memory::{Memory, MemoryType};
use harvey::rag::chunk::{chunk, Kind};
use harvey::session::fountain::{self, Exchange, TitlePage};
use harvey::tokens::{TokenCounter, WordCounter};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256),
        // Failures are reported with their minimal input; no regression files in the tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text that hits the syntax of the formats under test as well as arbitrary Unicode.
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("  ".to_string()),
        Just(" ".to_string()),
        Just("\t".to_string()),
        Just("\r\n".to_string()),
        Just("\\".to_string()),
        Just("(".to_string()),
        Just("[[".to_string()),
        Just("]]".to_string()),
        Just("!".to_string()),
        Just("~".to_string()),
        Just("---".to_string()),
        Just("HARVEY".to_string()),
        Just("INT. HARVEY AND USER TALKING ".to_string()),
        Just("THE END.".to_string()),
        Just("FADE IN:".to_string()),
        Just("Title: x".to_string()),
        Just("# heading".to_string()),
        Just("```".to_string()),
        Just("\"".to_string()),
        Just("*".to_string()),
        Just(":".to_string()),
        Just("null".to_string()),
        Just("- item".to_string()),
        Just("\u{feff}".to_string()),
        Just("\u{85}".to_string()),
        Just("\u{2028}".to_string()),
        "[a-zA-Z0-9 ]{1,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn exchange() -> impl Strategy<Value = Exchange> {
    let note = tricky_text().prop_filter("closing notes belong to the close", |n| {
        !fountain::CLOSING_PREFIXES
            .iter()
            .any(|p| one_line(n).starts_with(p.trim_end()))
    });
    (
        tricky_text(),
        tricky_text(),
        tricky_text(),
        prop::collection::vec(note, 0..3),
    )
        .prop_map(|(when, user, reply, notes)| Exchange {
            when,
            user,
            reply,
            notes,
        })
}

/// What reading gives back for a written exchange: the heading time and the notes are
/// one line each (`]]` defused); the speeches are exact.
fn as_read(e: &Exchange) -> Exchange {
    Exchange {
        when: one_line(&e.when),
        user: e.user.clone(),
        reply: e.reply.clone(),
        notes: e
            .notes
            .iter()
            .map(|n| one_line(n).replace("]]", "] ]"))
            .collect(),
    }
}

fn user_name() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("talking".to_string()),
        Just("harvey".to_string()),
        Just("and".to_string()),
        "[a-z]{1,6}",
        any::<String>(),
    ];
    prop::collection::vec(word, 0..4).prop_map(|w| w.join(" "))
}

fn title() -> impl Strategy<Value = TitlePage> {
    (
        tricky_text(),
        tricky_text(),
        tricky_text(),
        tricky_text(),
        tricky_text(),
    )
        .prop_map(|(title, credit, author, date, model)| TitlePage {
            title,
            credit,
            author,
            date,
            model,
        })
}

/// A record as the recorder writes it, and the offset where each scene's speeches end.
fn record_text(title: &TitlePage, user: &str, exchanges: &[Exchange]) -> (String, Vec<usize>) {
    let mut text = fountain::header(title);
    let mut ends = Vec::new();
    for e in exchanges {
        let scene = fountain::scene(user, e);
        let notes: usize = e.notes.iter().map(|n| fountain::note(n).len()).sum();
        ends.push(text.len() + scene.len() - notes);
        text.push_str(&scene);
    }
    (text, ends)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fountain_records_round_trip_exactly(
        title in title(),
        user in user_name(),
        exchanges in prop::collection::vec(exchange(), 0..4),
        summary in "[a-z ]{0,20}",
    ) {
        let (mut text, _) = record_text(&title, &user, &exchanges);
        text.push_str(&fountain::note(&format!("Summary: {summary}")));
        text.push_str(fountain::THE_END);
        let back = fountain::parse(&text);
        let want: Vec<Exchange> = exchanges.iter().map(as_read).collect();
        prop_assert_eq!(&back.exchanges, &want, "{}", text);
        prop_assert!(back.ended);
        prop_assert_eq!(back.closing_notes, vec![one_line(&format!("Summary: {summary}"))]);
        prop_assert_eq!(back.title.title, one_line(&title.title));
        prop_assert_eq!(back.title.model, one_line(&title.model));
        if !exchanges.is_empty() {
            prop_assert_eq!(back.user_name, fountain::character(&user));
        }
    }

    #[test]
    fn a_cut_fountain_record_keeps_exactly_the_complete_exchanges(
        user in user_name(),
        exchanges in prop::collection::vec(exchange(), 1..4),
        cut_at in 0.0f64..=1.0,
    ) {
        let title = TitlePage { title: "Harvey Session".into(), ..TitlePage::default() };
        let (text, ends) = record_text(&title, &user, &exchanges);
        let mut cut = (text.len() as f64 * cut_at) as usize;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let back = fountain::parse(&text[..cut]);
        let complete = ends.iter().filter(|&&end| end <= cut).count();
        prop_assert_eq!(back.exchanges.len(), complete, "cut at {} of {:?}", cut, text);
        for (got, sent) in back.exchanges.iter().zip(&exchanges) {
            let want = as_read(sent);
            prop_assert_eq!((&got.when, &got.user, &got.reply), (&want.when, &want.user, &want.reply));
            prop_assert!(want.notes.starts_with(&got.notes), "notes are a prefix");
        }
        prop_assert!(!back.ended);
    }

    #[test]
    fn fountain_parse_never_panics(text in tricky_text()) {
        let _ = fountain::parse(&text);
    }
}

fn memory_type() -> impl Strategy<Value = MemoryType> {
    prop::sample::select(MemoryType::ALL.to_vec())
}

fn confidence() -> impl Strategy<Value = f64> {
    prop_oneof![
        0.0f64..=1.0,
        Just(0.0),
        Just(1.0),
        Just(1e-7),
        Just(5e-324),
        Just(0.1 + 0.2),
        (0u32..=100).prop_map(|c| f64::from(c) / 100.0),
    ]
}

fn non_empty(s: impl Strategy<Value = String>) -> impl Strategy<Value = Option<String>> {
    prop::option::of(s).prop_map(|o| o.filter(|s| !s.is_empty()))
}

/// A memory in the shape the store writes (trimmed id, description and summary, body
/// without trailing whitespace, empty optional fields absent).
fn memory() -> impl Strategy<Value = Memory> {
    let strings = (
        tricky_text(),
        non_empty(tricky_text()),
        tricky_text(),
        tricky_text(),
        prop::collection::vec(tricky_text(), 0..4),
        prop::collection::vec(tricky_text(), 0..3),
        tricky_text(),
        tricky_text(),
    );
    let rest = (
        memory_type(),
        non_empty(tricky_text()),
        confidence(),
        non_empty(tricky_text()),
        non_empty(tricky_text()),
        tricky_text(),
        prop::collection::vec(("x_[a-z]{1,8}", tricky_text()), 0..3),
    );
    (strings, rest).prop_filter_map(
        "a memory needs an id and a description",
        |(
            (id, kind, created_at, updated_at, tags, supersedes, description, summary),
            (mtype, action, confidence, source_session, expires_at, body, extra),
        )| {
            let id = id.trim().to_string();
            let description = description.trim().to_string();
            if id.is_empty() || description.is_empty() {
                return None;
            }
            Some(Memory {
                id,
                mtype,
                kind,
                created_at,
                updated_at,
                supersedes,
                tags,
                description,
                summary: summary.trim().to_string(),
                action,
                confidence,
                // Any optional string: the session's generator serves for the evidence too.
                evidence: source_session.clone().map(|s| format!("user: \"{s}\"")),
                source_session,
                expires_at,
                body: body.trim_end().to_string(),
                extra: extra.into_iter().collect(),
            })
        },
    )
}

/// YAML reads these as line breaks; the writer stores them as newlines (unit-tested
/// in `memory::file`), so the exact round trip is over text without them.
fn has_yaml_breaks(m: &Memory) -> bool {
    let breaks = |t: &str| t.contains(['\u{85}', '\u{2028}', '\u{2029}']);
    let opt = |t: &Option<String>| t.as_deref().is_some_and(breaks);
    [
        &m.id,
        &m.created_at,
        &m.updated_at,
        &m.description,
        &m.summary,
    ]
    .into_iter()
    .any(|t| breaks(t))
        || [&m.kind, &m.action, &m.source_session, &m.expires_at]
            .into_iter()
            .any(opt)
        || m.tags.iter().chain(&m.supersedes).any(|t| breaks(t))
        || m.extra.texts().any(breaks)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn memory_files_round_trip_exactly(m in memory()) {
        let text = file::render(&m);
        let back = file::parse(text.as_bytes(), None);
        if has_yaml_breaks(&m) {
            // Still a whole memory, never a file that is skipped.
            let back = back.map_err(|e| format!("{e}: {text}"));
            prop_assert!(back.is_ok(), "{:?}", back);
        } else {
            prop_assert_eq!(back.as_ref(), Ok(&m), "{}", text);
        }
    }

    #[test]
    fn memory_parse_never_panics(text in tricky_text(), front in tricky_text()) {
        let _ = file::parse(text.as_bytes(), None);
        let _ = file::parse(format!("---\n{front}\n---\n{text}").as_bytes(), Some(MemoryType::Workflow));
    }
}

/// YAML-ish text built from the config's own sections and keys, with random values.
fn config_text() -> impl Strategy<Value = String> {
    let section = prop::sample::select(vec![
        "model", "engine", "sampling", "memory", "tools", "rag", "mining", "bogus",
    ]);
    let key = prop::sample::select(vec![
        "path",
        "models_dir",
        "n_ctx",
        "n_batch",
        "threads",
        "threads_batch",
        "cache_prefix",
        "temperature",
        "top_k",
        "top_p",
        "min_p",
        "repeat_penalty",
        "repeat_last_n",
        "seed",
        "max_tokens",
        "budget_pct",
        "factual_share",
        "top_k",
        "recent_sessions",
        "embedder",
        "enabled",
        "max_rounds_per_turn",
        "turn_tokens",
        "confirm_memory_writes",
        "allow_writes",
        "rolling_summary",
        "warn_at_pct",
        "keep_turns",
        "chunk_tokens",
        "mine_on_exit",
        "stores",
    ]);
    let value = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1.5".to_string()),
        Just("1e400".to_string()),
        Just("18446744073709551616".to_string()),
        Just("NaN".to_string()),
        Just(".inf".to_string()),
        Just("true".to_string()),
        Just("~".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("[a, 1]".to_string()),
        Just("&a x".to_string()),
        Just("*a".to_string()),
        Just("!!binary aGk=".to_string()),
        Just("\"".to_string()),
        "[a-z0-9./]{0,8}",
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|n| n.to_string()),
    ];
    let entry = (
        section,
        prop::collection::vec((key, value, 0usize..4), 0..4),
    );
    prop::collection::vec(entry, 0..4).prop_map(|sections| {
        let mut text = String::new();
        for (section, keys) in sections {
            text.push_str(&format!("{section}:\n"));
            for (key, value, indent) in keys {
                text.push_str(&format!("{}{key}: {value}\n", " ".repeat(indent + 1)));
            }
        }
        text
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_config_loader_never_panics(structured in config_text(), noise in tricky_text()) {
        let path = Path::new("agents/harvey.yaml");
        for text in [structured.clone(), noise.clone(), format!("{structured}{noise}")] {
            if let Err(e) = harvey::config::parse(&text, path) {
                prop_assert!(e.to_string().starts_with("agents/harvey.yaml"), "{}", e);
            }
        }
    }
}

fn fts_table() -> rusqlite::Connection {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize = 'porter unicode61');
         INSERT INTO t(a, b) VALUES ('fix git error', 'the café naïve 東京 test');",
    )
    .unwrap();
    conn
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fts_queries_are_always_valid_fts5(text in tricky_text(), words in prop::collection::vec("[a-zA-Z]{1,10}|AND|OR|NOT|NEAR", 0..6)) {
        let conn = fts_table();
        for input in [text.clone(), words.join(" "), format!("{} {text}", words.join(" "))] {
            if let Some(q) = fts_query(&input) {
                let run = conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&q], |r| r.get::<_, i64>(0));
                prop_assert!(run.is_ok(), "{:?} -> {:?}: {:?}", input, q, run);
            }
        }
    }
}

/// A document of paragraphs, headings, fences, indented code and long lines.
fn document() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just(String::new()),
        Just("   ".to_string()),
        Just("# Title".to_string()),
        Just("## Section two ##".to_string()),
        Just("#nospace".to_string()),
        Just("```rust".to_string()),
        Just("```".to_string()),
        Just("~~~".to_string()),
        Just("}".to_string()),
        Just("fn item() {".to_string()),
        Just("    indented body".to_string()),
        "[a-z]{1,8}( [a-z]{1,8}){0,6}",
        "[a-z]{1,5}( [a-z]{1,5}){20,40}",
        "[a-z]{60,90}",
        any::<String>().prop_map(|s| s.replace(['\n', '\r'], " ")),
    ];
    (
        prop::collection::vec(line, 0..40),
        prop::sample::select(vec!["\n", "\r\n"]),
        any::<bool>(),
    )
        .prop_map(|(lines, eol, trailing)| {
            let mut text = lines.join(eol);
            if trailing {
                text.push_str(eol);
            }
            text
        })
}

/// A counter that charges one token per 4 bytes of each word, so one long word can be
/// over the limit on its own.
struct ByteCounter;

impl TokenCounter for ByteCounter {
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().map(|w| w.len().div_ceil(4)).sum()
    }
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn chunks_cover_the_document_exactly(
        text in document(),
        kind in prop::sample::select(vec![Kind::Markdown, Kind::Code, Kind::Text]),
        max_tokens in 0usize..64,
        by_bytes in any::<bool>(),
    ) {
        let counter: &dyn TokenCounter = if by_bytes { &ByteCounter } else { &WordCounter };
        let limit = max_tokens.max(8);
        let chunks = chunk(kind, &text, max_tokens, counter);
        let lines: Vec<&str> = text.lines().collect();
        let mut last_end = 0;
        for c in &chunks {
            prop_assert!(c.start_line >= 1 && c.start_line <= c.end_line && c.end_line <= lines.len(), "{:?}", c);
            prop_assert!(c.start_line >= last_end, "chunks in order: {:?}", chunks);
            last_end = c.end_line;
            prop_assert!(counter.count_tokens(&c.text) <= limit, "over the limit: {:?}", c);
            prop_assert!(!c.text.trim().is_empty());
            let source = lines[c.start_line - 1..c.end_line].join("\n");
            if lines[c.start_line - 1..c.end_line].iter().all(|l| counter.count_tokens(l) <= limit) {
                prop_assert_eq!(&c.text, &source, "a chunk is exactly its lines");
            } else {
                prop_assert!(source.contains(c.text.trim()), "a piece of a long line: {:?}", c);
            }
        }
        // No word lost, none repeated (a word longer than the limit is cut into pieces,
        // so compare the text with whitespace removed).
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        let all: String = chunks.iter().map(|c| squeeze(&c.text)).collect();
        prop_assert_eq!(all, squeeze(&text));
        if chunks.iter().all(|c| lines[c.start_line - 1..c.end_line].iter().all(|l| counter.count_tokens(l) <= limit)) {
            let got: Vec<&str> = chunks.iter().flat_map(|c| words(&c.text)).collect();
            prop_assert_eq!(got, words(&text));
        }
    }
}
