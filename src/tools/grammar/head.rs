//! A call the router chose, split where its grammar stops choosing: the head (the tool's
//! name and the arguments key) goes into the assistant prefix and is prefilled, a token a
//! few milliseconds, and only the rest (the arguments object and the form's closer) is
//! decoded, under a grammar that starts right after the head. A forced token decoded
//! costs a whole decode step (~90 ms with a 1.5B on two cores), so a head of ~10 tokens
//! was most of a short call's time.
//!
//! The head ends after `"arguments":`, where the model's own tokenizer splits too (Qwen's
//! and Llama's pre-tokenizers cut `":` from ` {"`): the model then writes ` {"` as the
//! one token it would have written anyway. A head that ended after `{` or `": "` would cut
//! such a token, and the model would have to continue in pieces it never wrote in training.
//!
//! Pure text: the head is written the way each family's template teaches it (one space
//! after each `:` and `,`, as the lenient grammar's first choice), so the conversation
//! text is the text the model itself wrote before.

use super::super::formats::CallForm;
use super::super::{ParamKind, ToolInfo, CALL_CLOSER};
use super::{grammar, rule_name, KEY_RULE, LENIENT};

/// A chosen call's prefilled head and the grammar of what follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSplit {
    /// Written after the opener, before decoding: `{"name": "read_file", "arguments":`.
    pub head: String,
    /// GBNF (root `root`) for the rest: the arguments object, then the form's closer.
    pub rest: String,
}

/// The head and rest grammar of a call of `tool` in `form`: the full form's grammar
/// ([`super::call_grammar_for`]) admits `head` followed by any sentence of `rest`.
pub fn chosen_split(tool: &ToolInfo, form: CallForm) -> CallSplit {
    let args = format!("args-{}", rule_name(tool.name));
    let object = |key: &str| format!("{{\"name\": \"{}\", \"{key}\":", tool.name);
    let (head, root) = match form {
        CallForm::Tagged => (
            object("arguments"),
            format!("root ::= ws {args} ws \"}}\" ws \"{CALL_CLOSER}\""),
        ),
        // Llama 3's forms: its template teaches `"parameters"`.
        CallForm::PythonTag | CallForm::BareJson => (
            object("parameters"),
            format!("root ::= ws {args} ws \"}}\""),
        ),
        CallForm::FencedJson => (
            object("arguments"),
            format!("root ::= ws {args} ws \"}}\" \"\\n```\""),
        ),
        CallForm::MistralList => (
            format!("[{}", object("arguments")),
            format!("root ::= ws {args} ws \"}}\" ws \"]\""),
        ),
        CallForm::MistralArgs => (
            format!("{}[ARGS]", tool.name),
            format!("root ::= ws {args}"),
        ),
    };
    let rest = grammar(
        std::slice::from_ref(tool),
        format!("{root}\n{KEY_RULE}"),
        &LENIENT,
    );
    CallSplit { head, rest }
}

