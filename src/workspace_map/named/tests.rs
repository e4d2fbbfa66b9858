use super::*;

pub(super) fn files(paths: &[&str]) -> Vec<FileEntry> {
    paths
        .iter()
        .map(|p| FileEntry {
            path: p.to_string(),
            bytes: 1,
        })
        .collect()
}

#[test]
fn a_name_that_is_all_asked_beats_one_fitted_by_another_word() {
    let ws = files(&[
        "SECURITY.md",
        ".github/ISSUE_TEMPLATE/bug_report.md",
        "Cargo.toml",
        "docs/deploying.md",
        "src/site.rs",
        "src/main.rs",
    ]);
    let named = |q: &str| named_like(&ws, q);
    assert_eq!(
        named("How do I report a security problem?"),
        ["SECURITY.md"]
    );
    assert_eq!(
        named("How do I report a bug?"),
        [".github/ISSUE_TEMPLATE/bug_report.md"]
    );
    assert_eq!(named("What does the project depend on?"), ["Cargo.toml"]);
    assert_eq!(named("Which server hosts the site?"), ["docs/deploying.md"]);
}

#[test]
fn a_question_names_the_file_it_is_about() {
    let ws = files(&[
        "Cargo.toml",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "docs/deploy.md",
        "notes/ideas.md",
        "notes/meeting-2024-05-02.md",
        "notes/decisions.md",
        "src/main.rs",
        "tests/parse.rs",
    ]);
    let named = |q: &str| named_like(&ws, q);
    assert_eq!(
        named("What did we agree in the meeting?"),
        ["notes/meeting-2024-05-02.md"]
    );
    assert_eq!(named("What ideas have I written down?"), ["notes/ideas.md"]);
    assert_eq!(named("How do I deploy this?"), ["docs/deploy.md"]);
    assert_eq!(named("What have we decided?"), ["notes/decisions.md"]);
    assert_eq!(named("Which license is this under?"), ["Cargo.toml"]);
    assert_eq!(
        named_like(&ws[1..], "Which license is this under?"),
        ["LICENSE-MIT", "LICENSE-APACHE"],
        "no manifest: the license files"
    );
    assert_eq!(
        named("Run the tests and tell me what failed."),
        Vec::<String>::new()
    );
    assert_eq!(
        named("What is the capital of France?"),
        Vec::<String>::new()
    );
    assert_eq!(
        hint(&named("How do I deploy this?")).unwrap(),
        "(files named like this: docs/deploy.md)"
    );
    assert_eq!(hint(&[]), None);
}

#[test]
fn the_source_comes_before_its_tests_unless_tests_are_asked_about() {
    let ws = files(&["tests/feed.rs", "src/render/feed.rs"]);
    let named = named_like(&ws, "How many posts does the RSS feed hold?");
    assert_eq!(named[0], "src/render/feed.rs");
    assert_eq!(named.last().unwrap(), "tests/feed.rs");
    let named = named_like(&ws, "What do the feed tests check?");
    assert_eq!(named[0], "tests/feed.rs");
}

#[test]
fn of_many_manifests_the_one_at_the_top_is_named_and_never_a_lock_file() {
    let ws = files(&[
        "Cargo.lock",
        "Cargo.toml",
        "README.md",
        "src/main.rs",
        "tests/fixtures/node/package.json",
        "tests/fixtures/python/pyproject.toml",
        "tests/fixtures/rust/Cargo.toml",
        "tests/fixtures/rust2/Cargo.toml",
    ]);
    assert_eq!(
        named_like(&ws, "Which license does this project use?"),
        ["Cargo.toml"]
    );
    // With no manifest at the top, fixtures alone are too many to name.
    assert!(named_like(&ws[4..], "Which license does this project use?").is_empty());
}

#[test]
fn a_module_goes_by_its_folder_and_a_tool_s_hidden_config_is_not_the_settings() {
    let ws = files(&[
        ".cargo/config.toml",
        "README.md",
        "src/app/context.rs",
        "src/config/mod.rs",
        "src/config/raw.rs",
    ]);
    assert_eq!(
        named_like(&ws, "Which setting controls the memory budget?"),
        ["src/config/mod.rs"]
    );
    assert_eq!(
        named_like(&ws, "What is the default context size?"),
        ["src/config/mod.rs"],
        "the conventional file before a name the request shares a word with"
    );
    assert!(named_like(&ws[..1], "Which setting controls the memory budget?").is_empty());
    let render = files(&["src/render/markdown.rs", "src/render/mod.rs", "src/site.rs"]);
    assert_eq!(
        named_like(&render, "Who last changed the markdown renderer?"),
        ["src/render/markdown.rs"],
        "the module's entry file gives way to the file in its folder that fits"
    );
    assert_eq!(
        named_like(&render[1..], "Who last changed the renderer?"),
        ["src/render/mod.rs"]
    );
}

