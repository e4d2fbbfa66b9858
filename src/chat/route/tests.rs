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
fn a_question_about_one_identifier_goes_to_the_search_without_the_model() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("lib.rs"), "fn slugify_heading() {}\n").unwrap();
    let (r, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
    let search = Some(Route::Tool("search_files".into()));
    for words in [
        "Which file defines slugify_heading?",
        "What does the test regression_issue_212 check?",
        "What does renderPage return?",
    ] {
        assert_eq!(about_identifier(&r, words, &[]), search, "{words}");
    }
    for left in [
        "Who changed slugify_heading?",
        "Does slugify_heading or render_page run first?",
        "Rename slugify_heading to slug.",
        "Which file defines the heading slugs?",
    ] {
        assert_eq!(about_identifier(&r, left, &[]), None, "{left}");
    }
    // An identifier that is a named file's name reads that file.
    let named = ["cJSON_Utils.h".to_string(), "cJSON_Utils.c".to_string()];
    assert_eq!(
        about_identifier(&r, "What does cJSON_Utils provide?", &named),
        Some(Route::Tool("read_file".into()))
    );
    assert_eq!(
        about_identifier(&r, "What does slugify_heading do?", &named),
        search,
        "a name no file has"
    );
    // The project's name in a question a conventional file answers.
    let build = ["CMakeLists.txt".to_string()];
    assert_eq!(
        about_identifier(&r, "What version of cJSON is this?", &build),
        None
    );
    assert_eq!(
        about_identifier(&r, "What version of cJSON is this?", &[]),
        search
    );
    let empty = tempfile::tempdir().unwrap();
    let (none, _) = crate::app::default_tools(empty.path(), &crate::config::Config::default());
    assert_eq!(
        about_identifier(&none, "What does slugify_heading do?", &[]),
        None,
        "nothing to search"
    );
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

#[test]
fn a_question_about_a_release_reads_the_changelog_named() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("CHANGES.rst"), "Version 2.2.0\n").unwrap();
    let (r, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
    let read = Some(Route::Tool("read_file".into()));
    let hinted = |words: &str, named: &[&str]| {
        let named: Vec<String> = named.iter().map(|n| n.to_string()).collect();
        format!(
            "{words}\n{}",
            crate::workspace_map::named::hint(&named).unwrap()
        )
    };
    for (words, named) in [
        (
            "What changed in the latest release?",
            &["CHANGES.rst", "docs/changes.rst"][..],
        ),
        ("What was released in 2.2?", &["CHANGELOG.md"][..]),
    ] {
        assert_eq!(about_release(&r, &hinted(words, named)), read, "{words}");
    }
    assert_eq!(
        about_release(
            &r,
            &hinted("What changed in the last commit?", &["CHANGES.rst"])
        ),
        None,
        "no release asked about"
    );
    assert_eq!(
        about_release(
            &r,
            &hinted("What changed in the latest release?", &["src/release.rs"])
        ),
        None,
        "no changelog named"
    );
    assert_eq!(
        about_release(&r, "What changed in the latest release?"),
        None
    );
}

#[test]
fn a_question_about_code_that_names_nothing_goes_to_the_search() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("lib.c"), "#define NESTING_LIMIT 1000\n").unwrap();
    let (r, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
    let search = Some(Route::Tool("search_files".into()));
    let q = "What is the default nesting limit when parsing?";
    assert_eq!(about_code(&r, q, &[]), search);
    assert_eq!(
        about_code(&r, q, &["src/config.rs".to_string()]),
        None,
        "a file named"
    );
    assert_eq!(
        about_code(&r, "What is the nesting limit?", &[]),
        None,
        "not about code"
    );
    assert_eq!(
        about_code(&r, "How do I change the default limit?", &[]),
        None,
        "a how-to"
    );
    assert_eq!(about_code(&r, "Which class parses the input?", &[]), search);
    for general in [
        "What is a trait in Rust?",
        "What is the difference between a struct and a class?",
    ] {
        assert_eq!(
            about_code(&r, general, &[]),
            None,
            "about the language: {general}"
        );
    }
}

#[test]
fn where_a_kind_of_file_is_kept_goes_to_the_listing() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("tests")).unwrap();
    std::fs::write(
        ws.path().join("tests/parse_number.c"),
        "int main(void) {}\n",
    )
    .unwrap();
    let (r, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
    let list = Some(Route::Tool("list_files".into()));
    let folder = ["tests/".to_string()];
    assert_eq!(
        about_place(&r, "Where are the unit tests kept?", &folder),
        list
    );
    // A file named, no hint, or not a where question: the router decides.
    let file = ["tests/parse_number.c".to_string()];
    assert_eq!(
        about_place(&r, "Where are the unit tests kept?", &file),
        None
    );
    assert_eq!(about_place(&r, "Where are the unit tests kept?", &[]), None);
    assert_eq!(about_place(&r, "What do the tests check?", &folder), None);
}

#[test]
fn a_question_its_named_conventional_file_answers_reads_it_without_the_model() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    let (r, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
    let read = Some(Route::Tool("read_file".into()));
    let manifest = ["Cargo.toml".to_string()];
    for words in [
        "What version is this package?",
        "Which license is this project under?",
        "Which packages does this project depend on?",
        // The 0.5B's router answered this one itself: "Python 3.8, Python 3.9, Python 3.10".
        "Which Python versions does it support?",
    ] {
        assert_eq!(
            about_conventional_file(&r, words, &manifest),
            read,
            "{words}"
        );
    }
    for left in [
        "Who changed the version last?",
        "Bump the version to 0.2.0.",
        "What does the parser do?",
    ] {
        assert_eq!(about_conventional_file(&r, left, &manifest), None, "{left}");
    }
    assert_eq!(
        about_conventional_file(&r, "What version is this package?", &[]),
        None,
        "no file named"
    );
}

#[test]
fn a_question_about_what_the_workspaces_own_thing_is_for_goes_to_the_search() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("notes.md"),
        "The salt keeps contexts apart.\n",
    )
    .unwrap();
    let (r, _) = crate::app::default_tools(ws.path(), &crate::config::Config::default());
    let search = Some(Route::Tool("search_files".into()));
    for words in [
        "What is the salt for?",
        "What's the staging box used for?",
        "What does the watcher do?",
        "What is the purpose of the pending queue?",
    ] {
        assert_eq!(about_purpose(&r, words, &[]), search, "{words}");
    }
    for left in [
        "What is a salt for?",
        "What is the capital of France?",
        "What does the renderPage function do?",
        "What does the thing that we wrote last spring for the parser do?",
        "Who changed what the salt is for?",
    ] {
        assert_eq!(about_purpose(&r, left, &[]), None, "{left}");
    }
    assert_eq!(
        about_purpose(&r, "What is the salt for?", &["docs/salt.md".to_string()]),
        None,
        "a named file is read"
    );
}
