//! The project fixture's files that are not Rust: the manifest, licences, README,
//! changelog, contributing guide, docs/, the example config, templates, the deploy
//! script and CI. Texts as they stand at the last commit; [`super::history`] derives
//! the earlier versions. Short on purpose: a file read by the agent must fit a 4K context.

pub const CARGO_TOML: &str = r#"[package]
name = "brindle"
version = "1.4.2"
edition = "2021"
description = "A small static-site generator: Markdown in, HTML out."
license = "MIT OR Apache-2.0"
repository = "https://git.example.org/brindle/brindle"
rust-version = "1.74"

[dependencies]
clap = { version = "4", features = ["derive"] }
notify = "6"
pulldown-cmark = "0.10"
tiny_http = "0.12"
toml = "0.8"

[dev-dependencies]
tempfile = "3"
"#;

pub const GITIGNORE: &str = "/target\n/_site\n/agents\n*.swp\n";

pub const RUSTFMT_TOML: &str = "max_width = 100\nedition = \"2021\"\n";

pub const LICENSE_MIT: &str = r#"MIT License

Copyright (c) 2022 The brindle authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"#;

pub const LICENSE_APACHE: &str = r#"                                 Apache License
                           Version 2.0, January 2004
                        http://www.apache.org/licenses/

   Copyright 2022 The brindle authors

   Licensed under the Apache License, Version 2.0 (the "License");
   you may not use this file except in compliance with the License.
   You may obtain a copy of the License at

       http://www.apache.org/licenses/LICENSE-2.0

   Unless required by applicable law or agreed to in writing, software
   distributed under the License is distributed on an "AS IS" BASIS,
   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
   See the License for the specific language governing permissions and
   limitations under the License.
"#;

pub const README: &str = r#"# brindle

brindle turns a folder of Markdown files into a static website: pages, a blog feed,
a sitemap and heading anchors, with a preview server that rebuilds on change.

## Install

    cargo install --path .

## Quick start

    brindle new my-site
    cd my-site
    brindle serve

Open the address `brindle serve` prints and edit `content/index.md`.

## Documentation

- docs/configuration.md: every setting and where it comes from
- docs/deploying.md: publishing the built site
- docs/templates.md: the default theme
- docs/front-matter.md: page metadata
- docs/architecture.md: how a build runs

## License

Licensed under either of the Apache License, Version 2.0 (LICENSE-APACHE) or the MIT
license (LICENSE-MIT), at your option.
"#;

pub const CHANGELOG_HEAD: &str =
    "# Changelog\n\nAll notable changes to brindle are listed here, newest first.\n";

/// The changelog's sections, newest first, with the version each belongs to.
pub const CHANGELOG_SECTIONS: &[(&str, &str)] = &[
    ("1.4.2", "\n## 1.4.2\n\n- The preview server's default port is now 4717 (8080 clashed with too many other tools).\n- Markdown: footnotes, smart punctuation and `{#id}` heading attributes.\n"),
    ("1.4.1", "\n## 1.4.1\n\n- `brindle serve` no longer rebuilds twice when an editor saves a file in two steps.\n"),
    ("1.4.0", "\n## 1.4.0\n\n- RSS feed: `brindle build` writes feed.xml with the newest posts.\n"),
    ("1.3.0", "\n## 1.3.0\n\n- sitemap.xml lists every page that is not a draft.\n"),
    ("1.2.0", "\n## 1.2.0\n\n- Heading anchors: every heading gets an id made from its text.\n"),
    ("1.1.0", "\n## 1.1.0\n\n- `BRINDLE_*` environment variables override brindle.toml.\n"),
    ("1.0.0", "\n## 1.0.0\n\n- First stable release: the brindle.toml format is frozen for 1.x.\n"),
    ("0.5.0", "\n## 0.5.0\n\n- `brindle new` creates a site from the default theme.\n"),
    ("0.4.0", "\n## 0.4.0\n\n- Drafts: pages with `draft: true` are skipped unless `--drafts`.\n"),
    ("0.3.0", "\n## 0.3.0\n\n- Templates: pages are rendered into templates/page.html.\n"),
    ("0.2.0", "\n## 0.2.0\n\n- `brindle serve`: a preview server.\n"),
    ("0.1.0", "\n## 0.1.0\n\n- First release: Markdown pages to HTML.\n"),
];

pub const CONTRIBUTING: &str = r#"# Contributing to brindle

Thanks for helping! Small pull requests are the easiest to review.

## Before you open a pull request

1. Run `cargo fmt` and `cargo clippy --all-targets -- -D warnings`.
2. Run `cargo test`; the integration tests in tests/ build small sites in a temporary folder.
3. Add a line to CHANGELOG.md under the next version.
4. Sign off every commit (`git commit -s`): we use the Developer Certificate of Origin.

## Where things live

- src/cli: one file per subcommand (build, serve, new).
- src/content: reading pages and their front matter.
- src/render: Markdown, templates, anchors, the feed and the sitemap.

## Reporting bugs

Open an issue with the brindle version (`brindle --version`) and a small site that
shows the problem.
"#;

pub const CONFIGURATION: &str = r#"# Configuration

brindle reads its settings from four places; a later one wins over an earlier one:

1. the defaults in src/config.rs,
2. brindle.toml in the site's folder (copy brindle.example.toml to start),
3. environment variables named `BRINDLE_<KEY>`,
4. command-line flags.

## Settings

| setting      | brindle.toml       | environment          | flag       | default |
|--------------|--------------------|----------------------|------------|---------|
| output dir   | `build.output_dir` | `BRINDLE_OUTPUT_DIR` | `--out`    | `_site` |
| drafts       | `build.drafts`     | `BRINDLE_DRAFTS`     | `--drafts` | `false` |
| preview port | `serve.port`       | `BRINDLE_PORT`       | `--port`   | `4717`  |
| base URL     | `base_url`         | `BRINDLE_BASE_URL`   | none       | `/`     |

