//! Files whose names echo a request ("What did we agree in the meeting?" →
//! `notes/meeting-2024-05-02.md`). The workspace map lists every path, but a small model
//! did not connect a question's words with a file name: asked about the meeting or "the
//! ideas I wrote down", the 1.5B searched its memories and answered from an unrelated
//! one. The names found here go with the request to the router and the model.
//!
//! Words are compared as lowercase stems of at least four letters, a request's word
//! matching a name's word when they agree but for the shorter one's last letter
//! ("decided" ~ "decisions" by their stems "decid"/"decision"). Question words and the tools' own vocabulary
//! ("file", "commit", "test") are left out: they name no file.

use super::FileEntry;
use std::cmp::Reverse;
use vocabulary::{
    ABBREVIATIONS, BUILD_FILE, CODE_WORDS, CONVENTIONS, LICENSE_WORDS, NOT_NAMES, RELEASE_NAMES,
    SUBJECT_WORDS,
};

mod folder;
mod tasks;
mod vocabulary;

pub use folder::asks_where;

/// Most names given; a request that fits more files names none in particular.
const MAX_NAMED: usize = 3;

/// Files (best first, at most [`MAX_NAMED`]) whose names share a word with `request`, or
/// are the conventional file for what it asks about ([`CONVENTIONS`]); empty when none
/// does, or when more than [`MAX_NAMED`] fit equally well.
pub fn named_like(files: &[FileEntry], request: &str) -> Vec<String> {
    let folders = folder::folders_asked(files, request, MAX_NAMED);
    if !folders.is_empty() {
        return folders;
    }
    let named = named_by_words(files, request);
    if named.is_empty() && crate::text::asked::asked(request) == crate::text::asked::Asked::HowTo {
        // A how-to question no name fits may still be a document's subject in the tools'
        // own words: asked "How do I run the tests?" in the Go harvey's repository, the
        // 1.5B read the README's install steps beside a `TESTING.md`.
        let documents = documents_named_by_every_word(files, request);
        if !documents.is_empty() {
            return documents;
        }
        // Else it is a task file's (a tests question, [`tasks`]) and the README's to
        // answer: asked "How do I run all the tests?" in harvey's own repository, the 0.5B
        // answered without a tool and copied its own instructions.
        let mut out = tasks::task_files(files, request);
        out.extend(
            files
                .iter()
                .find(|f| is_readme(&f.path))
                .map(|f| f.path.clone()),
        );
        out.truncate(MAX_NAMED);
        return out;
    }
    named
}

/// The documents whose names fit [`subject_stems`] of `request` ("tests" fits
/// `TESTING.md`).
fn documents_named_by_every_word(files: &[FileEntry], request: &str) -> Vec<String> {
    let stems = subject_stems(request);
    let mut scored: Vec<Scored<'_>> = files
        .iter()
        .filter(|f| is_document(&f.path))
        .filter_map(|f| scored_file(&f.path, &stems, &[]))
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.len().cmp(&b.2.len()))
    });
    // Of names fitting alike, the one with the fewest words left over: `TESTING.md` says
    // how to run the tests, `model_testing_plan.md` is a plan.
    best_of(&scored)
}

/// Files at most that an asked word may fit and still tell them apart: a word in more
/// names (the project's own name) is dropped while a rarer word of the request fits some.
const COMMON: usize = 8;

/// `asked` without the stems that fit more than [`COMMON`] of the files' names, when
/// another fits at least one. Asked "How do I install harvey?" in the Go harvey's
/// repository (a `harvey` in 60 names), nothing was named, and the 1.5B read the README
/// beside an `INSTALL.md`.
fn telling(files: &[FileEntry], asked: Vec<String>) -> Vec<String> {
    let fitting = |s: &String| {
        files
            .iter()
            .filter(|f| scored_file(&f.path, std::slice::from_ref(s), &[]).is_some())
            .count()
    };
    let counts: Vec<usize> = asked.iter().map(fitting).collect();
    if !counts.iter().any(|&n| n > 0 && n <= COMMON) {
        return asked;
    }
    asked
        .into_iter()
        .zip(counts)
        .filter(|(_, n)| *n <= COMMON)
        .map(|(s, _)| s)
        .collect()
}

