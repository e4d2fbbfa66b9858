//! Parsing the JSON inside `<tool_call>…</tool_call>` and checking it against a schema.

use serde_json::{Map, Value};

use super::{Param, ParamKind, ToolError};

/// A parsed call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub arguments: Map<String, Value>,
}

impl ToolCall {
    /// A canonical form for spotting identical repeated calls.
    pub fn key(&self) -> String {
        let sorted: std::collections::BTreeMap<_, _> = self.arguments.iter().collect();
        format!(
            "{}:{}",
            self.name,
            serde_json::to_string(&sorted).unwrap_or_default()
        )
    }

    /// `name(arguments)` in one line, for the user.
    pub fn summary(&self) -> String {
        let args = serde_json::to_string(&self.arguments).unwrap_or_default();
        format!("{}({})", self.name, clip(&args, 160))
    }
}

/// Parses the text after the opener: its first JSON value. A closer after it —
/// `</tool_call>`, a closing fence — and anything further are ignored; a closer written
/// inside one of the call's strings (the grammar allows it) is part of that string. The
/// arguments may also come as `"parameters"` (Llama 3's key; the lenient grammars allow it).
pub fn parse_call(text: &str) -> Result<ToolCall, ToolError> {
    let value: Value = serde_json::Deserializer::from_str(text.trim_start())
        .into_iter::<Value>()
        .next()
        .unwrap_or_else(|| serde_json::from_str(""))
        .map_err(|e| ToolError::BadArguments(format!("the call is not valid JSON: {e}")))?;
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::BadArguments("the call has no \"name\"".into()))?;
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => {
            return Err(ToolError::BadArguments(
                "\"arguments\" must be an object".into(),
            ))
        }
    };
    Ok(ToolCall {
        name: name.to_string(),
        arguments,
    })
}

/// Checks required arguments, unknown arguments and each value's type and bounds.
pub fn validate(params: &[Param], args: &Map<String, Value>) -> Result<(), ToolError> {
    for key in args.keys() {
        if !params.iter().any(|p| p.name == key) {
            return Err(ToolError::BadArguments(format!("unknown argument {key:?}")));
        }
    }
    for p in params {
        match args.get(p.name) {
            None | Some(Value::Null) if p.required => {
                return Err(ToolError::BadArguments(format!(
                    "missing argument {:?}",
                    p.name
                )))
            }
            None | Some(Value::Null) => {}
            Some(v) => check_value(p, v)?,
        }
    }
    Ok(())
}

fn check_value(p: &Param, v: &Value) -> Result<(), ToolError> {
    let bad = |what: String| Err(ToolError::BadArguments(format!("{}: {what}", p.name)));
    match p.kind {
        ParamKind::Str { max_len } => match v.as_str() {
            Some(s) if s.chars().count() <= max_len => Ok(()),
            Some(_) => bad(format!("longer than {max_len} characters")),
            None => bad("must be a string".into()),
        },
        ParamKind::Int { min, max } => match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(()),
            Some(n) => bad(format!("{n} is outside {min}..={max}")),
            None => bad("must be an integer".into()),
        },
        ParamKind::StrList { max_items, max_len } => match v.as_array() {
            Some(items) if items.len() <= max_items => {
                if items
                    .iter()
                    .all(|i| i.as_str().is_some_and(|s| s.chars().count() <= max_len))
                {
                    Ok(())
                } else {
                    bad(format!(
                        "items must be strings of at most {max_len} characters"
                    ))
                }
            }
            Some(_) => bad(format!("at most {max_items} items")),
            None => bad("must be a list of strings".into()),
        },
        ParamKind::Enum { values } => match v.as_str() {
            Some(s) if values.contains(&s) => Ok(()),
            _ => bad(format!("must be one of {}", values.join(", "))),
        },
    }
}

/// Cuts `text` to `max` characters with an ellipsis.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: &[Param] = &[
        Param {
            name: "path",
            kind: ParamKind::Str { max_len: 10 },
            required: true,
            help: "",
        },
        Param {
            name: "n",
            kind: ParamKind::Int { min: 1, max: 5 },
            required: false,
            help: "",
        },
        Param {
            name: "tags",
            kind: ParamKind::StrList {
                max_items: 2,
                max_len: 5,
            },
            required: false,
            help: "",
        },
        Param {
            name: "kind",
            kind: ParamKind::Enum {
                values: &["a", "b"],
            },
            required: false,
            help: "",
        },
    ];

    fn args(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn parse_table() {
        let c = parse_call(
            r#"{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>trailing"#,
        )
        .unwrap();
        assert_eq!(c.name, "read_file");
        assert_eq!(c.arguments["path"], "a.txt");
        assert!(parse_call(r#"{"name": "x"}"#).unwrap().arguments.is_empty());
        let fenced = parse_call("\n{\"name\": \"x\", \"arguments\": {\"a\": 1}}\n```").unwrap();
        assert_eq!(fenced.arguments["a"], 1);
        let llama = parse_call(r#"{"name": "x", "parameters": {"path": "b"}}"#).unwrap();
        assert_eq!(llama.arguments["path"], "b");
        assert!(parse_call("{not json").is_err());
        assert!(parse_call("").is_err());
        // A closer inside a string is the model's text, not the call's end.
        let inside = parse_call(
            r#"{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi</tool_call> {x}"}}</tool_call>"#,
        )
        .unwrap();
        assert_eq!(inside.arguments["content"], "hi</tool_call> {x}");
        let extra = parse_call(r#"{"name": "x", "arguments": {"a": "```"}}}"#).unwrap();
        assert_eq!(extra.arguments["a"], "```");
        assert!(parse_call(r#"{"arguments": {}}"#).is_err());
        assert!(parse_call(r#"{"name": "x", "arguments": [1]}"#).is_err());
    }

    #[test]
    fn key_ignores_argument_order() {
        let a = parse_call(r#"{"name": "t", "arguments": {"a": 1, "b": 2}}"#).unwrap();
        let b = parse_call(r#"{"name": "t", "arguments": {"b": 2, "a": 1}}"#).unwrap();
        assert_eq!(a.key(), b.key());
    }

    #[test]
    fn validate_table() {
        let ok = [
            r#"{"path": "x"}"#,
            r#"{"path": "x", "n": 5, "tags": ["a"], "kind": "b"}"#,
            r#"{"path": "x", "n": null}"#,
        ];
        for a in ok {
            assert!(validate(PARAMS, &args(a)).is_ok(), "{a}");
        }
        let bad = [
            (r#"{}"#, "missing argument"),
            (r#"{"path": 3}"#, "must be a string"),
            (r#"{"path": "01234567890"}"#, "longer than 10"),
            (r#"{"path": "x", "n": 9}"#, "outside"),
            (
                r#"{"path": "x", "tags": ["a", "b", "c"]}"#,
                "at most 2 items",
            ),
            (
                r#"{"path": "x", "tags": ["toolong"]}"#,
                "at most 5 characters",
            ),
            (r#"{"path": "x", "kind": "c"}"#, "one of a, b"),
            (r#"{"path": "x", "extra": 1}"#, "unknown argument"),
        ];
        for (a, needle) in bad {
            let e = validate(PARAMS, &args(a)).unwrap_err().to_string();
            assert!(e.contains(needle), "{a}: {e}");
        }
    }
}
