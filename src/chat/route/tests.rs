//! The router's prompt, grammar and parsing, without a model (the scripted engine).

use super::*;
use crate::tools::workspace::{ListFiles, ReadFile};

fn registry() -> Registry {
    let mut r = Registry::new();
    let root = std::path::PathBuf::from(".");
    r.add(Box::new(ReadFile { root: root.clone() }));
    r.add(Box::new(ListFiles { root }));
    r
}

#[test]
fn the_grammar_admits_each_first_step_and_none() {
    let g = grammar(&registry(), Wording::STEERED, &[]);
    assert_eq!(
        g,
        "root ::= \"read_file\" | \"list_files\" | \"reply_directly\""
    );
    let g = grammar(&registry(), Wording::PLAIN, &[]);
    assert_eq!(g, "root ::= \"read_file\" | \"list_files\" | \"answer\"");
}

#[test]
fn replies_parse_to_routes_and_unknown_names_to_nothing() {
    let r = registry();
    assert_eq!(
        parse(&r, Wording::STEERED, "list_files"),
        Some(Route::Tool("list_files".into()))
    );
    assert_eq!(
        parse(&r, Wording::STEERED, " reply_directly\n"),
        Some(Route::Answer)
    );
    assert_eq!(parse(&r, Wording::PLAIN, "answer"), Some(Route::Answer));
    assert_eq!(parse(&r, Wording::PLAIN, "reply_directly"), None);
    assert_eq!(parse(&r, Wording::STEERED, "git"), None);
    assert_eq!(parse(&r, Wording::STEERED, ""), None);
}

#[test]
fn the_prompt_lists_every_first_step_with_when_to_pick_it() {
    let m = messages(&registry(), Wording::STEERED, "What is in src?");
    assert_eq!(m.len(), 2);
    assert!(m[0].content.contains("- read_file: show or open a file"));
    assert!(m[0].content.contains("- list_files: "));
    assert!(m[0]
        .content
        .contains("- reply_directly: questions you can answer yourself"));
    assert!(m[0].content.contains("Show me the Makefile. -> read_file"));
    assert!(
        !m[0].content.contains("-> git"),
        "examples only name offered steps"
    );
    assert_eq!(m[1].content, "What is in src?");
}

fn add_memory_write(r: &mut Registry) {
    let root = std::path::PathBuf::from(".");
    r.add(Box::new(crate::tools::memory::MemoryWrite(
        crate::tools::memory::MemoryPlace {
            agents_dir: root.join("agents"),
            workspace: root,
            embedder: None,
            config: crate::config::Config::default().memory,
        },
    )));
}

#[test]
fn a_tool_with_a_label_is_offered_and_parsed_under_it() {
    let mut r = registry();
    add_memory_write(&mut r);
    let steered = Wording::STEERED;
    assert!(
        grammar(&r, steered, &[]).ends_with("\"list_files\" | \"remember\" | \"reply_directly\"")
    );
    let m = messages(&r, steered, "Keep in mind I like tabs.");
    assert!(m[0].content.contains("- remember: the user tells you"));
    assert!(m[0].content.contains("kestrel. -> remember"));
    assert!(!m[0].content.contains("memory_write"));
    assert_eq!(
        parse(&r, steered, "remember"),
        Some(Route::Tool("memory_write".into()))
    );
    assert_eq!(
        parse(&r, steered, "memory_write"),
        None,
        "only the label is a reply"
    );
    let plain = messages(&r, Wording::PLAIN, "Keep in mind I like tabs.");
    assert!(plain[0]
        .content
        .contains("- memory_write: the user tells you"));
    assert!(plain[0].content.contains("kestrel. -> memory_write"));
    assert!(!plain[0].content.contains("Good morning"), "{plain:?}");
    assert_eq!(
        parse(&r, Wording::PLAIN, "memory_write"),
        Some(Route::Tool("memory_write".into()))
    );
}