#[test]
fn a_short_form_in_code_fits_the_word_spelled_out() {
    let asked = asked_stems("What is the default context size?");
    assert!(word_fits(&asked, "CTX"));
    assert!(word_fits(&asked, "contexts"));
    assert!(!word_fits(&asked, "cfg"));
    assert!(word_fits(&asked_stems("Which database do we use?"), "db"));
    // A short form fits its spelled-out word and still fits itself.
    assert!(word_fits(
        &asked_stems("Where is the documentation kept?"),
        "docs"
    ));
    assert!(word_fits(
        &asked_stems("What is in the docs folder?"),
        "docs"
    ));
    assert!(!word_fits(
        &asked_stems("Where is the documentation kept?"),
        "src"
    ));
}

#[test]
fn a_how_to_question_no_name_fits_is_the_readme_s() {
    let ws = files(&[
        "README.md",
        "docs/deploying.md",
        "src/main.rs",
        "tests/cli.rs",
    ]);
    assert_eq!(
        named_like(&ws, "How do I run all the tests?"),
        ["README.md"]
    );
    assert_eq!(
        named_like(&ws, "How do I deploy it?"),
        ["docs/deploying.md"]
    );
    assert!(named_like(&ws, "What do the tests check?") != ["README.md"]);
    assert!(named_like(&ws[1..], "How do I run all the tests?").is_empty());
}

#[test]
fn a_subject_named_in_other_words_names_its_conventional_file() {
    let ws = files(&[
        "CONTRIBUTING.md",
        "Cargo.toml",
        "LICENSE-MIT",
        "docs/README.md",
        "src/config.rs",
        "src/site.rs",
    ]);
    let named = |q: &str| named_like(&ws, q);
    assert_eq!(
        named("Which file holds the default settings?"),
        ["src/config.rs"]
    );
    assert_eq!(
        named("What should I do before opening a pull request?"),
        ["CONTRIBUTING.md"]
    );
    assert_eq!(named("How is it licensed?")[0], "Cargo.toml");
    assert_eq!(
        named("Which license is this project under?"),
        ["Cargo.toml"],
        "the manifest's field names every license at once"
    );
    let no_manifest: Vec<FileEntry> = ws
        .iter()
        .filter(|f| f.path != "Cargo.toml")
        .cloned()
        .collect();
    assert_eq!(
        named_like(&no_manifest, "How is it licensed?"),
        ["LICENSE-MIT"]
    );
    assert_eq!(named("What version is this package?"), ["Cargo.toml"]);
    let mut with_pack = ws.clone();
    with_pack.extend(files(&["src/memory/pack.rs", "src/package_manager.rs"]));
    let version = named_like(&with_pack, "What version is this package?");
    assert_eq!(version[0], "Cargo.toml");
    assert!(
        !version.contains(&"src/memory/pack.rs".to_string()),
        "a short name that fits a long word is no conventional file: {version:?}"
    );
    assert_eq!(
        named_like(&with_pack, "What does the package manager do?"),
        ["src/package_manager.rs"],
        "two asked words outweigh the convention"
    );
    assert_eq!(
        named_like(&with_pack, "Which version of the package is it?")[0],
        "Cargo.toml",
        "of two conventional names, the one with no other word"
    );
    // A request that only shares a word with a phrase names nothing by it.
    assert!(named("Can you pull the latest changes?").is_empty());
}

#[test]
fn a_how_to_question_puts_documents_first() {
    let ws = files(&[
        "docs/deploying.md",
        "scripts/deploy.sh",
        "src/render/sitemap.rs",
        "src/site.rs",
    ]);
    let named = named_like(&ws, "How do I deploy the site?");
    assert_eq!(named, ["docs/deploying.md"]);
    assert!(
        named_like(&ws, "What does the site deploy?").is_empty(),
        "not a how-to question: four files fit"
    );
    let named = named_like(&ws[1..], "What does the site deploy?");
    assert_eq!(named[0], "src/site.rs", "not a how-to question: {named:?}");
}

#[test]
fn the_hint_line_is_read_back_and_documents_are_told_from_code() {
    let named = vec!["LICENSE-MIT".to_string(), "LICENSE-APACHE".to_string()];
    let request = format!("Which license is this?\n{}", hint(&named).unwrap());
    assert_eq!(named_in(&request), named);
    assert!(named_in("Which license is this?").is_empty());
    for doc in [
        "LICENSE-MIT",
        "COPYING",
        "docs/a.rs",
        "notes/x.md",
        "README.txt",
    ] {
        assert!(is_document(doc), "{doc}");
    }
    for code in [
        "src/feed.rs",
        "Makefile",
        "Cargo.toml",
        "tests/feed.rs",
        "scripts/deploy.sh",
    ] {
        assert!(!is_document(code), "{code}");
    }
}

#[test]
fn a_word_every_file_shares_names_none() {
    let ws = files(&[
        "src/tide_a.rs",
        "src/tide_b.rs",
        "src/tide_c.rs",
        "src/tide_d.rs",
    ]);
    assert!(named_like(&ws, "Where is the tide computed?").is_empty());
}

