//! How a workspace runs its tests, read from the files that say it: a `justfile` recipe, a
//! `Makefile` target, `package.json`'s test script, and the test command each build
//! system has (`cargo test` for a `Cargo.toml`, `go test ./...` for a `go.mod`, `mvn test`
//! for a `pom.xml`, `ctest` where `CMakeLists.txt` enables testing, `pytest` or `tox` where
//! a Python project's files name them). One `project_fact`, so that "how do I run the
//! tests?" is answered from the project's own files, with the file named.

use std::path::Path;

use crate::memory::{Draft, MemoryType};

/// Longest script shown after its command, in characters.
const MAX_SCRIPT_CHARS: usize = 80;

/// The workspace's test commands as one fact; `None` when no file names one.
pub fn test_fact(workspace: &Path) -> Option<Draft> {
    let commands = test_commands(workspace, &|name| super::read_small(workspace, name));
    if commands.is_empty() {
        return None;
    }
    let listed: Vec<String> = commands
        .iter()
        .map(|(command, from)| format!("`{command}` ({from})"))
        .collect();
    Some(Draft {
        mtype: MemoryType::ProjectFact.as_str().into(),
        description: "How the tests of this project are run".into(),
        summary: format!("Tests run with: {}", listed.join("; ")),
        tags: vec!["project".into(), "manifest".into(), "tests".into()],
        confidence: Some(0.8),
        ..Draft::default()
    })
}

/// `(command, where it comes from)`, the project's own scripts first, then the build
/// system's. `read` returns a root file's text.
fn test_commands(workspace: &Path, read: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let first = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| read(n).map(|text| (n.to_string(), text)))
    };
    // A regular file: a pipe or a folder of that name says nothing of the build.
    let exists = |name: &str| workspace.join(name).is_file();
    let mut out = Vec::new();
    if let Some((file, text)) = first(&["justfile", "Justfile", ".justfile"]) {
        out.extend(
            test_targets(&text, just_recipe)
                .map(|t| (format!("just {t}"), format!("the {file} recipe {t}"))),
        );
    }
    if let Some((file, text)) = first(&["GNUmakefile", "makefile", "Makefile"]) {
        out.extend(
            test_targets(&text, make_target)
                .map(|t| (format!("make {t}"), format!("the {file} target {t}"))),
        );
    }
    if let Some(script) = read("package.json").and_then(|t| npm_test_script(&t)) {
        let runner = if exists("pnpm-lock.yaml") {
            "pnpm"
        } else if exists("yarn.lock") {
            "yarn"
        } else {
            "npm"
        };
        let shown: String = script.chars().take(MAX_SCRIPT_CHARS).collect();
        out.push((
            format!("{runner} test"),
            format!("package.json's test script: {shown}"),
        ));
    }
    if exists("Cargo.toml") {
        out.push(("cargo test".into(), "Cargo.toml".into()));
    }
    if exists("go.mod") {
        out.push(("go test ./...".into(), "go.mod".into()));
    }
    if exists("pom.xml") {
        let mvn = if exists("mvnw") { "./mvnw" } else { "mvn" };
        out.push((format!("{mvn} test"), "pom.xml".into()));
    }
    if exists("build.gradle") || exists("build.gradle.kts") {
        let gradle = if exists("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        out.push((format!("{gradle} test"), "the Gradle build".into()));
    }
    if read("CMakeLists.txt")
        .is_some_and(|t| t.contains("enable_testing") || t.contains("add_test"))
    {
        out.push((
            "ctest --test-dir build".into(),
            "CMakeLists.txt enables CTest; after cmake -B build && cmake --build build".into(),
        ));
    }
    if exists("tox.ini") {
        out.push(("tox".into(), "tox.ini".into()));
    }
    let pytest_in = ["pyproject.toml", "setup.cfg", "pytest.ini", "conftest.py"]
        .into_iter()
        .find(|f| {
            read(f)
                .is_some_and(|t| *f == "pytest.ini" || *f == "conftest.py" || t.contains("pytest"))
        });
    if let Some(file) = pytest_in {
        out.push(("pytest".into(), file.into()));
    }
    out
}

