//! One `SKILL.md` text into a [`Skill`]: the header's keys checked one by one, each
//! problem a [`Problem`] with the file's line and what to fix. Pure: no I/O.

use crate::text::front_matter::{self, Fields, HeaderError, Listed, Mismatch, SplitError};

use super::{allowed, Problem, Skill, Variable};

/// Keys harvey reads; any other is kept as unknown.
const KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "version",
    "allowed-tools",
    "trigger",
    "variables",
    "metadata",
];

/// Whether `name` is a skill name: lowercase letters, digits and hyphens, starting with
/// a letter or digit, at most 64 characters (the Go tool's rule and the format's).
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Whether `name` is a variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_valid_variable(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The header with each top-level `key: value` whose value holds a `: ` (or ends in `:`,
/// or holds ` #`) quoted; `None` when no line needed it. The Go harvey reads a header
/// line up to its first colon, so its users write `description: Checks a release: the
/// version, the changelog.` unquoted, which YAML refuses.
fn quoted_like_go(front: &str) -> Option<String> {
    let mut changed = false;
    let lines: Vec<String> = front
        .lines()
        .map(|line| {
            let body = line.trim_start();
            let indent = &line[..line.len() - body.len()];
            let Some((key, value)) = body.split_once(':') else {
                return line.to_string();
            };
            let v = value.trim();
            let plain_key = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            let needs = v.contains(": ") || v.ends_with(':') || v.contains(" #");
            let special =
                v.starts_with(['"', '\'', '|', '>', '[', '{', '&', '*', '!', '%', '@', '`']);
            if !plain_key || v.is_empty() || special || !needs {
                return line.to_string();
            }
            changed = true;
            format!("{indent}{key}: '{}'", v.replace('\'', "''"))
        })
        .collect();
    changed.then(|| lines.join("\n"))
}

/// Reads a skill whose folder is called `folder`.
pub fn parse(text: &str, folder: &str) -> Result<Skill, Problem> {
    let (front, body) = front_matter::split(text).map_err(|e| match e {
        SplitError::NoFrontMatter => Problem::at(
            Some(1),
            "SKILL.md must start with a line `---`, the YAML header (name, description), then `---`",
        ),
        SplitError::Unclosed => Problem::at(
            Some(1),
            "the header opened on this line is never closed: add a line `---` after its last key",
        ),
    })?;
    let parsed = Fields::parse(front).or_else(|e| {
        quoted_like_go(front)
            .and_then(|q| Fields::parse(&q).ok())
            .ok_or(e)
    });
    let mut fields = parsed.map_err(|e| match e {
        HeaderError::Yaml { line, reason } => Problem::at(
            Some(line),
            format!("broken YAML in the header: {reason} (a value starting with a quote, `[` or `{{` must end the same way)"),
        ),
        HeaderError::NotMapping => Problem::at(Some(2), "the header must be `key: value` lines"),
    })?;
    let line = |key: &str| key_line(front, key);
    let text_of = |fields: &mut Fields, key: &str| {
        fields
            .take_text(key)
            .map_err(|m| wrong_kind(line(key), key, m))
            .map(|t| t.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()))
    };
    let name = text_of(&mut fields, "name")?;
    let name = check_name(name, folder, line("name"))?;
    let Some(description) = text_of(&mut fields, "description")? else {
        return Err(Problem::at(
            line("description").or(Some(2)),
            "no `description`: add one saying what the skill does and when to use it",
        ));
    };
    let unknown_keys = fields
        .keys()
        .into_iter()
        .filter(|k| !KEYS.contains(&k.as_str()))
        .collect();
    let (allowed_tools, allowed_tools_text) = allowed_tools(&mut fields, front)?;
    let trigger = text_of(&mut fields, "trigger")?;
    if let Some(t) = &trigger {
        check_trigger(t).map_err(|why| Problem::at(line("trigger"), why))?;
    }
    Ok(Skill {
        name,
        description,
        license: text_of(&mut fields, "license")?,
        compatibility: list_text(&mut fields, "compatibility", line("compatibility"))?,
        version: text_of(&mut fields, "version")?,
        allowed_tools,
        allowed_tools_text,
        trigger,
        variables: variables(&mut fields, front)?,
        metadata: metadata(&mut fields, line("metadata"))?,
        unknown_keys,
        body: body.trim().to_string(),
        ..Skill::default()
    })
}

fn check_name(name: Option<String>, folder: &str, line: Option<usize>) -> Result<String, Problem> {
    let Some(name) = name else {
        return Err(Problem::at(
            Some(2),
            format!("no `name`: add `name: {folder}` (a skill's name is its folder's name)"),
        ));
    };
    if !is_valid_name(&name) {
        return Err(Problem::at(
            line,
            format!("name {name:?}: use lowercase letters, digits and hyphens (e.g. `review-code`), at most 64"),
        ));
    }
    if name != folder {
        return Err(Problem::at(
            line,
            format!("name {name:?} does not match its folder {folder:?}: rename one so they agree (agents find a skill by its folder)"),
        ));
    }
    Ok(name)
}

/// A trigger in slashes is a regular expression (case-insensitive); otherwise keywords.
pub fn check_trigger(trigger: &str) -> Result<(), String> {
    match regex_of(trigger) {
        Some(Err(e)) => Err(format!(
            "trigger {trigger:?} is not a regular expression: {e}"
        )),
        _ => Ok(()),
    }
}

/// The compiled pattern of a `/…/` trigger (`None`: keywords).
pub fn regex_of(trigger: &str) -> Option<Result<regex::Regex, String>> {
    let t = trigger.trim();
    let pattern = t.strip_prefix('/')?.strip_suffix('/')?;
    Some(
        regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| e.to_string().lines().last().unwrap_or_default().to_string()),
    )
}

