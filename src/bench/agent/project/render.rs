//! The project fixture's src/render/ files as they stand at the last commit: the
//! Markdown renderer (whose last three commits are Tomasz's), the heading anchors
//! (`slugify_heading`), the feed (its limit, and the escaping of the last commit),
//! templates and the sitemap. Real-looking, never compiled.

pub const RENDER_MOD: &str = r##"//! Turning pages into HTML files, plus the feed and the sitemap.

pub mod anchors;
pub mod feed;
pub mod markdown;
pub mod sitemap;
pub mod template;

use crate::config::Config;
use crate::content::Page;

/// A page's whole HTML: its Markdown rendered, then put into its template.
pub fn page(page: &Page, config: &Config) -> Result<String, crate::Error> {
    let body = markdown::to_html(&page.body);
    let name = if page.is_post() { "post.html" } else { "page.html" };
    let date = page.date.as_deref().unwrap_or("");
    let values = [("title", page.title.as_str()), ("content", &body), ("date", date)];
    template::fill(name, &values, &config.base_url)
}

/// Removes the whitespace between tags in every .html file of `dir` (`build --minify`).
pub fn minify_dir(dir: &std::path::Path) -> Result<(), crate::Error> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "html") {
            let html = std::fs::read_to_string(&path)?;
            std::fs::write(&path, html.lines().map(str::trim).collect::<String>())?;
        }
    }
    Ok(())
}
"##;

/// The three lines the markdown renderer's last three commits added, in order.
pub const MARKDOWN_LINES: [&str; 3] = [
    "    opts.insert(Options::ENABLE_FOOTNOTES);",
    "    opts.insert(Options::ENABLE_SMART_PUNCTUATION);",
    "    opts.insert(Options::ENABLE_HEADING_ATTRIBUTES);",
];

pub const RENDER_MARKDOWN: &str = r##"//! Markdown to HTML with pulldown-cmark; headings get ids from [`super::anchors`].

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};

use super::anchors::slugify_heading;

/// The Markdown extensions brindle turns on.
fn options() -> Options {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_FOOTNOTES);
    opts.insert(Options::ENABLE_SMART_PUNCTUATION);
    opts.insert(Options::ENABLE_HEADING_ATTRIBUTES);
    opts
}

/// Renders `markdown` to HTML; every heading without an id gets one.
pub fn to_html(markdown: &str) -> String {
    let mut events: Vec<Event> = Parser::new_ext(markdown, options()).collect();
    add_heading_ids(&mut events);
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events.into_iter());
    out
}

fn add_heading_ids(events: &mut [Event]) {
    for i in 0..events.len() {
        let text = heading_text(&events[i + 1..]);
        if let Event::Start(Tag::Heading { id: id @ None, .. }) = &mut events[i] {
            *id = Some(CowStr::from(slugify_heading(&text)));
        }
    }
}

/// The text up to the end of the heading that starts just before `events`.
fn heading_text(events: &[Event]) -> String {
    let mut text = String::new();
    for event in events {
        match event {
            Event::Text(t) | Event::Code(t) => text.push_str(t),
            Event::End(TagEnd::Heading(_)) => break,
            _ => {}
        }
    }
    text
}
"##;

pub const RENDER_ANCHORS: &str = r##"//! Heading anchors: the ids that let a link point at a section.

use std::collections::HashMap;

/// Turns a heading's text into an id: lowercase ASCII letters and digits, words joined
/// by `-`, everything else dropped. "Getting Started!" becomes "getting-started".
pub fn slugify_heading(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        let word: String = word
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if word.is_empty() {
            continue;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word);
    }
    slug
}

/// Makes ids unique within a page: the second "intro" becomes "intro-2".
pub fn dedupe(ids: &mut [String]) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for id in ids.iter_mut() {
        let n = seen.entry(id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            *id = format!("{id}-{n}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_is_dropped() {
        assert_eq!(slugify_heading("Getting Started!"), "getting-started");
    }
}
"##;

pub const RENDER_FEED: &str = r##"//! The RSS feed (feed.xml): the newest posts first.

use crate::config::Config;
use crate::content::Page;

/// Posts in the feed at most.
pub const FEED_LIMIT: usize = 25;

/// The feed's XML for the posts among `pages`.
pub fn rss(pages: &[Page], config: &Config) -> String {
    let mut posts: Vec<&Page> = pages.iter().filter(|p| p.is_post()).collect();
    posts.sort_by(|a, b| b.date.cmp(&a.date));
    posts.truncate(FEED_LIMIT);
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel>\n");
    let title = escape_xml(&config.title);
    xml.push_str(&format!("<title>{title}</title>\n<link>{}</link>\n", config.base_url));
    for page in posts {
        xml.push_str(&item(page, &config.base_url));
    }
    xml.push_str("</channel></rss>\n");
    xml
}

fn item(page: &Page, base_url: &str) -> String {
    let link = format!("{base_url}{}", page.output_path().display());
    let date = page.date.as_deref().unwrap_or("");
    let title = escape_xml(&page.title);
    format!("<item><title>{title}</title><link>{link}</link><pubDate>{date}</pubDate></item>\n")
}

/// `&`, `<` and `>` as XML entities ("Fish & Chips" made feed readers give up).
fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
"##;

pub const RENDER_TEMPLATE: &str = r##"//! Templates: `{{ name }}` placeholders filled with a page's values.

use std::path::Path;

const BASE: &str = include_str!("../../templates/base.html");
const PAGE: &str = include_str!("../../templates/page.html");
const POST: &str = include_str!("../../templates/post.html");

/// The built-in template of that name.
fn builtin(name: &str) -> Option<&'static str> {
    match name {
        "base.html" => Some(BASE),
        "page.html" => Some(PAGE),
        "post.html" => Some(POST),
        _ => None,
    }
}

/// Fills template `name`, inside base.html, with `values` and the base URL.
pub fn fill(name: &str, values: &[(&str, &str)], base_url: &str) -> Result<String, crate::Error> {
    let inner = builtin(name).ok_or_else(|| crate::Error::Template {
        name: name.to_string(),
        message: "no such template".to_string(),
    })?;
    let mut html = BASE.replace("{{ body }}", inner).replace("{{ base_url }}", base_url);
    for (key, value) in values {
        html = html.replace(&format!("{{{{ {key} }}}}"), value);
    }
    Ok(html)
}

/// Writes the built-in theme into `dir` (`brindle new`).
pub fn copy_default_theme(dir: &Path) -> Result<(), crate::Error> {
    std::fs::create_dir_all(dir)?;
    for name in ["base.html", "page.html", "post.html"] {
        std::fs::write(dir.join(name), builtin(name).unwrap_or_default())?;
    }
    Ok(())
}
"##;

pub const RENDER_SITEMAP: &str = r##"//! sitemap.xml: one <url> per page, for search engines.

use crate::config::Config;
use crate::content::Page;

pub fn xml(pages: &[Page], config: &Config) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
    for page in pages.iter().filter(|p| !p.draft) {
        let loc = format!("{}{}", config.base_url, page.output_path().display());
        xml.push_str(&format!("  <url><loc>{loc}</loc></url>\n"));
    }
    xml.push_str("</urlset>\n");
    xml
}
"##;
