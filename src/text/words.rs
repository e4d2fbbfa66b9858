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

/// Words of British spelling whose `-our` is not the American `-or`.
const OUR_KEPT: &[&str] = &["detour", "contour", "devour", "velour", "paramour"];

/// The American spelling of a British word, which code and its docs mostly use
/// ("colour" → "color", "behaviours" → "behaviors", "initialise" → "initialize",
/// "normalisation" → "normalization", "licence" → "license"); `None` when `word`
/// (lowercase) is not one. Only endings whose British form is unambiguous are folded:
/// `-our` of words of six letters or more, `-ise` after `al`, `im` or `gn`
/// (serialise, optimise, recognise), `-isation`, and a few single words.
pub fn american_spelling(word: &str) -> Option<String> {
    const WORDS: &[(&str, &str)] = &[
        ("licence", "license"),
        ("licences", "licenses"),
        ("centre", "center"),
        ("catalogue", "catalog"),
        ("dialogue", "dialog"),
        ("grey", "gray"),
        ("analyse", "analyze"),
        ("analysed", "analyzed"),
        ("defence", "defense"),
        ("programme", "program"),
    ];
    if let Some((_, us)) = WORDS.iter().find(|(uk, _)| *uk == word) {
        return Some(us.to_string());
    }
    for end in ["our", "ours", "oured", "ouring", "ourful", "ourless"] {
        if let Some(base) = word.strip_suffix(end) {
            let kept = OUR_KEPT.iter().any(|k| word.starts_with(k));
            if base.len() + 3 >= 6 && !kept {
                return Some(format!("{base}or{}", &end[3..]));
            }
        }
    }
    if let Some(at) = word.find("isation") {
        return Some(format!("{}ization{}", &word[..at], &word[at + 7..]));
    }
    for end in ["ise", "ised", "ises", "ising", "iser", "isers"] {
        if let Some(base) = word.strip_suffix(end) {
            if base.len() >= 3
                && (base.ends_with("al") || base.ends_with("im") || base.ends_with("gn"))
            {
                return Some(format!("{base}iz{}", &end[2..]));
            }
        }
    }
    None
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

    #[test]
    fn british_spellings_fold_to_american() {
        let us = |w: &str| american_spelling(w);
        assert_eq!(us("colour").as_deref(), Some("color"));
        assert_eq!(us("colours").as_deref(), Some("colors"));
        assert_eq!(us("coloured").as_deref(), Some("colored"));
        assert_eq!(us("behaviour").as_deref(), Some("behavior"));
        assert_eq!(us("initialise").as_deref(), Some("initialize"));
        assert_eq!(us("serialised").as_deref(), Some("serialized"));
        assert_eq!(us("optimising").as_deref(), Some("optimizing"));
        assert_eq!(us("recognise").as_deref(), Some("recognize"));
        assert_eq!(us("normalisation").as_deref(), Some("normalization"));
        assert_eq!(us("licence").as_deref(), Some("license"));
        // American words, and British-looking words that are the same in both.
        for same in [
            "color",
            "four",
            "hour",
            "your",
            "flour",
            "detour",
            "contours",
            "promise",
            "raise",
            "otherwise",
            "exercise",
            "precise",
            "noise",
            "license",
            "tour",
        ] {
            assert_eq!(us(same), None, "{same}");
        }
    }
}
