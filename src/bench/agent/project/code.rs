//! The project fixture's Rust files outside src/render/ (the binary, the library root,
//! config, errors, the site, the watcher, the CLI and content modules) as they stand
//! at the last commit; [`super::history`] derives the earlier versions. Real-looking,
//! never compiled. Each fact a task checks is planted once (the default port and the
//! variable that overrides it).

pub const MAIN: &str = r##"use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = brindle::cli::Cli::parse();
    match brindle::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("brindle: {e}");
            ExitCode::FAILURE
        }
    }
}
"##;

pub const LIB: &str = r##"//! brindle: a small static-site generator. The binary is a thin layer over
//! [`cli::run`]; the rest is usable as a library (see examples/).

pub mod cli;
pub mod config;
pub mod content;
pub mod error;
pub mod render;
pub mod site;
pub mod watch;

pub use config::Config;
pub use error::Error;
pub use site::Site;
"##;

/// The line `blame` is asked about (changed from 8080 in its own commit).
pub const PORT_LINE: &str = "pub const DEFAULT_PORT: u16 = 4717;";

pub const CONFIG: &str = r##"//! Settings: the defaults below, then brindle.toml, then BRINDLE_* variables.
//! Command-line flags (src/cli) win over all three.

use std::path::{Path, PathBuf};

/// Port of `brindle serve` unless brindle.toml or BRINDLE_PORT says otherwise.
pub const DEFAULT_PORT: u16 = 4717;

/// Where `brindle build` writes the site, relative to the site's folder.
pub const DEFAULT_OUTPUT_DIR: &str = "_site";

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub title: String,
    pub base_url: String,
    pub output_dir: PathBuf,
    pub drafts: bool,
    pub port: u16,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            title: "My site".into(),
            base_url: "/".into(),
            output_dir: PathBuf::from(DEFAULT_OUTPUT_DIR),
            drafts: false,
            port: DEFAULT_PORT,
        }
    }
}

/// Loads `dir/brindle.toml` (if any) over the defaults, then the environment over that.
pub fn load(dir: &Path) -> Result<Config, crate::Error> {
    let mut config = Config::default();
    let path = dir.join("brindle.toml");
    if path.exists() {
        let table: toml::Table = std::fs::read_to_string(&path)?.parse()?;
        apply_file(&mut config, &table);
    }
    apply_env(&mut config, |key| std::env::var(key).ok());
    Ok(config)
}

fn apply_file(config: &mut Config, table: &toml::Table) {
    let text = |t: &toml::Table, key: &str| t.get(key)?.as_str().map(String::from);
    if let Some(title) = text(table, "title") {
        config.title = title;
    }
    if let Some(url) = text(table, "base_url") {
        config.base_url = url;
    }
    if let Some(build) = table.get("build").and_then(|v| v.as_table()) {
        if let Some(dir) = text(build, "output_dir") {
            config.output_dir = dir.into();
        }
        config.drafts = build.get("drafts").and_then(|v| v.as_bool()).unwrap_or(config.drafts);
    }
    if let Some(port) = table.get("serve").and_then(|s| s.get("port")?.as_integer()) {
        config.port = u16::try_from(port).unwrap_or(DEFAULT_PORT);
    }
}

/// `BRINDLE_OUTPUT_DIR`, `BRINDLE_DRAFTS`, `BRINDLE_PORT` and `BRINDLE_BASE_URL`.
pub fn apply_env(config: &mut Config, var: impl Fn(&str) -> Option<String>) {
    if let Some(dir) = var("BRINDLE_OUTPUT_DIR") {
        config.output_dir = dir.into();
    }
    if let Some(drafts) = var("BRINDLE_DRAFTS") {
        config.drafts = drafts == "1" || drafts == "true";
    }
    if let Some(port) = var("BRINDLE_PORT").and_then(|p| p.parse().ok()) {
        config.port = port;
    }
    if let Some(url) = var("BRINDLE_BASE_URL") {
        config.base_url = url;
    }
}
"##;

pub const ERROR: &str = r##"//! One error type for the library; the binary prints it and exits with 1.

use std::fmt;

