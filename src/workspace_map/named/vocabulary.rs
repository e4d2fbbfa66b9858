//! The words [`super`] names files by: the question words and the tools' vocabulary
//! that name no file, what repositories conventionally call a subject's file, the words
//! of a question about code, and code's short forms of words a question spells out.

/// Words that say what kind of question it is, not which file.
pub(super) const NOT_NAMES: &[&str] = &[
    "what",
    "which",
    "where",
    "when",
    "does",
    "doing",
    "this",
    "that",
    "these",
    "those",
    "have",
    "with",
    "about",
    "project",
    "file",
    "files",
    "folder",
    "code",
    "there",
    "their",
    "written",
    "write",
    "show",
    "tell",
    "test",
    "tests",
    "function",
    "functions",
    "commit",
    "commits",
    "change",
    "changes",
    "changed",
    "make",
    "from",
    "into",
    "should",
    "would",
    "could",
    "please",
    "read",
    "list",
    "find",
    "search",
    "give",
    "much",
    "many",
    "some",
    "every",
    "line",
    "lines",
    "first",
    "last",
    "latest",
    "repository",
    "workspace",
    "here",
];

/// What repositories conventionally call the file about a subject a request names in
/// other words: (phrases of a request, lowercase; the words of such a file's name). Asked
/// "Which file holds the default settings?" the 1.5B read `Cargo.toml`, and asked what to
/// do before opening a pull request it read `docs/README.md`: no word of either request
/// is in `src/config.rs` or `CONTRIBUTING.md`.
pub(super) const CONVENTIONS: &[(&[&str], &[&str])] = &[
    (
        &[
            "setting",
            "settings",
            "default",
            "defaults",
            "configuration",
            "configure",
            "options",
        ],
        &["config", "settings"],
    ),
    (
        &["pull request", "contribute", "contributor", "contributors"],
        &["contributing"],
    ),
    (
        &["licence", "licensed", "copyright"],
        &["license", "copying"],
    ),
    // The manifest's `license` field says the whole of it in one line: asked "Which license
    // is this project under?", both models read `LICENSE-MIT`, then `LICENSE-APACHE`, and
    // answered "Apache" alone for a project under either. A manifest without the field
    // leaves the license files one step away.
    (
        &["license", "licence", "licensed", "licenses", "licensing"],
        &["cargo", "package", "pyproject"],
    ),
    // What a release changed is the changelog's: asked "What changed in the latest
    // release?", the 1.5B showed the last commit (a merge) beside a `CHANGES.rst`.
    (
        &[
            "release notes",
            "what's new",
            "release",
            "releases",
            "released",
        ],
        RELEASE_NAMES,
    ),
    (&["vulnerability", "vulnerabilities"], &["security"]),
    // The manifest says the version and what the package depends on: the 0.5B answered
    // "What version is this package?" with "1.0.0", no file in view.
    // A C project says its version in the build file (`project(cJSON VERSION 1.7.19)` in
    // `CMakeLists.txt`): asked "What version of cJSON is this?", the 1.5B searched "cJSON"
    // twice and answered "4.0.8", and the 0.5B read a `cJSONConfigVersion.cmake.in`
    // template and answered "1.5".
    (
        &["version", "versions", "package", "crate"],
        &["cargo", "package", "pyproject", BUILD_FILE],
    ),
    // A manifest of any language lists the dependencies ([`super::is_manifest`]) and what the
    // build requires (a Go module's `go 1.26`); a Go module's has no license and no
    // version, so only this convention names it.
    (
        &[
            "dependencies",
            "dependency",
            "depend",
            "depends",
            "require",
            "requires",
            "requirements",
        ],
        &["cargo", "package", "pyproject", "manifest", BUILD_FILE],
    ),
    // Where a site or service is hosted is what deployment notes say: asked "Which server
    // hosts the site?", both models read `src/site.rs`.
    (
        &["host", "hosts", "hosted", "hosting"],
        &["deploy", "deploying", "deployment"],
    ),
];

/// The word a project's build file goes by (`CMakeLists.txt`, `meson.build`,
/// `configure.ac`: [`super::is_build_file`]).
pub(super) const BUILD_FILE: &str = "buildfile";

/// Words of a request in which "release" and its forms say what a license lets one do
/// ("What license is cJSON released under?"), not which release: asked that, the 1.5B
/// read `CHANGELOG.md`, named before `LICENSE`, and answered "Apache 2.0" (it is MIT).
pub(super) const LICENSE_WORDS: &[&str] = &[
    "license",
    "licence",
    "licensed",
    "licenses",
    "licensing",
    "copyright",
];

/// The release convention's words ([`CONVENTIONS`]), set aside in a license question.
pub(super) const RELEASE_NAMES: &[&str] = &["changelog", "changes", "history", "news"];

/// Words of a question about code itself: what a class or function is or does, what
/// implements something, what a default is.
pub(super) const CODE_WORDS: &[&str] = &[
    "class",
    "classes",
    "function",
    "functions",
    "method",
    "methods",
    "implement",
    "implements",
    "implemented",
    "implementation",
    "default",
    "defaults",
    "constant",
    "struct",
    "trait",
    "interface",
];

/// Words of the tools' vocabulary, left out of [`super::asked_stems`] (they would name every
/// test or source file), that still say what a document or a line is about: "How do I
/// run the tests?" is `TESTING.md`'s subject, and the Makefile's `test:` line answers
/// "What does the Makefile's test target run?".
pub(super) const SUBJECT_WORDS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "commit",
    "commits",
    "function",
    "functions",
];

/// Code's short forms of words a question spells out: asked "What is the default context
/// size?", the 1.5B read `src/config/mod.rs` focused away from `DEFAULT_N_CTX` and answered
/// "256" (the batch size beside it).
pub(super) const ABBREVIATIONS: &[(&str, &str)] = &[
    ("ctx", "context"),
    ("cfg", "config"),
    ("conf", "config"),
    ("msg", "message"),
    ("len", "length"),
    ("num", "number"),
    ("dir", "directory"),
    ("db", "database"),
    ("env", "environment"),
    ("addr", "address"),
    ("buf", "buffer"),
    ("idx", "index"),
    ("pkg", "package"),
    ("req", "request"),
    ("resp", "response"),
    ("tmp", "temporary"),
    ("tok", "token"),
    ("toks", "tokens"),
    ("arg", "argument"),
    ("args", "arguments"),
    ("param", "parameter"),
    ("params", "parameters"),
    ("max", "maximum"),
    ("min", "minimum"),
    ("conn", "connection"),
    ("lang", "language"),
    ("ver", "version"),
    ("repo", "repository"),
    ("auth", "authentication"),
    ("prefs", "preferences"),
    ("perm", "permission"),
    ("perms", "permissions"),
    // Asked "Where is the documentation kept?" in itsdangerous, neither Qwen model was
    // pointed at `docs/`; both read `docs` as a file.
    ("doc", "documentation"),
    ("docs", "documentation"),
    ("lib", "library"),
    ("util", "utility"),
    ("utils", "utilities"),
    ("deps", "dependencies"),
    ("cmd", "command"),
];
