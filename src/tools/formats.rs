//! Every way a model writes a tool call, and telling them from prose: the native conventions
//! of the chat-template families (Hermes/Qwen `<tool_call>`, Llama 3 `<|python_tag|>`,
//! Mistral `[TOOL_CALLS]`) and what small instruction-tuned models write instead (a fenced
//! ```` ```json ```` block, or a bare `{"name": …, "arguments": …}` object on its own line).
//!
//! Pure text work: no llama.cpp, no I/O. [`find_head`] runs on every streamed prefix so
//! generation can stop where a call starts and continue under the call grammar;
//! [`find_call`] reads a finished reply. Only a known tool name with arguments that pass
//! [`super::call::validate`] makes a call: a `package.json` or a sentence that names a
//! tool (`read_file("a.txt")`) stays prose. JSON extents come from [`scan`], values from
//! serde_json — never a regular expression over JSON.

mod reply;
mod scan;

pub use reply::{find_call, Found};

use super::{ToolInfo, CALL_OPENER};
use scan::Fence;

/// Llama 3's opener for a call (a special token; visible only when specials are rendered).
const PYTHON_TAG: &str = "<|python_tag|>";
/// Mistral's opener for a call list or a `name[ARGS]{…}` call.
const TOOL_CALLS: &str = "[TOOL_CALLS]";
/// A fenced or bare object counts while streaming only after at most this much lead-in.
const LEAD_IN_MAX_CHARS: usize = 200;

/// The call convention a model's chat template teaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFamily {
    Hermes,
    Llama3,
    Mistral,
}

impl CallFamily {
    /// From the chat template text or a built-in template name (`llama3`, `mistral-v7`):
    /// `<tool_call>` → Hermes; `<|python_tag|>` or `<|start_header_id|>` → Llama3;
    /// `[TOOL_CALLS]` or `[INST]` → Mistral; anything else → Hermes.
    pub fn from_template(template: &str) -> Self {
        let name = template.trim();
        if template.contains(CALL_OPENER) {
            Self::Hermes
        } else if template.contains(PYTHON_TAG)
            || template.contains("<|start_header_id|>")
            || name.starts_with("llama3")
        {
            Self::Llama3
        } else if template.contains(TOOL_CALLS)
            || template.contains("[INST]")
            || name.starts_with("mistral")
        {
            Self::Mistral
        } else {
            Self::Hermes
        }
    }

    /// The literal strings that open a native call in this family's output.
    pub fn openers(self) -> &'static [&'static str] {
        match self {
            Self::Hermes => &[CALL_OPENER],
            Self::Llama3 => &[PYTHON_TAG],
            Self::Mistral => &[TOOL_CALLS],
        }
    }

    /// The form a native opener starts. Mistral's is taken as a list: its grammar then
    /// keeps it one (the `name[ARGS]` form is only recognised in finished text).
    fn native_form(self) -> CallForm {
        match self {
            Self::Hermes => CallForm::Tagged,
            Self::Llama3 => CallForm::PythonTag,
            Self::Mistral => CallForm::MistralList,
        }
    }
}

/// How a found call was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallForm {
    /// `<tool_call>{…}</tool_call>` (the closer may be missing).
    Tagged,
    /// `<|python_tag|>{…}`.
    PythonTag,
    /// `[TOOL_CALLS][{…}, …]`: the first element counts.
    MistralList,
    /// `[TOOL_CALLS]name[ARGS]{…}` (a `[CALL_ID]id` before `[ARGS]` is skipped).
    MistralArgs,
    /// An object alone in a ```` ``` ````, ```` ```json ```` or ```` ```tool_call ```` fence.
    FencedJson,
    /// An object at the start of a line.
    BareJson,
}

/// Where a call may be starting in streamed text (so generation can stop there and
/// continue under a grammar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallHead {
    /// Byte offset where the call's own text starts: the opener, or the `{` of the object.
    pub at: usize,
    pub form: CallForm,
}

/// The first place in `text` where a call starts: one of `family.openers()` anywhere, or
/// an object at the start of a line whose first key is `"name"` (bare, or in a JSON fence)
/// after at most 200 characters of lead-in (an opening fence line not counted). Safe on
/// every prefix of a growing text: a partial `{"na` is no head, and once one is found,
/// longer text gives the same head.
pub fn find_head(text: &str, family: CallFamily) -> Option<CallHead> {
    find_head_where(text, family, |_| true)
}

/// [`find_head`] for lenient (fenced or bare) objects only once their `"name"` value is
/// complete and one of `tools`: a `package.json` starting `{"name": "my-app"` is then no
/// head, so a grammar never forces a call the model did not mean. Native openers count as
/// in [`find_head`].
pub fn find_head_among(text: &str, family: CallFamily, tools: &[ToolInfo]) -> Option<CallHead> {
    find_head_where(text, family, |at| {
        name_value(text, at).is_some_and(|name| tools.iter().any(|t| t.name == name))
    })
}

