//! The GBNF grammar for a tool call, built from the registry: after `<tool_call>` the
//! model can only write `{"name": "<a registered tool>", "arguments": {…}}</tool_call>`
//! with arguments that match that tool's schema. Whitespace is limited to one space and
//! every string and list is length-bounded, so a call always ends.

use super::{Param, ParamKind, ToolInfo, CALL_CLOSER};

/// The grammar text (root rule `root`) for calls to `tools`.
pub fn call_grammar(tools: &[ToolInfo]) -> String {
    let mut rules = vec![
        format!("root ::= \"{{\" ws \"\\\"name\\\"\" ws \":\" ws call ws \"}}\" \"{CALL_CLOSER}\""),
        "ws ::= \" \"?".to_string(),
        "char ::= [^\"\\\\\\x00-\\x1f] | \"\\\\\" [\"\\\\/nt]".to_string(),
        "int ::= \"-\"? [0-9]{1,9}".to_string(),
    ];
    let alternatives: Vec<String> = tools
        .iter()
        .map(|t| format!("call-{}", rule_name(t.name)))
        .collect();
    rules.push(format!("call ::= {}", alternatives.join(" | ")));
    for tool in tools {
        rules.extend(tool_rules(tool));
    }
    rules.join("\n") + "\n"
}

fn rule_name(name: &str) -> String {
    name.replace('_', "-")
}

fn tool_rules(tool: &ToolInfo) -> Vec<String> {
    let base = rule_name(tool.name);
    let mut rules = vec![format!(
        "call-{base} ::= \"\\\"{}\\\"\" ws \",\" ws \"\\\"arguments\\\"\" ws \":\" ws args-{base}",
        tool.name
    )];
    let mut kvs = Vec::new();
    for p in &tool.params {
        let value_rule = format!("v-{base}-{}", rule_name(p.name));
        rules.push(format!("{value_rule} ::= {}", value_rule_body(p)));
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

fn value_rule_body(p: &Param) -> String {
    match p.kind {
        ParamKind::Str { max_len } => format!("\"\\\"\" char{{0,{max_len}}} \"\\\"\""),
        ParamKind::Int { .. } => "int".into(),
        ParamKind::StrList { max_items, max_len } => {
            let item = format!("\"\\\"\" char{{0,{max_len}}} \"\\\"\"");
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
