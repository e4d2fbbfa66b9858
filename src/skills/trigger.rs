//! A skill's `trigger`: the user's message runs the skill without asking the model
//! when it matches. As the Go tool reads it: `/pattern/` is a regular expression
//! (case-insensitive); otherwise the words are keywords, and any one of them in the
//! message (as a whole word here, so `test` does not fire on `latest`) matches.

use super::parse::regex_of;
use super::{Catalog, Skill};

/// Whether `text` matches `skill`'s trigger (`false` without one).
pub fn matches(skill: &Skill, text: &str) -> bool {
    let Some(trigger) = skill.trigger.as_deref() else {
        return false;
    };
    match regex_of(trigger) {
        Some(Ok(re)) => re.is_match(text),
        Some(Err(_)) => false,
        None => {
            let words: Vec<String> = text
                .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
                .map(str::to_lowercase)
                .collect();
            trigger
                .split_whitespace()
                .map(str::to_lowercase)
                .any(|k| words.contains(&k))
        }
    }
}

impl Catalog {
    /// The first skill (by name) whose trigger `text` matches.
    pub fn triggered(&self, text: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| matches(s, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(trigger: &str) -> Skill {
        Skill {
            name: "s".into(),
            trigger: Some(trigger.into()),
            ..Skill::default()
        }
    }

    #[test]
    fn regex_and_keyword_triggers() {
        let re = skill(r"/\b(write|add) (a )?changelog\b/");
        assert!(matches(&re, "Please ADD a changelog entry"));
        assert!(!matches(&re, "what is a changelog?"));
        let kw = skill("release ship");
        assert!(matches(&kw, "is it ready to ship?"));
        assert!(!matches(&kw, "the relationship"));
        assert!(!matches(&Skill::default(), "anything"));
        assert!(!matches(&skill("/(/"), "("));
    }
}