/// The rest of a call of `tool` after its [`chosen_split`] head, where every parameter is
/// required and can take one value only (a one-value enum, an integer range of one):
/// nothing is left to decode. Asked "What version is this package?" with `Cargo.toml`
/// the one file named like it, the 1.5B decoded `{"path": "Cargo.toml"}}` and the closer
/// a token at a time, 16 tokens and 1.8 s, for text the request had already fixed.
/// `None` where anything is left to choose.
pub fn fixed_rest(tool: &ToolInfo, form: CallForm) -> Option<String> {
    let mut args = Vec::new();
    for p in &tool.params {
        let value = match p.kind {
            ParamKind::Enum { values: [one] } if p.required => serde_json::to_string(one).ok()?,
            ParamKind::Int { min, max } if p.required && min == max => min.to_string(),
            _ => return None,
        };
        args.push(format!("\"{}\": {value}", p.name));
    }
    let object = format!("{{{}}}", args.join(", "));
    Some(match form {
        CallForm::Tagged => format!(" {object}}}\n{CALL_CLOSER}"),
        CallForm::PythonTag | CallForm::BareJson => format!(" {object}}}"),
        CallForm::FencedJson => format!(" {object}}}\n```"),
        CallForm::MistralList => format!(" {object}}}]"),
        CallForm::MistralArgs => object,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::gbnf;
    use crate::tools::{parse_call, Param, ParamKind};

    fn read_file() -> ToolInfo {
        ToolInfo {
            name: "read_file",
            description: "",
            writes: false,
            params: vec![
                Param {
                    name: "path",
                    kind: ParamKind::Str { max_len: 20 },
                    required: true,
                    help: "",
                },
                Param {
                    name: "start_line",
                    kind: ParamKind::Int { min: 1, max: 99 },
                    required: false,
                    help: "",
                },
            ],
        }
    }

    /// Each form: the head is the form's text up to `"arguments":` (`[ARGS]` for
    /// Mistral's), the rest grammar starts at the object, and head + a rest the model
    /// would write is the call the whole form's text was.
    #[test]
    fn each_form_splits_after_the_arguments_key() {
        let args = r#" {"path": "Cargo.toml", "start_line": 3}"#;
        // (form, head, what follows the object, the root rule)
        let cases = [
            (
                CallForm::Tagged,
                r#"{"name": "read_file", "arguments":"#,
                "}\n</tool_call>",
                "root ::= ws args-read-file ws \"}\" ws \"</tool_call>\"\n",
            ),
            (
                CallForm::PythonTag,
                r#"{"name": "read_file", "parameters":"#,
                "}",
                "root ::= ws args-read-file ws \"}\"\n",
            ),
            (
                CallForm::BareJson,
                r#"{"name": "read_file", "parameters":"#,
                "}",
                "root ::= ws args-read-file ws \"}\"\n",
            ),
            (
                CallForm::FencedJson,
                r#"{"name": "read_file", "arguments":"#,
                "}\n```",
                "root ::= ws args-read-file ws \"}\" \"\\n```\"\n",
            ),
            (
                CallForm::MistralList,
                r#"[{"name": "read_file", "arguments":"#,
                "}]",
                "root ::= ws args-read-file ws \"}\" ws \"]\"\n",
            ),
            (
                CallForm::MistralArgs,
                "read_file[ARGS]",
                "",
                "root ::= ws args-read-file\n",
            ),
        ];
        let tool = read_file();
        for (form, head, closer, root) in cases {
            let split = chosen_split(&tool, form);
            assert_eq!(split.head, head, "{form:?}");
            assert!(split.rest.starts_with(root), "{form:?}: {}", split.rest);
            assert!(
                split
                    .rest
                    .contains("args-read-file ::= \"{\" ws \"\\\"path\\\"\""),
                "{form:?}: {}",
                split.rest
            );
            // Bounded, and shorter than the whole form's worst case by at least the head.
            let rest = gbnf::max_bytes(&split.rest).unwrap_or_else(|e| panic!("{form:?}: {e}"));
            let whole = gbnf::max_bytes(&super::super::call_grammar_for(
                std::slice::from_ref(&tool),
                form,
            ))
            .unwrap();
            assert!(rest + head.len() <= whole, "{form:?}: {rest} {whole}");
            let text = format!("{head}{args}{closer}");
            if form == CallForm::MistralArgs {
                continue;
            }
            let json = text.strip_prefix('[').unwrap_or(&text);
            let call = parse_call(json).unwrap_or_else(|e| panic!("{form:?}: {e}: {text}"));
            assert_eq!(call.name, "read_file", "{form:?}");
            assert_eq!(call.arguments["path"], "Cargo.toml", "{form:?}");
            assert_eq!(call.arguments["start_line"], 3, "{form:?}");
        }
    }

    /// A call the request fixed: the rest is the object and each form's closer, as the
    /// model would have written it; anything left to choose gives none.
    #[test]
    fn a_call_with_every_argument_fixed_is_written_whole() {
        let mut tool = read_file();
        assert_eq!(fixed_rest(&tool, CallForm::Tagged), None, "path is free");
        tool.params[0].kind = ParamKind::Enum {
            values: &["Cargo.toml"],
        };
        assert_eq!(
            fixed_rest(&tool, CallForm::Tagged),
            None,
            "start_line is free"
        );
        tool.params[1].kind = ParamKind::Int { min: 3, max: 3 };
        assert_eq!(
            fixed_rest(&tool, CallForm::Tagged),
            None,
            "start_line is optional"
        );
        tool.params[1].required = true;
        let object = r#"{"path": "Cargo.toml", "start_line": 3}"#;
        for (form, closer) in [
            (CallForm::Tagged, "}\n</tool_call>"),
            (CallForm::PythonTag, "}"),
            (CallForm::BareJson, "}"),
            (CallForm::FencedJson, "}\n```"),
            (CallForm::MistralList, "}]"),
        ] {
            let rest = fixed_rest(&tool, form).unwrap();
            assert_eq!(rest, format!(" {object}{closer}"), "{form:?}");
            let text = format!("{}{rest}", chosen_split(&tool, form).head);
            let call = parse_call(text.strip_prefix('[').unwrap_or(&text)).unwrap();
            assert_eq!(call.arguments["path"], "Cargo.toml", "{form:?}");
            assert_eq!(call.arguments["start_line"], 3, "{form:?}");
        }
        assert_eq!(fixed_rest(&tool, CallForm::MistralArgs).unwrap(), object);
    }

    /// A tool with no required argument: its rest admits the empty object.
    #[test]
    fn a_tool_without_required_arguments_may_close_at_once() {
        let tool = ToolInfo {
            name: "list_files",
            description: "",
            writes: false,
            params: Vec::new(),
        };
        let split = chosen_split(&tool, CallForm::Tagged);
        assert!(
            split
                .rest
                .contains("args-list-files ::= \"{\" ws  ws \"}\""),
            "{}",
            split.rest
        );
        assert!(gbnf::max_bytes(&split.rest).is_ok(), "{}", split.rest);
    }
}