fn find_head_where(
    text: &str,
    family: CallFamily,
    accept: impl Fn(usize) -> bool,
) -> Option<CallHead> {
    let native = family
        .openers()
        .iter()
        .filter_map(|opener| text.find(opener))
        .min()
        .map(|at| CallHead {
            at,
            form: family.native_form(),
        });
    let lenient = line_objects(text)
        .filter(|&at| at < native.as_ref().map_or(usize::MAX, |h| h.at))
        .filter(|&at| name_key_end(text, at).is_some())
        .find_map(|at| lenient_head(text, at).filter(|_| accept(at)));
    lenient.or(native)
}

/// The head of a fenced or bare object at `at`, if its lead-in is short enough.
fn lenient_head(text: &str, at: usize) -> Option<CallHead> {
    let (cut, form) = lenient_form(text, at)?;
    let lead_in = text[..cut].trim();
    let is_short =
        lead_in.len() <= LEAD_IN_MAX_CHARS * 4 && lead_in.chars().count() <= LEAD_IN_MAX_CHARS;
    is_short.then_some(CallHead { at, form })
}

/// Fenced or bare, and where the text before the call ends (the fence line, or the
/// object's line); `None` for an object in a fence of another language.
fn lenient_form(text: &str, at: usize) -> Option<(usize, CallForm)> {
    let line = scan::line_start(text, at);
    match scan::fence_around(text, line) {
        Fence::Outside => Some((line, CallForm::BareJson)),
        Fence::Json(fence) => Some((fence, CallForm::FencedJson)),
        Fence::Other => None,
    }
}

/// Offsets of every `{` that starts a line (after spaces or tabs).
fn line_objects(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.match_indices('{')
        .map(|(at, _)| at)
        .filter(|&at| scan::starts_line(text, at))
}

/// One past the `:` of `{ "name" :` at `at`; `None` while it is incomplete or different.
fn name_key_end(text: &str, at: usize) -> Option<usize> {
    const KEY: &str = "\"name\"";
    let key = scan::skip_ws(text, at + 1);
    if !text[key..].starts_with(KEY) {
        return None;
    }
    let colon = scan::skip_ws(text, key + KEY.len());
    text[colon..].starts_with(':').then_some(colon + 1)
}

/// The complete `"name"` value of the object at `at` (no escapes: tool names have none).
fn name_value(text: &str, at: usize) -> Option<&str> {
    let value = scan::skip_ws(text, name_key_end(text, at)?);
    let inner = text[value..].strip_prefix('"')?;
    let end = inner.find(['"', '\\'])?;
    inner[end..].starts_with('"').then_some(&inner[..end])
}

