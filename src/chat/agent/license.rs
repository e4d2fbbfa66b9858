//! A license file read, named by its text. Most `LICENSE` files of MIT- or BSD-licensed
//! projects hold the license's text without its name: asked "What license is cJSON
//! released under?", the 1.5B read cJSON's `LICENSE` (the MIT text under a copyright
//! line) and answered "Apache 2.0". The line added says which license the text is.

/// Phrases every copy of a license's text holds, all of them, lowercase, and the
/// license's name; the first that fits names it (BSD's three clauses before its two).
const KNOWN: &[(&[&str], &str)] = &[
    (&["apache license", "version 2.0"], "the Apache License 2.0"),
    (&["gnu affero general public license"], "the GNU AGPL"),
    (&["gnu lesser general public license"], "the GNU LGPL"),
    (
        &["gnu general public license", "version 3"],
        "the GNU GPL version 3",
    ),
    (
        &["gnu general public license", "version 2"],
        "the GNU GPL version 2",
    ),
    (
        &["mozilla public license", "2.0"],
        "the Mozilla Public License 2.0",
    ),
    (
        &[
            "permission is hereby granted, free of charge",
            "the above copyright notice",
        ],
        "the MIT License",
    ),
    (
        &[
            "redistribution and use in source and binary forms",
            "neither the name",
        ],
        "the BSD 3-Clause License",
    ),
    (
        &["redistribution and use in source and binary forms"],
        "the BSD 2-Clause License",
    ),
    (
        &["permission to use, copy, modify, and/or distribute this software"],
        "the ISC License",
    ),
    (
        &["this is free and unencumbered software released into the public domain"],
        "the Unlicense",
    ),
];

/// `result` (a read of `path`) with a line naming the license its text is, when `path`
/// is a license file (`LICENSE`, `LICENSE-MIT`, `COPYING.txt`) and its text is one of
/// [`KNOWN`]; `None` otherwise.
pub(super) fn named_license(path: &str, result: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    if !["license", "licence", "copying"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return None;
    }
    // The text as one line of words: a phrase may break across lines.
    let text = result
        .lines()
        .map(|l| l.split_once("| ").map_or(l, |(_, t)| t))
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let (_, license) = KNOWN
        .iter()
        .find(|(phrases, _)| phrases.iter().all(|p| text.contains(p)))?;
    // The name answers; the head shows the copyright line. The whole Apache text would
    // cost a 1.5B a minute of prefill.
    let mut lines = result.lines();
    let head: Vec<&str> = lines.by_ref().take(HEAD_LINES).collect();
    let more = if lines.next().is_some() {
        "     …\n"
    } else {
        ""
    };
    Some(format!(
        "(this text is {license})\n{}\n{more}",
        head.join("\n")
    ))
}

/// Lines of the file shown under the license's name.
const HEAD_LINES: usize = 12;

#[cfg(test)]
mod tests {
    use super::*;

    use crate::chat::agent::focus::as_read as numbered;

    #[test]
    fn the_mit_text_without_its_name_is_named() {
        let mit = "Copyright (c) 2009-2017 Dave Gamble and cJSON contributors\n\nPermission is hereby granted, free of\ncharge, to any person obtaining a copy\n\nThe above copyright notice and this permission notice shall be included\n";
        let shown = named_license("LICENSE", &numbered(mit)).unwrap();
        assert!(
            shown.starts_with("(this text is the MIT License)\n"),
            "{shown}"
        );
        assert!(
            shown.ends_with(&numbered(mit)),
            "a short text is shown whole: {shown}"
        );
        let long = format!("{mit}{}", "more terms\n".repeat(40));
        let cut = named_license("LICENSE", &numbered(&long)).unwrap();
        assert!(cut.lines().count() < 16 && cut.ends_with("…\n"), "{cut}");
    }

    #[test]
    fn bsd_with_three_clauses_is_told_from_two() {
        let two = "Redistribution and use in source and binary forms, with or without modification, are permitted";
        let three = format!("{two}\n3. Neither the name of the copyright holder");
        assert!(named_license("COPYING", two).unwrap().contains("2-Clause"));
        assert!(named_license("LICENSE.txt", &three)
            .unwrap()
            .contains("3-Clause"));
        let apache = "Apache License\nVersion 2.0, January 2004";
        assert!(named_license("LICENSE-APACHE", apache)
            .unwrap()
            .contains("Apache License 2.0"));
    }

    #[test]
    fn other_files_and_unknown_texts_are_left_alone() {
        let mit = "Permission is hereby granted, free of charge. The above copyright notice";
        assert_eq!(named_license("README.md", mit), None);
        assert_eq!(named_license("LICENSE", "All rights reserved."), None);
    }
}
