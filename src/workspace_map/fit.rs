//! The `[workspace files]` block: the listing grouped by folder, one line per folder,
//! cut by relevance to a token budget.
//!
//! A folder is worth more the shallower it is and the more it looks like the project's
//! own source or documents (the top level, `src/`, `docs/`), and less when it looks like
//! tests, examples or data (`tests/`, `fixtures/`, `vendor/`). When the whole map does
//! not fit, the least relevant folders give way to one count line each ("… 40 more
//! files in tests/fixtures"); the block never exceeds the budget, and the same files
//! always render the same text (sorted), so the saved prompt prefix only changes when
//! the files do.

use std::collections::BTreeMap;

use super::FileEntry;
use crate::tokens::TokenCounter;

/// How the block opens (a reply that repeats it is parroting the context).
pub const MARKER: &str = "[workspace files]";

/// First line of the block (starts with [`MARKER`]).
pub const HEADER: &str =
    "[workspace files] (each line: a folder, then its files; use paths relative to the workspace root, e.g. src/main.rs)";

/// Most file names shown on one folder's line; the rest are counted.
pub const MAX_PER_FOLDER: usize = 24;

/// Files at least this big show their size (the model then reads them by line ranges).
const SHOW_SIZE_FROM: u64 = 32 * 1024;

/// Folder names that hold tests or examples (shown after the source).
const TEST_DIRS: &[&str] = &[
    "tests",
    "test",
    "examples",
    "example",
    "benches",
    "bench",
    "spec",
    "__tests__",
];

/// Folder names that hold data or vendored code (shown last).
const DATA_DIRS: &[&str] = &[
    "fixtures",
    "fixture",
    "testdata",
    "test-data",
    "vendor",
    "third_party",
    "snapshots",
    "__snapshots__",
    "data",
    "assets",
    "static",
];

/// Top-level folders that usually hold the project's own source and documents.
const SOURCE_DIRS: &[&str] = &[
    "src", "lib", "docs", "doc", "app", "cmd", "pkg", "crates", "include", "scripts", "bin",
];

/// The rendered block and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapBlock {
    /// The block, ending with a newline.
    pub text: String,
    /// Its tokens, by the counter it was fitted with.
    pub tokens: usize,
    /// Files in the workspace listing.
    pub files: usize,
    /// Files named in the block (the rest are only counted).
    pub named: usize,
}

/// One folder's files (`dir` is `""` at the top level).
#[derive(Debug, Clone)]
struct Folder<'a> {
    dir: &'a str,
    files: Vec<&'a FileEntry>,
}

/// The block for `files` in at most `budget` tokens, or `None` when there are no files
/// or not even the header and one count line fit.
pub fn build(files: &[FileEntry], counter: &dyn TokenCounter, budget: usize) -> Option<MapBlock> {
    if files.is_empty() {
        return None;
    }
    let folders = by_relevance(group(files));
    let block = |kept: usize| {
        let text = render(&folders, kept);
        let tokens = counter.count_tokens(&text);
        (tokens <= budget).then_some((text, tokens))
    };
    let (text, tokens) = match block(folders.len()) {
        Some(fit) => fit,
        None => {
            // The largest number of folders (most relevant first) that fits.
            let mut fits = block(0).or_else(|| one_line(files.len(), counter, budget))?;
            let (mut lo, mut hi) = (0, folders.len());
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                match block(mid) {
                    Some(fit) => {
                        fits = fit;
                        lo = mid;
                    }
                    None => hi = mid,
                }
            }
            fits
        }
    };
    let named = text.lines().skip(1).map(named_on).sum();
    Some(MapBlock {
        text,
        tokens,
        files: files.len(),
        named,
    })
}

/// The last resort: the header and how many files there are.
fn one_line(files: usize, counter: &dyn TokenCounter, budget: usize) -> Option<(String, usize)> {
    let text = format!("{HEADER}\n… {files} files (list_files shows them)\n");
    let tokens = counter.count_tokens(&text);
    (tokens <= budget).then_some((text, tokens))
}

