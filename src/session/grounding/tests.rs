use super::*;

const LIMITS: (usize, usize, usize) = (80, 160, 120);

fn claim<'a>(description: &'a str, summary: &'a str, evidence: &'a str) -> Claim<'a> {
    Claim {
        description,
        summary,
        action: "",
        evidence,
        limits: LIMITS,
    }
}

/// A README session: the user states facts and asks; the assistant answers, partly from
/// the README (in the workspace) and partly with generic advice.
fn chunk() -> Vec<Said> {
    vec![
        Said::new(
            Speaker::User,
            "What does the README say about building? We deploy with ./deploy.sh, \
             which refuses a dirty tree.",
        ),
        Said::new(
            Speaker::Assistant,
            "The README says: build with `make release` (it needs GCC 12).\n\
             If you need to create a new file, use `touch filename.txt`.",
        ),
        Said::new(Speaker::User, "Does it mention the port?"),
        Said::new(Speaker::Tool, "server.toml: port = 8731"),
    ]
}

fn workspace() -> Workspace {
    Workspace::new(&["# fluxcap\n\nBuild with `make release`; it needs GCC 12.\n".to_string()])
}

#[test]
fn grounded_invented_cut_off_and_generic_proposals() {
    let ws = workspace();
    let cases: &[(&str, &str, &str, Result<(), DropReason>)] = &[
        // The user said it.
        (
            "Deploy with ./deploy.sh on a clean tree",
            "deploy.sh refuses a dirty tree",
            "We deploy with ./deploy.sh, which refuses a dirty tree",
            Ok(()),
        ),
        // Quoted with other case, spacing and punctuation.
        (
            "deploy.sh refuses a dirty tree",
            "",
            "we deploy with  ./DEPLOY.SH which refuses a dirty tree.",
            Ok(()),
        ),
        // The assistant quoting the README.
        (
            "Release builds need GCC 12",
            "make release",
            "build with make release (it needs GCC 12)",
            Ok(()),
        ),
        // A tool result.
        ("The server listens on port 8731", "", "port = 8731", Ok(())),
        // Invented: never said.
        (
            "Tests run with pytest -x",
            "",
            "run the tests with pytest -x",
            Err(DropReason::NotGrounded),
        ),
        // The assistant's generic advice: not in the workspace.
        (
            "Create files with touch",
            "",
            "If you need to create a new file, use `touch filename.txt`",
            Err(DropReason::NotGrounded),
        ),
        // Only in a question the user asked.
        (
            "The README covers the port",
            "",
            "Does it mention the port",
            Err(DropReason::NotGrounded),
        ),
        // Spanning two messages.
        (
            "A dirty tree blocks builds",
            "",
            "refuses a dirty tree. The README says",
            Err(DropReason::NotGrounded),
        ),
        // Cut by the grammar bound, or ending mid-phrase.
        (
            // 80 characters: the grammar's bound, so the model was stopped there.
            "Deploy with ./deploy.sh, which refuses a dirty tree and always checks the status",
            "",
            "We deploy with ./deploy.sh",
            Err(DropReason::Incomplete),
        ),
        (
            "Deploy with ./deploy.sh (on a clean",
            "",
            "We deploy with ./deploy.sh",
            Err(DropReason::Incomplete),
        ),
        (
            "Deploy with ./deploy.sh and",
            "",
            "We deploy with ./deploy.sh",
            Err(DropReason::Incomplete),
        ),
        // Grounded quote, but the memory says something else / nothing specific.
        (
            "Run git status before committing",
            "check the status",
            "We deploy with ./deploy.sh",
            Err(DropReason::Generic),
        ),
    ];
    for (description, summary, evidence, expected) in cases {
        let got = check(&claim(description, summary, evidence), &chunk(), &ws);
        assert_eq!(got, *expected, "{description:?} / {evidence:?}");
    }
}

#[test]
fn a_description_at_the_bound_was_cut() {
    let at_bound = "x".repeat(LIMITS.0);
    assert!(!is_complete(&at_bound, LIMITS.0));
    assert!(is_complete(&at_bound[1..], LIMITS.0));
    let cases = [
        ("Deploy with ./deploy.sh", true),
        ("Build with `make release`", true),
        ("Build with `make", false),
        ("Needs GCC 12 (not 11)", true),
        ("Needs GCC 12 (not", false),
        ("Needs GCC 12,", false),
        ("Needs GCC 12 for the", false),
        ("Needs GCC 12 -", false),
        ("Pick plan A.", true),
        ("", false),
    ];
    for (text, expected) in cases {
        assert_eq!(is_complete(text, LIMITS.0), expected, "{text:?}");
    }
}

#[test]
fn generic_advice_is_not_specific_even_when_said() {
    let said = "If you need to create a new file, use `touch filename.txt`";
    assert!(is_generic(&claim(
        "Use touch to create a new file",
        "touch filename.txt creates a file",
        said
    )));
    assert!(is_generic(&claim(
        "Check git status",
        "",
        "run `git status` to see changes"
    )));
    // Stems: "builds" in the claim, "building" in the quote.
    assert!(!is_generic(&claim(
        "Release builds need GCC 12",
        "",
        "building needs gcc 12"
    )));
}

