//! The GBNF grammar for a tool call, built from the registry: after `<tool_call>` the
//! model can only write `{"name": "<a registered tool>", "arguments": {…}}</tool_call>`
//! with arguments that match that tool's schema. Every string and list is length-bounded,
//! so a call always ends.
//!
//! [`call_grammar`] is the strict Hermes form (one optional space between tokens).
//! [`call_grammar_for`] covers every [`CallForm`] of [`super::formats`]: it also takes the
//! `"parameters"` key (Llama 3) and short pretty-printing (a newline and up to 8 spaces or
//! tabs), so text a model already wrote from the head on can be fed through it.

mod head;

pub use head::{chosen_split, fixed_rest, CallSplit};

use super::formats::CallForm;
use super::{Param, ParamKind, ToolInfo, CALL_CLOSER};
use crate::engine::gbnf;

/// Where the grammars differ: the whitespace rule and the arguments key.
struct Style {
    ws: &'static str,
    key: &'static str,
}

const STRICT: Style = Style {
    ws: "ws ::= \" \"?",
    key: "\"\\\"arguments\\\"\"",
};

/// The lenient grammars' arguments key.
const KEY_RULE: &str = "key ::= \"\\\"arguments\\\"\" | \"\\\"parameters\\\"\"";

const LENIENT: Style = Style {
    ws: "ws ::= (\" \" | \"\\n\" [ \\t]{0,8})?",
    key: "key",
};

/// The grammar text (root rule `root`) for calls to `tools`.
pub fn call_grammar(tools: &[ToolInfo]) -> String {
    let root =
        format!("root ::= \"{{\" ws \"\\\"name\\\"\" ws \":\" ws call ws \"}}\" \"{CALL_CLOSER}\"");
    grammar(tools, root, &STRICT)
}

/// The grammar for the text that follows a head of `form` ([`super::formats::CallHead`]):
/// for `Tagged` the object and `</tool_call>`, for `PythonTag` and `BareJson` the object,
/// for `FencedJson` the object and the closing fence, for `MistralList` a one-call list,
/// for `MistralArgs` `name[ARGS]{…}`. Names are only those of `tools`.
pub fn call_grammar_for(tools: &[ToolInfo], form: CallForm) -> String {
    let root = match form {
        CallForm::Tagged => format!("root ::= ws object ws \"{CALL_CLOSER}\""),
        CallForm::PythonTag => "root ::= ws object".to_string(),
        CallForm::BareJson => "root ::= object".to_string(),
        CallForm::FencedJson => "root ::= object \"\\n```\"".to_string(),
        CallForm::MistralList => "root ::= ws \"[\" ws object ws \"]\"".to_string(),
        CallForm::MistralArgs => return mistral_args_grammar(tools),
    };
    let object = "object ::= \"{\" ws \"\\\"name\\\"\" ws \":\" ws call ws \"}\"";
    grammar(tools, format!("{root}\n{object}\n{KEY_RULE}"), &LENIENT)
}

/// `name[ARGS]{…}`: the arguments object right after the registered name.
fn mistral_args_grammar(tools: &[ToolInfo]) -> String {
    let alternatives: Vec<String> = tools
        .iter()
        .map(|t| format!("\"{}[ARGS]\" ws args-{}", t.name, rule_name(t.name)))
        .collect();
    let root = format!("root ::= {}\n{KEY_RULE}", alternatives.join(" | "));
    grammar(tools, root, &LENIENT)
}

/// `root` (and whatever rules it brings) plus the shared rules and each tool's own.
fn grammar(tools: &[ToolInfo], root: String, style: &Style) -> String {
    let mut rules = vec![
        root,
        style.ws.to_string(),
        "char ::= [^\"\\\\\\x00-\\x1f] | \"\\\\\" [\"\\\\/nt]".to_string(),
    ];
    let alternatives: Vec<String> = tools
        .iter()
        .map(|t| format!("call-{}", rule_name(t.name)))
        .collect();
    rules.push(format!("call ::= {}", alternatives.join(" | ")));
    for tool in tools {
        rules.extend(tool_rules(tool, style.key));
    }
    rules.join("\n") + "\n"
}

/// `max_tokens` for a call under `grammar`: its worst case in tokens (one per UTF-8 byte
/// of the longest call, plus the end token), so a call ends by its grammar completing
/// unless the context fills up first. [`call_grammar`] bounds every string and list; an
/// unbounded grammar would get no cap and be reported cut off at the context's end.
pub fn call_max_tokens(grammar: &str) -> usize {
    gbnf::max_tokens(grammar).unwrap_or(usize::MAX)
}

fn rule_name(name: &str) -> String {
    name.replace('_', "-")
}