#[derive(Debug)]
pub enum Error {
    Io(std::io::Error),
    Config(toml::de::Error),
    FrontMatter { line: usize, message: String },
    Template { name: String, message: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::Config(e) => write!(f, "brindle.toml: {e}"),
            Error::FrontMatter { line, message } => write!(f, "front matter line {line}: {message}"),
            Error::Template { name, message } => write!(f, "template {name}: {message}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<toml::de::Error> for Error {
    fn from(e: toml::de::Error) -> Self {
        Error::Config(e)
    }
}
"##;

pub const SITE: &str = r##"//! A site: its config and pages, and the build that writes it out.

use std::path::Path;

use crate::config::Config;
use crate::content::{self, Page};
use crate::render;

pub struct Site {
    pub config: Config,
    pub pages: Vec<Page>,
}

impl Site {
    /// Reads the config and every page under `dir/content` (drafts too if asked).
    pub fn open(dir: &Path, include_drafts: bool) -> Result<Self, crate::Error> {
        let mut config = crate::config::load(dir)?;
        config.output_dir = dir.join(&config.output_dir);
        let drafts = include_drafts || config.drafts;
        let pages = content::collect(&dir.join("content"), drafts)?;
        Ok(Self { config, pages })
    }

    /// Writes every page, the feed and the sitemap; returns how many pages.
    pub fn build(&self) -> Result<usize, crate::Error> {
        let out = &self.config.output_dir;
        for page in &self.pages {
            let path = out.join(page.output_path());
            std::fs::create_dir_all(path.parent().unwrap_or(out))?;
            std::fs::write(path, render::page(page, &self.config)?)?;
        }
        std::fs::write(out.join("feed.xml"), render::feed::rss(&self.pages, &self.config))?;
        std::fs::write(out.join("sitemap.xml"), render::sitemap::xml(&self.pages, &self.config))?;
        Ok(self.pages.len())
    }
}
"##;

pub const WATCH: &str = r##"//! Rebuilding when a file under content/ or templates/ changes (`brindle serve`).

use std::path::Path;
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

/// Editors often save a file in two steps; events this close together are one change.
const SETTLE: Duration = Duration::from_millis(150);

/// Starts watching `dir`; the returned watcher must be kept alive.
pub fn rebuild_on_change(dir: &Path) -> Result<notify::RecommendedWatcher, crate::Error> {
    let root = dir.to_path_buf();
    let mut last: Option<Instant> = None;
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_err() || last.is_some_and(|at| at.elapsed() < SETTLE) {
            return;
        }
        last = Some(Instant::now());
        match crate::site::Site::open(&root, true).and_then(|site| site.build()) {
            Ok(n) => println!("rebuilt {n} pages"),
            Err(e) => eprintln!("rebuild failed: {e}"),
        }
    })
    .map_err(|e| crate::Error::Io(std::io::Error::other(e)))?;
    for sub in ["content", "templates"] {
        let _ = watcher.watch(&dir.join(sub), RecursiveMode::Recursive);
    }
    Ok(watcher)
}
"##;

pub const CLI_MOD: &str = r##"//! The command line: one subcommand per file.

mod build;
mod new;
mod serve;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "brindle", version, about = "Markdown in, website out.")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the site into the output dir.
    Build(build::Args),
    /// Serve the site and rebuild on change.
    Serve(serve::Args),
    /// Create a new site with the default theme.
    New(new::Args),
}

pub fn run(cli: Cli) -> Result<(), crate::Error> {
    match cli.command {
        Command::Build(args) => build::run(args),
        Command::Serve(args) => serve::run(args),
        Command::New(args) => new::run(args),
    }
}
"##;

pub const CLI_BUILD: &str = r##"//! `brindle build [--drafts] [--minify] [--out DIR]`.

use std::path::PathBuf;

use crate::site::Site;

#[derive(clap::Args)]
pub struct Args {
    /// Include pages marked `draft: true`.
    #[arg(long)]
    drafts: bool,
    /// Strip the whitespace between tags.
    #[arg(long)]
    minify: bool,
    /// Output directory (wins over build.output_dir and BRINDLE_OUTPUT_DIR).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<(), crate::Error> {
    let mut site = Site::open(&std::env::current_dir()?, args.drafts)?;
    if let Some(out) = args.out {
        site.config.output_dir = out;
    }
    let count = site.build()?;
    if args.minify {
        crate::render::minify_dir(&site.config.output_dir)?;
    }
    println!("built {count} pages into {}", site.config.output_dir.display());
    Ok(())
}
"##;

pub const CLI_SERVE: &str = r##"//! `brindle serve [--port N] [--no-build]`: a preview server that rebuilds on change.

use crate::site::Site;

#[derive(clap::Args)]
pub struct Args {
    /// Port to listen on (wins over serve.port and BRINDLE_PORT).
    #[arg(long)]
    port: Option<u16>,
    /// Serve the output dir as it is, without building first.
    #[arg(long)]
    no_build: bool,
}

