//! `/skill new`: a valid `SKILL.md` from a few answers (name, description, steps),
//! checked by reading it back as the catalog will, so what is written loads in harvey
//! and in the Go tool alike.

use crate::text::front_matter::{join, Fields};

use super::parse::{is_valid_name, parse};
use super::Problem;

/// The text of a new skill's `SKILL.md`.
pub fn draft(name: &str, description: &str, steps: &[String]) -> Result<String, Problem> {
    let name = name.trim();
    if !is_valid_name(name) {
        return Err(Problem::at(
            None,
            format!("{name:?} is no skill name: use lowercase letters, digits and hyphens (e.g. release-checklist)"),
        ));
    }
    let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if description.is_empty() {
        return Err(Problem::at(
            None,
            "a skill needs a description: what it does and when to use it",
        ));
    }
    let mut fields = Fields::default();
    fields.put_text("name", name);
    fields.put_text("description", &description);
    fields.put_text("compatibility", "harvey, claude-code");
    let mut body = format!("# {name}\n\n{description}\n\n## Steps\n");
    let steps: Vec<&str> = steps
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if steps.is_empty() {
        return Err(Problem::at(None, "a skill needs at least one step"));
    }
    for (i, step) in steps.iter().enumerate() {
        body.push_str(&format!("\n{}. {step}", i + 1));
    }
    let text = join(&fields, &body);
    parse(&text, name)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_reads_back_as_the_skill_it_describes() {
        let steps = vec![
            "Run `cargo test`.".to_string(),
            "".into(),
            "Tag: the version".into(),
        ];
        let text = draft(
            "ship-it",
            "Ships a release: tag and push. Use when: ready",
            &steps,
        )
        .unwrap();
        let skill = parse(&text, "ship-it").unwrap();
        assert_eq!(
            skill.description,
            "Ships a release: tag and push. Use when: ready"
        );
        assert!(
            skill
                .body
                .ends_with("## Steps\n\n1. Run `cargo test`.\n2. Tag: the version"),
            "{}",
            skill.body
        );
        assert!(draft("Ship It", "d", &steps).is_err());
        assert!(draft("x", " ", &steps).is_err());
        assert!(draft("x", "d", &[]).is_err());
    }
}