/// [`named_like`] by the request's words and the conventions alone.
fn named_by_words(files: &[FileEntry], request: &str) -> Vec<String> {
    let asked = telling(files, asked_stems(request));
    let convention = conventional(request);
    if asked.is_empty() && convention.is_empty() {
        return Vec::new();
    }
    // A score is (how many of the name's words are wanted, whether it is the
    // conventional file); of equal scores, the name with fewer words left unmatched comes
    // first ("Cargo" before "package_manager"). A conventional name must be the name's word itself: in
    // harvey's own repository "What version is this package?" read `src/memory/pack.rs`,
    // "pack" fitting "package" once as the asked word and again as the convention.
    let mut scored: Vec<Scored<'_>> = files
        .iter()
        .filter_map(|f| scored_file(&f.path, &asked, &convention))
        .collect();
    entry_files_give_way(&mut scored);
    let about_tests = crate::text::words::name_words(request)
        .iter()
        .any(|w| w.starts_with("test"));
    // A test framework's or an example's file is not the project's conventional file:
    // asked "What is the default nesting limit when parsing?" in cJSON, both models read
    // `tests/unity/examples/unity_config.h` ("default" names a config) and answered from it.
    // Nor is a file there that the question's words fit in part: asked the same, the
    // 1.5B read `tests/unity/test/targets/gcc_auto_limits.yml` ("limit") and answered "10"
    // (it is 1000, in `cJSON.h`).
    if !about_tests {
        scored.retain(|(_, Reverse(unmatched), path, words)| {
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            let by_asked = words.iter().any(|w| asked.iter().any(|a| fits(a, w)));
            (by_asked && *unmatched == 0) || !super::fit::set_aside(dir)
        });
    }
    // Of names that fit as well, the source before its tests (asked how many posts the
    // feed holds, the 1.5B read `tests/feed.rs`, listed before `src/render/feed.rs`, and
    // answered "1"), unless the request is about tests; then the shorter path. A how-to
    // question puts documents first: asked "How do I deploy the site?", the 1.5B read
    // `src/site.rs`, listed before `docs/deploying.md`.
    // A how-to question that some document fits is answered by documents: the others
    // (`src/site.rs`, `src/render/sitemap.rs` for "the site") would crowd it out.
    let how_to = crate::text::asked::asked(request) == crate::text::asked::Asked::HowTo;
    if how_to && scored.iter().any(|(_, _, path, _)| is_document(path)) {
        scored.retain(|(_, _, path, _)| is_document(path));
    }
    // A question about code (a class, a function, a default) puts code first: asked
    // "What is the default digest method for signing?", the 1.5B read `docs/signer.rst`,
    // listed before `src/itsdangerous/signer.py`, and answered "HMAC" (it is SHA-1).
    let about_code = asks_about_code(request);
    let place = |path: &str| {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let code_first = usize::from(
            (how_to && !is_document(path)) || (about_code && !how_to && is_document(path)),
        );
        (
            code_first,
            if about_tests {
                0
            } else {
                super::fit::rank(dir)
            },
        )
    };
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(place(a.2).cmp(&place(b.2)))
            .then(a.2.len().cmp(&b.2.len()))
            .then(is_header(b.2).cmp(&is_header(a.2)))
    });
    best_of(&scored)
}

/// A C or C++ header: of `cJSON_Utils.c` and `cJSON_Utils.h`, the header says what the
/// module provides, in a tenth of the lines.
fn is_header(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".h", ".hpp", ".hh", ".hxx"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// Whether `request` asks about code itself ([`CODE_WORDS`]: a class, a function, a default).
pub fn asks_about_code(request: &str) -> bool {
    crate::text::words::name_words(request)
        .iter()
        .any(|w| CODE_WORDS.contains(&w.as_str()))
}

/// The project's README at the top of the workspace.
fn is_readme(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower == "readme"
        || lower
            .strip_prefix("readme.")
            .is_some_and(|ext| !ext.contains('/'))
}

/// `path`'s fit to the `asked` stems and the `convention`'s names ([`Scored`]); `None`
/// when no word of its name fits.
fn scored_file<'a>(path: &'a str, asked: &[String], convention: &[String]) -> Option<Scored<'a>> {
    let name = named_as(path);
    let stem_part = name.split('.').next().unwrap_or(name);
    let mut have: Vec<String> = words(stem_part).iter().map(|w| stem(w)).collect();
    if is_manifest(name) {
        have.push("manifest".into());
    }
    if is_build_file(name) {
        have.push(BUILD_FILE.into());
    }
    have.sort();
    have.dedup();
    // A lock file is written by a tool, never the file a subject is kept in: "Which
    // license does this project use?" named `Cargo.lock` beside `Cargo.toml`. Nor is a
    // tool's own file under a hidden folder (`.cargo/config.toml`): asked "Which setting
    // controls the memory budget?", the 1.5B read Cargo's build flags.
    let tools_own = path.starts_with('.') && !is_document(path);
    let convention: &[String] = if is_lock_file(name) || tools_own {
        &[]
    } else {
        convention
    };
    // A template a build fills in (`cJSONConfigVersion.cmake.in`) holds placeholders, not
    // values: asked "What version of cJSON is this?", the 0.5B read one and answered "1.5".
    if name.ends_with(".in") {
        return None;
    }
    // A word of the name counts once, whether an asked word fits it, the convention names
    // it, or both ("How is it licensed?": "licens" and the convention's "license" are one
    // word of `LICENSE-MIT`).
    let fitted = |h: &String| asked.iter().any(|w| fits(w, h)) || convention.contains(h);
    let words: Vec<String> = have.iter().filter(|h| fitted(h)).cloned().collect();
    let matched = words.len();
    let conventional = have.iter().any(|h| convention.contains(h));
    // Every word of the name counts here, a short one too ("bug" of `bug_report`).
    let mut every = crate::text::words::name_words(stem_part);
    every.retain(|w| !w.chars().all(|c| c.is_ascii_digit()));
    every.sort();
    every.dedup();
    let unmatched = every.len().max(have.len()) - matched;
    let score = (matched, conventional);
    (matched > 0).then_some((score, Reverse(unmatched), path, words))
}

