//! "How do I run the tests?" where no document is about testing: the project's task
//! file says it (a Makefile's `test:` target, `package.json`'s `scripts.test`, a tox or
//! nox file). Asked it in cJSON, whose README says how to build, the 1.5B read the README
//! and answered with the build steps; the Makefile's `test:` target runs them.

use super::super::FileEntry;

/// Task files at the workspace's top, in the order they are named.
const TASK_FILES: &[&str] = &[
    "Makefile",
    "GNUmakefile",
    "makefile",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "package.json",
    "tox.ini",
    "noxfile.py",
    // A Python project's test settings (`[tool.pytest…]`, `[tool.tox]`) often live in its
    // manifest: asked "How do I run the tests?" in itsdangerous, both Qwen models read
    // the README and answered with its usage example.
    "pyproject.toml",
    "setup.cfg",
];

/// The top-level task files of `files` when `request` asks about running or writing
/// tests; empty otherwise.
pub(super) fn task_files(files: &[FileEntry], request: &str) -> Vec<String> {
    let about_tests = crate::text::words::name_words(request)
        .iter()
        .any(|w| w.starts_with("test"));
    if !about_tests {
        return Vec::new();
    }
    TASK_FILES
        .iter()
        .filter(|name| files.iter().any(|f| f.path == **name))
        .map(|name| name.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tests_question_names_the_top_level_task_files() {
        let ws =
            super::super::tests::files(&["README.md", "Makefile", "tests/Makefile", "tox.ini"]);
        assert_eq!(
            task_files(&ws, "How do I run the tests?"),
            ["Makefile", "tox.ini"]
        );
        assert!(task_files(&ws, "How do I build it?").is_empty());
        let py = super::super::tests::files(&["README.md", "pyproject.toml", "src/a.py"]);
        assert_eq!(
            task_files(&py, "How do I run the tests?"),
            ["pyproject.toml"]
        );
        let none = super::super::tests::files(&["README.md", "src/lib.rs"]);
        assert!(task_files(&none, "How do I run the tests?").is_empty());
    }
}