/// `call-<tool>` (the name, then the arguments under `key`), `args-<tool>` and its values.
fn tool_rules(tool: &ToolInfo, key: &str) -> Vec<String> {
    let base = rule_name(tool.name);
    let mut rules = vec![format!(
        "call-{base} ::= \"\\\"{}\\\"\" ws \",\" ws {key} ws \":\" ws args-{base}",
        tool.name
    )];
    let mut kvs = Vec::new();
    for p in &tool.params {
        let value_rule = format!("v-{base}-{}", rule_name(p.name));
        if let ParamKind::StrList { max_len, .. } = p.kind {
            // One rule per item: llama.cpp refuses a repeated group whose expansion
            // (items × characters) passes 2000 rules, as `run_command`'s 32 × 200 would.
            rules.push(format!(
                "{value_rule}-item ::= \"\\\"\" char{{0,{max_len}}} \"\\\"\""
            ));
        }
        rules.push(format!(
            "{value_rule} ::= {}",
            value_rule_body(p, &value_rule)
        ));
        kvs.push((
            p,
            format!("\"\\\"{}\\\"\" ws \":\" ws {value_rule}", p.name),
        ));
    }
    rules.push(format!(
        "args-{base} ::= \"{{\" ws {} ws \"}}\"",
        object_body(&kvs)
    ));
    rules
}

/// Required keys first (in order), then each optional key may follow. With no required
/// key, the object may be empty or start at any optional key.
fn object_body(kvs: &[(&Param, String)]) -> String {
    let required: Vec<&String> = kvs
        .iter()
        .filter(|(p, _)| p.required)
        .map(|(_, kv)| kv)
        .collect();
    let optional: Vec<&String> = kvs
        .iter()
        .filter(|(p, _)| !p.required)
        .map(|(_, kv)| kv)
        .collect();
    let tail = |from: usize| -> String {
        optional[from..]
            .iter()
            .map(|kv| format!(" (ws \",\" ws {kv})?"))
            .collect()
    };
    if !required.is_empty() {
        let head: Vec<String> = required.iter().map(|kv| kv.to_string()).collect();
        return format!("{}{}", head.join(" ws \",\" ws "), tail(0));
    }
    if optional.is_empty() {
        return String::new();
    }
    let starts: Vec<String> = (0..optional.len())
        .map(|i| format!("{}{}", optional[i], tail(i + 1)))
        .collect();
    format!("({})?", starts.join(" | "))
}

fn value_rule_body(p: &Param, value_rule: &str) -> String {
    match p.kind {
        ParamKind::Str { max_len } => format!("\"\\\"\" char{{0,{max_len}}} \"\\\"\""),
        ParamKind::Int { min, max } => int_body(min, max),
        ParamKind::StrList { max_items, .. } => {
            let item = format!("{value_rule}-item");
            let more = max_items.saturating_sub(1);
            format!("\"[\" ws ({item} (ws \",\" ws {item}){{0,{more}}})? ws \"]\"")
        }
        ParamKind::Enum { values } => values
            .iter()
            .map(|v| format!("\"\\\"{v}\\\"\""))
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

/// Decimal integers in `[min, max]` exactly (no leading zeros), so every call the grammar
/// admits also passes [`super::call::validate`]: a value out of range is not a way the
/// model can fail on some other CPU.
fn int_body(min: i64, max: i64) -> String {
    let alternatives: Vec<String> = int_alternatives(min, max)
        .into_iter()
        .map(|(negative, digits)| {
            let sign = if negative { "\"-\" " } else { "" };
            let classes: Vec<String> = digits
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        format!("\"{a}\"")
                    } else {
                        format!("[{a}-{b}]")
                    }
                })
                .collect();
            format!("{sign}{}", classes.join(" "))
        })
        .collect();
    if alternatives.is_empty() {
        // An empty range: nothing can be written, so the key must not be offered.
        return "[^\\x00-\\U0010FFFF]".into();
    }
    format!("({})", alternatives.join(" | "))
}

/// One alternative: a sign and one digit range per position.
type DigitSeq = (bool, Vec<(u8, u8)>);

fn int_alternatives(min: i64, max: i64) -> Vec<DigitSeq> {
    let mut out = Vec::new();
    if min < 0 {
        // -1 … -(min): the magnitudes, behind a minus sign.
        let hi = min.unsigned_abs();
        let lo = if max < 0 { max.unsigned_abs() } else { 1 };
        out.extend(digit_ranges(lo, hi).into_iter().map(|d| (true, d)));
    }
    if max >= 0 {
        let lo = u64::try_from(min.max(0)).unwrap_or(0);
        out.extend(
            digit_ranges(lo, max.unsigned_abs())
                .into_iter()
                .map(|d| (false, d)),
        );
    }
    out
}