/// The names among `text`'s recipes or targets (read by `name_of` from each line) that
/// run tests: `test`, `tests`, `check`, or a name starting with `test`.
fn test_targets<'a>(
    text: &'a str,
    name_of: fn(&str) -> Option<&str>,
) -> impl Iterator<Item = String> + 'a {
    let mut seen: Vec<String> = Vec::new();
    text.lines().filter_map(name_of).filter_map(move |name| {
        let testing = name == "check" || name.starts_with("test");
        (testing && !seen.iter().any(|s| s == name)).then(|| {
            seen.push(name.to_string());
            name.to_string()
        })
    })
}

/// The recipe a `justfile` line starts (`test *args:` → `test`), if it starts one.
fn just_recipe(line: &str) -> Option<&str> {
    let head = line.strip_prefix('@').unwrap_or(line);
    let (before, after) = head.split_once(':')?;
    if line.starts_with([' ', '\t', '#', '[']) || after.starts_with('=') {
        return None;
    }
    let name = before.split_whitespace().next()?;
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        .then_some(name)
}

/// The target a `Makefile` rule line names (`test: build` → `test`), if it is a rule.
fn make_target(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t', '#', '.']) {
        return None;
    }
    let (before, after) = line.split_once(':')?;
    if after.starts_with('=') || before.contains('=') {
        return None;
    }
    before.split_whitespace().find(|t| {
        t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// `scripts.test` of a `package.json`, unless it is npm's placeholder that only fails.
fn npm_test_script(text: &str) -> Option<String> {
    let v = serde_json::from_str::<serde_json::Value>(text).ok()?;
    let script = v["scripts"]["test"].as_str()?.trim();
    (!script.is_empty() && !script.contains("no test specified")).then(|| script.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(files: &[(&str, &str)]) -> Vec<String> {
        let ws = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(ws.path().join(name), text).unwrap();
        }
        test_fact(ws.path())
            .map(|f| vec![f.summary])
            .unwrap_or_default()
    }

    #[test]
    fn each_build_system_names_its_test_command_and_its_file() {
        let cases: [(&[(&str, &str)], &str); 6] = [
            (
                &[("Cargo.toml", "[package]\nname = \"x\"\n")],
                "`cargo test` (Cargo.toml)",
            ),
            (&[("go.mod", "module x\n")], "`go test ./...` (go.mod)"),
            (
                &[("pom.xml", "<project/>\n"), ("mvnw", "")],
                "`./mvnw test` (pom.xml)",
            ),
            (
                &[("CMakeLists.txt", "project(x)\nenable_testing()\n")],
                "`ctest --test-dir build` (CMakeLists.txt enables CTest",
            ),
            (
                &[("pyproject.toml", "[tool.pytest.ini_options]\n")],
                "`pytest` (pyproject.toml)",
            ),
            (
                &[
                    ("package.json", "{\"scripts\": {\"test\": \"vitest run\"}}"),
                    ("pnpm-lock.yaml", ""),
                ],
                "`pnpm test` (package.json's test script: vitest run)",
            ),
        ];
        for (files, want) in cases {
            let got = commands(files);
            assert!(
                got.len() == 1 && got[0].contains(want),
                "{files:?}: {got:?}"
            );
        }
    }

    #[test]
    fn recipes_and_targets_that_test_come_before_the_build_systems_command() {
        let got = commands(&[
            ("justfile", "default:\n    @just --list\n\n[unix]\ntest *args:\n    cargo nextest run {{args}}\n\n[windows]\ntest *args:\n    cargo test\nversion := \"1\"\n"),
            ("Makefile", "CC = cc\n.PHONY: test\nall: lib\ntest: all\n\t./run\ncheck:\n\t./run\n"),
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ]);
        assert_eq!(
            got,
            ["Tests run with: `just test` (the justfile recipe test); `make test` (the Makefile target test); \
              `make check` (the Makefile target check); `cargo test` (Cargo.toml)"]
        );
    }

    #[test]
    fn a_workspace_without_a_test_command_has_no_fact() {
        assert!(commands(&[("README.md", "# x\n")]).is_empty());
        assert!(commands(&[(
            "package.json",
            "{\"scripts\": {\"test\": \"echo \\\"Error: no test specified\\\" && exit 1\"}}"
        )])
        .is_empty());
        assert!(commands(&[("CMakeLists.txt", "project(x)\n")]).is_empty());
    }
}