/// A memory that shares a topic word with its quote but drops the quote's exact value
/// says something else (seen with the 1.5B on the fixture sessions).
#[test]
fn a_memory_that_loses_the_quotes_exact_values_is_generic() {
    let quote = "The web service listens on port 8080 behind nginx.";
    assert!(is_generic(&claim(
        "This setup is common for deploying web services using Nginx as a reverse proxy.",
        "",
        quote
    )));
    assert!(!is_generic(&claim(
        "The web service listens on port 8080 behind nginx",
        "",
        quote
    )));
    let deploy = "We deploy with ./deploy.sh, which refuses a dirty tree.";
    assert!(!is_generic(&claim(
        "Commit or stash changes before running ./deploy.sh.",
        "",
        deploy
    )));
    assert!(is_generic(&claim(
        "Deploys refuse a dirty tree",
        "commit first",
        deploy
    )));
    // No exact value in the quote: the topic words decide, as before.
    assert!(!is_generic(&claim(
        "The user wants short answers",
        "they read on a small screen",
        "Please keep answers short, I read them on a small screen."
    )));
}

#[test]
fn exact_values_are_numbers_paths_file_names_and_identifiers() {
    assert_eq!(
        exact_values("Port 8080, see ./deploy.sh and server.toml (HIGH_WATER_MARK) in src/lib.rs."),
        [
            "8080",
            "./deploy.sh",
            "server.toml",
            "high_water_mark",
            "src/lib.rs"
        ]
    );
    assert!(exact_values("Please keep answers short, I read them on a small screen.").is_empty());
    assert!(
        exact_values("It stopped. Then...").is_empty(),
        "sentence dots are no file names"
    );
}

#[test]
fn a_label_copied_into_the_quote_and_cut_words_still_match() {
    let ws = Workspace::default();
    let chunk = chunk();
    assert!(is_grounded("User: We deploy with ./deploy.sh", &chunk, &ws));
    // First word cut at its start, last at its end.
    assert!(is_grounded(
        "ploy with ./deploy.sh, which refu",
        &chunk,
        &ws
    ));
    assert!(!is_grounded("the a of", &chunk, &ws), "no topic word");
    assert!(!is_grounded("", &chunk, &ws));
}

#[test]
fn assistant_words_count_only_when_they_quote_the_workspace() {
    let chunk = vec![Said::new(
        Speaker::Assistant,
        "fluxcap converts CSV files to Parquet quickly.",
    )];
    let quote = "fluxcap converts CSV files to Parquet";
    assert!(!is_grounded(quote, &chunk, &Workspace::default()));
    // Every topic word in one workspace text, though not as one run.
    let readme = Workspace::new(&["fluxcap is a CLI: it converts CSV files into Parquet.".into()]);
    assert!(is_grounded(quote, &chunk, &readme));
    let other = Workspace::new(&["fluxcap is a CLI for JSON.".into()]);
    assert!(!is_grounded(quote, &chunk, &other));
    // Generic words around a quoted flag do not matter; an invented detail does.
    let readme =
        Workspace::new(&["Run: ./fluxcap --tz Europe/Oslo; scripts/ship.sh deploys".into()]);
    let chunk = vec![Said::new(
        Speaker::Assistant,
        "You can add `--tz Europe/Oslo` to your command. The timezone is set in scripts/ship.sh.",
    )];
    assert!(is_grounded(
        "add --tz Europe/Oslo to your command",
        &chunk,
        &readme
    ));
    assert!(!is_grounded(
        "The timezone is set in scripts/ship.sh",
        &chunk,
        &readme
    ));
}

#[test]
fn drops_are_counted_and_shown_by_reason() {
    let mut drops = Drops::default();
    assert_eq!(drops.to_string(), "");
    drops.add(DropReason::NotGrounded);
    drops.add(DropReason::NotGrounded);
    drops.add(DropReason::Secret);
    assert_eq!(drops.total(), 3);
    assert_eq!(drops.count(DropReason::NotGrounded), 2);
    assert_eq!(drops.to_string(), "2 not_grounded, 1 secret");
}

#[test]
fn a_summary_cut_at_its_bound_ends_at_its_last_full_sentence() {
    let limit = 60;
    let cut = "nginx listens on port 8080. The proxy forwards every request";
    let cut = &format!("{cut}{}", " x".repeat(40))[..limit];
    assert_eq!(cut.chars().count(), limit);
    assert!(!is_complete(cut, limit));
    assert_eq!(to_last_sentence(cut, limit), "nginx listens on port 8080.");
    // A sentence end inside a word (a version, a file name) is not one.
    let no_end = &format!("use v1.2 with deploy.sh and then{}", " y".repeat(40))[..limit];
    assert_eq!(to_last_sentence(no_end, limit), "");
    // Mid-phrase without the bound: cut back to the sentence before it.
    assert_eq!(
        to_last_sentence("Builds need GCC 12. Run it with", limit),
        "Builds need GCC 12."
    );
    // Complete texts come back unchanged, the empty one too.
    assert_eq!(to_last_sentence("Port 8731.", limit), "Port 8731.");
    assert_eq!(to_last_sentence("", limit), "");
}
