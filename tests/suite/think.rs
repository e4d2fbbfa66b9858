//! `<think>…</think>` from reasoning models, with a scripted engine: shown apart (folded to
//! one line, `/think show` expands it), never in the conversation history, the summary's
//! or mining's prompts, mined memories or the record's reply text (kept as a note), and
//! its tokens counted in the turn stats.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use harvey::app::App;
use harvey::config::{Config, MineOnExit};
use harvey::engine::scripted::ScriptedEngine;
use harvey::engine::{Completion, Engine, EngineError, GenerateOptions, Message, ModelInfo};
use harvey::repl::handle_line;
use harvey::tokens::TokenCounter;

/// Every prompt the engine was given, shared with the test after the app owns the engine.
type Seen = Rc<RefCell<Vec<Vec<Message>>>>;

/// A scripted engine that records every prompt (chat and aside).
struct Spy {
    inner: ScriptedEngine,
    seen: Seen,
}

impl TokenCounter for Spy {
    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
}

impl Engine for Spy {
    fn info(&self) -> &ModelInfo {
        self.inner.info()
    }
    fn count_prompt(&self, messages: &[Message]) -> Result<usize, EngineError> {
        self.inner.count_prompt(messages)
    }
    fn render_prompt(&self, messages: &[Message]) -> Result<String, EngineError> {
        self.inner.render_prompt(messages)
    }
    fn generate(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        self.seen.borrow_mut().push(messages.to_vec());
        self.inner.generate(messages, opts, on_text)
    }
    fn generate_aside(
        &mut self,
        messages: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        self.seen.borrow_mut().push(messages.to_vec());
        self.inner.generate_aside(messages, opts, on_text)
    }
    fn prompt_ids(&self, messages: &[Message]) -> Result<Vec<i32>, EngineError> {
        self.inner.prompt_ids(messages)
    }
    fn warm_prefix(&mut self, ids: &[i32]) -> Result<usize, EngineError> {
        self.inner.warm_prefix(ids)
    }
    fn save_state(&self, path: &Path) -> Result<usize, EngineError> {
        self.inner.save_state(path)
    }
    fn load_state(&mut self, path: &Path, expected: &[i32]) -> Result<(), EngineError> {
        self.inner.load_state(path, expected)
    }
    fn cached_tokens(&self) -> usize {
        self.inner.cached_tokens()
    }
    fn reset(&mut self) {
        self.inner.reset();
    }
}

fn say(app: &mut App, line: &str) -> String {
    let mut out = Vec::new();
    handle_line(app, line, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

const MINED: &str = r#"{"memories": [{"type": "workflow", "kind": "pattern", "description": "Deploy with ./deploy.sh on a clean tree", "summary": "deploy.sh refuses a dirty tree", "action": "git stash first", "tags": ["deploy"]}]}"#;

#[test]
fn thoughts_are_shown_apart_and_stored_nowhere_but_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let seen: Seen = Rc::default();
    let replies = [
        "<think>The user deploys; secret plan xyzzy first.</think> Stash, then run ./deploy.sh.",
        "<think>\nponder plugh and more plugh\n</think>\n\nIt refuses a dirty tree.",
        "We talked about deploying with deploy.sh.",
        r#"["deploy", "git"]"#,
        MINED,
    ];
    let mut config = Config::default();
    config.tools.enabled = false;
    config.memory.mining.on_exit = MineOnExit::On;
    let engine = Spy {
        inner: ScriptedEngine::new(4096, replies),
        seen: seen.clone(),
    };
    let mut app = App::with_engine(dir.path().to_path_buf(), config, Box::new(engine));

    let out = say(&mut app, "How do we deploy?");
    // Folded to one line while it streams; the answer follows on its own line.
    assert!(
        out.contains("[thinking … ")
            && out.contains(" chars — /think show]\nStash, then run ./deploy.sh."),
        "{out}"
    );
    assert!(!out.contains("xyzzy"), "{out}");
    // 'The user deploys; secret plan xyzzy first.' is 7 scripted tokens (words).
    assert!(out.contains("(7 thinking)"), "{out}");
    let out = say(&mut app, "Why stash?");
    assert!(!out.contains("plugh"), "{out}");
    let shown = say(&mut app, "/think show");
    assert!(shown.contains("ponder plugh and more plugh"), "{shown}");
    assert!(!shown.contains("xyzzy"), "the last thought only: {shown}");

    // History: the answers alone.
    let history: Vec<String> = app
        .conversation()
        .messages()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert!(history.contains(&"Stash, then run ./deploy.sh.".to_string()));
    assert!(history.contains(&"It refuses a dirty tree.".to_string()));
    assert_eq!(
        app.transcript()
            .iter()
            .map(|(_, r)| r.as_str())
            .collect::<Vec<_>>(),
        ["Stash, then run ./deploy.sh.", "It refuses a dirty tree."]
    );

    let report = app.close_session(&mut |_| {}).expect("closed");
    // The summary, tags and mining prompts (and every chat prompt) never saw a thought.
    let prompts = seen.borrow();
    assert_eq!(prompts.len(), 5, "2 turns + summary + tags + mining");
    for prompt in prompts.iter() {
        for m in prompt {
            for secret in ["xyzzy", "plugh", "<think>", "</think>"] {
                assert!(!m.content.contains(secret), "{secret} in {m:?}");
            }
        }
    }
    // Mined memories: built from those prompts only.
    let store = app.memory().unwrap();
    for m in store.list(None, None).unwrap() {
        let m = store.get(&m.id).unwrap();
        assert!(!format!("{m:?}").contains("xyzzy"));
    }
    // The record: replies without the thought; the thought kept as a note.
    let record = std::fs::read_to_string(&report.record).unwrap();
    let notes: Vec<&str> = record.lines().filter(|l| l.starts_with("[[")).collect();
    let dialogue: Vec<&str> = record.lines().filter(|l| !l.starts_with("[[")).collect();
    assert!(
        !dialogue
            .iter()
            .any(|l| l.contains("xyzzy") || l.contains("plugh")),
        "{record}"
    );
    assert!(
        notes.iter().any(|n| n.starts_with("[[thought (7 tokens, not part of the reply): The user deploys; secret plan xyzzy first.")),
        "{record}"
    );
    assert!(notes.iter().any(|n| n.contains("ponder plugh")), "{record}");
}

#[test]
fn a_reply_without_a_thought_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.tools.enabled = false;
    let engine = ScriptedEngine::new(4096, ["Plain answer mentioning <think> tags."]);
    let mut app = App::with_engine(dir.path().to_path_buf(), config, Box::new(engine));
    let out = say(&mut app, "What are think tags?");
    assert!(
        out.contains("Plain answer mentioning <think> tags."),
        "{out}"
    );
    assert!(!out.contains("thinking"), "{out}");
    assert!(say(&mut app, "/think show").contains("no reply of this session had a <think> block"));
    assert_eq!(
        app.transcript()[0].1,
        "Plain answer mentioning <think> tags."
    );
}
