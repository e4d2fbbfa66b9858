//! Reading a finished reply: the first complete call of any family's form whose tool is
//! registered and whose arguments validate, with the text around it. Pure; the candidates
//! come from [`super`] (openers, objects that start a line, fences) and [`super::scan`].

use serde_json::{Map, Value};

use super::scan::{self, Extent};
use super::{lenient_form, line_objects, CallForm, PYTHON_TAG, TOOL_CALLS};
use crate::tools::{ToolCall, ToolInfo, CALL_CLOSER, CALL_OPENER};

/// The top-level keys a call object may have; any other makes it data, not a call.
const CALL_KEYS: &[&str] = &["name", "arguments", "parameters", "id", "type"];

/// A complete call found in a finished reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The text before the call's own text (its opener, fence line or `{`).
    pub before: String,
    pub call: ToolCall,
    pub form: CallForm,
    /// The text after the call (after its closer or closing fence when there is one).
    pub after: String,
}

/// The first complete call in a finished reply, of any family's form, whose `name` is one
/// of `tools` and whose arguments validate. Fenced and bare objects must start a line but
/// need no short lead-in here (a call after a long preamble still runs once the reply is
/// done); other candidates are skipped, so data and prose before a real call do not hide it.
pub fn find_call(text: &str, tools: &[ToolInfo]) -> Option<Found> {
    candidates(text).into_iter().find_map(|(start, kind)| {
        let span = match kind {
            Kind::Opener(opener) => after_opener(text, start, opener, tools)?,
            Kind::Object => line_object(text, start, tools)?,
        };
        Some(Found {
            before: text[..span.start].to_string(),
            call: span.call,
            form: span.form,
            after: text[span.end..].to_string(),
        })
    })
}

/// What a candidate starts with.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Opener(&'static str),
    Object,
}

/// A call and the bytes it covers, from its opener or fence line to its closer.
struct Span {
    start: usize,
    end: usize,
    call: ToolCall,
    form: CallForm,
}

/// Every opener of every family, and every `{` that starts a line, in text order.
fn candidates(text: &str) -> Vec<(usize, Kind)> {
    let mut found: Vec<(usize, Kind)> = [CALL_OPENER, PYTHON_TAG, TOOL_CALLS]
        .into_iter()
        .flat_map(|o| text.match_indices(o).map(|(at, _)| (at, Kind::Opener(o))))
        .chain(line_objects(text).map(|at| (at, Kind::Object)))
        .collect();
    found.sort_by_key(|&(at, _)| at);
    found
}

/// A call after a native opener at `start`.
fn after_opener(text: &str, start: usize, opener: &str, tools: &[ToolInfo]) -> Option<Span> {
    let body = scan::skip_ws(text, start + opener.len());
    let (end, call, form) = match opener {
        CALL_OPENER => {
            let (end, call) = object_call(text, body, tools)?;
            (past(text, end, CALL_CLOSER), call, CallForm::Tagged)
        }
        PYTHON_TAG => {
            let (end, call) = object_call(text, body, tools)?;
            (end, call, CallForm::PythonTag)
        }
        _ if text[body..].starts_with('[') => {
            let (end, call) = mistral_list(text, body, tools)?;
            (end, call, CallForm::MistralList)
        }
        _ => {
            let (end, call) = mistral_args(text, body, tools)?;
            (end, call, CallForm::MistralArgs)
        }
    };
    Some(Span {
        start,
        end,
        call,
        form,
    })
}

/// A fenced or bare object at `at`; a fenced one covers its fence lines.
fn line_object(text: &str, at: usize, tools: &[ToolInfo]) -> Option<Span> {
    let (fence, form) = lenient_form(text, at)?;
    let (end, call) = object_call(text, at, tools)?;
    let (start, end) = match form {
        CallForm::FencedJson => (fence, past(text, end, "```")),
        _ => (at, end),
    };
    Some(Span {
        start,
        end,
        call,
        form,
    })
}

/// `end` moved past `closer` when only whitespace stands before it.
fn past(text: &str, end: usize, closer: &str) -> usize {
    let tail = scan::skip_ws(text, end);
    if text[tail..].starts_with(closer) {
        tail + closer.len()
    } else {
        end
    }
}

