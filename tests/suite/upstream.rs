//! A workspace the Go tool has used: harvey reads its config, memory files and sessions
//! directory without writing into any file it does not own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::support::process::{run, text};

/// The Go tool's index: its own tables, no `meta.schema` row of harvey's.
fn go_index(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE memories(id TEXT PRIMARY KEY, type TEXT, path TEXT, updated_at TEXT);
         CREATE TABLE memory_vectors(id TEXT, model TEXT, vector BLOB);
         INSERT INTO memories VALUES ('workflow_a1b2c3', 'workflow',
             'workflow/workflow_a1b2c3.spmd', '2025-05-26T08:30:00Z');",
    )
    .unwrap();
}

/// A Go RAG store (chunks with content, a vector blob of another embedder, the source)
/// and a Go knowledge base (observations with a `body`), in our own words.
fn go_stores(agents: &Path) {
    std::fs::create_dir_all(agents.join("rag")).unwrap();
    let rag = rusqlite::Connection::open(agents.join("rag/notes.db")).unwrap();
    rag.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE chunks(id INTEGER PRIMARY KEY, content TEXT NOT NULL,
             embedding BLOB NOT NULL, source TEXT NOT NULL DEFAULT '');
         INSERT INTO chunks(content, embedding, source) VALUES
             ('The changelog is generated from the merged pull requests.', x'00', 'docs/changelog.md');",
    )
    .unwrap();
    drop(rag);
    let kb = rusqlite::Connection::open(agents.join("knowledge.db")).unwrap();
    kb.execute_batch(
        "CREATE TABLE projects(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE);
         CREATE TABLE observations(id INTEGER PRIMARY KEY AUTOINCREMENT, project_id INTEGER,
             kind TEXT NOT NULL DEFAULT 'note', body TEXT NOT NULL);
         INSERT INTO projects(name) VALUES ('site');
         INSERT INTO observations(project_id, body) VALUES (1, 'The staging host is rebuilt nightly.');",
    )
    .unwrap();
}

fn fixture() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let agents = ws.path().join("agents");
    std::fs::create_dir_all(agents.join("memories/workflow")).unwrap();
    std::fs::create_dir_all(agents.join("memories/project_fact")).unwrap();
    std::fs::write(
        agents.join("harvey.yaml"),
        "ollama:\n  url: http://localhost:11434\n  model: granite3.3:8b\n\
         security:\n  safe_mode: true\nmemory:\n  top_k: 5\n  rag:\n    active: notes\n  knowledge_base:\n    path: agents/knowledge.db\n\
         auto_record: true\n",
    )
    .unwrap();
    go_index(&agents.join("memories/memories.db"));
    go_stores(&agents);
    std::fs::write(
        agents.join("memories/workflow/workflow_a1b2c3.spmd"),
        "---\nid: workflow_a1b2c3\ntype: workflow\ncreated_at: \"2025-05-25T12:00:00Z\"\n\
         updated_at: \"2025-05-26T08:30:00Z\"\nsupersedes: []\ntags:\n    - release\n\
         description: Tag the release before running the publish script\n\
         summary: The publish script reads the version from the newest tag.\nconfidence: 0.6\n\
         source_session: \"\"\nreviewer: alice\n---\nINT. TERMINAL - DAY\n",
    )
    .unwrap();
    std::fs::write(
        agents.join("memories/project_fact/project_fact_d4e5f6.spmd"),
        "---\nid: project_fact_d4e5f6\ntype: project_fact\ncreated_at: \"2025-04-01T09:00:00Z\"\n\
         updated_at: \"2025-04-01T09:00:00Z\"\ndescription: The API server listens on port 8080\n\
         confidence: 0.9\n---\n",
    )
    .unwrap();
    go_sessions(&agents);
    ws
}

/// Session records of both recorders' kind are tested elsewhere; here two Go records,
/// the newer one mined by the Go tool (its manifest says so), its memory digest and a
/// `MEMORY.md` harvey did not generate.
const OLDER: &str = "harvey-session-20260525-120000.spmd";
const NEWER: &str = "harvey-session-20260526-120000.spmd";

