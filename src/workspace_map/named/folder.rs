//! "Where are the unit tests kept?": a question about where a kind of file lives is a
//! folder's to answer, not a line's. Asked it in cJSON, both Qwen models searched "unit
//! tests", found the vendored test framework's own lines and answered `tests/unity`.

use super::super::FileEntry;

/// Whether `request` asks where something is kept ("Where are …", "Which folder holds
/// …"), not how or why.
/// "Where is the config loaded?" asks for code, not a folder.
pub fn asks_where(request: &str) -> bool {
    let words = crate::text::words::name_words(request);
    let first = words.first().map(String::as_str);
    let of_code = words.iter().any(|w| CODE_VERBS.contains(&w.as_str()));
    !of_code
        && (first == Some("where")
            || (matches!(first, Some("which" | "what"))
                && words
                    .iter()
                    .any(|w| matches!(w.as_str(), "folder" | "directory" | "dir"))))
}

/// Verbs of a question about what code does somewhere.
const CODE_VERBS: &[&str] = &[
    "defined",
    "declared",
    "loaded",
    "called",
    "used",
    "set",
    "handled",
    "implemented",
    "parsed",
    "read",
    "written",
    "created",
    "computed",
    "checked",
    "raised",
    "thrown",
];

/// The shallowest folders (each with a trailing `/`, at most `most`) whose own names
/// fit `request`'s subject words, for a [`asks_where`] question; empty otherwise, or when
/// more than `most` fit at that depth.
pub(super) fn folders_asked(files: &[FileEntry], request: &str, most: usize) -> Vec<String> {
    if !asks_where(request) {
        return Vec::new();
    }
    let stems = super::subject_stems(request);
    let mut fitting: Vec<(usize, String)> = Vec::new();
    for file in files {
        let mut folder = String::new();
        let Some((folders, _)) = file.path.rsplit_once('/') else {
            continue;
        };
        for (depth, part) in folders.split('/').enumerate() {
            folder.push_str(part);
            folder.push('/');
            let fits = crate::text::words::name_words(part)
                .iter()
                .any(|w| super::word_fits(&stems, w));
            if fits && !fitting.iter().any(|(_, f)| *f == folder) {
                fitting.push((depth, folder.clone()));
            }
        }
    }
    let Some(top) = fitting.iter().map(|(depth, _)| *depth).min() else {
        return Vec::new();
    };
    let shallowest: Vec<String> = fitting
        .into_iter()
        .filter(|(depth, _)| *depth == top)
        .map(|(_, folder)| folder)
        .collect();
    if shallowest.len() > most {
        return Vec::new();
    }
    shallowest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> Vec<FileEntry> {
        super::super::tests::files(paths)
    }

    #[test]
    fn a_where_question_names_the_shallowest_folder_that_fits() {
        let ws = files(&[
            "README.md",
            "cJSON.c",
            "tests/parse_number.c",
            "tests/unity/src/unity.c",
            "tests/unity/test/tests/testunity.c",
            "fuzzing/afl.c",
        ]);
        assert_eq!(
            folders_asked(&ws, "Where are the unit tests kept?", 3),
            ["tests/"]
        );
        assert_eq!(
            folders_asked(&ws, "Which folder holds the tests?", 3),
            ["tests/"]
        );
        assert_eq!(
            folders_asked(&ws, "Where is the fuzzing code?", 3),
            ["fuzzing/"]
        );
        let docs = files(&["README.md", "docs/index.rst", "src/pkg/signer.py"]);
        assert_eq!(
            folders_asked(&docs, "Where is the documentation kept?", 3),
            ["docs/"]
        );
        // Not a where question, or no folder fits.
        assert!(folders_asked(&ws, "How do I run the tests?", 3).is_empty());
        assert!(folders_asked(&ws, "Where are the benchmarks?", 3).is_empty());
    }

    #[test]
    fn where_questions_are_told_apart() {
        assert!(asks_where("Where do the docs live?"));
        assert!(asks_where("Which directory has the examples?"));
        assert!(!asks_where("Which file defines cJSON_Parse?"));
        assert!(!asks_where("How do I build it?"));
        assert!(!asks_where("Where is the config loaded?"));
    }
}