/// Files named on one rendered line (count lines name none).
fn named_on(line: &str) -> usize {
    if line.starts_with('…') {
        return 0;
    }
    let names = line.split_once(": ").map_or(line, |(_, rest)| rest);
    names
        .split(' ')
        .filter(|w| !w.is_empty() && !w.starts_with('(') && !w.ends_with(')'))
        .count()
}

/// Files grouped by folder, folders in path order.
fn group(files: &[FileEntry]) -> Vec<Folder<'_>> {
    let mut map: BTreeMap<&str, Vec<&FileEntry>> = BTreeMap::new();
    for f in files {
        let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        map.entry(dir).or_default().push(f);
    }
    map.into_iter()
        .map(|(dir, files)| Folder { dir, files })
        .collect()
}

/// Folders most relevant first (ties in path order).
fn by_relevance(mut folders: Vec<Folder<'_>>) -> Vec<Folder<'_>> {
    folders.sort_by_key(|f| (rank(f.dir), f.dir));
    folders
}

/// Whether `dir` is, or is inside, a test, example or data folder (`tests/unity/examples`,
/// `vendor/`): what such a folder holds is the tests' or another project's.
pub fn set_aside(dir: &str) -> bool {
    dir.split('/').any(|p| {
        let p = p.to_ascii_lowercase();
        TEST_DIRS.contains(&p.as_str()) || DATA_DIRS.contains(&p.as_str())
    })
}

/// Lower is more relevant: the folder's depth plus a penalty for test and data folders
/// (or, for other folders, one unless the top-level folder holds source or documents).
pub fn rank(dir: &str) -> usize {
    if dir.is_empty() {
        return 0;
    }
    let parts: Vec<&str> = dir.split('/').collect();
    let lower = |p: &&str| p.to_ascii_lowercase();
    let penalty = if parts
        .iter()
        .map(lower)
        .any(|p| DATA_DIRS.contains(&p.as_str()))
    {
        3
    } else if parts
        .iter()
        .map(lower)
        .any(|p| TEST_DIRS.contains(&p.as_str()))
    {
        2
    } else if SOURCE_DIRS.contains(&lower(&parts[0]).as_str()) {
        0
    } else {
        1
    };
    parts.len() + penalty
}

/// The block with the first `kept` folders of `folders` (by relevance) on lines of
/// their own, in path order, and the others as count lines.
fn render(folders: &[Folder<'_>], kept: usize) -> String {
    let mut shown: Vec<&Folder<'_>> = folders.iter().take(kept).collect();
    shown.sort_by_key(|f| f.dir);
    let mut out = format!("{HEADER}\n");
    for folder in shown {
        out.push_str(&folder_line(folder));
        out.push('\n');
    }
    for line in count_lines(&folders[kept.min(folders.len())..]) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `src/tools/: mod.rs workspace.rs (+3 more)`; the top level has no folder name.
fn folder_line(folder: &Folder<'_>) -> String {
    let mut files = folder.files.clone();
    if files.len() > MAX_PER_FOLDER {
        files.sort_by_key(|f| (file_rank(name_of(f)), &f.path));
        files.truncate(MAX_PER_FOLDER);
        files.sort_by_key(|f| &f.path);
    }
    let names: Vec<String> = files.iter().map(|f| file_label(f)).collect();
    let mut line = if folder.dir.is_empty() {
        names.join(" ")
    } else {
        format!("{}/: {}", folder.dir, names.join(" "))
    };
    let more = folder.files.len() - files.len();
    if more > 0 {
        line.push_str(&format!(" (+{more} more)"));
    }
    line
}

fn name_of(f: &FileEntry) -> &str {
    f.path.rsplit_once('/').map_or(f.path.as_str(), |(_, n)| n)
}

/// The name, with its size when it is big (`data.csv (120K)`), two significant digits
/// so small edits rarely change the map.
fn file_label(f: &FileEntry) -> String {
    let name = name_of(f);
    if f.bytes < SHOW_SIZE_FROM {
        return name.to_string();
    }
    let kib = f.bytes / 1024;
    let size = if kib < 1024 {
        format!("{}K", round2(kib))
    } else if kib < 100 * 1024 {
        format!("{:.1}M", f.bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{}M", round2(kib / 1024))
    };
    format!("{name} ({size})")
}

/// `n` kept to two significant digits (1234 → 1200).
fn round2(n: u64) -> u64 {
    let mut scale = 1;
    while n / scale >= 100 {
        scale *= 10;
    }
    n / scale * scale
}

/// Which files of a crowded folder are named: manifests and readmes first.
fn file_rank(name: &str) -> usize {
    let lower = name.to_ascii_lowercase();
    let manifest = [
        "cargo.toml",
        "package.json",
        "pyproject.toml",
        "go.mod",
        "makefile",
        "cmakelists.txt",
        "mod.rs",
        "lib.rs",
        "main.rs",
        "__init__.py",
        "index.js",
        "index.ts",
    ];
    if manifest.contains(&lower.as_str()) {
        0
    } else if lower.starts_with("readme") || lower.starts_with("license") {
        1
    } else if lower.ends_with(".md") {
        2
    } else {
        3
    }
}

/// One line per top-level folder for the folders not shown: `… 40 more files in
/// tests/fixtures`, or `… 52 more files in 3 folders under tests/`.
fn count_lines(omitted: &[Folder<'_>]) -> Vec<String> {
    let mut by_top: BTreeMap<&str, (usize, Vec<&str>)> = BTreeMap::new();
    for f in omitted {
        let top = f.dir.split('/').next().unwrap_or("");
        let entry = by_top.entry(top).or_default();
        entry.0 += f.files.len();
        entry.1.push(f.dir);
    }
    by_top
        .into_iter()
        .map(|(top, (files, dirs))| match dirs.as_slice() {
            [""] => format!("… {files} more files at the top level"),
            [one] => format!("… {files} more files in {one}/"),
            _ => format!(
                "… {files} more files in {} folders under {top}/",
                dirs.len()
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::WordCounter;

    fn entries(paths: &[&str]) -> Vec<FileEntry> {
        let mut v: Vec<FileEntry> = paths
            .iter()
            .map(|p| FileEntry {
                path: p.to_string(),
                bytes: 100,
            })
            .collect();
        v.sort();
        v
    }

    fn project() -> Vec<FileEntry> {
        let mut paths = vec![
            "Cargo.toml",
            "README.md",
            "LICENSE-MIT",
            "src/main.rs",
            "src/lib.rs",
            "src/tools/mod.rs",
            "docs/deploy.md",
            "tests/all.rs",
        ];
        let fixtures: Vec<String> = (0..40)
            .map(|i| format!("tests/fixtures/f{i:02}.txt"))
            .collect();
        paths.extend(fixtures.iter().map(String::as_str));
        entries(&paths)
    }

    #[test]
    fn ranks_shallow_source_before_deep_tests_and_data() {
        let table = [
            ("", 0),
            ("src", 1),
            ("docs", 1),
            ("misc", 2),
            ("src/tools", 2),
            ("tests", 3),
            ("src/tools/deep", 3),
            ("tests/fixtures", 5),
            ("vendor/x", 5),
        ];
        for (dir, want) in table {
            assert_eq!(rank(dir), want, "{dir}");
        }
    }

    #[test]
    fn whole_map_when_it_fits() {
        let files = project();
        let b = build(&files, &WordCounter, 10_000).unwrap();
        assert!(
            b.text.starts_with(HEADER) && HEADER.starts_with(MARKER),
            "{}",
            b.text
        );
        let lines: Vec<&str> = b.text.lines().skip(1).collect();
        assert_eq!(lines[0], "Cargo.toml LICENSE-MIT README.md");
        assert_eq!(lines[1], "docs/: deploy.md");
        assert_eq!(lines[2], "src/: lib.rs main.rs");
        assert_eq!(lines[3], "src/tools/: mod.rs");
        assert_eq!(lines[4], "tests/: all.rs");
        assert!(
            lines[5].starts_with("tests/fixtures/: f00.txt"),
            "{}",
            lines[5]
        );
        assert!(lines[5].ends_with("(+16 more)"), "{}", lines[5]);
        assert_eq!(b.files, 48);
        assert_eq!(b.named, 8 + MAX_PER_FOLDER);
        assert_eq!(b.tokens, WordCounter.count_tokens(&b.text));
    }

    #[test]
    fn a_tight_budget_cuts_deep_test_data_first_and_never_overflows() {
        let files = project();
        let full = build(&files, &WordCounter, 10_000).unwrap().tokens;
        let mut last = 0;
        for budget in (0..=full).rev() {
            let Some(b) = build(&files, &WordCounter, budget) else {
                assert!(budget < 30, "nothing fits {budget}");
                continue;
            };
            assert!(b.tokens <= budget, "{budget}: {}", b.tokens);
            assert_eq!(b.tokens, WordCounter.count_tokens(&b.text));
            last = budget;
        }
        assert!(last > 0);
        let b = build(&files, &WordCounter, full - 1).unwrap();
        assert!(
            b.text.contains("… 40 more files in tests/fixtures/"),
            "{}",
            b.text
        );
        assert!(b.text.contains("src/: lib.rs main.rs"), "{}", b.text);
        // At every budget the folders shown are the most relevant ones.
        let all = ["", "docs", "src", "src/tools", "tests", "tests/fixtures"];
        for budget in 0..=full {
            let Some(b) = build(&files, &WordCounter, budget) else {
                continue;
            };
            let shown: Vec<&str> = b
                .text
                .lines()
                .skip(1)
                .filter(|l| !l.starts_with('…'))
                .map(|l| l.split_once("/: ").map_or("", |(d, _)| d))
                .collect();
            let worst = shown.iter().map(|d| (rank(d), *d)).max();
            for dir in all.iter().filter(|d| !shown.contains(d)) {
                assert!(
                    Some((rank(dir), *dir)) > worst,
                    "{budget}: {dir} left out\n{}",
                    b.text
                );
            }
        }
    }

    #[test]
    fn rendering_is_deterministic_and_sorted() {
        let files = project();
        let mut shuffled = files.clone();
        shuffled.reverse();
        shuffled.sort();
        for budget in [10_000, 60, 40] {
            assert_eq!(
                build(&files, &WordCounter, budget),
                build(&shuffled, &WordCounter, budget)
            );
        }
    }

    #[test]
    fn sizes_and_crowded_folders() {
        let mut files = entries(&["big.csv", "huge.bin", "small.rs"]);
        files[0].bytes = 123 * 1024 + 7;
        files[1].bytes = 3 * 1024 * 1024 + 5;
        let b = build(&files, &WordCounter, 1000).unwrap();
        assert!(
            b.text.contains("big.csv (120K) huge.bin (3.0M) small.rs"),
            "{}",
            b.text
        );
        let mut paths: Vec<String> = (0..30).map(|i| format!("src/a{i:02}.rs")).collect();
        paths.push("src/mod.rs".into());
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let b = build(&entries(&refs), &WordCounter, 1000).unwrap();
        assert!(b.text.contains(" mod.rs (+7 more)"), "{}", b.text);
        assert_eq!(round2(1234), 1200);
        assert_eq!(round2(99), 99);
        assert!(build(&[], &WordCounter, 1000).is_none());
    }
}