## Example

    BRINDLE_PORT=9000 brindle serve

serves the preview on port 9000 whatever brindle.toml says; `--port` would still win.
"#;

pub const DEPLOYING: &str = r#"# Deploying

The built site is plain files, so any web server can host it. Ours is static.example.org.

## Steps

1. Build with the production base URL:

       BRINDLE_BASE_URL=https://static.example.org/ brindle build --minify

   The site is written to `_site/` (or wherever `build.output_dir` points).
2. Check it locally: `brindle serve --no-build` serves `_site/` as it is.
3. Upload it with `scripts/deploy.sh`, which runs

       rsync -az --delete _site/ deploy@static.example.org:/srv/www/brindle/

   You need an SSH key that the `deploy` account accepts; ask in #ops for one.

## Rolling back

Each upload is also copied to `/srv/www/releases/<date>/` on the server; point the
`current` link at an older copy.
"#;

pub const TEMPLATES_DOC: &str = r#"# Templates

brindle ships a default theme in templates/: base.html, page.html and post.html.
Pages use page.html; pages under content/posts/ use post.html. Both go inside base.html.

Inside a template, `{{ title }}`, `{{ content }}`, `{{ date }}` and `{{ base_url }}`
are replaced. There are no loops or conditions: keep logic out of templates.

`brindle new` copies the default theme into the new site's templates/ folder.
"#;

pub const FRONT_MATTER_DOC: &str = r#"# Front matter

A page may start with `key: value` lines between two `---` lines:

    ---
    title: Hello
    date: 2024-01-05
    draft: true
    tags: news, rust
    ---

- `title`: the page title; without one, the first heading is used.
- `date`: orders posts in the feed, newest first.
- `draft`: the page is skipped unless `brindle build --drafts`.
- `tags`: comma-separated.

Unknown keys are ignored.
"#;

pub const ARCHITECTURE: &str = r#"# How a build runs

1. `config::load` merges the defaults, brindle.toml and the environment.
2. `content::collect` walks content/ and parses each page's front matter.
3. `render::markdown` turns the body into HTML; headings get ids.
4. `render::template` puts the HTML into page.html or post.html inside base.html.
5. `render::feed` and `render::sitemap` write feed.xml and sitemap.xml.
6. Everything lands in the output dir.

`brindle serve` runs the same build, then again whenever `watch` sees a change.
"#;

pub const EXAMPLE_CONFIG: &str = r#"# Copy to brindle.toml in your site's folder. Every key is optional; the defaults are
# in src/config.rs and docs/configuration.md lists every setting.

title = "My site"
base_url = "https://example.org/"

[build]
output_dir = "_site"
drafts = false
"#;

pub const BASE_HTML: &str = r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{{ title }}</title>
  <link rel="stylesheet" href="{{ base_url }}style.css">
</head>
<body>
{{ body }}
</body>
</html>
"#;

pub const PAGE_HTML: &str = "<main>\n  <h1>{{ title }}</h1>\n  {{ content }}\n</main>\n";

pub const POST_HTML: &str =
    "<article>\n  <h1>{{ title }}</h1>\n  <time>{{ date }}</time>\n  {{ content }}\n</article>\n";

pub const DEPLOY_SH: &str = r#"#!/bin/sh
# Uploads the built site (see docs/deploying.md). Run it from the site's folder.
set -eu
out="${BRINDLE_OUTPUT_DIR:-_site}"
test -d "$out" || { echo "no $out/: run brindle build first" >&2; exit 1; }
rsync -az --delete "$out/" deploy@static.example.org:/srv/www/brindle/
ssh deploy@static.example.org "cp -a /srv/www/brindle /srv/www/releases/\$(date +%F)"
"#;

pub const CI_YML: &str = r#"name: CI
on: [push, pull_request]
jobs:
  test:
    strategy:
      matrix:
        os: [ubuntu-latest, macos-latest, windows-latest]
    runs-on: ${{ matrix.os }}
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
      - run: cargo test --all-targets
      - run: cargo clippy --all-targets -- -D warnings
"#;

pub const BLOG_CONFIG: &str = r#"title = "A brindle blog"
base_url = "https://blog.example.org/"

[build]
output_dir = "_site"
"#;

pub const BLOG_POST: &str = r#"---
title: Hello, world
date: 2024-01-02
tags: meta
---

# Hello, world

This blog is built with brindle. Posts live in content/posts/ and appear in feed.xml.
"#;

/// The untracked file: a draft nobody has added yet.
pub const RELEASE_NOTES_DRAFT: &str =
    "# 1.5.0 (draft)\n\n- Faster rebuilds of large sites.\n- TODO: list the new flags.\n";

pub const FAQ: &str = r#"# Questions people ask

## Why is my page missing from the site?

It is probably a draft (`draft: true` in its front matter). Build with `--drafts`
to include drafts, or remove the line.

## Why is my post not in the feed?

Only pages under content/posts/ go into feed.xml, newest first.

## Can I use my own theme?

Yes: edit the files in your site's templates/ folder (see docs/templates.md).

## How do I publish the site?

See docs/deploying.md.
"#;

pub const SECURITY: &str = r#"# Security

Please report security problems privately to security@brindle.example.org, not in
a public issue. We answer within a week.

Only the latest 1.x release gets security fixes.
"#;

pub const BUG_REPORT: &str = r#"---
name: Bug report
about: Something brindle does wrong
---

**brindle version** (`brindle --version`):

**What you did** (a small site that shows it helps most):

**What happened, and what you expected**:
"#;