#[test]
fn being_told_to_remember_routes_to_the_tool_that_remembers_without_the_model() {
    let mut r = registry();
    assert_eq!(
        told_to_remember(&r, "Remember that I prefer tabs."),
        None,
        "not offered"
    );
    add_memory_write(&mut r);
    let write = Some(Route::Tool("memory_write".into()));
    assert_eq!(
        told_to_remember(&r, "Remember that I prefer tabs over spaces."),
        write
    );
    assert_eq!(
        told_to_remember(&r, "Note that staging is called kestrel"),
        write
    );
    assert_eq!(
        told_to_remember(&r, "Please remember our plan: drop PyPy support next."),
        write,
        "the note says drop; the request keeps it"
    );
    for left in [
        "Do you remember what I said about tabs?",
        "What did I ask you to remember?",
        "Summarize README.md for me.",
    ] {
        assert_eq!(told_to_remember(&r, left), None, "{left}");
    }
}

/// The memory tools' place for a workspace at `ws`, with the default settings.
fn memory_place(ws: &std::path::Path) -> crate::tools::memory::MemoryPlace {
    crate::tools::memory::MemoryPlace {
        agents_dir: ws.join("agents"),
        workspace: ws.to_path_buf(),
        embedder: None,
        config: crate::config::Config::default().memory,
    }
}

/// `memory_search` is offered once there is something to find, not before.
#[test]
fn a_search_that_can_find_nothing_is_not_offered() {
    let ws = tempfile::tempdir().unwrap();
    let place = memory_place(ws.path());
    let mut r = registry();
    r.add(Box::new(crate::tools::memory::MemorySearch(place)));
    let offers = |r: &Registry| offered(r).0.iter().any(|(n, _)| *n == "memory_search");
    assert!(!offers(&r), "an empty store");
    let notes = ws.path().join("agents/memories/project_fact");
    std::fs::create_dir_all(&notes).unwrap();
    assert!(!offers(&r), "an empty folder is no memory");
    // What the store makes when it opens (seen in an empty folder: the 0.5B still
    // searched its memories for the capital of France).
    let memories = ws.path().join("agents/memories");
    std::fs::write(memories.join("harvey-index.db"), "").unwrap();
    std::fs::write(memories.join("MEMORY.md"), "").unwrap();
    std::fs::write(ws.path().join("agents/harvey-knowledge.db"), "").unwrap();
    assert!(
        !offers(&r),
        "the store's own index and digest, and the knowledge base made at open, are no memory"
    );
    std::fs::write(notes.join("a.spmd"), "---\n---\n").unwrap();
    assert!(offers(&r), "one memory");
}

/// An empty folder with nothing remembered: a question is answered without asking
/// the router (the scripted engine would say `read_file` if it were asked).
#[test]
fn with_nothing_to_read_a_question_is_answered() {
    let ws = tempfile::tempdir().unwrap();
    let place = memory_place(ws.path());
    let mut r = Registry::new();
    let root = ws.path().to_path_buf();
    r.add(Box::new(ReadFile { root: root.clone() }));
    r.add(Box::new(ListFiles { root }));
    r.add(Box::new(crate::tools::memory::MemorySearch(place.clone())));
    r.add(Box::new(crate::tools::memory::MemoryWrite(place)));
    let mut engine = crate::engine::scripted::ScriptedEngine::new(2048, ["read_file"; 4]);
    let ask = |engine: &mut crate::engine::scripted::ScriptedEngine, request: &str| {
        choose(engine, &r, request, request, &Default::default(), None).unwrap()
    };
    let q = "What is the capital of France? Answer in one word.";
    assert_eq!(ask(&mut engine, q), Some(Route::Answer));
    assert_eq!(engine.aside_calls, 0, "the router was not asked");
    // Something to read: the router decides.
    std::fs::write(ws.path().join("notes.md"), "x").unwrap();
    assert_ne!(ask(&mut engine, q), Some(Route::Answer));
    assert_eq!(engine.aside_calls, 1);
    assert!(asks_a_question("Who made the last commit?"));
    assert!(!asks_a_question("Create notes.md, ok?"));
    assert!(!asks_a_question("List the files."));
}

#[test]
fn the_wording_follows_the_models_size() {
    assert_eq!(Wording::for_params(494_000_000), Wording::PLAIN);
    assert_eq!(Wording::for_params(1_540_000_000), Wording::STEERED);
    assert_eq!(Wording::for_params(134_515_008), Wording::PLAIN);
}

