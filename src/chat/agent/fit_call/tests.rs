use super::*;

fn chosen(name: &str) -> Vec<ToolInfo> {
    crate::app::workspace_tools(std::path::Path::new("."))
        .list()
        .into_iter()
        .filter(|t| t.name == name)
        .collect()
}

fn param_names(tools: &[ToolInfo]) -> Vec<&'static str> {
    tools[0].params.iter().map(|p| p.name).collect()
}

#[test]
fn a_read_the_request_gives_no_lines_for_has_no_range() {
    let mut tools = chosen("read_file");
    assert!(param_names(&tools).contains(&"start_line"));
    fit_to_request(&mut tools, &Asking::words("How do I deploy the site?"));
    assert_eq!(param_names(&tools), vec!["path"]);
}

#[test]
fn a_request_about_lines_keeps_the_range() {
    for request in [
        "Show me the first 15 lines of it",
        "What does line 40 of src/main.rs say?",
        "read the last ten of the changelog",
        "print the head of README.md",
    ] {
        let mut tools = chosen("read_file");
        fit_to_request(&mut tools, &Asking::words(request));
        assert!(
            param_names(&tools).contains(&"start_line")
                && param_names(&tools).contains(&"end_line"),
            "{request}"
        );
    }
}

#[test]
fn counting_words_without_a_number_are_not_lines() {
    assert!(!asks_for_lines("What was the first commit?"));
    assert!(!asks_for_lines("Who is on top of the list?"));
    assert!(!asks_for_lines("Which license does the project use?"));
}

#[test]
fn a_question_about_the_first_commit_can_only_show_the_first() {
    let mut tools = git_tool();
    fit_to_request(
        &mut tools,
        &Asking::words("What did the first git commit change?"),
    );
    let kind = |name: &str| {
        let p = tools[0].params.iter().find(|p| p.name == name).unwrap();
        (p.kind, p.required)
    };
    assert_eq!(
        kind("action").0,
        ParamKind::Enum {
            values: &["show_commit"]
        }
    );
    assert_eq!(kind("rev"), (ParamKind::Enum { values: &["first"] }, true));
}

#[test]
fn other_tools_keep_their_parameters() {
    let mut tools = chosen("list_files");
    let before = param_names(&tools);
    fit_to_request(&mut tools, &Asking::words("What is in src?"));
    assert_eq!(param_names(&tools), before);
}

fn git_tool() -> Vec<ToolInfo> {
    vec![ToolInfo {
        name: "git",
        description: "",
        writes: false,
        params: crate::tools::command::GIT_PARAMS.to_vec(),
    }]
}

/// `param` of the one fitted tool is required and can only be `value`.
fn assert_forced(tools: &[ToolInfo], param: &str, value: &str) {
    let values: &[&str] = &[value];
    match kind_of(tools, param) {
        Some((ParamKind::Enum { values: got }, true)) => assert_eq!(got, values, "{param}"),
        other => panic!("{param}: {other:?}"),
    }
}

fn kind_of(tools: &[ToolInfo], name: &str) -> Option<(ParamKind, bool)> {
    let p = tools[0].params.iter().find(|p| p.name == name)?;
    Some((p.kind, p.required))
}

fn hinted(words: &str, named: &[&str]) -> String {
    let named: Vec<String> = named.iter().map(|n| n.to_string()).collect();
    format!(
        "{words}\n{}",
        crate::workspace_map::named::hint(&named).unwrap()
    )
}

#[test]
fn a_question_s_first_read_is_of_the_one_file_named() {
    let words = "What version is this package?";
    let request = hinted(words, &["Cargo.toml"]);
    let mut tools = chosen("read_file");
    let asking = Asking {
        hinted: &request,
        ..Asking::words(words)
    };
    fit_to_request(&mut tools, &asking);
    assert_forced(&tools, "path", "Cargo.toml");
    assert_eq!(
        crate::tools::grammar::fixed_rest(&tools[0], crate::tools::formats::CallForm::Tagged)
            .as_deref(),
        Some(" {\"path\": \"Cargo.toml\"}}\n</tool_call>")
    );
    // An instruction, or a second read, is the model's to choose.
    for (words, read) in [
        ("Show me the manifest", &[][..]),
        (words, &["Cargo.toml".to_string()][..]),
    ] {
        let request = hinted(words, &["Cargo.toml"]);
        let mut tools = chosen("read_file");
        let asking = Asking {
            hinted: &request,
            read,
            ..Asking::words(words)
        };
        fit_to_request(&mut tools, &asking);
        assert!(matches!(
            kind_of(&tools, "path"),
            Some((ParamKind::Str { .. }, true))
        ));
        assert_eq!(
            crate::tools::grammar::fixed_rest(&tools[0], crate::tools::formats::CallForm::Tagged),
            None
        );
    }
}