/// `[TOOL_CALLS][{…}, …]`: the list's first element, and where the list ends.
fn mistral_list(text: &str, at: usize, tools: &[ToolInfo]) -> Option<(usize, ToolCall)> {
    let Extent::Complete(end) = scan::extent(text, at) else {
        return None;
    };
    let list: Vec<Value> = serde_json::from_str(&text[at..end]).ok()?;
    Some((end, checked_object(list.first()?, tools)?))
}

/// `[TOOL_CALLS]name[ARGS]{…}`, maybe with `[CALL_ID]id` before `[ARGS]`.
fn mistral_args(text: &str, at: usize, tools: &[ToolInfo]) -> Option<(usize, ToolCall)> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let rest = &text[at..];
    let name = &rest[..rest.find(|c: char| !is_word(c))?];
    let mut after = &rest[name.len()..];
    if let Some(id) = after.strip_prefix("[CALL_ID]") {
        after = id.trim_start_matches(is_word);
    }
    let args = after.strip_prefix("[ARGS]")?;
    let open = scan::skip_ws(text, text.len() - args.len());
    let Extent::Complete(end) = scan::extent(text, open) else {
        return None;
    };
    let value: Value = serde_json::from_str(&text[open..end]).ok()?;
    Some((end, checked(name, Some(&value), tools)?))
}

/// The call an object at `at` holds, and where the object ends.
fn object_call(text: &str, at: usize, tools: &[ToolInfo]) -> Option<(usize, ToolCall)> {
    let Extent::Complete(end) = scan::extent(text, at) else {
        return None;
    };
    let value: Value = serde_json::from_str(&text[at..end]).ok()?;
    Some((end, checked_object(&value, tools)?))
}

/// `{"name": …, "arguments" | "parameters": …}` with no other keys, as a checked call.
fn checked_object(value: &Value, tools: &[ToolInfo]) -> Option<ToolCall> {
    let object = value.as_object()?;
    if !object.keys().all(|k| CALL_KEYS.contains(&k.as_str())) {
        return None;
    }
    let name = object.get("name")?.as_str()?;
    let args = object.get("arguments").or_else(|| object.get("parameters"));
    checked(name, args, tools)
}

