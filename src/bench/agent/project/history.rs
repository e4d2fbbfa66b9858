//! The project fixture's git history as data: every commit's author, time, message and
//! the full new text of each file it changes. Pure and deterministic, so the count and
//! the facts of the last commits are known before git runs.
//!
//! Shape: an initial commit (manifest, licences, ignore files); then each file grows
//! block by block (the text between blank lines; a lone heading joins the next) in an
//! interleaved order by four regular authors, some files with a typo fixed once they
//! are complete; a release commit (version and changelog) every twelfth of the way and
//! dependency bumps by a bot between them; then a tail of hand-written commits that
//! carry what the tasks ask about: three commits by Tomasz to the Markdown renderer,
//! Jonas moving the default port from 8080, the 1.4.2 release, and last Priya's fix to
//! the feed (two files).

use std::collections::VecDeque;

use super::code::*;
use super::docs::*;
use super::render::*;
use super::suite::*;

/// A commit's author (also its committer).
#[derive(Debug, PartialEq, Eq)]
pub struct Author {
    pub name: &'static str,
    pub email: &'static str,
    /// The author's UTC offset as git writes it.
    pub tz: &'static str,
}

const fn author(name: &'static str, email: &'static str, tz: &'static str) -> Author {
    Author { name, email, tz }
}

pub const MARA: Author = author("Mara Lindqvist", "mara@brindle.example.org", "+0100");
pub const DEV: Author = author("Dev Okafor", "dev.okafor@example.net", "+0000");
pub const LUCIA: Author = author("Lucia Ferro", "lucia@ferro.example.com", "+0100");
pub const JONAS: Author = author("Jonas Berg", "jonas.berg@example.com", "+0200");
pub const TOMASZ: Author = author("Tomasz Wolny", "tomasz@wolny.example.org", "+0100");
pub const PRIYA: Author = author("Priya Raman", "priya.raman@example.in", "+0530");
pub const BOT: Author = author("dependabot[bot]", "dependabot@example.invalid", "+0000");

/// Who writes the growth commits, in turn: Mara most, never Tomasz or Priya.
const ROTATION: [&Author; 20] = [
    &MARA, &DEV, &MARA, &LUCIA, &MARA, &MARA, &DEV, &JONAS, &MARA, &LUCIA, &MARA, &DEV, &MARA,
    &LUCIA, &DEV, &MARA, &JONAS, &MARA, &LUCIA, &DEV,
];

/// 2022-01-10 09:00 UTC, the first commit.
const START: i64 = 1_641_805_200;
/// About three days between commits, give or take a few hours.
const STEP_SECS: i64 = 255_000;

