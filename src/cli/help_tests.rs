//! `--help` answers questions: every subcommand shows an example, `harvey --help` names the
//! README's two commands and the guide, and `--version` is the crate's (CHANGELOG.md's
//! newest entry, checked in tests/suite/docs.rs).

use clap::CommandFactory;

/// Every subcommand below `cmd`, with its path (`harvey memory add`); clap's own `help`
/// subcommand is left out.
fn subcommands(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("{path} {}", sub.get_name());
        subcommands(sub, &name, out);
        out.push((name, sub.clone()));
    }
}

#[test]
fn every_subcommand_has_an_example_in_its_help() {
    let mut all = Vec::new();
    subcommands(&crate::Cli::command(), "harvey", &mut all);
    assert!(all.len() > 40, "only {} subcommands found", all.len());
    let mut missing = Vec::new();
    for (name, cmd) in &mut all {
        if !cmd
            .render_long_help()
            .to_string()
            .contains("Example: harvey ")
        {
            missing.push(name.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "no `Example: harvey …` in the help of {missing:?}"
    );
}

#[test]
fn the_top_help_names_the_two_commands_and_the_guide() {
    let help = crate::Cli::command().render_long_help().to_string();
    for needle in [
        "scripts/start.sh",
        "scripts/test.sh",
        "docs/README.md",
        "Example: harvey ",
    ] {
        assert!(
            help.contains(needle),
            "harvey --help lacks {needle}:\n{help}"
        );
    }
}

#[test]
fn the_version_is_the_crates() {
    let version = crate::Cli::command().render_version();
    assert_eq!(
        version.trim(),
        format!("harvey {}", env!("CARGO_PKG_VERSION"))
    );
}
