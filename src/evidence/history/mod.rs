//! History as evidence: each commit as one searchable unit (subject, body, author, date,
//! the files it touched), so "the commit that replaced X", "who first added Y" and "when
//! did Z change" find their commits by words. Read with one `git log` from the newest
//! commit back to the one indexed last (all of it the first time, up to
//! [`MAX_COMMITS`]). The git actions of the `git` tool stay for what they answer exactly
//! (the last commit, a count, blame). Tags are units of their own: a release's name and
//! date, so "when was 1.2.0 released?" and "the latest release" find them by words.

use std::path::Path;
use std::time::Duration;

/// Most commits indexed (the newest).
pub const MAX_COMMITS: usize = 20_000;

/// Files named per commit in its searchable text (a mass rename names the first ones).
const MAX_FILES_NAMED: usize = 24;

/// How long one `git log` may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// One commit as the index keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    pub hash: String,
    pub author: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub subject: String,
    pub body: String,
    pub files: Vec<String>,
    /// A merge (more than one parent): its author merged the change, someone else may
    /// have written it.
    pub merge: bool,
    /// The compound names (`cJSON_SetBoolValue`, `max_retries`) on the lines it added:
    /// searched, never shown, so "who added X" finds the commit whose subject never says X.
    pub added: Vec<String>,
    /// The names its added lines define (`def precisedelta(`, `fn parse_args(`): the
    /// commit's own names, so "who first added precisedelta" finds the commit that
    /// defined it above the later ones whose subjects say the word.
    pub defined: Vec<String>,
}

/// Most added names kept per commit.
const MAX_ADDED: usize = 200;

/// Most defined names kept per commit (a first import defines hundreds).
const MAX_DEFINED: usize = 60;

/// What a commit's added lines hold, as [`parse_added`] reads them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Added {
    /// Compound names (`max_retries`, `cJSON_SetBoolValue`).
    pub names: Vec<String>,
    /// Names a definition gives, of more than three letters.
    pub defined: Vec<String>,
}

impl Commit {
    /// The seven-character hash a snippet names.
    pub fn short(&self) -> &str {
        &self.hash[..self.hash.len().min(7)]
    }

    /// The commit as a snippet: `commit abc1234 by Ann Lee, 2024-03-20: subject`, the
    /// files, then the body without its trailers (so a snippet cut to its first lines
    /// keeps the files). The author is said as the author: shown `(2026-01-16, Bernice
    /// Wu)` above a `Co-authored-by: Sebastian Beltran` trailer, the 1.5B named the
    /// co-author as the one who made the change. A merge says `merged by`: asked who
    /// wrote the commit that dropped Python 3.8, the 1.5B named the author of a merge of
    /// someone else's branch that mentioned 3.8.
    pub fn text(&self) -> String {
        let mut out = format!(
            "commit {} {} {}, {}: {}",
            self.short(),
            if self.merge { "merged by" } else { "by" },
            self.author,
            self.date,
            self.subject
        );
        if !self.files.is_empty() {
            let shown: Vec<&str> = self
                .files
                .iter()
                .take(MAX_FILES_NAMED)
                .map(String::as_str)
                .collect();
            let more = self.files.len().saturating_sub(shown.len());
            out.push_str("\nfiles: ");
            out.push_str(&shown.join(", "));
            if more > 0 {
                out.push_str(&format!(" and {more} more"));
            }
        }
        let body = without_trailers(&self.body);
        if !body.is_empty() {
            out.push('\n');
            out.push_str(&body);
        }
        out
    }
}

/// Trailer keys of a commit body that say who else signed, reviewed or co-wrote it:
/// left out of the snippet (the body stays searchable by them).
const TRAILERS: &[&str] = &[
    "signed-off-by:",
    "co-authored-by:",
    "reviewed-by:",
    "acked-by:",
    "tested-by:",
    "change-id:",
];

/// `body` trimmed, without its trailer lines and the `---` rule GitHub puts above them.
fn without_trailers(body: &str) -> String {
    let kept: Vec<&str> = body
        .lines()
        .filter(|l| {
            let lower = l.trim_start().to_ascii_lowercase();
            !TRAILERS.iter().any(|t| lower.starts_with(t))
        })
        .collect();
    let mut text = kept.join("\n");
    let trimmed = text.trim_end().trim_end_matches('-').trim_end().len();
    text.truncate(trimmed);
    text.trim().to_string()
}

/// The commit `HEAD` names, or `None` outside git or in a repository with no commits.
pub fn head(root: &Path) -> Option<String> {
    let out = crate::command::git::quiet(root, &["rev-parse", "--verify", "-q", "HEAD"], TIMEOUT)?;
    let hash = String::from_utf8_lossy(&out).trim().to_string();
    (hash.len() >= 7).then_some(hash)
}