#[test]
fn a_go_repository_names_its_manifest_its_testing_notes_and_its_install_notes() {
    let mut paths = vec![
        "README.md",
        "TESTING.md",
        "INSTALL.md",
        "INSTALL_NOTES_Windows.md",
        "Makefile",
        "go.mod",
        "go.sum",
        "model_testing_plan.md",
        "config.go",
    ];
    let named_for_project: Vec<String> = (0..20).map(|i| format!("harvey-topic{i}.7.md")).collect();
    paths.extend(named_for_project.iter().map(String::as_str));
    let ws = files(&paths);
    let named = |q: &str| named_like(&ws, q);
    assert_eq!(
        named("Which packages does this project depend on?"),
        ["go.mod"]
    );
    assert_eq!(named("How do I run the tests?"), ["TESTING.md"]);
    assert_eq!(named("How do I install harvey?"), ["INSTALL.md"]);
    assert_eq!(
        named("Which Go version does this module require?"),
        ["go.mod"]
    );
    assert!(
        !named("What license is this project under?").contains(&"go.mod".to_string()),
        "a Go module's manifest holds no license"
    );
    assert_eq!(
        named("What does harvey do?"),
        Vec::<String>::new(),
        "a word in many names, and no other: none named"
    );
    let no_testing_notes: Vec<FileEntry> = ws
        .iter()
        .filter(|f| !f.path.to_lowercase().contains("testing"))
        .cloned()
        .collect();
    // Without them, the Makefile's test target and the README say it.
    assert_eq!(
        named_like(&no_testing_notes, "How do I run the tests?"),
        ["Makefile", "README.md"]
    );
}

#[test]
fn a_question_about_code_names_code_before_its_documentation() {
    let ws = files(&[
        "CHANGES.rst",
        "README.md",
        "pyproject.toml",
        "docs/signer.rst",
        "docs/index.rst",
        "src/itsdangerous/signer.py",
        "src/itsdangerous/serializer.py",
    ]);
    let named = |q: &str| named_like(&ws, q);
    assert_eq!(
        named("What is the default digest method for signing?")
            .first()
            .map(String::as_str),
        Some("src/itsdangerous/signer.py")
    );
    assert_eq!(
        named("How do I sign a value?").first().map(String::as_str),
        Some("docs/signer.rst"),
        "a how-to reads the documentation"
    );
    assert_eq!(
        named("What changed in the latest release?"),
        ["CHANGES.rst"]
    );
}

/// cJSON's top level and a few of its deeper files, as a C project without a package
/// manifest lays them out.
fn c_project() -> Vec<FileEntry> {
    files(&[
        "CHANGELOG.md",
        "CMakeLists.txt",
        "LICENSE",
        "Makefile",
        "README.md",
        "SECURITY.md",
        "cJSON.c",
        "cJSON.h",
        "cJSON_Utils.c",
        "cJSON_Utils.h",
        "library_config/cJSONConfigVersion.cmake.in",
        "tests/parse_number.c",
        "tests/unity/examples/unity_config.h",
        "tests/unity/auto/generate_config.yml",
        "tests/unity/test/targets/gcc_auto_limits.yml",
    ])
}

#[test]
fn a_c_project_says_its_version_in_its_build_file() {
    let ws = c_project();
    assert_eq!(
        named_like(&ws, "What version of cJSON is this?"),
        ["CMakeLists.txt"]
    );
    // A project with a package manifest still names that.
    let rust = files(&["Cargo.toml", "CMakeLists.txt", "src/version.rs"]);
    assert!(named_like(&rust, "What version is this package?").contains(&"Cargo.toml".to_string()));
}

#[test]
fn released_under_a_license_is_the_license_not_the_changelog() {
    let ws = c_project();
    assert_eq!(
        named_like(&ws, "What license is cJSON released under?"),
        ["LICENSE"]
    );
    assert_eq!(
        named_like(&ws, "What changed in the latest release?"),
        ["CHANGELOG.md"]
    );
}

#[test]
fn a_test_frameworks_config_is_not_the_projects_default() {
    let ws = c_project();
    let named = named_like(&ws, "What is the default nesting limit when parsing?");
    assert!(!named.iter().any(|p| p.contains("unity")), "{named:?}");
    // Asked about the tests' settings, it is named.
    assert!(named_like(&ws, "Which settings do the tests use?")
        .iter()
        .any(|p| p.starts_with("tests/")));
}

#[test]
fn of_a_source_and_its_header_the_header_comes_first() {
    let ws = c_project();
    assert_eq!(
        named_like(&ws, "What does cJSON_Utils provide?"),
        ["cJSON_Utils.h", "cJSON_Utils.c"]
    );
}

#[test]
fn unit_tests_are_not_a_framework_named_unity() {
    let ws = c_project();
    let named = named_like(&ws, "Where are the unit tests kept?");
    assert!(!named.iter().any(|p| p.contains("unity")), "{named:?}");
    // A four-letter stem still fits the word it was cut from.
    assert!(super::fits("pars", "parse"));
    assert!(super::fits("meet", "meeting"));
    assert!(super::fits("conf", "config"));
    assert!(!super::fits("unit", "unity"));
    assert!(!super::fits("star", "start"));
}