type AllowedTools = (Option<Vec<String>>, Option<String>);

fn allowed_tools(fields: &mut Fields, front: &str) -> Result<AllowedTools, Problem> {
    let line = key_line(front, "allowed-tools");
    let words = match fields.take_list("allowed-tools") {
        Ok(None) => return Ok((None, None)),
        Ok(Some(Listed::Text(t))) => allowed::words(&t),
        Ok(Some(Listed::Items(items))) => items.iter().flat_map(|i| allowed::words(i)).collect(),
        Err(m) => return Err(wrong_kind(line, "allowed-tools", m)),
    };
    let names = allowed::resolve_all(&words).map_err(|why| Problem::at(line, why))?;
    Ok((Some(names), Some(words.join(" "))))
}

fn list_text(
    fields: &mut Fields,
    key: &str,
    line: Option<usize>,
) -> Result<Option<String>, Problem> {
    Ok(
        match fields
            .take_list(key)
            .map_err(|m| wrong_kind(line, key, m))?
        {
            None => None,
            Some(Listed::Text(t)) => Some(t.trim().to_string()),
            Some(Listed::Items(items)) => Some(items.join(", ")),
        },
    )
}

fn variables(fields: &mut Fields, front: &str) -> Result<Vec<Variable>, Problem> {
    let at = key_line(front, "variables");
    let Some(mut map) = fields
        .take_map("variables")
        .map_err(|m| wrong_kind(at, "variables", m))?
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for name in map.keys() {
        let line = nested_line(front, "variables", &name).or(at);
        if !is_valid_variable(&name) {
            return Err(Problem::at(
                line,
                format!(
                    "variable {name:?}: use letters, digits and `_`, not starting with a digit"
                ),
            ));
        }
        out.push(variable(&mut map, name, line)?);
    }
    Ok(out)
}

fn variable(map: &mut Fields, name: String, line: Option<usize>) -> Result<Variable, Problem> {
    let wrong = |m: Mismatch| {
        Problem::at(
            line,
            format!("variable {name}: a mapping of type, description, example, default, required was expected, not {}", m.found),
        )
    };
    // `NAME: some text` is taken as its description.
    if let Ok(Some(description)) = map.clone().take_text(&name) {
        return Ok(Variable {
            name,
            description: Some(description),
            ..Variable::default()
        });
    }
    let mut spec = map.take_map(&name).map_err(wrong)?.unwrap_or_default();
    let mut text = |key: &str| spec.take_text(key).map_err(wrong);
    let required = match text("required")?.as_deref() {
        None => None,
        Some("true" | "yes") => Some(true),
        Some("false" | "no") => Some(false),
        Some(other) => {
            return Err(Problem::at(
                line,
                format!("variable {name}: required is {other:?}; write true or false"),
            ))
        }
    };
    Ok(Variable {
        kind: text("type")?,
        description: text("description")?,
        example: text("example")?,
        default: text("default")?,
        required,
        name,
    })
}