/// One commit.
#[derive(Debug)]
pub struct Commit {
    pub author: &'static Author,
    /// Seconds since the epoch (author and committer time).
    pub at: i64,
    pub message: String,
    /// Each changed file with its whole new text.
    pub changes: Vec<(&'static str, String)>,
}

/// Committed whole in the initial commit, with the manifest.
const WHOLE: &[(&str, &str)] = &[
    ("LICENSE-MIT", LICENSE_MIT),
    ("LICENSE-APACHE", LICENSE_APACHE),
    (".gitignore", GITIGNORE),
    ("rustfmt.toml", RUSTFMT_TOML),
];

/// The files that grow block by block, in the order they first appear.
const GROWING: &[(&str, &str)] = &[
    ("README.md", README),
    ("src/main.rs", MAIN),
    ("src/lib.rs", LIB),
    ("src/error.rs", ERROR),
    ("src/config.rs", CONFIG),
    ("src/content/mod.rs", CONTENT_MOD),
    ("src/content/page.rs", CONTENT_PAGE),
    ("src/content/front_matter.rs", CONTENT_FRONT_MATTER),
    ("src/content/collect.rs", CONTENT_COLLECT),
    ("src/render/mod.rs", RENDER_MOD),
    ("src/render/markdown.rs", RENDER_MARKDOWN),
    ("src/site.rs", SITE),
    ("src/cli/mod.rs", CLI_MOD),
    ("src/cli/build.rs", CLI_BUILD),
    ("tests/common/mod.rs", TESTS_COMMON),
    ("tests/build.rs", TESTS_BUILD),
    ("tests/front_matter.rs", TESTS_FRONT_MATTER),
    ("templates/base.html", BASE_HTML),
    ("templates/page.html", PAGE_HTML),
    ("src/render/template.rs", RENDER_TEMPLATE),
    ("src/cli/serve.rs", CLI_SERVE),
    ("src/watch.rs", WATCH),
    ("docs/configuration.md", CONFIGURATION),
    ("brindle.example.toml", EXAMPLE_CONFIG),
    ("CONTRIBUTING.md", CONTRIBUTING),
    ("templates/post.html", POST_HTML),
    ("src/cli/new.rs", CLI_NEW),
    ("src/render/anchors.rs", RENDER_ANCHORS),
    ("docs/front-matter.md", FRONT_MATTER_DOC),
    ("docs/templates.md", TEMPLATES_DOC),
    ("src/render/sitemap.rs", RENDER_SITEMAP),
    ("src/render/feed.rs", RENDER_FEED),
    ("tests/feed.rs", TESTS_FEED),
    ("tests/config.rs", TESTS_CONFIG),
    ("SECURITY.md", SECURITY),
    ("tests/cli.rs", TESTS_CLI),
    ("tests/sitemap.rs", TESTS_SITEMAP),
    ("docs/faq.md", FAQ),
    (".github/ISSUE_TEMPLATE/bug_report.md", BUG_REPORT),
    (".github/workflows/ci.yml", CI_YML),
    ("examples/minimal.rs", EXAMPLE_MINIMAL),
    ("examples/blog.rs", EXAMPLE_BLOG),
    ("examples/blog/brindle.toml", BLOG_CONFIG),
    ("examples/blog/content/posts/hello-world.md", BLOG_POST),
    ("docs/architecture.md", ARCHITECTURE),
    ("docs/deploying.md", DEPLOYING),
    ("scripts/deploy.sh", DEPLOY_SH),
];

/// Typos a file first had, fixed in a commit of their own once the file is complete:
/// the path, the right word, the typo.
const TYPOS: &[(&str, &str, &str)] = &[
    ("README.md", "Markdown files", "Markdwon files"),
    ("CONTRIBUTING.md", "review", "reveiw"),
    ("docs/deploying.md", "accepts", "accpets"),
    ("docs/templates.md", "replaced", "replcaed"),
    ("docs/front-matter.md", "ignored", "ingored"),
    ("docs/architecture.md", "whenever", "whenver"),
    ("docs/faq.md", "probably", "propably"),
    ("src/error.rs", "prints", "pritns"),
    ("src/site.rs", "every page", "evrey page"),
    ("src/content/collect.rs", "Walking", "Walkng"),
    ("src/render/anchors.rs", "everything else", "everthing else"),
    ("src/render/template.rs", "placeholders", "placeholdres"),
    ("src/watch.rs", "together", "togehter"),
    ("src/cli/new.rs", "default theme", "defualt theme"),
    ("tests/common/mod.rs", "temporary", "temprary"),
    ("src/render/sitemap.rs", "search engines", "search engnies"),
];

/// The manifest's dependencies, each version it had in turn (the last is the
/// manifest's); every later version is a bump by the bot.
const DEPENDENCIES: &[(&str, &[&str])] = &[
    ("clap", &["3", "4"]),
    ("toml", &["0.5", "0.7", "0.8"]),
    ("notify", &["4", "5", "6"]),
    ("pulldown-cmark", &["0.8", "0.9", "0.10"]),
    ("tiny_http", &["0.11", "0.12"]),
];

/// The changelog at the last commit.
pub fn changelog() -> String {
    let sections: String = CHANGELOG_SECTIONS.iter().map(|(_, s)| *s).collect();
    format!("{CHANGELOG_HEAD}{sections}")
}

/// Every file as it stands at the last commit.
pub fn final_files() -> Vec<(&'static str, String)> {
    let mut files: Vec<(&'static str, String)> = WHOLE
        .iter()
        .chain(GROWING)
        .map(|(path, text)| (*path, text.to_string()))
        .collect();
    files.push(("Cargo.toml", CARGO_TOML.to_string()));
    files.push(("CHANGELOG.md", changelog()));
    files
}

/// A planned commit: author, message, changes (dated by [`commits`]).
type Planned = (&'static Author, String, Vec<(&'static str, String)>);

/// The order of the bot's bumps (each dependency as often as it has later versions).
const BUMPS: &[&str] = &[
    "clap",
    "toml",
    "notify",
    "pulldown-cmark",
    "tiny_http",
    "toml",
    "notify",
    "pulldown-cmark",
];

/// The whole history, oldest first.
pub fn commits() -> Vec<Commit> {
    let mut manifest = Manifest {
        version: "0.1.0",
        deps: vec![0; DEPENDENCIES.len()],
    };
    let mut plan: Vec<Planned> = vec![initial(&manifest)];
    let growth = growth_steps();
    // Every version but the newest (1.4.2, in the tail) is released, oldest first,
    // after its share of the growth; the bumps fall between releases.
    let mut unreleased = CHANGELOG_SECTIONS.len() - 1;
    let release_every = growth.len() / CHANGELOG_SECTIONS.len();
    let bump_every = growth.len() / (BUMPS.len() + 1);
    let mut bumps = BUMPS.iter();
    for (i, (path, message, text)) in growth.into_iter().enumerate() {
        plan.push((ROTATION[i % ROTATION.len()], message, vec![(path, text)]));
        if (i + 1) % bump_every == bump_every / 2 {
            plan.extend(bumps.next().map(|dep| manifest.bump(dep)));
        }
        if (i + 1) % release_every == 0 && unreleased > 0 {
            plan.push(manifest.release(unreleased));
            unreleased -= 1;
        }
    }
    plan.extend(tail(&mut manifest));
    plan.into_iter()
        .enumerate()
        .map(|(i, (author, message, changes))| Commit {
            author,
            at: START + i as i64 * STEP_SECS + (i as i64 * 7_919) % 28_800,
            message,
            changes,
        })
        .collect()
}

/// The first commit: the manifest at 0.1.0 and the files that never change.
fn initial(manifest: &Manifest) -> Planned {
    let mut changes = vec![("Cargo.toml", manifest.text())];
    changes.extend(WHOLE.iter().map(|(path, text)| (*path, text.to_string())));
    (&MARA, "Initial commit".into(), changes)
}

/// Cargo.toml as it stands: the package version and each dependency's version (an
/// index into its [`DEPENDENCIES`] list).
struct Manifest {
    version: &'static str,
    deps: Vec<usize>,
}

impl Manifest {
    fn text(&self) -> String {
        let version = format!("version = \"{}\"", self.version);
        let mut text = CARGO_TOML.replace("version = \"1.4.2\"", &version);
        for ((name, versions), &at) in DEPENDENCIES.iter().zip(&self.deps) {
            let (last, now) = (versions[versions.len() - 1], versions[at]);
            for form in ["{name} = \"{v}\"", "{name} = { version = \"{v}\""] {
                let with = |v: &str| form.replace("{name}", name).replace("{v}", v);
                text = text.replace(&with(last), &with(now));
            }
        }
        text
    }