#[test]
fn a_definition_found_is_read_as_its_span() {
    let mut tools = chosen("read_file");
    let asking = Asking {
        defined: Some(("tests/front_matter.rs", (120, 151))),
        earlier: None,
        ..Asking::words("What does the test regression_issue_212 check?")
    };
    fit_to_request(&mut tools, &asking);
    assert_forced(&tools, "path", "tests/front_matter.rs");
    let lines = (kind_of(&tools, "start_line"), kind_of(&tools, "end_line"));
    assert!(
        matches!(
            lines,
            (
                Some((ParamKind::Int { min: 120, max: 120 }, true)),
                Some((ParamKind::Int { min: 151, max: 151 }, true))
            )
        ),
        "{lines:?}"
    );
    assert_eq!(param_names(&tools), ["path", "start_line", "end_line"]);
    assert!(
        crate::tools::grammar::fixed_rest(&tools[0], crate::tools::formats::CallForm::Tagged)
            .is_some(),
        "written, not decoded"
    );
}

#[test]
fn who_changed_a_line_a_search_found_is_a_blame_of_that_code_line() {
    let words = "Who changed the line that sets the default port?";
    assert!(asks_line_author(words));
    assert!(!asks_line_author("Who changed src/config.rs?"));
    assert!(!asks_line_author("Show me line 4 of src/config.rs"));
    let found = vec![
        ("CHANGELOG.md".to_string(), 7),
        ("src/config.rs".to_string(), 12),
    ];
    let mut tools = git_tool();
    let asking = Asking {
        found: &found,
        defined: None,
        earlier: None,
        ..Asking::words(words)
    };
    fit_to_request(&mut tools, &asking);
    assert_forced(&tools, "action", "who_changed");
    assert_forced(&tools, "path", "src/config.rs");
    assert_eq!(
        kind_of(&tools, "line"),
        Some((ParamKind::Int { min: 12, max: 12 }, true))
    );
    assert_eq!(param_names(&tools), vec!["action", "path", "line"]);
    // Only a document's line found: the words alone decide.
    let mut tools = git_tool();
    let asking = Asking {
        found: &found[..1],
        defined: None,
        earlier: None,
        ..Asking::words(words)
    };
    fit_to_request(&mut tools, &asking);
    assert_eq!(kind_of(&tools, "line").map(|k| k.1), Some(false));
}

#[test]
fn a_follow_up_that_points_back_reads_the_previous_exchange_s_file() {
    let mut tools = chosen("read_file");
    let asking = Asking {
        earlier: Some("src/main.rs"),
        ..Asking::words("Show me its first three lines.")
    };
    fit_to_request(&mut tools, &asking);
    assert_forced(&tools, "path", "src/main.rs");
    // Its own file named, a file read already this turn, or no word pointing back:
    // the model's to choose.
    let read = ["data/tides.csv".to_string()];
    for (words, read) in [
        ("Show me the first lines of src/lib.rs", &[][..]),
        ("Show me its first lines", &read[..]),
        ("Show me the first lines", &[][..]),
    ] {
        let mut tools = chosen("read_file");
        let asking = Asking {
            earlier: Some("src/main.rs"),
            read,
            ..Asking::words(words)
        };
        fit_to_request(&mut tools, &asking);
        assert!(
            matches!(kind_of(&tools, "path"), Some((ParamKind::Str { .. }, true))),
            "{words}"
        );
    }
}

