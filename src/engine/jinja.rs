//! A model's own chat template (`tokenizer.chat_template`, Jinja) rendered in Rust, with
//! the tools section and tool messages the way the model was trained to read them.
//!
//! llama.cpp's built-in applier knows a fixed list of formats and takes only (role, text)
//! pairs: no `tools`, so the model never sees its tools the way its template describes
//! them. Here the template runs in minijinja with what Hugging Face's own renderer gives
//! it: `messages`, `tools`, `add_generation_prompt`, `bos_token`, `eos_token`,
//! `raise_exception`, `strftime_now`, a Python-style `tojson`, Python string methods, and
//! `trim_blocks`/`lstrip_blocks` on, as transformers compiles chat templates.
//!
//! Pure: no llama.cpp here; the engine chooses when to use it (see `template.rs`).

use minijinja::value::{Kwargs, Serde, Value};
use minijinja::{Environment, Error, ErrorKind};
use serde_json::Value as Json;

use super::types::Message;

/// The name the template is stored under in its environment.
const NAME: &str = "chat";

/// A compiled chat template.
pub struct JinjaTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
    source: String,
}

impl std::fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JinjaTemplate")
            .field("bytes", &self.source.len())
            .finish()
    }
}

impl JinjaTemplate {
    /// Compiles `source`; `bos`/`eos` are the vocabulary's tokens as text. An error names
    /// what minijinja could not parse (the caller falls back to llama.cpp's applier).
    pub fn new(source: &str, bos: &str, eos: &str) -> Result<Self, String> {
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(|e| e.to_string())?;
        env.set_syntax(syntax);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_filter("tojson", tojson);
        env.add_template_owned(NAME, source.to_string())
            .map_err(|e| describe(&e))?;
        Ok(Self {
            env,
            bos: bos.to_string(),
            eos: eos.to_string(),
            source: source.to_string(),
        })
    }

    /// Whether the template has a branch for `tools` (then the tool list belongs there,
    /// not in harvey's own words in the system prompt).
    pub fn knows_tools(&self) -> bool {
        self.source.contains("tools")
    }

    /// Renders `messages` (contents as given) with `tools` (OpenAI-style function
    /// schemas; empty = none) and, if asked, the assistant's opener.
    pub fn render(
        &self,
        messages: &[Message],
        tools: &[Json],
        add_generation_prompt: bool,
    ) -> Result<String, String> {
        let messages: Vec<Json> = messages
            .iter()
            .map(|m| serde_json::json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        let tools = (!tools.is_empty()).then(|| Value::from(Serde(tools)));
        let ctx = minijinja::context! {
            messages => Value::from(Serde(&messages)),
            tools => tools,
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos.as_str(),
            eos_token => self.eos.as_str(),
        };
        let template = self.env.get_template(NAME).map_err(|e| describe(&e))?;
        template.render(ctx).map_err(|e| describe(&e))
    }
}

/// minijinja's error with its line, for `/status` and load errors.
fn describe(e: &Error) -> String {
    match e.line() {
        Some(line) => format!(
            "{} (template line {line})",
            e.detail().unwrap_or(&e.to_string())
        ),
        None => e.to_string(),
    }
}

/// `raise_exception(msg)`: the template refuses these messages.
fn raise_exception(msg: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, msg))
}

/// `strftime_now(format)`: the local date and time, as Python's `strftime`.
fn strftime_now(format: String) -> String {
    chrono::Local::now().format(&format).to_string()
}