pub fn run(args: Args) -> Result<(), crate::Error> {
    let dir = std::env::current_dir()?;
    let site = Site::open(&dir, true)?;
    if !args.no_build {
        site.build()?;
    }
    let port = args.port.unwrap_or(site.config.port);
    let server = tiny_http::Server::http(("127.0.0.1", port))
        .map_err(|e| crate::Error::Io(std::io::Error::other(e.to_string())))?;
    println!("serving {} at http://127.0.0.1:{port}/", site.config.output_dir.display());
    let _watcher = crate::watch::rebuild_on_change(&dir)?;
    for request in server.incoming_requests() {
        let path = site.config.output_dir.join(request.url().trim_start_matches('/'));
        let response = match std::fs::read(&path) {
            Ok(bytes) => tiny_http::Response::from_data(bytes),
            Err(_) => tiny_http::Response::from_string("not found").with_status_code(404),
        };
        let _ = request.respond(response);
    }
    Ok(())
}
"##;

/// The uncommitted edit to src/cli/serve.rs.
pub const SERVE_EDIT: (&str, &str) = ("(\"127.0.0.1\", port)", "(\"0.0.0.0\", port)");

pub const CLI_NEW: &str = r##"//! `brindle new NAME`: a new site folder with the default theme and one page.

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Folder to create.
    name: PathBuf,
}

const INDEX: &str = "---\ntitle: Welcome\n---\n\n# Welcome\n\nEdit content/index.md.\n";

pub fn run(args: Args) -> Result<(), crate::Error> {
    let content = args.name.join("content");
    std::fs::create_dir_all(&content)?;
    std::fs::write(content.join("index.md"), INDEX)?;
    std::fs::write(args.name.join("brindle.toml"), "title = \"My site\"\n")?;
    crate::render::template::copy_default_theme(&args.name.join("templates"))?;
    println!("created {}", args.name.display());
    Ok(())
}
"##;

pub const CONTENT_MOD: &str = r##"//! Pages: reading content/ and each page's front matter.

mod collect;
pub mod front_matter;
mod page;

pub use collect::collect;
pub use front_matter::parse_page;
pub use page::Page;
"##;

pub const CONTENT_PAGE: &str = r##"//! One Markdown page and where its HTML goes.

use std::path::PathBuf;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    /// Path under content/, e.g. `posts/hello.md`.
    pub source: PathBuf,
    pub title: String,
    pub date: Option<String>,
    pub draft: bool,
    pub tags: Vec<String>,
    pub body: String,
}

impl Page {
    /// `posts/hello.md` becomes `posts/hello.html`.
    pub fn output_path(&self) -> PathBuf {
        self.source.with_extension("html")
    }

    /// Whether the page is a blog post (it lives under content/posts/).
    pub fn is_post(&self) -> bool {
        self.source.starts_with("posts")
    }
}
"##;

pub const CONTENT_FRONT_MATTER: &str = r##"//! Front matter: `key: value` lines between two `---` lines at the top of a page.

use super::Page;

/// Splits `text` into its front matter and body (no `---` first line: no front matter).
pub fn split(text: &str) -> (&str, &str) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return ("", text);
    };
    match rest.find("\n---\n") {
        Some(end) => (&rest[..end], &rest[end + 5..]),
        None => ("", text),
    }
}

/// Parses a page. A value is everything after the line's first colon (issue 212).
pub fn parse_page(text: &str) -> Result<Page, crate::Error> {
    let (head, body) = split(text);
    let mut page = Page { body: body.to_string(), ..Page::default() };
    for (n, line) in head.lines().enumerate() {
        let Some((key, value)) = line.split_once(':') else {
            let message = format!("expected `key: value`, found {line:?}");
            return Err(crate::Error::FrontMatter { line: n + 2, message });
        };
        let value = value.trim();
        match key.trim() {
            "title" => page.title = value.to_string(),
            "date" => page.date = Some(value.to_string()),
            "draft" => page.draft = value == "true",
            "tags" => page.tags = value.split(',').map(|t| t.trim().to_string()).collect(),
            _ => {}
        }
    }
    if page.title.is_empty() {
        page.title = first_heading(body).unwrap_or("Untitled").to_string();
    }
    Ok(page)
}

fn first_heading(body: &str) -> Option<&str> {
    body.lines().find_map(|line| line.strip_prefix("# "))
}
"##;

pub const CONTENT_COLLECT: &str = r##"//! Walking content/ for pages.

use std::path::Path;

use super::{front_matter, Page};

/// Every `.md` file under `root`, sorted by path; drafts only when `drafts` is set.
pub fn collect(root: &Path, drafts: bool) -> Result<Vec<Page>, crate::Error> {
    let mut pages = Vec::new();
    walk(root, root, &mut pages)?;
    pages.retain(|p| drafts || !p.draft);
    pages.sort_by(|a, b| a.source.cmp(&b.source));
    Ok(pages)
}

fn walk(root: &Path, dir: &Path, pages: &mut Vec<Page>) -> Result<(), crate::Error> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(root, &path, pages)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            let mut page = front_matter::parse_page(&std::fs::read_to_string(&path)?)?;
            page.source = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            pages.push(page);
        }
    }
    Ok(())
}
"##;