/// A call of a registered tool whose arguments (an object, a JSON string holding one, or
/// nothing) pass its schema.
fn checked(name: &str, args: Option<&Value>, tools: &[ToolInfo]) -> Option<ToolCall> {
    let tool = tools.iter().find(|t| t.name == name)?;
    let arguments = match args {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(Value::String(s)) if s.trim().is_empty() => Map::new(),
        Some(Value::String(s)) => serde_json::from_str(s).ok()?,
        Some(_) => return None,
    };
    crate::tools::call::validate(&tool.params, &arguments).ok()?;
    Some(ToolCall {
        name: name.to_string(),
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{tools, PRETTY};
    use super::*;

    #[test]
    fn find_call_forms_table() {
        use CallForm::*;
        // (text, tool, argument json, form, before, after)
        let cases: &[(&str, &str, &str, CallForm, &str, &str)] = &[
            ("I'll read it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>\nok",
                "read_file", r#"{"path":"a.txt"}"#, Tagged, "I'll read it.\n", "\nok"),
            ("<tool_call>{\"name\": \"list_files\", \"arguments\": {}}",
                "list_files", "{}", Tagged, "", ""),
            ("<|python_tag|>{\"name\": \"search_files\", \"parameters\": {\"pattern\": \"fn main\"}}",
                "search_files", r#"{"pattern":"fn main"}"#, PythonTag, "", ""),
            ("[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}, \"id\": \"a1b2c3d4e\"}]",
                "read_file", r#"{"path":"b"}"#, MistralList, "", ""),
            ("[TOOL_CALLS]read_file[ARGS]{\"path\": \"c\", \"start_line\": 3}",
                "read_file", r#"{"path":"c","start_line":3}"#, MistralArgs, "", ""),
            ("[TOOL_CALLS]list_files[CALL_ID]x9Z[ARGS]{}",
                "list_files", "{}", MistralArgs, "", ""),
            (PRETTY, "list_files", r#"{"path":"src"}"#, FencedJson, "Let me look.\n", "\nDone."),
            ("```\n{\"name\": \"list_files\"}\n```", "list_files", "{}", FencedJson, "", ""),
            ("```tool_call\n{\"name\": \"list_files\", \"arguments\": null}\n```", "list_files", "{}", FencedJson, "", ""),
            ("```json\n{\"name\": \"list_files\"}", "list_files", "{}", FencedJson, "", ""),
            ("Let me check.\n{\"name\": \"list_files\", \"arguments\": {\"path\": \"src\"}}",
                "list_files", r#"{"path":"src"}"#, BareJson, "Let me check.\n", ""),
            ("{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"d\\\"}\"}\nThen I'll see.",
                "read_file", r#"{"path":"d"}"#, BareJson, "", "\nThen I'll see."),
            ("  {\"arguments\": {\"path\": \"e\"}, \"name\": \"read_file\"}",
                "read_file", r#"{"path":"e"}"#, BareJson, "  ", ""),
            ("{\"name\": \"memory_write\", \"arguments\": {\"type\": \"project_fact\", \"description\": \"d\", \"body\": \"b\"}}",
                "memory_write", r#"{"type":"project_fact","description":"d","body":"b"}"#, BareJson, "", ""),
        ];
        let tools = tools();
        for (text, name, args, form, before, after) in cases {
            let found = find_call(text, &tools).unwrap_or_else(|| panic!("no call in {text:?}"));
            let want: Map<String, Value> = serde_json::from_str(args).unwrap();
            assert_eq!(found.call.name, *name, "{text:?}");
            assert_eq!(found.call.arguments, want, "{text:?}");
            assert_eq!(found.form, *form, "{text:?}");
            assert_eq!(
                (found.before.as_str(), found.after.as_str()),
                (*before, *after),
                "{text:?}"
            );
        }
    }

    #[test]
    fn find_call_rejects_table() {
        let long = "This project keeps its configuration in one file, and the tool that reads it is read_file. ".repeat(4);
        let cases: Vec<String> = vec![
            r#"{"name": "find_function", "arguments": {"name": "main"}}"#.into(),
            "```json\n{\"name\": \"parse_config\", \"arguments\": {}}\n```".into(),
            r#"{"name": "read_file", "arguments": {}}"#.into(),
            r#"{"name": "read_file", "arguments": {"path": "a", "start_line": 0}}"#.into(),
            r#"{"name": "read_file", "arguments": {"path": "a", "mode": "r"}}"#.into(),
            r#"{"name": "read_file", "arguments": ["a"]}"#.into(),
            r#"{"name": "read_file", "arguments": "not json"}"#.into(),
            "```json\n{\n  \"name\": \"my-app\",\n  \"version\": \"1.0\"\n}\n```".into(),
            r#"{"name": "list_files", "description": "Lists files."}"#.into(),
            r#"read_file("a.txt")"#.into(),
            "I'll call memory_write(type: project, description: x) now.".into(),
            "I would use read_file to open src/main.rs.".into(),
            format!("{long} {{\"name\": \"list_files\", \"arguments\": {{}}}}"),
            "Sure: {\"name\": \"list_files\"}".into(),
            "```rust\n{\"name\": \"list_files\"}\n```".into(),
            "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": ".into(),
            "<tool_call>read_file(\"a\")</tool_call>".into(),
            "[TOOL_CALLS]find_function[ARGS]{}".into(),
            "{\"name\": \"list_files\"]".into(),
        ];
        let tools = tools();
        for text in &cases {
            assert_eq!(find_call(text, &tools), None, "{text:?}");
        }
    }

    #[test]
    fn data_and_prose_before_a_call_do_not_hide_it() {
        let text = "```json\n{\"name\": \"my-app\"}\n```\nNow: read_file(\"x\")\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}</tool_call>";
        let found = find_call(text, &tools()).unwrap();
        assert_eq!(found.form, CallForm::Tagged);
        assert!(found.before.ends_with("read_file(\"x\")\n"), "{found:?}");
        assert_eq!(found.after, "");
    }
}
