//! The history as the index reads it: log records, added names, merges, tags.

use super::*;

#[test]
fn a_snippet_names_the_author_and_leaves_out_the_trailers() {
    let body = "* structure the DOM body\n\n---------\n\nCo-authored-by: Sebastian B <s@x>\nSigned-off-by: Bernice Wu <b@x>";
    assert_eq!(without_trailers(body), "* structure the DOM body");
    assert_eq!(without_trailers("Fix -- the parser\n"), "Fix -- the parser");
}

#[test]
fn log_records_parse_with_their_files() {
    let log = "\u{1e}aaaaaaaaaaaa\u{1f}ccccccc\u{1f}Ann Lee\u{1f}2024-03-20\u{1f}Replace md5 with sha256\u{1f}Longer text.\n\u{1f}\n\nsrc/hash.rs\nREADME.md\n\u{1e}bbbbbbbbbbbb\u{1f}\u{1f}Bo\u{1f}2023-01-02\u{1f}Initial commit\u{1f}\u{1f}\n\nsrc/main.rs\n\u{1e}ddddddddd\u{1f}aaaaaaa ccccccc\u{1f}Cy\u{1f}2024-04-01\u{1f}Merge pull request #9 from ann/sha\u{1f}Use sha256\u{1f}\n";
    let c = parse(log);
    assert_eq!(c.len(), 3);
    assert!(!c[0].merge && !c[1].merge && c[2].merge);
    // A merge's author merged it: the snippet says so.
    assert_eq!(
        c[2].text(),
        "commit ddddddd merged by Cy, 2024-04-01: Merge pull request #9 from ann/sha\nUse sha256"
    );
    assert_eq!(c[0].files, ["src/hash.rs", "README.md"]);
    assert_eq!(c[0].body, "Longer text.");
    assert_eq!(
        c[0].text(),
        "commit aaaaaaa by Ann Lee, 2024-03-20: Replace md5 with sha256\nfiles: src/hash.rs, README.md\nLonger text."
    );
    assert_eq!(
        c[1].text(),
        "commit bbbbbbb by Bo, 2023-01-02: Initial commit\nfiles: src/main.rs"
    );
}

#[test]
fn a_merge_says_merged_by_and_lists_the_files_its_branch_changed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = git_in(root);
    std::fs::write(root.join("README.md"), "# shore\n").unwrap();
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "Start"]);
    git(&["checkout", "-q", "-b", "tides"]);
    std::fs::write(root.join("tides.py"), "def high(): pass\n").unwrap();
    git(&["add", "-A"]);
    git(&[
        "commit",
        "-q",
        "--author",
        "Bo Park <bo@x>",
        "-m",
        "Add high tides",
    ]);
    git(&["checkout", "-q", "main"]);
    git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge pull request #2 from bo/tides",
        "tides",
    ]);
    let c = commits(root, None, "HEAD").unwrap();
    assert_eq!(c.len(), 3);
    assert!(c[0].merge && !c[1].merge && !c[2].merge, "{c:?}");
    assert_eq!(c[0].files, ["tides.py"]);
    assert!(c[0].text().contains("merged by Ann Lee"), "{}", c[0].text());
    assert!(c.iter().any(|c| c.text().contains(" by Bo Park,")), "{c:?}");
}

#[test]
fn the_names_a_commit_added_are_read_from_its_patch() {
    let log = "\u{1e}aaaaaaaaaa\n\ndiff --git a/x.c b/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-old_name();\n+CJSON_PUBLIC(void) cJSON_SetBoolValue(cJSON *item)\n+plain words here\n+def precisedelta(value, min_unit=1):\n+    fn x() {}\n\u{1e}bbbbbbbbbb\n";
    let added = parse_added(log);
    assert_eq!(
        added["aaaaaaaaaa"].names,
        ["CJSON_PUBLIC", "cJSON_SetBoolValue", "cJSON", "min_unit"]
    );
    assert_eq!(
        added["aaaaaaaaaa"].defined,
        ["cJSON_SetBoolValue", "precisedelta"],
        "a definition's own names of more than three letters (not `x`, not the export macro)"
    );
    assert_eq!(added["bbbbbbbbbb"], Added::default());
}

