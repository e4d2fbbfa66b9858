//! The lines a commit changed, shown under its list of files only when they are few.
//! Asked "Who made the last commit and what did it change?" in cJSON, the 1.5B named
//! the author and the files from `last_commit` and invented the version numbers the
//! commit changed: the files were listed, the lines were not. A long patch is left out
//! (every last-commit question would prefill it) and said to be left out.
//!
//! Pure: trims and measures text, runs nothing.

/// The most characters of compacted patch shown (≈ 300 tokens of the 1.5B's tokenizer).
pub const SHORT_CHARS: usize = 1_000;

/// A patch without the lines a reader does not need: `diff --git` (the `---`/`+++`
/// lines name the file) and `index` (blob hashes). The runner's own first line
/// (`[command: …]`) is dropped too.
pub fn compact(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("[command: "))
        .filter(|l| !l.starts_with("diff --git ") && !l.starts_with("index "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What goes below the last commit's files for the output of its patch: the compacted
/// patch under a label when it is at most [`SHORT_CHARS`], a line that says the lines
/// are left out when longer, nothing when the commit changed no line (a merge that only
/// joined, an empty commit).
pub fn shown(text: &str) -> Option<String> {
    let patch = compact(text);
    let body = patch.trim();
    if body.is_empty() || body == "(no output)" {
        return None;
    }
    let changed = body
        .lines()
        .filter(|l| l.starts_with('+') || l.starts_with('-'))
        .filter(|l| !l.starts_with("+++ ") && !l.starts_with("--- "))
        .count();
    Some(if body.chars().count() <= SHORT_CHARS {
        format!("(the lines it changed)\n{body}")
    } else {
        format!("(the {changed} changed lines are left out: too long to show here)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "[command: git show --format= --patch HEAD → exit 0]
diff --git a/cJSON.h b/cJSON.h
index 1a2b3c4..5d6e7f8 100644
--- a/cJSON.h
+++ b/cJSON.h
@@ -80,3 +80,3 @@
 #define CJSON_VERSION_MAJOR 1
-#define CJSON_VERSION_MINOR 7
+#define CJSON_VERSION_MINOR 8";

    #[test]
    fn a_short_patch_is_shown_without_hashes_or_the_runner_line() {
        let s = shown(SMALL).unwrap();
        assert!(
            s.starts_with("(the lines it changed)\n--- a/cJSON.h"),
            "{s}"
        );
        assert!(s.contains("+#define CJSON_VERSION_MINOR 8"), "{s}");
        for gone in ["index 1a2b3c4", "diff --git", "[command:"] {
            assert!(!s.contains(gone), "{gone}: {s}");
        }
    }

    #[test]
    fn a_long_patch_is_said_to_be_left_out_with_its_size() {
        let mut long = String::from("--- a/x.c\n+++ b/x.c\n@@ -1,400 +1,400 @@\n");
        for i in 0..120 {
            long.push_str(&format!("-old line {i}\n+new line {i}\n"));
        }
        let s = shown(&long).unwrap();
        assert_eq!(
            s,
            "(the 240 changed lines are left out: too long to show here)"
        );
    }

    #[test]
    fn a_commit_that_changed_no_line_adds_nothing() {
        assert_eq!(shown("[command: git show → exit 0]\n(no output)"), None);
        assert_eq!(shown(""), None);
    }

    #[test]
    fn the_limit_is_counted_in_characters_after_compacting() {
        let body = format!("--- a/f\n+++ b/f\n+{}", "é".repeat(SHORT_CHARS - 20));
        let with_noise = format!("diff --git a/f b/f\nindex 0000000..1111111 100644\n{body}");
        assert!(with_noise.len() > SHORT_CHARS);
        assert!(shown(&with_noise)
            .unwrap()
            .starts_with("(the lines it changed)"));
    }
}