/// Whether `older` is an ancestor of `newer` (the history was not rewritten since).
pub fn is_ancestor(root: &Path, older: &str, newer: &str) -> bool {
    crate::command::git::quiet(
        root,
        &["merge-base", "--is-ancestor", older, newer],
        TIMEOUT,
    )
    .is_some()
}

/// The commits after `since` up to `head` (all of them when `since` is `None`), newest
/// first, at most [`MAX_COMMITS`].
pub fn commits(root: &Path, since: Option<&str>, head: &str) -> Option<Vec<Commit>> {
    let range = match since {
        Some(s) => format!("{s}..{head}"),
        None => head.to_string(),
    };
    let max = format!("--max-count={MAX_COMMITS}");
    // A merge lists the files its branch changed (against its first parent): "which file
    // did the commit that … change?" is often answered by a merged pull request.
    let mut args = vec![
        "log",
        "--no-color",
        "--no-renames",
        "--date=short",
        "--format=%x1e%H%x1f%P%x1f%an%x1f%ad%x1f%s%x1f%b%x1f",
        "--name-only",
        "--diff-merges=first-parent",
        max.as_str(),
        range.as_str(),
        "--",
    ];
    let out = crate::command::git::quiet(root, &args, TIMEOUT).or_else(|| {
        // A git older than 2.31 knows no `--diff-merges`: merges then list no files.
        args.retain(|a| !a.starts_with("--diff-merges"));
        crate::command::git::quiet(root, &args, TIMEOUT)
    })?;
    let mut commits = parse(&String::from_utf8_lossy(&out));
    if let Some(mut added) = added_names(root, &range, &max) {
        for c in &mut commits {
            if let Some(a) = added.remove(&c.hash) {
                c.added = a.names;
                c.defined = a.defined;
            }
        }
    }
    Some(commits)
}

/// The compound and defined names on each commit's added lines, by hash: one `git log -p`
/// with no context lines over the same range (about 1 s for 6,000 commits); `None` when git fails.
fn added_names(
    root: &Path,
    range: &str,
    max: &str,
) -> Option<std::collections::HashMap<String, Added>> {
    let args = [
        "log",
        "--no-color",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "-p",
        "--unified=0",
        "--format=%x1e%H",
        max,
        range,
        "--",
    ];
    let out = crate::command::git::quiet(root, &args, TIMEOUT)?;
    Some(parse_added(&String::from_utf8_lossy(&out)))
}

/// Added names per commit from `git log -p --format=%x1e%H` output.
pub fn parse_added(text: &str) -> std::collections::HashMap<String, Added> {
    let mut out = std::collections::HashMap::new();
    for record in text.split('\u{1e}') {
        let mut lines = record.lines();
        let Some(hash) = lines.next().map(str::trim).filter(|h| h.len() >= 7) else {
            continue;
        };
        let mut added = Added::default();
        let mut seen = std::collections::HashSet::new();
        for line in lines.filter(|l| l.starts_with('+') && !l.starts_with("+++")) {
            let line = &line[1..];
            for name in super::terms::compound_names(line) {
                if added.names.len() < MAX_ADDED && seen.insert(name.clone()) {
                    added.names.push(name);
                }
            }
            if !super::code::is_definition(line) {
                continue;
            }
            for name in super::terms::defined_names(line) {
                if name.len() > 3
                    && added.defined.len() < MAX_DEFINED
                    && !added.defined.contains(&name)
                {
                    added.defined.push(name);
                }
            }
        }
        out.insert(hash.to_string(), added);
    }
    out
}

/// Commits from `git log` output in the format [`commits`] asks for.
pub fn parse(text: &str) -> Vec<Commit> {
    text.split('\u{1e}')
        .filter_map(|record| {
            let mut parts = record.split('\u{1f}');
            let hash = parts.next()?.trim().to_string();
            let merge = parts.next()?.split_whitespace().count() > 1;
            let author = parts.next()?.trim().to_string();
            let date = parts.next()?.trim().to_string();
            let subject = parts.next()?.trim().to_string();
            let body = parts.next()?.trim().to_string();
            let files = parts
                .next()
                .unwrap_or("")
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            (hash.len() >= 7).then_some(Commit {
                hash,
                author,
                date,
                subject,
                body,
                files,
                merge,
                added: Vec::new(),
                defined: Vec::new(),
            })
        })
        .collect()
}

/// Most tags indexed (the newest).
pub const MAX_TAGS: usize = 1_000;

