//! A run's arguments to a skill's variables, and the body with them filled in.
//!
//! Arguments are split as a shell quotes (no expansion). `NAME=value` sets a declared
//! variable (the name's case is not significant); the other words fill the variables
//! not set that way, in the order declared, the last taking all the words left. A
//! variable without a value takes its `default`; one still without a value is refused
//! (or asked for) when it is required: `required: true`, or — when `required` is not
//! written — when the body uses its `{{NAME}}` and it has no default. `{{ARGS}}` is the
//! whole argument text. Other `{{…}}` are left as they are.

use std::sync::OnceLock;

use regex::Regex;

use super::{Skill, Variable};

/// A run's values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filled {
    /// Declared variables that have a value, in declared order.
    pub values: Vec<(String, String)>,
    /// The argument text as given.
    pub args: String,
    /// The user's message, when the skill's trigger ran it.
    pub request: Option<String>,
}

/// Why the arguments do not make a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarError {
    #[error("the skill {skill} needs {name}{}: give it as {name}=VALUE", help.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
    Missing {
        skill: String,
        name: String,
        help: Option<String>,
    },
    #[error("the arguments do not split: {0}")]
    Split(String),
}

fn placeholder() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // A literal pattern: it always compiles.
    RE.get_or_init(|| {
        Regex::new(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}").unwrap_or_else(|_| unreachable!())
    })
}

/// The names used as `{{NAME}}` in `body`.
pub fn placeholders(body: &str) -> Vec<String> {
    placeholder()
        .captures_iter(body)
        .map(|c| c[1].to_string())
        .collect()
}

/// Whether a run must have a value for `var` (see the module's rule).
pub fn is_required(var: &Variable, body: &str) -> bool {
    var.required.unwrap_or_else(|| {
        var.default.is_none() && placeholders(body).iter().any(|p| p == &var.name)
    })
}

/// Asks the user for a variable's value (`None`: no answer).
pub type AskVariable<'a> = dyn Fn(&Variable) -> Option<String> + 'a;

/// The values of a run of `skill` with `args`; `ask` is asked for a required variable
/// that has no value (`None` or an empty answer refuses the run).
pub fn fill(skill: &Skill, args: &str, ask: Option<&AskVariable<'_>>) -> Result<Filled, VarError> {
    let words = match crate::command::argv::split(args) {
        Ok(w) => w,
        Err(crate::command::argv::ArgvError::Empty) => Vec::new(),
        Err(e) => return Err(VarError::Split(e.to_string())),
    };
    let mut values: Vec<Option<String>> = vec![None; skill.variables.len()];
    let mut positional = Vec::new();
    for word in words {
        let named = word.split_once('=').and_then(|(k, v)| {
            let i = skill
                .variables
                .iter()
                .position(|var| var.name.eq_ignore_ascii_case(k))?;
            Some((i, v.to_string()))
        });
        match named {
            Some((i, v)) => values[i] = Some(v),
            None => positional.push(word),
        }
    }
    let free: Vec<usize> = (0..values.len()).filter(|i| values[*i].is_none()).collect();
    let mut words = positional.into_iter();
    for (n, i) in free.iter().enumerate() {
        let value = if n + 1 == free.len() {
            let rest: Vec<String> = words.by_ref().collect();
            (!rest.is_empty()).then(|| rest.join(" "))
        } else {
            words.next()
        };
        values[*i] = value;
    }
    let mut out = Vec::new();
    for (var, value) in skill.variables.iter().zip(values) {
        let value = value.or_else(|| var.default.clone());
        let value = match value {
            Some(v) => Some(v),
            None if is_required(var, &skill.body) => {
                let asked = ask
                    .and_then(|ask| ask(var))
                    .filter(|a| !a.trim().is_empty());
                Some(asked.ok_or_else(|| VarError::Missing {
                    skill: skill.name.clone(),
                    name: var.name.clone(),
                    help: var.description.clone(),
                })?)
            }
            None => None,
        };
        if let Some(v) = value {
            out.push((var.name.clone(), v));
        }
    }
    Ok(Filled {
        values: out,
        args: args.trim().to_string(),
        request: None,
    })
}

/// `body` with `{{NAME}}` of the filled variables and `{{ARGS}}` replaced.
pub fn render(body: &str, filled: &Filled) -> String {
    placeholder()
        .replace_all(body, |c: &regex::Captures<'_>| {
            let name = &c[1];
            if name == "ARGS" {
                return filled.args.clone();
            }
            filled
                .values
                .iter()
                .find(|(n, _)| n == name)
                .map_or_else(|| c[0].to_string(), |(_, v)| v.clone())
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(body: &str, vars: &[(&str, Option<&str>, Option<bool>)]) -> Skill {
        Skill {
            name: "s".into(),
            body: body.into(),
            variables: vars
                .iter()
                .map(|(n, d, r)| Variable {
                    name: n.to_string(),
                    default: d.map(String::from),
                    required: *r,
                    ..Variable::default()
                })
                .collect(),
            ..Skill::default()
        }
    }

    fn values(f: &Filled) -> Vec<(&str, &str)> {
        f.values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    #[test]
    fn named_then_positional_then_defaults() {
        let s = skill(
            "{{VERSION}} {{STYLE}} {{NOTE}}",
            &[
                ("VERSION", None, None),
                ("STYLE", Some("short"), None),
                ("NOTE", Some("-"), None),
            ],
        );
        let f = fill(&s, "style=long 1.2.0 fixed the 'big bug'", None).unwrap();
        assert_eq!(
            values(&f),
            [
                ("VERSION", "1.2.0"),
                ("STYLE", "long"),
                ("NOTE", "fixed the big bug")
            ]
        );
        assert_eq!(render(&s.body, &f), "1.2.0 long fixed the big bug");
        let f = fill(&s, "2.0", None).unwrap();
        assert_eq!(render(&s.body, &f), "2.0 short -");
    }

    #[test]
    fn a_missing_required_variable_is_refused_by_name_or_asked() {
        let s = skill("for {{VERSION}}", &[("VERSION", None, None)]);
        let e = fill(&s, "", None).unwrap_err();
        assert!(e.to_string().contains("needs VERSION"), "{e}");
        let asked = |v: &Variable| Some(format!("{}-answer", v.name));
        let f = fill(&s, "", Some(&asked)).unwrap();
        assert_eq!(values(&f), [("VERSION", "VERSION-answer")]);
        let empty = |_: &Variable| Some("  ".to_string());
        assert!(fill(&s, "", Some(&empty)).is_err());
        // Not used in the body and not marked: optional (the Go tool's skills).
        let go = skill("uses ${DB_PATH}", &[("DB_PATH", None, None)]);
        assert!(fill(&go, "", None).unwrap().values.is_empty());
        let marked = skill("no placeholder", &[("X", None, Some(true))]);
        assert!(fill(&marked, "", None).is_err());
        let unmarked = skill("{{X}}", &[("X", None, Some(false))]);
        assert!(fill(&unmarked, "", None).is_ok());
    }

    #[test]
    fn args_and_strangers() {
        let s = skill("Review {{ARGS}} and {{OTHER}} and {{ missing }}", &[]);
        let f = fill(&s, "src/a.rs", None).unwrap();
        assert_eq!(
            render(&s.body, &f),
            "Review src/a.rs and {{OTHER}} and {{ missing }}"
        );
        assert!(matches!(fill(&s, "'open", None), Err(VarError::Split(_))));
    }
}
