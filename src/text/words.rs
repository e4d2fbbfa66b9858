//! Words of names as people and code write them: `find_highest_tide`, `parseTideTable`,
//! `meeting-2024-05-02.md`, "tide data". Used where a request or a guessed name is
//! matched against what the workspace holds (the read tools' misses, the files a request
//! names).

/// Lowercase words, split at every non-alphanumeric character and where a lowercase
/// letter is followed by an uppercase one.
pub fn name_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in text.split(|c: char| !c.is_alphanumeric()) {
        let mut word = String::new();
        let mut last_lower = false;
        for c in part.chars() {
            if c.is_uppercase() && last_lower {
                out.push(std::mem::take(&mut word));
            }
            last_lower = c.is_lowercase();
            word.extend(c.to_lowercase());
        }
        out.push(word);
    }
    out.retain(|w| !w.is_empty());
    out
}

/// `word` without the first of `suffixes` it ends with, when at least `min` characters
/// are left ("highest" → "high", "decided" → "decid").
pub fn stem<'a>(word: &'a str, suffixes: &[&str], min: usize) -> &'a str {
    suffixes
        .iter()
        .find_map(|s| word.strip_suffix(s).filter(|base| base.len() >= min))
        .unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_separators_and_case() {
        assert_eq!(name_words("find_highest_tide"), ["find", "highest", "tide"]);
        assert_eq!(name_words("parseTideTable"), ["parse", "tide", "table"]);
        assert_eq!(
            name_words("notes/meeting-2024-05-02.md"),
            ["notes", "meeting", "2024", "05", "02", "md"]
        );
        assert_eq!(name_words("  "), Vec::<String>::new());
        assert_eq!(stem("highest", &["est", "s"], 3), "high");
        assert_eq!(stem("tests", &["est", "s"], 4), "test");
        assert_eq!(stem("best", &["est"], 3), "best");
    }
}