#[test]
fn after_the_first_of_several_named_documents_only_the_others_are_read() {
    let words = "Which license is this project under?";
    let request = hinted(words, &["LICENSE-MIT", "LICENSE-APACHE"]);
    let read = vec!["LICENSE-MIT".to_string()];
    let mut tools = chosen("read_file");
    let asking = Asking {
        words,
        hinted: &request,
        read: &read,
        found: &[],
        defined: None,
        earlier: None,
    };
    fit_to_request(&mut tools, &asking);
    assert_forced(&tools, "path", "LICENSE-APACHE");
    // Before any read, the first of the named files.
    let named = ["LICENSE-MIT", "LICENSE-APACHE"];
    let request = hinted(words, &named);
    let mut tools = chosen("read_file");
    fit_to_request(
        &mut tools,
        &Asking {
            words,
            hinted: &request,
            read: &[],
            found: &[],
            defined: None,
            earlier: None,
        },
    );
    assert_forced(&tools, "path", named[0]);
    // After a read, with code files named, the path is the model's.
    let named = &["LICENSE-MIT", "src/lib.rs"][..];
    let request = hinted(words, named);
    let mut tools = chosen("read_file");
    fit_to_request(
        &mut tools,
        &Asking {
            words,
            hinted: &request,
            read: &read,
            found: &[],
            defined: None,
            earlier: None,
        },
    );
    assert!(matches!(
        kind_of(&tools, "path"),
        Some((ParamKind::Str { .. }, true))
    ));
}

#[test]
fn a_search_for_the_one_identifier_named_looks_everywhere() {
    let mut tools = chosen("search_files");
    fit_to_request(
        &mut tools,
        &Asking::words("What does the test regression_issue_212 check?"),
    );
    assert_forced(&tools, "pattern", "regression_issue_212");
    assert_eq!(kind_of(&tools, "path"), None);
    for free in [
        "Search the notes for TODO comments.",
        "Where is parse_a or parse_b?",
    ] {
        let mut tools = chosen("search_files");
        fit_to_request(&mut tools, &Asking::words(free));
        assert!(
            matches!(kind_of(&tools, "pattern"), Some((ParamKind::Str { .. }, _))),
            "{free}"
        );
    }
}

#[test]
fn a_search_for_what_a_thing_is_for_looks_for_the_thing_everywhere() {
    let mut tools = chosen("search_files");
    fit_to_request(&mut tools, &Asking::words("What is the salt for?"));
    assert_forced(&tools, "pattern", "salt");
    assert_eq!(kind_of(&tools, "path"), None);
    let mut tools = chosen("search_files");
    fit_to_request(&mut tools, &Asking::words("What does the staging box do?"));
    assert_forced(&tools, "pattern", "staging box");
    // After a first search, the model's own.
    let found = [("src/a.py".to_string(), 3)];
    let mut tools = chosen("search_files");
    fit_to_request(
        &mut tools,
        &Asking {
            found: &found,
            ..Asking::words("What is the salt for?")
        },
    );
    assert!(matches!(
        kind_of(&tools, "pattern"),
        Some((ParamKind::Str { .. }, _))
    ));
}

#[test]
fn who_changed_a_thing_in_one_named_code_file_reads_its_history() {
    let words = "Who last changed the markdown renderer?";
    let request = hinted(words, &["src/render/markdown.rs"]);
    let mut tools = git_tool();
    fit_to_request(
        &mut tools,
        &Asking {
            words,
            hinted: &request,
            read: &[],
            found: &[],
            defined: None,
            earlier: None,
        },
    );
    assert_eq!(
        kind_of(&tools, "action").unwrap().0,
        ParamKind::Enum {
            values: &["file_history"]
        }
    );
    assert_forced(&tools, "path", "src/render/markdown.rs");
    for (words, named) in [
        (
            "Who changed the line that sets the port?",
            &["src/cli/serve.rs"][..],
        ),
        (
            "Who made the latest commit?",
            &["src/render/markdown.rs"][..],
        ),
        ("Who last changed the docs?", &["docs/deploying.md"][..]),
        ("Who changed the renderers?", &["src/a.rs", "src/b.rs"][..]),
    ] {
        let request = hinted(words, named);
        let mut tools = git_tool();
        fit_to_request(
            &mut tools,
            &Asking {
                words,
                hinted: &request,
                read: &[],
                found: &[],
                defined: None,
                earlier: None,
            },
        );
        assert!(
            matches!(
                kind_of(&tools, "path"),
                Some((ParamKind::Str { .. }, false))
            ),
            "{words}"
        );
    }
}