#[test]
fn a_real_repository_is_read_and_then_read_on_from_its_last_commit() {
    let dir = tempfile::tempdir().unwrap();
    let git = git_in(dir.path());
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "Add the retry policy"]);
    let first = head(dir.path()).unwrap();
    let all = commits(dir.path(), None, &first).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(
        (all[0].author.as_str(), all[0].files.as_slice()),
        ("Ann Lee", &["a.txt".to_string()][..])
    );
    std::fs::write(dir.path().join("b.txt"), "two\n").unwrap();
    git(&["add", "b.txt"]);
    git(&["commit", "-q", "-m", "Second"]);
    let second = head(dir.path()).unwrap();
    assert!(is_ancestor(dir.path(), &first, &second));
    let newer = commits(dir.path(), Some(&first), &second).unwrap();
    assert_eq!(newer.len(), 1);
    assert_eq!(newer[0].subject, "Second");
}

#[test]
fn tags_are_read_newest_first_with_their_commit_and_date() {
    let line = |name: &str, peeled: &str, date: &str, subject: &str, peeled_subject: &str| {
        format!(
            "{name}\u{1f}aaaaaaa\u{1f}{peeled}\u{1f}{date}\u{1f}{subject}\u{1f}{peeled_subject}\n"
        )
    };
    let text = [
        line(
            "1.10.x",
            "457e372",
            "2026-08-14",
            "last 1.10.x fixes",
            "Release 1.10.0",
        ),
        line(
            "v1.10.0",
            "457e372",
            "2026-08-13",
            "v1.10.0",
            "Release 1.10.0",
        ),
        line("v1.9.4", "", "2026-01-15", "Fix the hooks", ""),
        "broken line\n".to_string(),
        "v5.0.1\u{1f}bbbbbbb\u{1f}d14b2de\u{1f}2025-04-20\u{1f}5.0.1\u{1f}5.0.1\u{1f}2024-10-08\n"
            .to_string(),
    ]
    .concat();
    let tags = parse_tags(&text);
    assert_eq!(tags.len(), 4);
    // Tagged after the fact: both days are said, the commit's as the commit's.
    assert_eq!(
        tags[3].text(),
        "tag v5.0.1 (tagged 2025-04-20), release of commit d14b2de of 2024-10-08: 5.0.1"
    );
    // A branch's marker is newest, but the latest release is the newest version.
    assert_eq!(
        tags[0].text(),
        "tag 1.10.x (2026-08-14): last 1.10.x fixes, on commit 457e372: Release 1.10.0"
    );
    assert_eq!(
        tags[1].text(),
        "tag v1.10.0 (2026-08-13), release of commit 457e372: Release 1.10.0\nthe newest release tag: the latest release"
    );
    assert_eq!(
        tags[2].text(),
        "tag v1.9.4 (2026-01-15), release of commit aaaaaaa: Fix the hooks"
    );
}

#[test]
fn release_tags_are_told_from_branch_markers() {
    for name in ["v1.2.0", "2.2.0", "release-1.4", "1.0.0-rc1", "v2"] {
        assert!(is_release(name), "{name}");
    }
    for name in ["2.1.x", "nightly", "stable", "1.x", "some-long-prefix-1.0"] {
        assert!(!is_release(name), "{name}");
    }
}

#[test]
fn a_real_repository_s_tags_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let git = git_in(dir.path());
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "First release"]);
    git(&["tag", "v0.1.0"]);
    git(&["tag", "-a", "v0.1.1", "-m", "Patch"]);
    let tags = tags(dir.path()).unwrap();
    let mut names: Vec<&str> = tags.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["v0.1.0", "v0.1.1"]);
    let head = head(dir.path()).unwrap();
    assert!(tags.iter().all(|t| head.starts_with(&t.commit)), "{tags:?}");
    assert!(
        tags.iter().all(|t| t.subject == "First release"),
        "{tags:?}"
    );
    assert_eq!(tags.iter().filter(|t| t.newest).count(), 1);
}
