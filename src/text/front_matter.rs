//! YAML front matter: the `---` header above a memory file's body, and the Go tool's
//! YAML files beside the memories (its mined-sessions manifest), and a skill's `SKILL.md`
//! header (`skills`). The only `serde_yaml`
//! user outside the config loader: it splits a text into header and body, reads a
//! header's keys one at a time as text, lists or numbers, keeps the keys a reader does
//! not know as they were ([`Fields`]), and writes a header back in the order its keys
//! were put. What the keys mean (a memory's id, type, tags) is the caller's.
//! Pure functions on strings: no I/O.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_yaml::{Mapping, Value};

/// Why a text has no header to split off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitError {
    /// The text does not start with a line `---`.
    NoFrontMatter,
    /// No line `---` closes the header.
    Unclosed,
}

/// Why a header is not a mapping of keys to values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// Not YAML: `line` counts from the opening `---` line (1), `reason` is the
    /// parser's message without its position.
    Yaml { line: usize, reason: String },
    /// YAML, but a list or a single value.
    NotMapping,
}

/// A value of another kind than the reader asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// What was found: "a list", "a mapping", "text", …
    pub found: &'static str,
    /// Whether it was an item of a list (the list itself was fine).
    pub in_list: bool,
}

/// What a list key held: one text (a caller may split it) or a list of texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    Text(String),
    Items(Vec<String>),
}

/// A YAML document that does not read as the type asked for; shown as the parser's
/// own message.
#[derive(Debug)]
pub struct DocumentError(serde_yaml::Error);

impl std::fmt::Display for DocumentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for DocumentError {}

/// The keys of a header in their order. Those read with the `take_*` methods are
/// removed, so what is left are the keys a reader does not know.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fields(Mapping);

/// Splits `text` into its header (between the `---` lines) and the body after it.
pub fn split(text: &str) -> Result<(&str, &str), SplitError> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or(SplitError::NoFrontMatter)?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let body = &rest[offset + line.len()..];
            return Ok((&rest[..offset], body));
        }
        offset += line.len();
    }
    Err(SplitError::Unclosed)
}

/// The text of a file: `fields` between `---` lines, then `body` (when it is not
/// empty) ended by a newline.
pub fn join(fields: &Fields, body: &str) -> String {
    // Serializing a mapping of strings, numbers and sequences cannot fail.
    let yaml = serde_yaml::to_string(&fields.0).unwrap_or_default();
    let mut out = format!("---\n{yaml}---\n");
    if !body.is_empty() {
        out.push_str(body);
        out.push('\n');
    }
    out
}

/// A whole YAML document read as `T` (an empty document is the caller's case).
pub fn read_document<T: DeserializeOwned>(text: &str) -> Result<T, DocumentError> {
    serde_yaml::from_str(text).map_err(DocumentError)
}

impl Fields {
    /// The keys of the header text `front` (as [`split`] returns it); an empty header
    /// has none.
    pub fn parse(front: &str) -> Result<Self, HeaderError> {
        let value: Value = serde_yaml::from_str(front).map_err(|e| HeaderError::Yaml {
            // +1 for the opening `---` line.
            line: e.location().map_or(1, |l| l.line() + 1),
            reason: e
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or("")
                .to_string(),
        })?;
        match value {
            Value::Mapping(m) => Ok(Self(m)),
            Value::Null => Ok(Self::default()),
            _ => Err(HeaderError::NotMapping),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Removes `key` and returns its value as text (a number or a boolean as written);
    /// `None` when it is missing or null.
    pub fn take_text(&mut self, key: &str) -> Result<Option<String>, Mismatch> {
        match self.0.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => scalar_text(value).map(Some).map_err(|found| Mismatch {
                found,
                in_list: false,
            }),
        }
    }

    /// Removes `key` and returns its list of texts (null items left out), or its text;
    /// `None` when it is missing or null.
    pub fn take_list(&mut self, key: &str) -> Result<Option<Listed>, Mismatch> {
        match self.0.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(Listed::Text(s))),
            Some(Value::Sequence(items)) => items
                .into_iter()
                .filter(|v| !v.is_null())
                .map(|v| {
                    scalar_text(v).map_err(|found| Mismatch {
                        found,
                        in_list: true,
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|items| Some(Listed::Items(items))),
            Some(other) => Err(Mismatch {
                found: kind(&other),
                in_list: false,
            }),
        }
    }

    /// Removes `key` and returns its number; `None` when it is missing or null.
    pub fn take_number(&mut self, key: &str) -> Result<Option<f64>, Mismatch> {
        match self.0.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(Mismatch {
                found: kind(&other),
                in_list: false,
            }),
        }
    }

    /// Removes `key` and returns the mapping under it as its own [`Fields`] (a skill's
    /// `variables:` and `metadata:`); `None` when it is missing or null.
    pub fn take_map(&mut self, key: &str) -> Result<Option<Fields>, Mismatch> {
        match self.0.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Mapping(m)) => Ok(Some(Self(m))),
            Some(other) => Err(Mismatch {
                found: kind(&other),
                in_list: false,
            }),
        }
    }

    /// The keys, in order (a key that is not text is written as YAML would show it).
    pub fn keys(&self) -> Vec<String> {
        self.0
            .keys()
            .map(|k| scalar_text(k.clone()).unwrap_or_else(|found| found.to_string()))
            .collect()
    }

    /// Adds `key` with the text `text` (see [`safe_text`]).
    pub fn put_text(&mut self, key: &str, text: &str) {
        self.put(key, Value::String(safe_text(text)));
    }

    /// Adds `key` with the list `items`.
    pub fn put_list(&mut self, key: &str, items: &[String]) {
        let items = items.iter().map(|t| Value::String(safe_text(t))).collect();
        self.put(key, Value::Sequence(items));
    }

    /// Adds `key` with the number `n`.
    pub fn put_number(&mut self, key: &str, n: f64) {
        self.put(key, Value::Number(serde_yaml::Number::from(n)));
    }

    /// Adds every key of `other` but those in `except` (the ones the caller wrote
    /// itself), its texts made safe as [`Self::put_text`] does.
    pub fn put_others(&mut self, other: &Fields, except: &[&str]) {
        for (k, v) in &other.0 {
            if !k.as_str().is_some_and(|k| except.contains(&k)) {
                self.0.insert(k.clone(), safe_value(v.clone()));
            }
        }
    }

    /// The values that are text, in key order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.0.values().filter_map(Value::as_str)
    }

    fn put(&mut self, key: &str, value: Value) {
        self.0.insert(Value::String(key.into()), value);
    }
}