/// One tag as the index keeps it: a release's name, the commit it marks and its date.
#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    pub name: String,
    /// The commit's short hash.
    pub commit: String,
    /// `YYYY-MM-DD`: the tagger's date, or the commit's for a lightweight tag.
    pub date: String,
    /// The commit's subject.
    pub subject: String,
    /// An annotated tag's own message (its first line), when it differs from `subject`.
    pub message: String,
    /// The commit's own date where an annotated tag was made on another day (a release
    /// tagged after the fact); empty otherwise.
    pub commit_date: String,
    /// Whether it is the newest release tag (the latest release).
    pub newest: bool,
}

/// Whether a tag's name is a release's version (`v1.2.0`, `2.2.0`, `release-1.4`,
/// `1.0.0-rc1`), not a branch's marker (`2.1.x`) or a word (`nightly`).
pub fn is_release(name: &str) -> bool {
    let version = name.trim_start_matches(|c: char| !c.is_ascii_digit());
    let prefix = &name[..name.len() - version.len()];
    prefix.len() <= 8
        && !version.is_empty()
        && version
            .split('.')
            .all(|part| part.starts_with(|c: char| c.is_ascii_digit()))
}

impl Tag {
    /// The tag as a snippet: `tag v1.2.0 (2024-03-20), release of commit abc1234:
    /// subject`; the newest release says it is the latest, so "what is the latest
    /// release?" finds it by its words.
    pub fn text(&self) -> String {
        let what = if is_release(&self.name) {
            "release of commit"
        } else {
            "on commit"
        };
        let mut out = if self.commit_date.is_empty() {
            format!("tag {} ({})", self.name, self.date)
        } else {
            format!("tag {} (tagged {})", self.name, self.date)
        };
        if !self.message.is_empty() {
            out.push_str(&format!(": {}", self.message));
        }
        out.push_str(&format!(", {what} {}", self.commit));
        if !self.commit_date.is_empty() {
            out.push_str(&format!(" of {}", self.commit_date));
        }
        out.push_str(&format!(": {}", self.subject));
        if self.newest {
            out.push_str("\nthe newest release tag: the latest release");
        }
        out
    }
}

/// The repository's tags, newest first, at most [`MAX_TAGS`]; `None` outside git.
pub fn tags(root: &Path) -> Option<Vec<Tag>> {
    let max = format!("--count={MAX_TAGS}");
    let args = [
        "for-each-ref",
        "--sort=-creatordate",
        max.as_str(),
        "--format=%(refname:short)%1f%(objectname:short)%1f%(*objectname:short)%1f%(creatordate:short)%1f%(subject)%1f%(*subject)%1f%(*creatordate:short)",
        "refs/tags",
    ];
    let out = crate::command::git::quiet(root, &args, TIMEOUT)?;
    Some(parse_tags(&String::from_utf8_lossy(&out)))
}

/// Tags from `git for-each-ref` lines in the format [`tags`] asks for (an annotated
/// tag's commit and subject are its peeled ones).
pub fn parse_tags(text: &str) -> Vec<Tag> {
    let mut out: Vec<Tag> = text
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\u{1f}').map(str::trim).collect();
            let (name, object, peeled, date, subject, peeled_subject, peeled_date) = match f[..] {
                [a, b, c, d, e, g] => (a, b, c, d, e, g, ""),
                [a, b, c, d, e, g, h] => (a, b, c, d, e, g, h),
                _ => return None,
            };
            let or = |a: &str, b: &str| {
                if a.is_empty() {
                    b.to_string()
                } else {
                    a.to_string()
                }
            };
            let annotated = !peeled.is_empty();
            let message = if annotated && subject != peeled_subject && subject != name {
                subject.to_string()
            } else {
                String::new()
            };
            (!name.is_empty() && !date.is_empty()).then(|| Tag {
                name: name.to_string(),
                commit: or(peeled, object),
                date: date.to_string(),
                subject: or(peeled_subject, subject),
                message,
                commit_date: if annotated && peeled_date != date {
                    peeled_date.to_string()
                } else {
                    String::new()
                },
                newest: false,
            })
        })
        .collect();
    if let Some(latest) = out.iter_mut().find(|t| is_release(&t.name)) {
        latest.newest = true;
    }
    out
}

/// A git runner in `dir` for tests: commits as "Ann Lee", unsigned; a failure fails the test.
#[cfg(test)]
pub(crate) fn git_in(dir: &Path) -> impl Fn(&[&str]) + '_ {
    move |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=Ann Lee",
                "-c",
                "user.email=a@x",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    }
}

#[cfg(test)]
mod tests;