/// Result text the way the family's template expects it when the template itself does not
/// wrap tool messages (built-in or fallback templates only).
pub fn wrap_result(family: CallFamily, text: &str) -> String {
    match family {
        CallFamily::Hermes => format!("<tool_response>\n{text}\n</tool_response>"),
        CallFamily::Llama3 | CallFamily::Mistral => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::memory::{MemoryPlace, MemoryWrite};
    use crate::tools::workspace::{ListFiles, ReadFile, SearchFiles};
    use crate::tools::Registry;
    use std::path::PathBuf;

    /// The real workspace tools and `memory_write` (nothing is opened to build them).
    pub(super) fn tools() -> Vec<ToolInfo> {
        let root = PathBuf::from(".");
        let mut registry = Registry::new();
        registry.add(Box::new(ReadFile { root: root.clone() }));
        registry.add(Box::new(ListFiles { root: root.clone() }));
        registry.add(Box::new(SearchFiles { root: root.clone() }));
        registry.add(Box::new(MemoryWrite(MemoryPlace {
            agents_dir: root.join("agents"),
            workspace: root,
            embedder: None,
            config: crate::config::Config::default().memory,
        })));
        registry.list()
    }

    #[test]
    fn family_from_template_table() {
        let cases = [
            ("{% for tool in tools %}<tool_call>\n{{ tool }}</tool_call>{% endfor %}<|im_start|>", CallFamily::Hermes),
            ("<|start_header_id|>ipython<|end_header_id|>{{ '<|python_tag|>' }}", CallFamily::Llama3),
            ("<|start_header_id|>user<|end_header_id|>", CallFamily::Llama3),
            ("llama3", CallFamily::Llama3),
            ("[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS][TOOL_CALLS]", CallFamily::Mistral),
            ("{{ '[INST] ' + m['content'] + ' [/INST]' }}", CallFamily::Mistral),
            ("mistral-v7-tekken", CallFamily::Mistral),
            ("<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>", CallFamily::Hermes),
            ("gemma", CallFamily::Hermes),
            ("", CallFamily::Hermes),
        ];
        for (template, want) in cases {
            assert_eq!(CallFamily::from_template(template), want, "{template}");
        }
        assert_eq!(CallFamily::Hermes.openers(), &["<tool_call>"]);
        assert_eq!(CallFamily::Llama3.openers(), &["<|python_tag|>"]);
        assert_eq!(CallFamily::Mistral.openers(), &["[TOOL_CALLS]"]);
    }

    #[test]
    fn wrap_result_table() {
        let cases = [
            (CallFamily::Hermes, "<tool_response>\nok\n</tool_response>"),
            (CallFamily::Llama3, "ok"),
            (CallFamily::Mistral, "ok"),
        ];
        for (family, want) in cases {
            assert_eq!(wrap_result(family, "ok"), want);
        }
    }

    pub(super) const PRETTY: &str = "Let me look.\n```json\n{\n  \"name\": \"list_files\",\n  \"arguments\": {\n    \"path\": \"src\"\n  }\n}\n```\nDone.";

    /// A head's offset and form.
    type Head = (usize, CallForm);

    #[test]
    fn find_head_table() {
        use CallFamily::*;
        use CallForm::*;
        let paragraph = "word ".repeat(50);
        let cases: Vec<(String, CallFamily, Option<Head>)> = vec![
            (
                "Checking.\n<tool_call>\n{\"na".into(),
                Hermes,
                Some((10, Tagged)),
            ),
            ("<|python_tag|>".into(), Llama3, Some((0, PythonTag))),
            ("x [TOOL_CALLS]".into(), Mistral, Some((2, MistralList))),
            ("<tool_call>".into(), Llama3, None),
            ("[TOOL_CALLS][{\"name\":".into(), Hermes, None),
            ("<tool_ca".into(), Hermes, None),
            (PRETTY.into(), Hermes, Some((21, FencedJson))),
            (
                "Let me check.\n{\"name\":".into(),
                Llama3,
                Some((14, BareJson)),
            ),
            ("{ \n \"name\" \n:".into(), Mistral, Some((0, BareJson))),
            (
                "<tool_call>\n{\"name\":".into(),
                Llama3,
                Some((12, BareJson)),
            ),
            ("{\"na".into(), Hermes, None),
            ("{\"name\"".into(), Hermes, None),
            ("{\"version\": 1, \"name\":".into(), Hermes, None),
            ("```rust\n{\"name\":".into(), Hermes, None),
            (
                format!("Here is {paragraph} {{\"name\": \"read_file\""),
                Hermes,
                None,
            ),
            (
                format!("{paragraph}\n{{\"name\": \"read_file\""),
                Hermes,
                None,
            ),
            (
                format!("{}\n```json\n{{\"name\":", "x".repeat(200)),
                Hermes,
                Some((209, FencedJson)),
            ),
        ];
        for (text, family, want) in cases {
            let want = want.map(|(at, form)| CallHead { at, form });
            assert_eq!(find_head(&text, family), want, "{text:?}");
        }
    }

    /// Every prefix of each text: no head until `ready` bytes are there, then always `at`.
    #[test]
    fn find_head_on_every_prefix_is_stable() {
        let cases: &[(&str, CallFamily, usize, usize)] = &[
            (PRETTY, CallFamily::Hermes, 21, 32),
            (
                "Let me check.\n{\"name\": \"list_files\"}",
                CallFamily::Hermes,
                14,
                22,
            ),
            (
                "Ok.\n<tool_call>\n{\"name\": \"a\"}</tool_call>",
                CallFamily::Hermes,
                4,
                15,
            ),
            ("<|python_tag|>{\"name\": \"a\"}", CallFamily::Llama3, 0, 14),
            (
                "Sure — [TOOL_CALLS][{\"name\": \"a\"}]",
                CallFamily::Mistral,
                9,
                21,
            ),
            (
                "é\n```\n{\n\"name\"\n:\"list_files\"}",
                CallFamily::Mistral,
                7,
                17,
            ),
        ];
        for &(text, family, at, ready) in cases {
            for end in (0..=text.len()).filter(|&e| text.is_char_boundary(e)) {
                let head = find_head(&text[..end], family);
                let want = (end >= ready).then_some(at);
                assert_eq!(head.map(|h| h.at), want, "{:?}", &text[..end]);
            }
        }
    }

    #[test]
    fn find_head_among_waits_for_a_registered_name() {
        let tools = tools();
        let cases: &[(&str, Option<usize>)] = &[
            ("```json\n{\"name\": \"my-app\", \"version\"", None),
            ("{\"name\": \"read_fi", None),
            ("{\"name\": \"read_file\"", Some(0)),
            ("Ok.\n{\"name\":\"list_files\",", Some(4)),
            ("<tool_call>{\"name\": \"my-app\"", Some(0)),
        ];
        for (text, want) in cases {
            let head = find_head_among(text, CallFamily::Hermes, &tools);
            assert_eq!(head.map(|h| h.at), *want, "{text:?}");
        }
        assert!(find_head(cases[0].0, CallFamily::Hermes).is_some());
    }
}