fn metadata(fields: &mut Fields, line: Option<usize>) -> Result<Vec<(String, String)>, Problem> {
    let Some(mut map) = fields
        .take_map("metadata")
        .map_err(|m| wrong_kind(line, "metadata", m))?
    else {
        return Ok(Vec::new());
    };
    Ok(map
        .keys()
        .into_iter()
        .map(|k| {
            let v = match map.take_list(&k) {
                Ok(Some(Listed::Text(t))) => t,
                Ok(Some(Listed::Items(items))) => items.join(", "),
                Ok(None) => String::new(),
                Err(m) => format!("({})", m.found),
            };
            (k, v)
        })
        .collect())
}

fn wrong_kind(line: Option<usize>, key: &str, m: Mismatch) -> Problem {
    let expected = match key {
        "variables" => "a mapping of variable names to their type, description, default",
        "metadata" => "a mapping of keys to text",
        _ => "text",
    };
    let whose = if m.in_list { "an item of " } else { "" };
    Problem::at(
        line,
        format!("{whose}`{key}` is {}; write {expected} there", m.found),
    )
}

/// The file line (1 = the opening `---`) of a top-level header key.
pub fn key_line(front: &str, key: &str) -> Option<usize> {
    front
        .lines()
        .position(|l| is_key_line(l, key))
        .map(|i| i + 2)
}

/// The file line of `key` indented under the top-level `parent`.
fn nested_line(front: &str, parent: &str, key: &str) -> Option<usize> {
    let lines: Vec<&str> = front.lines().collect();
    let start = lines.iter().position(|l| is_key_line(l, parent))?;
    lines[start + 1..]
        .iter()
        .take_while(|l| l.is_empty() || l.starts_with([' ', '\t']))
        .position(|l| is_key_line(l.trim_start(), key))
        .map(|i| start + 1 + i + 2)
}