/// `tojson` as transformers' chat templates get it: Python's `json.dumps` with
/// `ensure_ascii=False` — `", "` and `": "` between items, or `indent` spaces per level
/// (then `","` at line ends) — and no HTML escaping, so the model sees the JSON it was
/// trained on.
fn tojson(value: &Value, indent: Option<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let indent = match indent {
        Some(v) => Some(v),
        None => kwargs.get::<Option<Value>>("indent")?,
    };
    let _: Option<bool> = kwargs.get("sort_keys")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let _: Option<Value> = kwargs.get("separators")?;
    kwargs.assert_all_used()?;
    let indent = match indent {
        None => None,
        Some(v) if v.is_none() || v.is_undefined() => None,
        Some(v) => Some(usize::try_from(v)?),
    };
    let json = serde_json::to_value(value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let mut out = String::new();
    write_json(&json, indent, 0, &mut out);
    Ok(Value::from_safe_string(out))
}

fn write_json(value: &Json, indent: Option<usize>, level: usize, out: &mut String) {
    match value {
        Json::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                separate(i, indent, level + 1, out);
                write_json(item, indent, level + 1, out);
            }
            close(indent, level, out);
            out.push(']');
        }
        Json::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                separate(i, indent, level + 1, out);
                out.push_str(&Json::String(key.clone()).to_string());
                out.push_str(": ");
                write_json(item, indent, level + 1, out);
            }
            close(indent, level, out);
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// What goes before item `i` of a list or map at depth `level`.
fn separate(i: usize, indent: Option<usize>, level: usize, out: &mut String) {
    match indent {
        Some(width) => {
            if i > 0 {
                out.push(',');
            }
            out.push('\n');
            out.push_str(&" ".repeat(width * level));
        }
        None if i > 0 => out.push_str(", "),
        None => {}
    }
}