/// Digit-range sequences covering exactly the numbers in `[lo, hi]`, split by length.
fn digit_ranges(lo: u64, hi: u64) -> Vec<Vec<(u8, u8)>> {
    let mut out = Vec::new();
    if lo > hi {
        return out;
    }
    let (lo_len, hi_len) = (lo.to_string().len(), hi.to_string().len());
    for len in lo_len..=hi_len {
        let first = if len == 1 {
            0
        } else {
            10u64.pow(len as u32 - 1)
        };
        let last = 10u64.saturating_pow(len as u32).saturating_sub(1);
        let (a, b) = (lo.max(first), hi.min(last));
        out.extend(same_length(&digits(a), &digits(b)));
    }
    out
}

fn digits(n: u64) -> Vec<u8> {
    n.to_string().bytes().map(|b| b - b'0').collect()
}

/// Sequences for `[lo, hi]` where both have the same number of digits.
fn same_length(lo: &[u8], hi: &[u8]) -> Vec<Vec<(u8, u8)>> {
    let (Some((&l, lo_rest)), Some((&h, hi_rest))) = (lo.split_first(), hi.split_first()) else {
        return vec![Vec::new()];
    };
    let any = |n: usize| vec![(0u8, 9u8); n];
    let prefixed = |d: u8, rest: Vec<Vec<(u8, u8)>>| -> Vec<Vec<(u8, u8)>> {
        rest.into_iter()
            .map(|mut r| {
                r.insert(0, (d, d));
                r
            })
            .collect()
    };
    if lo_rest.iter().all(|&d| d == 0) && hi_rest.iter().all(|&d| d == 9) {
        let mut seq = vec![(l, h)];
        seq.extend(any(lo_rest.len()));
        return vec![seq];
    }
    if l == h {
        return prefixed(l, same_length(lo_rest, hi_rest));
    }
    let mut out = prefixed(l, same_length(lo_rest, &vec![9; lo_rest.len()]));
    if l + 1 < h {
        let mut seq = vec![(l + 1, h - 1)];
        seq.extend(any(lo_rest.len()));
        out.push(seq);
    }
    out.extend(prefixed(h, same_length(&vec![0; hi_rest.len()], hi_rest)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::parse_call;

    fn info(name: &'static str, params: Vec<Param>) -> ToolInfo {
        ToolInfo {
            name,
            description: "",
            writes: false,
            params,
        }
    }

    #[test]
    fn grammar_shape() {
        let tools = vec![
            info(
                "read_file",
                vec![
                    Param {
                        name: "path",
                        kind: ParamKind::Str { max_len: 200 },
                        required: true,
                        help: "",
                    },
                    Param {
                        name: "start_line",
                        kind: ParamKind::Int { min: 1, max: 9 },
                        required: false,
                        help: "",
                    },
                ],
            ),
            info(
                "list_files",
                vec![Param {
                    name: "path",
                    kind: ParamKind::Str { max_len: 200 },
                    required: false,
                    help: "",
                }],
            ),
        ];
        let g = call_grammar(&tools);
        assert!(
            g.contains("call ::= call-read-file | call-list-files"),
            "{g}"
        );
        assert!(g.contains("args-read-file ::= \"{\" ws \"\\\"path\\\"\" ws \":\" ws v-read-file-path (ws \",\" ws \"\\\"start_line\\\"\""), "{g}");
        assert!(g.contains("args-list-files ::= \"{\" ws (\"\\\"path\\\"\" ws \":\" ws v-list-files-path)? ws \"}\""), "{g}");
        assert!(g.contains("char{0,200}"), "{g}");
        assert!(g.contains("\"</tool_call>\""), "{g}");
    }

    fn int_regex(min: i64, max: i64) -> regex::Regex {
        let alts: Vec<String> = int_alternatives(min, max)
            .into_iter()
            .map(|(negative, d)| {
                let classes: String = d.iter().map(|(a, b)| format!("[{a}-{b}]")).collect();
                format!("{}{classes}", if negative { "-" } else { "" })
            })
            .collect();
        if alts.is_empty() {
            // An empty range matches nothing (as its GBNF class does).
            return regex::Regex::new(r"[^\s\S]").unwrap();
        }
        regex::Regex::new(&format!("^(?:{})$", alts.join("|"))).unwrap()
    }

    #[test]
    fn integer_rules_admit_exactly_the_range() {
        let ranges = [
            (1, 20),
            (1, 10),
            (0, 0),
            (0, 9),
            (7, 1234),
            (-15, 3),
            (-20, -5),
            (5, 3),
            (1, 10_000_000),
        ];
        for (min, max) in ranges {
            let re = int_regex(min, max);
            for n in -2000i64..=20_000 {
                let want = (min..=max).contains(&n);
                assert_eq!(re.is_match(&n.to_string()), want, "{n} in {min}..={max}");
            }
            for never in ["", "-", "-0", "01", "007", "+1"] {
                assert!(!re.is_match(never), "{never:?} in {min}..={max}");
            }
        }
        let top = int_regex(1, 10_000_000);
        assert!(top.is_match("10000000") && top.is_match("9999999"));
        assert!(!top.is_match("10000001") && !top.is_match("99999999"));
        // As GBNF: one byte a digit, and the sign.
        let bound = |min, max| gbnf::max_bytes(&format!("root ::= {}", int_body(min, max)));
        assert_eq!(bound(1, 10_000_000), Ok(8));
        assert_eq!(bound(1, 20), Ok(2));
        assert_eq!(bound(-15, 3), Ok(3));
    }

    #[test]
    fn the_worst_case_is_the_longest_call() {
        let tools = vec![info(
            "read_file",
            vec![
                Param {
                    name: "path",
                    kind: ParamKind::Str { max_len: 50 },
                    required: true,
                    help: "",
                },
                Param {
                    name: "start_line",
                    kind: ParamKind::Int { min: 1, max: 500 },
                    required: false,
                    help: "",
                },
                Param {
                    name: "tags",
                    kind: ParamKind::StrList {
                        max_items: 2,
                        max_len: 3,
                    },
                    required: false,
                    help: "",
                },
            ],
        )];
        let g = call_grammar(&tools);
        // Every optional space taken, every string full of 4-byte characters.
        let wide = |n: usize| "\u{1D11E}".repeat(n);
        let longest = format!(
            r#"{{ "name" : "read_file" , "arguments" : {{ "path" : "{}" , "start_line" : 500 , "tags" : [ "{}" , "{}" ] }} }}</tool_call>"#,
            wide(50),
            wide(3),
            wide(3)
        );
        let call = parse_call(&longest).unwrap();
        assert!(super::super::call::validate(&tools[0].params, &call.arguments).is_ok());
        assert_eq!(gbnf::max_bytes(&g), Ok(longest.len()), "{g}");
        assert_eq!(call_max_tokens(&g), longest.len() + 1);
    }
    #[test]
    fn grammar_for_every_form_is_bounded_and_names_only_the_tools() {
        let tools = vec![
            info(
                "read_file",
                vec![Param {
                    name: "path",
                    kind: ParamKind::Str { max_len: 20 },
                    required: true,
                    help: "",
                }],
            ),
            info("list_files", Vec::new()),
        ];
        // (form, the longest text of a call under it with no optional whitespace, a fragment)
        let cases = [
            (
                CallForm::Tagged,
                "</tool_call>",
                "root ::= ws object ws \"</tool_call>\"",
            ),
            (CallForm::PythonTag, "", "root ::= ws object\n"),
            (CallForm::BareJson, "", "root ::= object\n"),
            (CallForm::FencedJson, "\n```", "root ::= object \"\\n```\""),
            (CallForm::MistralList, "[]", "\"[\" ws object ws \"]\""),
        ];
        let object = format!(
            r#"{{"name":"read_file","parameters":{{"path":"{}"}}}}"#,
            "\u{1D11E}".repeat(20)
        );
        for (form, extra, fragment) in cases {
            let g = call_grammar_for(&tools, form);
            let bound = gbnf::max_bytes(&g).unwrap_or_else(|e| panic!("{form:?}: {e}\n{g}"));
            assert!(bound >= object.len() + extra.len(), "{form:?}: {bound}");
            assert!(g.contains(fragment), "{form:?}: {g}");
            assert!(
                g.contains("call ::= call-read-file | call-list-files\n"),
                "{g}"
            );
            assert!(
                g.contains("key ::= \"\\\"arguments\\\"\" | \"\\\"parameters\\\"\""),
                "{g}"
            );
            assert!(
                g.contains("call-list-files ::= \"\\\"list_files\\\"\" ws \",\" ws key"),
                "{g}"
            );
        }
        let g = call_grammar_for(&tools, CallForm::MistralArgs);
        assert!(g.contains("root ::= \"read_file[ARGS]\" ws args-read-file | \"list_files[ARGS]\" ws args-list-files\n"), "{g}");
        assert!(gbnf::max_bytes(&g).is_ok(), "{g}");
        // Pretty-printing is bounded: a newline and 8 spaces at each of the object's gaps.
        let strict = gbnf::max_bytes(&call_grammar(&tools)).unwrap();
        let lenient = gbnf::max_bytes(&call_grammar_for(&tools, CallForm::Tagged)).unwrap();
        assert!(
            lenient > strict && lenient < strict + 200,
            "{strict} {lenient}"
        );
        assert!(!call_grammar(&tools).contains("parameters"));
    }
}