fn is_key_line(line: &str, key: &str) -> bool {
    let unquoted = line
        .strip_prefix(key)
        .or_else(|| line.strip_prefix(&format!("\"{key}\"")))
        .or_else(|| line.strip_prefix(&format!("'{key}'")));
    unquoted.is_some_and(|rest| rest.trim_start().starts_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GO_STYLE: &str = "---\nname: review-kb\ndescription: |\n  Queries the knowledge base.\n  Use when asked to review it.\ncompatibility: claude-code, harvey\nlicense: AGPL-3.0\nmetadata:\n  author: R\n  version: 0.1.0\nvariables:\n  DB_PATH:\n    type: string\n    description: Path to the database.\n    example: \"kb.db\"\n  FOCUS: what to report\nx-other: kept\n---\n\nStep 1.\n";

    fn problem(text: &str) -> Problem {
        parse(text, "x").expect_err("must not parse")
    }

    #[test]
    fn a_go_style_skill_reads_whole() {
        let s = parse(GO_STYLE, "review-kb").unwrap();
        assert_eq!(s.name, "review-kb");
        assert_eq!(
            s.description,
            "Queries the knowledge base.\nUse when asked to review it."
        );
        assert_eq!(s.compatibility.as_deref(), Some("claude-code, harvey"));
        assert_eq!(s.license.as_deref(), Some("AGPL-3.0"));
        assert_eq!(
            s.metadata,
            [
                ("author".into(), "R".into()),
                ("version".into(), "0.1.0".into())
            ]
        );
        assert_eq!(s.variables.len(), 2);
        assert_eq!(s.variables[0].name, "DB_PATH");
        assert_eq!(s.variables[0].kind.as_deref(), Some("string"));
        assert_eq!(s.variables[0].example.as_deref(), Some("kb.db"));
        assert_eq!(
            s.variables[1].description.as_deref(),
            Some("what to report")
        );
        assert_eq!(s.unknown_keys, ["x-other"]);
        assert_eq!(s.allowed_tools, None);
        assert_eq!(s.body, "Step 1.");
    }

    #[test]
    fn allowed_tools_in_every_written_form() {
        for written in [
            "allowed-tools: read_file git",
            "allowed-tools: Read, Bash(git log:*)",
            "allowed-tools: [read_file, git]",
        ] {
            let text = format!("---\nname: x\ndescription: d\n{written}\n---\nbody\n");
            let s = parse(&text, "x").unwrap();
            assert_eq!(s.allowed_tools.unwrap(), ["read_file", "git"], "{written}");
        }
        let none = parse(
            "---\nname: x\ndescription: d\nallowed-tools: ''\n---\n",
            "x",
        )
        .unwrap();
        assert_eq!(none.allowed_tools, Some(vec![]));
    }

    #[test]
    fn each_bad_input_names_its_line_and_the_fix() {
        let cases: &[(&str, Option<usize>, &str)] = &[
            ("name: x\n", Some(1), "must start with a line `---`"),
            ("---\nname: x\n", Some(1), "never closed"),
            (
                "---\nname: x\ndescription: [a, b\n---\n",
                Some(4),
                "broken YAML",
            ),
            ("---\ndescription: d\n---\n", Some(2), "add `name: x`"),
            (
                "---\nname: Bad_Name\ndescription: d\n---\n",
                Some(2),
                "lowercase letters",
            ),
            (
                "---\nname: other\ndescription: d\n---\n",
                Some(2),
                "does not match its folder",
            ),
            ("---\nname: x\n---\n", Some(2), "no `description`"),
            (
                "---\nname: x\ndescription: d\nallowed-tools: read_file fetch_url\n---\n",
                Some(4),
                "\"fetch_url\"",
            ),
            (
                "---\nname: x\ndescription: d\ntrigger: /(unclosed/\n---\n",
                Some(4),
                "not a regular expression",
            ),
            (
                "---\nname: x\ndescription: d\nvariables:\n  1BAD:\n    type: string\n---\n",
                Some(5),
                "variable \"1BAD\"",
            ),
            (
                "---\nname: x\ndescription: d\nvariables:\n  V:\n    required: maybe\n---\n",
                Some(5),
                "true or false",
            ),
            (
                "---\nname: [x]\ndescription: d\n---\n",
                Some(2),
                "`name` is a list",
            ),
            (
                "---\nname: x\ndescription: d\nvariables: [a]\n---\n",
                Some(4),
                "`variables` is a list",
            ),
        ];
        for (text, line, says) in cases {
            let p = problem(text);
            assert_eq!(p.line, *line, "{text:?}: {p:?}");
            assert!(p.message.contains(says), "{text:?}: {}", p.message);
        }
    }

    /// As the Go harvey reads them: a value holding `: ` needs no quotes.
    #[test]
    fn an_unquoted_value_with_a_colon_reads_as_the_go_tool_reads_it() {
        let skill = parse(
            "---\nname: x\ndescription: Checks a release: the version, the changelog. Use when: shipping\nmetadata:\n  note: it's fine: really\n---\nbody\n",
            "x",
        )
        .unwrap();
        assert_eq!(
            skill.description,
            "Checks a release: the version, the changelog. Use when: shipping"
        );
        assert_eq!(quoted_like_go("name: x\ndescription: d\n"), None);
        assert_eq!(
            quoted_like_go("description: it's: ok").as_deref(),
            Some("description: 'it''s: ok'")
        );
    }

    #[test]
    fn names_and_triggers() {
        for good in ["a", "review-code", "v2-notes"] {
            assert!(is_valid_name(good), "{good}");
        }
        for bad in ["", "-x", "Review", "a_b", "a b", &"x".repeat(65)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
        assert!(check_trigger("release ship").is_ok());
        assert!(regex_of("/\\bRELEASE\\b/")
            .unwrap()
            .unwrap()
            .is_match("ready to release?"));
        assert!(regex_of("keywords only").is_none());
    }
}