fn close(indent: Option<usize>, level: usize, out: &mut String) {
    if let Some(width) = indent {
        out.push('\n');
        out.push_str(&" ".repeat(width * level));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Role;

    fn render(source: &str, messages: &[Message], tools: &[Json], gen: bool) -> String {
        JinjaTemplate::new(source, "<s>", "</s>")
            .unwrap()
            .render(messages, tools, gen)
            .unwrap()
    }

    #[test]
    fn tojson_is_python_json_dumps() {
        let src = "{{ x | tojson }}|{{ x | tojson(indent=2) }}|{{ e | tojson }}";
        let env_json = serde_json::json!({"b": [1, "é<&>'"], "a": {"c": null, "d": 1.5}});
        let t = JinjaTemplate::new(src, "", "").unwrap();
        let out = t
            .env
            .get_template(NAME)
            .unwrap()
            .render(minijinja::context! { x => Value::from(Serde(&env_json)), e => Value::from(Serde(serde_json::json!({}))) })
            .unwrap();
        assert_eq!(
            out,
            "{\"b\": [1, \"é<&>'\"], \"a\": {\"c\": null, \"d\": 1.5}}|{\n  \"b\": [\n    1,\n    \"é<&>'\"\n  ],\n  \"a\": {\n    \"c\": null,\n    \"d\": 1.5\n  }\n}|{}"
        );
    }

    #[test]
    fn helpers_hugging_face_templates_call() {
        let src = "{% if messages|length > 1 %}{{ raise_exception('only one') }}{% endif %}{{ bos_token }}{{ messages[0]['content'].strip().upper() }}{{ eos_token }}{{ strftime_now('%Y') | length }}";
        let one = [Message::new(Role::User, "  hi ")];
        assert_eq!(render(src, &one, &[], false), "<s>HI</s>4");
        let two = [one[0].clone(), one[0].clone()];
        let err = JinjaTemplate::new(src, "", "")
            .unwrap()
            .render(&two, &[], false)
            .unwrap_err();
        assert!(err.contains("only one"), "{err}");
    }

    #[test]
    fn blocks_are_trimmed_as_transformers_does() {
        let src = "{% for m in messages %}\n  {% if m.role == 'user' %}\n[{{ m.content }}]\n  {% endif %}\n{% endfor %}";
        let msgs = [Message::new(Role::User, "a"), Message::new(Role::User, "b")];
        assert_eq!(render(src, &msgs, &[], false), "[a]\n[b]\n");
    }

    #[test]
    fn tools_are_none_when_empty() {
        let src = "{% if tools %}T{{ tools[0].function.name }}{% else %}N{% endif %}";
        let msgs = [Message::new(Role::User, "a")];
        assert_eq!(render(src, &msgs, &[], false), "N");
        let tool = serde_json::json!({"type": "function", "function": {"name": "read_file"}});
        assert_eq!(render(src, &msgs, &[tool], false), "Tread_file");
    }

    /// Llama 3.x style: system taken out of the list, tools as indented JSON, tool
    /// results in an `ipython` turn, contents trimmed. Written for this test.
    const LLAMA3_LIKE: &str = "{{- bos_token }}{%- if messages[0]['role'] == 'system' %}{%- set system = messages[0]['content'] %}{%- set messages = messages[1:] %}{%- else %}{%- set system = '' %}{%- endif %}<|start_header_id|>system<|end_header_id|>\n\n{{ system }}{%- if tools %}\n\nTools:\n{%- for t in tools %}\n{{ t | tojson(indent=4) }}{%- endfor %}{%- endif %}<|eot_id|>{%- for m in messages %}<|start_header_id|>{{ 'ipython' if m.role == 'tool' else m.role }}<|end_header_id|>\n\n{{ m.content | trim }}<|eot_id|>{%- endfor %}{%- if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}";

    /// Qwen3 style: earlier assistant turns lose their `<think>` block.
    const STRIPS_THOUGHTS: &str = "{%- for m in messages %}<|im_start|>{{ m.role }}\n{%- if m.role == 'assistant' %}{{ m.content.split('</think>')[-1].lstrip('\n') }}{%- else %}{{ m.content }}{%- endif %}<|im_end|>\n{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}";

    /// Whether rendering messages `..k` plus assistant message `k`'s text is a prefix of
    /// every longer render — what the KV cache and the saved prefix rely on.
    fn is_append_only(t: &JinjaTemplate, chat: &[Message], tools: &[Json]) -> bool {
        (0..chat.len())
            .filter(|&k| chat[k].role == Role::Assistant)
            .all(|k| {
                let head = format!(
                    "{}{}",
                    t.render(&chat[..k], tools, true).unwrap(),
                    chat[k].content
                );
                (k + 1..=chat.len()).all(|j| {
                    t.render(&chat[..j], tools, true)
                        .unwrap()
                        .starts_with(&head)
                })
            })
    }

    fn chat(reply: &str) -> Vec<Message> {
        vec![
            Message::new(Role::System, "Be brief."),
            Message::new(Role::User, "Read a.txt"),
            Message::new(
                Role::Assistant,
                "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.txt\"}}",
            ),
            Message::new(Role::Tool, "hello"),
            Message::new(Role::Assistant, reply),
            Message::new(Role::User, "thanks"),
        ]
    }

    #[test]
    fn written_templates_render_tools_and_stay_append_only() {
        let tool = serde_json::json!({"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}});
        let llama = JinjaTemplate::new(LLAMA3_LIKE, "<|begin_of_text|>", "<|eot_id|>").unwrap();
        let text = llama
            .render(&chat("It says hello."), std::slice::from_ref(&tool), true)
            .unwrap();
        // trim_blocks eats the newline after `{%- if tools %}`, `{%-` the one before the
        // loop: Jinja2 with transformers' settings writes exactly this.
        assert!(text.starts_with("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.\nTools:{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"read_file\""), "{text}");
        assert!(
            text.contains("<|start_header_id|>ipython<|end_header_id|>\n\nhello<|eot_id|>"),
            "{text}"
        );
        assert!(is_append_only(&llama, &chat("It says hello."), &[tool]));
        // A reply with surrounding spaces is trimmed by this template: the cached reply
        // and the re-rendered one differ, and the engine re-decodes from the difference.
        assert!(!is_append_only(&llama, &chat(" It says hello.\n"), &[]));
    }

    #[test]
    fn a_template_that_strips_thoughts_is_append_only_for_what_harvey_stores() {
        let t = JinjaTemplate::new(STRIPS_THOUGHTS, "", "").unwrap();
        // harvey keeps `<think>` blocks out of the conversation (chat::think), so what it
        // renders is what the model saw.
        assert!(is_append_only(&t, &chat("It says hello."), &[]));
        // Stored with the thought, the next render would drop it: not append-only.
        assert!(!is_append_only(
            &t,
            &chat("<think>easy</think>It says hello."),
            &[]
        ));
    }

    #[test]
    fn a_template_that_does_not_parse_is_an_error_with_its_line() {
        let err = JinjaTemplate::new("line one\n{% if x %}unclosed", "", "").unwrap_err();
        assert!(err.contains("line"), "{err}");
    }
}