fn go_sessions(agents: &Path) {
    let sessions = agents.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join(OLDER), GO_SESSION).unwrap();
    std::fs::write(
        sessions.join(NEWER),
        GO_SESSION
            .replace("2026-05-25", "2026-05-26")
            .replace("publish a release", "rotate the signing keys"),
    )
    .unwrap();
    std::fs::write(
        agents.join("memories/manifest.yaml"),
        format!(
            "sessions:\n    - path: {}\n      mined_at: \"2026-05-26T13:00:00Z\"\n      \
             memories_created: []\n      memories_skipped: 0\n",
            sessions.join(NEWER).display()
        ),
    )
    .unwrap();
    std::fs::write(
        agents.join("memories/DIGEST.md"),
        "# Harvey Memory Digest\n*Updated: 2026-05-26T13:00:00Z — 2 active memories*\n",
    )
    .unwrap();
    std::fs::write(
        agents.join("memories/MEMORY.md"),
        "# Project memory\n\nKept by hand: the release checklist is docs/release.md.\n",
    )
    .unwrap();
}

fn digests(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let digest = Sha256::digest(std::fs::read(&path).unwrap());
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                out.insert(path.strip_prefix(root).unwrap().to_path_buf(), hex);
            }
        }
    }
    out
}

#[test]
fn a_go_workspace_is_read_and_none_of_its_files_change() {
    let ws = fixture();
    let before = digests(ws.path());

    let listed = run(ws.path(), &["memory", "list", "--json"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let listed = text(&listed.stdout);
    assert!(
        listed.contains("workflow_a1b2c3") && listed.contains("project_fact_d4e5f6"),
        "{listed}"
    );
    let recalled = run(
        ws.path(),
        &["memory", "recall", "how do I publish a release", "--json"],
    );
    assert!(recalled.status.success(), "{}", text(&recalled.stderr));
    assert!(
        text(&recalled.stdout).contains("workflow_a1b2c3"),
        "{}",
        text(&recalled.stdout)
    );
    let packed = run(
        ws.path(),
        &[
            "memory",
            "recall",
            "how is the changelog generated",
            "--budget",
            "512",
        ],
    );
    assert!(packed.status.success(), "{}", text(&packed.stderr));
    assert!(
        text(&packed.stdout).contains("rag:notes/docs/changelog.md"),
        "the Go store is searched: {}",
        text(&packed.stdout)
    );
    let notes = text(&packed.stderr);
    assert!(
        notes.contains("\"notes\" was written by the Go harvey")
            && notes.contains("knowledge.db was written by the Go harvey"),
        "{notes}"
    );
    let kb = run(
        ws.path(),
        &[
            "memory",
            "recall",
            "when is the staging host rebuilt",
            "--budget",
            "512",
        ],
    );
    assert!(kb.status.success(), "{}", text(&kb.stderr));
    assert!(
        text(&kb.stdout).contains("The staging host is rebuilt nightly."),
        "the Go knowledge base is searched: {}",
        text(&kb.stdout)
    );
    let added = run(
        ws.path(),
        &[
            "memory",
            "add",
            "--type",
            "tool_use",
            "--description",
            "cargo test needs the model fetched first",
        ],
    );
    assert!(added.status.success(), "{}", text(&added.stderr));

    let after = digests(ws.path());
    for (path, digest) in &before {
        assert_eq!(after.get(path), Some(digest), "{} changed", path.display());
    }
    assert!(ws
        .path()
        .join("agents/memories")
        .join(harvey::memory::location::INDEX_FILE)
        .exists());
}

#[test]
fn an_index_of_an_earlier_harvey_is_moved_to_its_own_name() {
    let ws = crate::support::process::workspace();
    let out = run(
        ws.path(),
        &[
            "memory",
            "add",
            "--type",
            "project_fact",
            "--description",
            "port 8080",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = ws.path().join("agents/memories");
    let ours = dir.join(harvey::memory::location::INDEX_FILE);
    // The layout of harvey before the index had its own name.
    for suffix in ["", "-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{suffix}", ours.display()));
        if from.exists() {
            std::fs::rename(
                &from,
                format!("{}{suffix}", dir.join("memories.db").display()),
            )
            .unwrap();
        }
    }
    let listed = run(ws.path(), &["memory", "list", "--json"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    assert!(text(&listed.stdout).contains("port 8080"));
    assert!(ours.exists());
    assert!(
        !dir.join("memories.db").exists(),
        "harvey's old index is moved, not kept twice"
    );
}

/// A session the Go recorder wrote: an action line after the heading, harvey forwarding
/// to the model, the model's name as the reply's speaker, stats after the reply.
/// An app over `ws` with a scripted engine: no tools, full-text recall only.
fn scripted_app(ws: &Path, reply: &str) -> harvey::app::App {
    let mut config = harvey::config::Config::default();
    config.tools.enabled = false;
    config.memory.embedder = harvey::config::Embedder::None;
    harvey::app::App::with_engine(
        ws.to_path_buf(),
        config,
        Box::new(harvey::engine::scripted::ScriptedEngine::new(4096, [reply])),
    )
}

/// One REPL line through `app`, its output as text.
fn say(app: &mut harvey::app::App, line: &str) -> String {
    let mut out = Vec::new();
    harvey::repl::handle_line(app, line, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

const GO_SESSION: &str = include_str!("../fixtures/go-session.spmd");

#[test]
fn a_go_session_is_listed_shown_and_continued_with_its_exchanges() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("agents/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let file = "harvey-session-20260525-120000.spmd";
    std::fs::write(sessions.join(file), GO_SESSION).unwrap();
    let mut app = scripted_app(dir.path(), "Yes.");
    let listed = say(&mut app, "/session list");
    assert!(listed.contains(file), "{listed}");
    let shown = say(&mut app, &format!("/session show {file}"));
    assert!(shown.contains("Then run the publish script."), "{shown}");
    let cont = say(&mut app, &format!("/session continue {file}"));
    assert!(cont.contains("2 exchanges restored"), "{cont}");
    let turns = app.conversation().turns();
    assert_eq!(turns.len(), 4);
    assert_eq!(turns[0].content, "How do I publish a release?");
    assert_eq!(
        turns[1].content,
        "Tag it first.\n\nThen run the publish script."
    );
    assert_eq!(turns[3].content, "It is generated.");
    assert_eq!(
        std::fs::read_to_string(sessions.join(file)).unwrap(),
        GO_SESSION
    );
}

/// `harvey rag import` / `harvey kb import`: the Go stores copied into harvey's own files,
/// which are used from then on (and can be added to); every file the Go tool wrote is
/// byte-identical afterwards.
#[test]
fn go_stores_are_imported_and_none_of_the_go_files_change() {
    let ws = fixture();
    let before = digests(ws.path());
    let agents = ws.path().join("agents");

    let listed = run(ws.path(), &["rag", "list"]);
    assert!(
        text(&listed.stdout).contains("/rag import notes")
            || text(&listed.stdout).contains("harvey rag import notes"),
        "{}",
        text(&listed.stdout)
    );
    let imported = run(ws.path(), &["rag", "import", "notes", "--json"]);
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    let done: serde_json::Value = serde_json::from_slice(&imported.stdout).unwrap();
    let done = &done["imported"];
    assert_eq!(done["chunks"], 1, "{done}");
    if !done["embedder"].is_null() {
        assert_eq!(done["vectors"], 1, "every chunk re-embedded: {done}");
    }
    assert!(agents.join("rag/notes.harvey.db").exists());
    let listed = run(ws.path(), &["rag", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["stores"][0]["imported"], true, "{listed}");
    assert_eq!(listed["stores"][0]["foreign"], false, "{listed}");
    let listed = run(ws.path(), &["rag", "list"]);
    assert!(
        text(&listed.stdout).contains("imported from the Go harvey"),
        "{}",
        text(&listed.stdout)
    );
    let packed = run(
        ws.path(),
        &[
            "memory",
            "recall",
            "how is the changelog generated",
            "--budget",
            "512",
        ],
    );
    assert!(
        text(&packed.stdout).contains("rag:notes/docs/changelog.md"),
        "the imported store is searched: {}",
        text(&packed.stdout)
    );
    assert!(
        !text(&packed.stderr).contains("\"notes\" was written by the Go harvey"),
        "the Go store is no longer opened: {}",
        text(&packed.stderr)
    );

    let again = run(ws.path(), &["rag", "import", "notes"]);
    assert!(!again.status.success());
    let again = text(&again.stderr);
    assert!(
        again.contains("imported already") && again.contains("harvey rag drop notes"),
        "{again}"
    );
    let none = run(ws.path(), &["rag", "import", "nosuch"]);
    assert!(!none.status.success());
    assert!(
        text(&none.stderr).contains("no Go RAG store named \"nosuch\""),
        "{}",
        text(&none.stderr)
    );

    let refused = run(
        ws.path(),
        &["kb", "observe", "Deploys wait for the rebuild."],
    );
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("harvey kb import"),
        "{}",
        text(&refused.stderr)
    );
    let kb = run(ws.path(), &["kb", "import", "--json"]);
    assert!(kb.status.success(), "{}", text(&kb.stderr));
    let kb: serde_json::Value = serde_json::from_slice(&kb.stdout).unwrap();
    assert_eq!(
        (&kb["imported"]["projects"], &kb["imported"]["observations"]),
        (&serde_json::json!(1), &serde_json::json!(1)),
        "{kb}"
    );
    let added = run(
        ws.path(),
        &["kb", "observe", "Deploys wait for the rebuild."],
    );
    assert!(added.status.success(), "{}", text(&added.stderr));
    let status = run(ws.path(), &["kb", "status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["observations"], 2, "{status}");
    assert!(status["path"]
        .as_str()
        .unwrap()
        .ends_with("harvey-knowledge.db"));
    let again = run(ws.path(), &["kb", "import"]);
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("imported already"),
        "{}",
        text(&again.stderr)
    );

    let after = digests(ws.path());
    for (path, digest) in &before {
        assert_eq!(after.get(path), Some(digest), "{} changed", path.display());
    }
}

/// `/memory mine` skips the sessions the Go tool's manifest lists and never writes it;
/// `session_search` finds a Go record (no summary) by the words of its exchanges.
#[test]
fn go_mined_sessions_are_not_mined_again_and_go_records_are_searchable() {
    use harvey::repl::handle_line;
    use harvey::tools::Tool;

    let ws = fixture();
    let agents = ws.path().join("agents");
    let manifest = std::fs::read(agents.join("memories/manifest.yaml")).unwrap();
    let mut app = scripted_app(ws.path(), "{\"memories\": []}");
    let mut out = Vec::new();
    handle_line(&mut app, "/memory mine", &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(&format!("mining {OLDER}")),
        "the newest session not mined by the Go tool: {out}"
    );
    let mut again = Vec::new();
    handle_line(&mut app, &format!("/memory mine {NEWER}"), &mut again).unwrap();
    let again = String::from_utf8(again).unwrap();
    assert!(again.contains("mined already"), "{again}");
    drop(app);
    assert_eq!(
        std::fs::read(agents.join("memories/manifest.yaml")).unwrap(),
        manifest
    );

    let search = harvey::tools::sessions::SessionSearch(agents.clone());
    let args = |q: &str| {
        serde_json::json!({ "query": q })
            .as_object()
            .unwrap()
            .clone()
    };
    let found = search.call(&args("signing keys")).unwrap();
    assert!(found.contains(NEWER) && !found.contains(OLDER), "{found}");
    let found = search.call(&args("changelog")).unwrap();
    assert!(found.contains(NEWER) && found.contains(OLDER), "{found}");
    let none = search.call(&args("kubernetes")).unwrap();
    assert!(none.contains("no past session"), "{none}");
}

/// `/rag import` and `/kb import` in the REPL: the session uses the imported copies at
/// once (the knowledge base is reopened, the RAG stores reloaded).
#[test]
fn the_repl_imports_go_stores_and_uses_them_at_once() {
    let ws = fixture();
    let before = digests(ws.path());
    let mut app = scripted_app(ws.path(), "Yes.");
    let refused = say(
        &mut app,
        "/kb observe decision Deploys wait for the rebuild.",
    );
    assert!(refused.contains("/kb import"), "{refused}");
    let imported = say(&mut app, "/kb import");
    assert!(
        imported.contains("1 project(s), 1 observation(s)"),
        "{imported}"
    );
    let added = say(
        &mut app,
        "/kb observe decision Deploys wait for the rebuild.",
    );
    assert!(!added.contains("Go harvey"), "{added}");
    let status = say(&mut app, "/kb status");
    assert!(
        status.contains("harvey-knowledge.db") && status.contains("1 project(s), 2 observation(s)"),
        "{status}"
    );
    let again = say(&mut app, "/kb import");
    assert!(again.contains("imported already"), "{again}");

    let imported = say(&mut app, "/rag import notes");
    assert!(imported.contains("1 chunk(s)"), "{imported}");
    let listed = say(&mut app, "/rag list");
    assert!(
        listed.contains("notes") && listed.contains("imported from the Go harvey"),
        "{listed}"
    );
    // (App::with_engine takes the default config, not the fixture's `rag.active`.)
    let used = say(&mut app, "/rag use notes");
    assert!(used.contains("recall uses: notes"), "{used}");
    let found = say(&mut app, "/rag query how is the changelog generated");
    assert!(found.contains("rag:notes/docs/changelog.md"), "{found}");
    let dropped = say(&mut app, "/rag drop notes");
    assert!(dropped.contains("is searched again"), "{dropped}");
    let listed = say(&mut app, "/rag list");
    assert!(listed.contains("* notes  (the Go harvey's"), "{listed}");
    drop(app);
    assert!(!ws.path().join("agents/rag/notes.harvey.db").exists());
    let after = digests(ws.path());
    for (path, digest) in &before {
        assert_eq!(after.get(path), Some(digest), "{} changed", path.display());
    }
}