/// Keys with text values, taken as they are (nothing made safe: see [`Fields::put_text`]).
impl FromIterator<(String, String)> for Fields {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Self(
            pairs
                .into_iter()
                .map(|(k, v)| (Value::String(k), Value::String(v)))
                .collect(),
        )
    }
}

/// A string, number or boolean as text; else what it is, for the message.
fn scalar_text(value: Value) -> Result<String, &'static str> {
    match value {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(kind(&other)),
    }
}

/// What a value is, in words.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// Text as a header value. YAML reads U+0085, U+2028 and U+2029 as line breaks, and
/// the emitter can end a block scalar on one, so the closing `---` would run into it
/// and the whole file stop parsing: they are written as plain newlines.
fn safe_text(text: &str) -> String {
    text.replace(['\u{85}', '\u{2028}', '\u{2029}'], "\n")
}

/// [`safe_text`] on every string inside a value kept from another tool.
fn safe_value(value: Value) -> Value {
    match value {
        Value::String(t) => Value::String(safe_text(&t)),
        Value::Sequence(items) => Value::Sequence(items.into_iter().map(safe_value).collect()),
        Value::Mapping(map) => Value::Mapping(
            map.into_iter()
                .map(|(k, v)| (safe_value(k), safe_value(v)))
                .collect(),
        ),
        Value::Tagged(mut t) => {
            t.value = safe_value(t.value);
            Value::Tagged(t)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_splits_off_and_joins_back() {
        let (front, body) = split("---\r\nid: x\n---\nbody\n").unwrap();
        assert_eq!((front, body), ("id: x\n", "body\n"));
        assert_eq!(split("id: x\n"), Err(SplitError::NoFrontMatter));
        assert_eq!(split("---\nid: x\n"), Err(SplitError::Unclosed));
        let mut fields = Fields::parse(front).unwrap();
        assert_eq!(fields.take_text("id").unwrap().as_deref(), Some("x"));
        fields.put_text("id", "y");
        assert_eq!(join(&fields, "body"), "---\nid: y\n---\nbody\n");
        assert_eq!(join(&Fields::default(), ""), "---\n{}\n---\n");
    }

    #[test]
    fn values_of_the_wrong_kind_say_what_they_are() {
        let mut fields = Fields::parse("a: [x, 1, ~]\nb: {c: d}\nn: 0.5\nt: one two").unwrap();
        let list = Some(Listed::Items(vec!["x".into(), "1".into()]));
        assert_eq!(fields.take_list("a").unwrap(), list);
        let found = fields.take_text("b").unwrap_err();
        assert_eq!((found.found, found.in_list), ("a mapping", false));
        assert_eq!(fields.take_number("n").unwrap(), Some(0.5));
        assert_eq!(fields.take_number("t").unwrap_err().found, "text");
        assert!(fields.is_empty());
        let mut map = Fields::parse("v: {A: {default: x}}\nw: 1").unwrap();
        assert_eq!(map.keys(), ["v", "w"]);
        let mut v = map.take_map("v").unwrap().unwrap();
        assert_eq!(v.keys(), ["A"]);
        let mut a = v.take_map("A").unwrap().unwrap();
        assert_eq!(a.take_text("default").unwrap().as_deref(), Some("x"));
        assert_eq!(map.take_map("w").unwrap_err().found, "a number");
        let mut nested = Fields::parse("a: [[x]]").unwrap();
        assert!(nested.take_list("a").unwrap_err().in_list);
        assert_eq!(Fields::parse("- x"), Err(HeaderError::NotMapping));
        let yaml = Fields::parse("a: [x\n").unwrap_err();
        assert!(
            matches!(yaml, HeaderError::Yaml { line: 3, .. }),
            "{yaml:?}"
        );
    }
}