#[test]
fn a_long_request_is_cut_for_the_router() {
    let long = "x".repeat(5000);
    let m = messages(&registry(), Wording::PLAIN, &long);
    assert_eq!(m[1].content.chars().count(), MAX_REQUEST_CHARS);
}

fn skill(name: &str, summary: &str) -> SkillOption {
    SkillOption {
        name: name.into(),
        summary: summary.into(),
        about: format!("{summary} Use when the user wants to ship it."),
    }
}

/// A request is asked about the skills that share a topic word with it (the whole
/// description counts; a skill that shares a tool's, the "no tool" or the "no skill"
/// name, or whose name is no plain word, never), apart from the router, whose prompt
/// never holds a skill. The skill named is the route; `no_skill` goes on to the router;
/// a request that fits no skill is not asked about any.
#[test]
fn a_request_is_asked_about_the_skills_it_shares_words_with() {
    let r = registry();
    let skills = [
        skill("release-checklist", "Prepares a release."),
        skill("code-review", "Reviews source code."),
        skill("read_file", "Clashes with a tool: release."),
        skill("no_skill", "Clashes with no skill: release."),
        skill("two words", "Not a word: release."),
    ];
    let menu = Menu {
        registry: &r,
        skills: &skills,
    };
    let names = |request: &str| -> Vec<String> {
        skills::fitting(&menu, Wording::STEERED, request)
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names("Get the release ready."), ["release-checklist"]);
    assert_eq!(
        names("Review the release"),
        ["release-checklist", "code-review"]
    );
    assert_eq!(
        names("Can we ship it?"),
        ["release-checklist", "code-review"],
        "the whole description"
    );
    assert!(names("What is 17 times 3?").is_empty());
    let asked = skills::messages(&skills[..1], "Get the release ready.");
    assert!(
        asked[0]
            .content
            .contains("Skills:\n- release-checklist: Prepares a release.\n"),
        "{}",
        asked[0].content
    );
    assert_eq!(asked[1].content, "Get the release ready.");

    let ask = |replies: &[&str], request: &str| {
        let mut engine =
            crate::engine::scripted::ScriptedEngine::new(2048, replies.iter().copied());
        let log = engine.log();
        let route = match skill_for(&mut engine, menu, request, &Default::default()).unwrap() {
            Some(skill) => Some(skill),
            None => choose(&mut engine, &r, request, request, &Default::default(), None).unwrap(),
        };
        let calls = log.lock().unwrap().clone();
        (route, calls)
    };
    let (route, calls) = ask(&["release-checklist"], "Get the release ready.");
    assert_eq!(route, Some(Route::Skill("release-checklist".into())));
    assert_eq!(calls.len(), 1);
    let (route, calls) = ask(&["no_skill", "read_file"], "Get the release ready.");
    assert_eq!(route, Some(Route::Tool("read_file".into())));
    assert_eq!(calls.len(), 2);
    assert!(
        !calls[1].messages[0].content.contains("release-checklist"),
        "the router's own prompt"
    );
    let (route, calls) = ask(&["list_files"], "What is 17 times 3?");
    assert_eq!(route, Some(Route::Tool("list_files".into())));
    assert_eq!(calls.len(), 1, "no skill question");
}

#[test]
fn a_question_of_who_or_when_changed_something_goes_to_git_without_the_model() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("lib.rs"), "fn render() {}\n").unwrap();
    let git_init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(ws.path())
        .status()
        .unwrap();
    assert!(git_init.success());
    let (r, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
    let git = Some(Route::Tool("git".into()));
    for words in [
        "Who last changed the markdown renderer?",
        "When was the sitemap added?",
        "who wrote src/lib.rs?",
        // A commit named by its place in the history, or counted.
        "What changed in the last commit?",
        "Show me what the first git commit changed.",
        "How many commits are there?",
    ] {
        assert_eq!(about_change(&r, words), git, "{words}");
    }
    for left in [
        "Who maintains this project?",
        "Commit the last changes.",
        "What is a commit?",
        "Who changed it. Tell me.",
        "When does the feed refresh?",
    ] {
        assert_eq!(about_change(&r, left), None, "{left}");
    }
}