/// A module's entry file stands for its folder only where no file in the folder fits:
/// "Who last changed the markdown renderer?" is `src/render/markdown.rs`, not
/// `src/render/mod.rs`.
fn entry_files_give_way(scored: &mut Vec<Scored<'_>>) {
    let by_folder = |path: &str| named_as(path) != path.rsplit('/').next().unwrap_or(path);
    let folder = |path: &str| path.rsplit_once('/').map(|(dir, _)| dir.to_string());
    let fitted: Vec<String> = scored
        .iter()
        .filter(|s| !by_folder(s.2))
        .filter_map(|s| folder(s.2))
        .collect();
    scored.retain(|s| !(by_folder(s.2) && folder(s.2).is_some_and(|d| fitted.contains(&d))));
}

/// The best of `scored` (sorted best first): those that fit as well; of names fitted by
/// other words of the request, only those with as few words left over. Asked "How do I
/// report a security problem?", `SECURITY.md` (its whole name asked) and
/// `.github/ISSUE_TEMPLATE/bug_report.md` ("bug" not) were both named, and the 1.5B read
/// the bug report template; asked "How do I install harvey?", `INSTALL.md` and not
/// `INSTALL_NOTES_Windows.md` (the 1.5B read both, and the second cost 20 s). Names as
/// near each other stay together (`LICENSE-MIT`, `LICENSE-APACHE`). None when more than
/// [`MAX_NAMED`] are.
fn best_of(scored: &[Scored<'_>]) -> Vec<String> {
    let Some((best, fewest, _, _)) = scored.first() else {
        return Vec::new();
    };
    let top: Vec<String> = scored
        .iter()
        .filter(|s| s.0 == *best && s.1 == *fewest)
        .map(|s| s.2.to_string())
        .collect();
    if top.len() <= MAX_NAMED {
        return top;
    }
    // Too many fit as well: those at the top of the workspace, if some are and few
    // enough. In harvey's own repository "Which license does this project use?" fitted the
    // root `Cargo.toml` and three test fixtures' manifests, and named none.
    let top: Vec<String> = top.into_iter().filter(|p| !p.contains('/')).collect();
    if top.is_empty() || top.len() > MAX_NAMED {
        return Vec::new();
    }
    top
}

/// The name a file goes by: its own, or its folder's for a module's entry file
/// (`src/config/mod.rs` is the `config` module; `index.js`, `__init__.py` likewise).
fn named_as(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    match (stem, parts.next()) {
        ("mod" | "index" | "__init__", Some(folder)) => folder,
        _ => name,
    }
}

/// A package manifest whose name has no word of four letters to fit a request by
/// (`go.mod`, `Gemfile`, `pom.xml`): it goes by "manifest" as well. Asked "Which
/// packages does this project depend on?" in a Go repository, the 1.5B read a guessed
/// `docs/dependencies.md`, twice.
fn is_manifest(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "go.mod"
            | "gemfile"
            | "pom.xml"
            | "build.gradle"
            | "build.gradle.kts"
            | "composer.json"
            | "mix.exs"
            | "setup.py"
            | "setup.cfg"
            | "build.sbt"
    )
}

/// A C or C++ project's build file, which says its version and what it needs
/// (`CMakeLists.txt`, `meson.build`, `configure.ac`).
fn is_build_file(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "cmakelists.txt" | "meson.build" | "configure.ac" | "configure.in"
    )
}

/// A file a package manager writes (`Cargo.lock`, `package-lock.json`, `go.sum`).
fn is_lock_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".lock")
        || matches!(
            lower.as_str(),
            "package-lock.json" | "npm-shrinkwrap.json" | "pnpm-lock.yaml" | "go.sum"
        )
}

/// A file's fit to a request: (how many of its name's words are wanted, whether it is
/// the conventional file), how many are not, its path, and the words wanted.
type Scored<'a> = ((usize, bool), Reverse<usize>, &'a str, Vec<String>);