    /// The bot's commit moving `dep` to its next version.
    fn bump(&mut self, dep: &str) -> Planned {
        let i = DEPENDENCIES
            .iter()
            .position(|(n, _)| *n == dep)
            .unwrap_or(0);
        let (name, versions) = DEPENDENCIES[i];
        let from = versions[self.deps[i]];
        self.deps[i] = (self.deps[i] + 1).min(versions.len() - 1);
        let message = format!("Bump {name} from {from} to {}", versions[self.deps[i]]);
        (&BOT, message, vec![("Cargo.toml", self.text())])
    }

    /// The release of `CHANGELOG_SECTIONS[index]`: the version, and the changelog up
    /// to it.
    fn release(&mut self, index: usize) -> Planned {
        let (version, _) = CHANGELOG_SECTIONS[index];
        self.version = version;
        let sections: String = CHANGELOG_SECTIONS[index..]
            .iter()
            .map(|(_, s)| *s)
            .collect();
        let changes = vec![
            ("Cargo.toml", self.text()),
            ("CHANGELOG.md", format!("{CHANGELOG_HEAD}{sections}")),
        ];
        (&MARA, format!("Release {version}"), changes)
    }
}

/// The hand-written last commits.
fn tail(manifest: &mut Manifest) -> Vec<Planned> {
    let markdown = |added: usize| without_lines(RENDER_MARKDOWN, &MARKDOWN_LINES[added..]);
    vec![
        (
            &TOMASZ,
            "markdown: render footnotes".into(),
            vec![("src/render/markdown.rs", markdown(1))],
        ),
        (
            &JONAS,
            "Move the default preview port from 8080 to 4717".into(),
            vec![
                ("src/config.rs", CONFIG.to_string()),
                ("docs/configuration.md", CONFIGURATION.to_string()),
            ],
        ),
        (
            &TOMASZ,
            "markdown: smart quotes and dashes".into(),
            vec![("src/render/markdown.rs", markdown(2))],
        ),
        (
            &TOMASZ,
            "markdown: allow {#id} attributes on headings".into(),
            vec![("src/render/markdown.rs", markdown(3))],
        ),
        manifest.release(0),
        (
            &PRIYA,
            "Escape ampersands in feed titles".into(),
            vec![
                ("src/render/feed.rs", RENDER_FEED.to_string()),
                ("tests/feed.rs", TESTS_FEED.to_string()),
            ],
        ),
    ]
}

/// A file's text before the tail changed it (the text the growth builds up to).
fn before_tail(path: &str, text: &str) -> String {
    match path {
        "src/config.rs" => text.replace(PORT_LINE, &PORT_LINE.replace("4717", "8080")),
        "docs/configuration.md" => text.replace("`4717`", "`8080`"),
        "src/render/markdown.rs" => without_lines(text, &MARKDOWN_LINES),
        "src/render/feed.rs" => without_block(text, "fn escape_xml")
            .replace("escape_xml(&config.title)", "config.title.clone()")
            .replace("escape_xml(&page.title)", "page.title.clone()"),
        "tests/feed.rs" => without_block(text, "fn ampersands_in_titles"),
        _ => text.to_string(),
    }
}

/// Each growth commit (path, message, new text), interleaved: every third step opens
/// the next file, the others extend the open files in turn.
fn growth_steps() -> Vec<(&'static str, String, String)> {
    let mut queues: Vec<VecDeque<(&'static str, String, String)>> = GROWING
        .iter()
        .map(|(path, text)| file_steps(path, &before_tail(path, text)).into())
        .collect();
    let mut steps = Vec::new();
    let (mut opened, mut turn) = (0, 0);
    while queues.iter().any(|q| !q.is_empty()) {
        let has_open = queues[..opened].iter().any(|q| !q.is_empty());
        let queue = if opened < queues.len() && (steps.len() % 3 == 0 || !has_open) {
            opened += 1;
            opened - 1
        } else {
            while queues[turn % opened].is_empty() {
                turn += 1;
            }
            turn += 1;
            (turn - 1) % opened
        };
        steps.extend(queues[queue].pop_front());
    }
    steps
}

/// One file's growth: its first block, then one block per commit, then the fix of its
/// typo if it has one.
fn file_steps(path: &'static str, text: &str) -> Vec<(&'static str, String, String)> {
    let typo = TYPOS.iter().find(|(p, ..)| *p == path);
    let drafted = match typo {
        Some((_, right, wrong)) => text.replacen(right, wrong, 1),
        None => text.to_string(),
    };
    let blocks = blocks(&drafted);
    let mut steps: Vec<_> = (1..=blocks.len())
        .map(|n| {
            let message = if n == 1 {
                format!("Add {path}")
            } else {
                describe(path, &blocks[n - 1])
            };
            let mut upto = blocks[..n].join("\n\n");
            if !upto.ends_with('\n') {
                upto.push('\n');
            }
            (path, message, upto)
        })
        .collect();
    if let Some((_, _, wrong)) = typo {
        let message = format!("{}: fix the typo \"{wrong}\"", area(path));
        steps.push((path, message, text.to_string()));
    }
    steps
}

/// The text between blank lines, a lone Markdown heading joined to what follows it.
/// Joining the blocks with blank lines gives the text back.
pub fn blocks(text: &str) -> Vec<String> {
    let is_heading = |b: &str| !b.contains('\n') && b.starts_with('#') && !b.starts_with("#[");
    let mut blocks: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for piece in text.split("\n\n") {
        let block = match pending.take() {
            Some(before) => format!("{before}\n\n{piece}"),
            None => piece.to_string(),
        };
        if is_heading(&block) {
            pending = Some(block);
        } else {
            blocks.push(block);
        }
    }
    blocks.extend(pending);
    blocks
}

/// A commit message for adding `block` to `path`: the item it defines, or the
/// section it adds.
fn describe(path: &str, block: &str) -> String {
    let area = area(path);
    if let Some(heading) = block.lines().find_map(|l| l.strip_prefix("## ")) {
        return format!("{area}: add the section \"{heading}\"");
    }
    let item = block.lines().find_map(|line| {
        let line = line.trim_start().trim_start_matches("pub ");
        ["fn ", "struct ", "enum ", "const ", "impl ", "mod tests"]
            .iter()
            .find_map(|kw| line.strip_prefix(kw).map(|rest| (*kw, rest)))
    });
    match item {
        Some(("impl ", rest)) => format!("{area}: impl {}", rest.trim_end_matches(" {")),
        Some(("mod tests", _)) => format!("{area}: unit tests"),
        Some((_, rest)) => {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            format!("{area}: add {name}")
        }
        None if block
            .lines()
            .any(|l| l.trim_start_matches("pub ").starts_with("mod ")) =>
        {
            format!("{area}: declare the modules")
        }
        None if block
            .lines()
            .any(|l| l.trim_start_matches("pub ").starts_with("use ")) =>
        {
            format!("{area}: imports")
        }
        None => format!("{area}: expand"),
    }
}

/// `src/render/feed.rs` -> `render/feed`, `src/cli/mod.rs` -> `cli`, `docs/x.md` ->
/// `docs/x`.
fn area(path: &str) -> String {
    let path = path.strip_prefix("src/").unwrap_or(path);
    let path = path.strip_suffix("/mod.rs").unwrap_or(path);
    match path.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_string(),
        _ => path.to_string(),
    }
}

/// `text` without the lines equal to any of `lines`.
fn without_lines(text: &str, lines: &[&str]) -> String {
    text.lines()
        .filter(|l| !lines.contains(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `text` without the blank-line-separated block that holds `needle`.
fn without_block(text: &str, needle: &str) -> String {
    let kept: Vec<&str> = text.split("\n\n").filter(|b| !b.contains(needle)).collect();
    let mut out = kept.join("\n\n");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_typo_is_made_and_fixed_and_each_bump_made() {
        let all = commits();
        for (path, right, wrong) in TYPOS {
            let text = GROWING.iter().find(|(p, _)| p == path).unwrap().1;
            assert!(text.contains(right), "{path}: {right}");
            let fixes = all
                .iter()
                .filter(|c| c.message.ends_with(&format!("\"{wrong}\"")));
            assert_eq!(fixes.count(), 1, "{path}: {wrong}");
        }
        let bumps = all.iter().filter(|c| c.author == &BOT).count();
        assert_eq!(bumps, BUMPS.len());
        let later: usize = DEPENDENCIES.iter().map(|(_, v)| v.len() - 1).sum();
        assert_eq!(later, BUMPS.len());
    }

    #[test]
    fn blocks_join_back_into_the_text_and_headings_keep_their_section() {
        for (_, text) in GROWING {
            assert_eq!(blocks(text).join("\n\n"), *text);
        }
        let b = blocks("# T\n\nintro\n\n## Steps\n\n1. go\n");
        assert_eq!(b, ["# T\n\nintro", "## Steps\n\n1. go\n"]);
    }

    #[test]
    fn messages_name_what_a_block_adds() {
        let area = "src/render/feed.rs";
        assert_eq!(
            describe(area, "/// Doc.\npub const FEED_LIMIT: usize = 25;"),
            "render/feed: add FEED_LIMIT"
        );
        assert_eq!(
            describe("src/error.rs", "impl From<X> for Error {\n}"),
            "error: impl From<X> for Error"
        );
        assert_eq!(
            describe("docs/faq.md", "## Why?\n\nBecause."),
            "docs/faq: add the section \"Why?\""
        );
        assert_eq!(
            describe("src/lib.rs", "pub mod cli;\npub mod config;"),
            "lib: declare the modules"
        );
    }
}
