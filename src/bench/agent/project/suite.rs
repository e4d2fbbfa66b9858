//! The project fixture's tests/ and examples/ files as they stand at the last commit
//! (issue 212's regression test among them). Real-looking, never compiled.

pub const TESTS_COMMON: &str = r##"//! Helpers shared by the integration tests: a site in a temporary folder.

use std::path::{Path, PathBuf};

pub struct TestSite {
    pub dir: tempfile::TempDir,
}

impl TestSite {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    pub fn page(&self, rel: &str, text: &str) -> &Self {
        let path = self.dir.path().join("content").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn output(&self, rel: &str) -> PathBuf {
        self.dir.path().join("_site").join(rel)
    }
}
"##;

pub const TESTS_BUILD: &str = r##"mod common;

use brindle::Site;
use common::TestSite;

#[test]
fn a_page_becomes_an_html_file() {
    let site = TestSite::new();
    site.page("about.md", "---\ntitle: About\n---\nHello\n");
    Site::open(site.path(), false).unwrap().build().unwrap();
    let html = std::fs::read_to_string(site.output("about.html")).unwrap();
    assert!(html.contains("<title>About</title>"));
}

#[test]
fn drafts_are_left_out_unless_asked_for() {
    let site = TestSite::new();
    site.page("wip.md", "---\ntitle: WIP\ndraft: true\n---\n");
    Site::open(site.path(), false).unwrap().build().unwrap();
    assert!(!site.output("wip.html").exists());
    Site::open(site.path(), true).unwrap().build().unwrap();
    assert!(site.output("wip.html").exists());
}

#[test]
fn headings_get_anchor_ids() {
    let site = TestSite::new();
    site.page("guide.md", "# Getting Started!\n");
    Site::open(site.path(), false).unwrap().build().unwrap();
    let html = std::fs::read_to_string(site.output("guide.html")).unwrap();
    assert!(html.contains("id=\"getting-started\""));
}
"##;

pub const TESTS_FEED: &str = r##"mod common;

use brindle::Site;
use common::TestSite;

fn feed(site: &TestSite) -> String {
    Site::open(site.path(), false).unwrap().build().unwrap();
    std::fs::read_to_string(site.output("feed.xml")).unwrap()
}

#[test]
fn newest_post_comes_first() {
    let site = TestSite::new();
    site.page("posts/old.md", "---\ntitle: Old\ndate: 2023-01-01\n---\n");
    site.page("posts/new.md", "---\ntitle: New\ndate: 2024-01-01\n---\n");
    let xml = feed(&site);
    assert!(xml.find("New").unwrap() < xml.find("Old").unwrap());
}

#[test]
fn pages_outside_posts_are_not_in_the_feed() {
    let site = TestSite::new();
    site.page("about.md", "---\ntitle: About\n---\n");
    assert!(!feed(&site).contains("About"));
}

#[test]
fn ampersands_in_titles_are_escaped() {
    let site = TestSite::new();
    site.page("posts/fish.md", "---\ntitle: Fish & Chips\ndate: 2024-02-01\n---\n");
    assert!(feed(&site).contains("<title>Fish &amp; Chips</title>"));
}
"##;

pub const TESTS_FRONT_MATTER: &str = r##"use brindle::content::parse_page;

#[test]
fn title_date_and_tags_are_read() {
    let page = parse_page("---\ntitle: Hello\ndate: 2024-01-05\ntags: news, rust\n---\nBody\n");
    let page = page.unwrap();
    assert_eq!(page.title, "Hello");
    assert_eq!(page.date.as_deref(), Some("2024-01-05"));
    assert_eq!(page.tags, ["news", "rust"]);
}

#[test]
fn without_a_title_the_first_heading_is_used() {
    let page = parse_page("# Notes\n\ntext\n").unwrap();
    assert_eq!(page.title, "Notes");
}

/// Issue 212: a title holding a colon lost everything after it.
#[test]
fn regression_issue_212() {
    let page = parse_page("---\ntitle: Rust: the good parts\n---\nBody\n").unwrap();
    assert_eq!(page.title, "Rust: the good parts");
}

#[test]
fn unknown_keys_are_ignored() {
    let page = parse_page("---\ntitle: A\nlayout: wide\n---\n").unwrap();
    assert_eq!(page.title, "A");
}
"##;

pub const TESTS_CLI: &str = r##"use std::process::Command;

fn brindle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_brindle"))
}

#[test]
fn version_prints_the_package_version() {
    let out = brindle().arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn a_new_site_builds() {
    let dir = tempfile::tempdir().unwrap();
    let made = brindle().args(["new", "site"]).current_dir(dir.path()).status().unwrap();
    assert!(made.success());
    let built = brindle().arg("build").current_dir(dir.path().join("site")).status().unwrap();
    assert!(built.success());
    assert!(dir.path().join("site/_site/index.html").exists());
}
"##;

pub const EXAMPLE_MINIMAL: &str = r##"//! Builds the site in the current folder, as `brindle build` does.

fn main() -> Result<(), brindle::Error> {
    let dir = std::env::current_dir()?;
    let count = brindle::Site::open(&dir, false)?.build()?;
    println!("{count} pages");
    Ok(())
}
"##;

pub const EXAMPLE_BLOG: &str = r##"//! Builds the example blog in examples/blog/ and prints its feed.

fn main() -> Result<(), brindle::Error> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/blog");
    let site = brindle::Site::open(&dir, false)?;
    site.build()?;
    print!("{}", brindle::render::feed::rss(&site.pages, &site.config));
    Ok(())
}
"##;

pub const TESTS_CONFIG: &str = r##"use brindle::config::{apply_env, Config, DEFAULT_OUTPUT_DIR, DEFAULT_PORT};

fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |key| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_string())
}

#[test]
fn defaults_without_a_file_or_variables() {
    let config = Config::default();
    assert_eq!(config.port, DEFAULT_PORT);
    assert_eq!(config.output_dir.to_str(), Some(DEFAULT_OUTPUT_DIR));
}

#[test]
fn a_variable_wins_over_the_default() {
    let mut config = Config::default();
    apply_env(&mut config, env(&[("BRINDLE_PORT", "9000")]));
    assert_eq!(config.port, 9000);
}

#[test]
fn a_port_that_is_not_a_number_is_ignored() {
    let mut config = Config::default();
    apply_env(&mut config, env(&[("BRINDLE_PORT", "http")]));
    assert_eq!(config.port, DEFAULT_PORT);
}

#[test]
fn drafts_take_1_or_true() {
    let mut config = Config::default();
    apply_env(&mut config, env(&[("BRINDLE_DRAFTS", "1")]));
    assert!(config.drafts);
}
"##;

pub const TESTS_SITEMAP: &str = r##"mod common;

use brindle::Site;
use common::TestSite;

fn sitemap(site: &TestSite) -> String {
    Site::open(site.path(), false).unwrap().build().unwrap();
    std::fs::read_to_string(site.output("sitemap.xml")).unwrap()
}

#[test]
fn every_page_is_listed() {
    let site = TestSite::new();
    site.page("a.md", "# A\n").page("posts/b.md", "# B\n");
    let xml = sitemap(&site);
    assert!(xml.contains("a.html") && xml.contains("posts/b.html"));
}

#[test]
fn drafts_are_not_listed() {
    let site = TestSite::new();
    site.page("wip.md", "---\ntitle: WIP\ndraft: true\n---\n");
    assert!(!sitemap(&site).contains("wip.html"));
}
"##;