/// The stems of `request`'s words that could name something (four letters or more,
/// not a question word nor the tools' vocabulary), sorted, each once.
pub fn asked_stems(request: &str) -> Vec<String> {
    let mut asked: Vec<String> = words(request)
        .into_iter()
        .filter(|w| !NOT_NAMES.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect();
    asked.sort();
    asked.dedup();
    asked
}

/// [`asked_stems`] and the stems of `request`'s [`SUBJECT_WORDS`], sorted, each once.
pub fn subject_stems(request: &str) -> Vec<String> {
    let mut stems = asked_stems(request);
    stems.extend(
        words(request)
            .into_iter()
            .filter(|w| SUBJECT_WORDS.contains(&w.as_str()))
            .map(|w| stem(&w)),
    );
    stems.sort();
    stems.dedup();
    stems
}

/// Whether `word` (any case) fits one of `stems` ([`asked_stems`]) as a name's word does.
pub fn word_fits(stems: &[String], word: &str) -> bool {
    let lower = word.to_lowercase();
    let full = ABBREVIATIONS
        .iter()
        .find(|(short, _)| *short == lower)
        .map(|(_, full)| *full);
    // The word as written and its spelled-out form: `docs` fits "docs" and
    // "documentation".
    let fits_one = |w: &str| {
        let w = stem(w);
        w.chars().count() >= 4 && stems.iter().any(|s| fits(s, &w))
    };
    fits_one(&lower) || full.is_some_and(fits_one)
}

/// Prose for people: a Markdown or text file, anything under a `docs`/`doc` folder, or a
/// capitalised name without an extension (`LICENSE-MIT`, `COPYING`, `AUTHORS`).
pub fn is_document(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(ext, "md" | "markdown" | "txt" | "rst" | "adoc" | "org")
        || lower.starts_with("docs/")
        || lower.starts_with("doc/")
        || (!name.contains('.')
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-' || c == '_'))
}

/// A document named as a project's changelog (`CHANGELOG.md`, `CHANGES.rst`,
/// `HISTORY.md`, `NEWS`, `RELEASES.md`).
pub fn is_changelog(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    is_document(path)
        && ["change", "history", "news", "release"]
            .iter()
            .any(|s| name.starts_with(s))
}

/// The name words (stemmed) of the conventional files for what `request` asks about.
fn conventional(request: &str) -> Vec<String> {
    let words = crate::text::words::name_words(request);
    let license = words.iter().any(|w| LICENSE_WORDS.contains(&w.as_str()));
    let lower = format!(" {} ", words.join(" "));
    CONVENTIONS
        .iter()
        .filter(|(_, names)| !(license && *names == RELEASE_NAMES))
        .filter(|(phrases, _)| phrases.iter().any(|p| lower.contains(&format!(" {p} "))))
        .flat_map(|(_, names)| names.iter().map(|n| stem(n)))
        .collect()
}

/// The line that goes with a request: `(files named like this: a, b)`, or `None`.
pub fn hint(named: &[String]) -> Option<String> {
    (!named.is_empty()).then(|| format!("{HINT_LEAD}{})", named.join(", ")))
}

/// How the hint line begins.
const HINT_LEAD: &str = "(files named like this: ";

/// The files a request's hint line names ([`hint`]), in its order; empty without one.
pub fn named_in(request: &str) -> Vec<String> {
    request
        .lines()
        .find_map(|l| l.trim().strip_prefix(HINT_LEAD)?.strip_suffix(')'))
        .map(|names| names.split(", ").map(str::to_string).collect())
        .unwrap_or_default()
}

/// Lowercase words of four letters or more, not all digits.
fn words(text: &str) -> Vec<String> {
    let mut out = crate::text::words::name_words(text);
    out.retain(|w| w.chars().count() >= 4 && !w.chars().all(|c| c.is_ascii_digit()));
    out
}

fn stem(word: &str) -> String {
    crate::text::words::stem(word, &["ing", "ed", "es", "s"], 4).to_string()
}

/// The stems agree on at least four letters and on all but at most the last letter of
/// the shorter ("decid" ~ "decision", "meet" ~ "meeting", not "main" ~ "manual"). A
/// four-letter stem and a five-letter word that it begins agree only where the fifth
/// letter is the `e` that stemming "-ing" drops ("pars" ~ "parse", "cach" ~ "cache"):
/// "unit" is not "unity" (asked "Where are the unit tests kept?", both models answered
/// with cJSON's vendored test framework), nor "star" "start".
fn fits(a: &str, b: &str) -> bool {
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let (short, long) = if a.chars().count() <= b.chars().count() {
        (a, b)
    } else {
        (b, a)
    };
    let shorter = short.chars().count();
    let one_letter_on = shorter == 4 && common == 4 && long.chars().count() == 5;
    if one_letter_on && !long.ends_with('e') {
        return false;
    }
    common >= 4 && common + 1 >= shorter
}

#[cfg(test)]
mod tests;
