//! Code by definition: a unit per definition at the file's outer level with its doc
//! comment and attributes; a long class or impl cut at the definitions inside it; a long
//! type with none inside (a struct of options, an interface of settings) cut at its
//! documented members. Pure: lines in, units out.

use super::chunk::{units_at, Unit, MAX_LINES};
use super::terms::defined_names;

/// Test blocks that open a unit as a definition does (`describe('x', …)`, `it('…')`).
const TEST_OPENERS: &[&str] = &["describe(", "it(", "test("];

/// Modifiers that may stand before a definer.
const MODIFIERS: &[&str] = &[
    "pub",
    "pub(crate)",
    "pub(super)",
    "export",
    "default",
    "async",
    "unsafe",
    "public",
    "private",
    "protected",
    "static",
    "final",
    "abstract",
    "extern",
    "inline",
    "override",
    "open",
    "data",
    "sealed",
    "internal",
    "suspend",
    "declare",
];

/// Whether `line` opens a definition: a definer after modifiers, or a C-style function
/// head (`int name(...)` at the margin with no `;`).
pub fn is_definition(line: &str) -> bool {
    let t = line.trim_start();
    let mut words = t.split_whitespace().peekable();
    while words.peek().is_some_and(|w| MODIFIERS.contains(w)) {
        words.next();
    }
    let Some(word) = words.next() else {
        return false;
    };
    // A definer (`fn`, `class`, `typedef`; not `let` or `var`: a statement at the margin).
    let definer = super::terms::NAMERS.contains(&word) && !matches!(word, "let" | "var");
    if definer || word == "macro_rules!" || TEST_OPENERS.iter().any(|d| word.starts_with(d)) {
        return true;
    }
    // A function given a name by assignment at the margin (`app.use = function use(fn) {`,
    // `exports.etag = function`, `const parse = (s) => {`).
    let assigned = t.contains("= function")
        || t.contains("= async function")
        || (t.contains(" = (") && t.contains(") => {"));
    if line == t && assigned {
        return true;
    }
    // `name: function` is left to the windows; a C function
    // head has a type, a name and a parenthesis, and is not a statement. The type may be
    // wrapped in an export macro (`CJSON_PUBLIC(cJSON *) cJSON_Parse(…)`).
    let unwrapped = super::terms::without_export_macro(t);
    let wrapped = unwrapped.len() < t.len();
    line == t
        && t.contains('(')
        && !t.ends_with(';')
        && !t.starts_with(['#', '/', '*', '}', '{'])
        && unwrapped.split('(').next().is_some_and(|h| {
            let w: Vec<&str> = h.split_whitespace().collect();
            (w.len() >= 2 || (wrapped && w.len() == 1))
                && w.iter().all(|x| {
                    x.chars()
                        .all(|c| c.is_alphanumeric() || "_*&:<>,".contains(c))
                })
        })
}

/// Whether `line` belongs to the definition below it (a doc comment, an attribute, a
/// decorator).
fn is_preamble(line: &str) -> bool {
    let t = line.trim_start();
    ["///", "//", "#[", "@", "/**", "*", "# "]
        .iter()
        .any(|p| t.starts_with(p))
        || t == "#"
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Code: a unit per definition at the file's outer level; a unit longer than
/// [`MAX_LINES`] is cut at the definitions inside it (methods of a class or an impl).
pub(super) fn code_units(lines: &[&str]) -> Vec<Unit> {
    let defs: Vec<usize> = (0..lines.len())
        .filter(|&i| is_definition(lines[i]))
        .collect();
    let Some(outer) = defs.iter().map(|&i| indent(lines[i])).min() else {
        return vec![Unit::plain(0, lines.len())];
    };
    let starts = |level: usize, from: usize, to: usize| -> Vec<(usize, String, String)> {
        defs.iter()
            .filter(|&&i| i >= from && i < to && indent(lines[i]) == level)
            .map(|&i| {
                let mut start = i;
                while start > from && is_preamble(lines[start - 1]) {
                    start -= 1;
                }
                let head = lines[i].trim().to_string();
                (start, head.clone(), defined_names(&head).join(" "))
            })
            .collect()
    };
    let mut out = Vec::new();
    for unit in units_at(lines, &starts(outer, 0, lines.len())) {
        if unit.end - unit.start <= MAX_LINES || unit.heading.is_empty() {
            out.push(unit);
            continue;
        }
        let inner_level = defs
            .iter()
            .filter(|&&i| i > unit.start && i < unit.end)
            .map(|&i| indent(lines[i]))
            .filter(|&l| l > outer)
            .min();
        let Some(level) = inner_level else {
            out.extend(member_units(lines, unit));
            continue;
        };
        let inner = starts(level, unit.start + 1, unit.end);
        let Some(first_inner) = inner.first().map(|s| s.0) else {
            out.push(unit);
            continue;
        };
        out.push(Unit {
            start: unit.start,
            end: first_inner,
            heading: unit.heading.clone(),
            names: unit.names.clone(),
        });
        for (i, (start, head, names)) in inner.iter().enumerate() {
            let end = inner.get(i + 1).map_or(unit.end, |s| s.0);
            out.push(Unit {
                start: *start,
                end,
                heading: format!("{} > {head}", unit.heading),
                names: format!("{} {names}", unit.names),
            });
        }
    }
    out
}

/// The words that open a type whose body lists members (fields, options, variants).
const TYPE_DEFINERS: &[&str] = &[
    "struct",
    "class",
    "interface",
    "type",
    "enum",
    "record",
    "trait",
    "union",
    "object",
];

/// A long type with no definitions inside (a struct of options, an interface of
/// settings) cut at its documented members: each member with the comment above it is a
/// unit named by the member, so "what does --plain do?" finds the field `plain` and its
/// doc comment, not a 40-line window of its neighbours. Any other unit is left whole.
fn member_units(lines: &[&str], unit: Unit) -> Vec<Unit> {
    let head = lines[unit.start..unit.end]
        .iter()
        .position(|l| !is_preamble(l))
        .map_or(unit.start, |i| unit.start + i);
    if !opens_type(lines[head]) {
        return vec![unit];
    }
    let inner = indent(lines[head]);
    let starts: Vec<usize> = (head + 1..unit.end)
        .filter(|&i| {
            let doc = lines[i].trim_start();
            indent(lines[i]) > inner
                && (doc.starts_with("//") || doc.starts_with("/**"))
                && !is_preamble(lines[i - 1])
        })
        .collect();
    let Some(&first) = starts.first() else {
        return vec![unit];
    };
    let mut out = vec![Unit {
        start: unit.start,
        end: first,
        heading: unit.heading.clone(),
        names: unit.names.clone(),
    }];
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(unit.end);
        let member = member_line(&lines[start..end]);
        let name = member_name(member);
        out.push(Unit {
            start,
            end,
            heading: format!("{} > {member}", unit.heading),
            names: format!("{} {name}", unit.names).trim().to_string(),
        });
    }
    out
}

/// The declaration of a member unit: the first line after its comments and attributes
/// (an attribute may span lines: `#[arg(` … `)]`, `@Option(` … `)`).
fn member_line<'a>(lines: &[&'a str]) -> &'a str {
    let mut depth = 0i32;
    for line in lines {
        let t = line.trim();
        let opens_attribute = t.starts_with("#[") || t.starts_with('@');
        if depth > 0 || opens_attribute {
            depth += t.matches(['(', '[', '{']).count() as i32;
            depth -= t.matches([')', ']', '}']).count() as i32;
            continue;
        }
        if !t.is_empty() && !is_preamble(t) {
            return t;
        }
    }
    ""
}

/// Whether `line` opens a type (after its modifiers): `pub struct Opt {`,
/// `type TextFormatter struct {`, `export interface Options {`.
fn opens_type(line: &str) -> bool {
    let mut words = line
        .split_whitespace()
        .skip_while(|w| MODIFIERS.contains(w));
    words.next().is_some_and(|w| TYPE_DEFINERS.contains(&w))
}

/// The name a member line declares: `plain: bool,` and `throttle?: number;` → the word
/// before the colon; `int maxDepth = 1000;` → the word before `=` or `;`; Go's
/// `ForceColors bool` → the first word. Empty when the line names nothing.
fn member_name(line: &str) -> String {
    let words: Vec<&str> = line
        .split_whitespace()
        .skip_while(|w| MODIFIERS.contains(w) || *w == "readonly")
        .collect();
    let rest = words.join(" ");
    let is_name = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_');
    let ends = rest.find(['=', ';', '(']);
    let typed = rest
        .find(':')
        .filter(|c| ends.is_none_or(|e| *c < e))
        .map(|c| rest[..c].trim().trim_end_matches('?').to_string());
    let name = match (typed.filter(|t| is_name(t)), ends) {
        (Some(typed), _) => typed,
        (None, Some(end)) => rest[..end]
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_string(),
        (None, None) => words.first().map_or(String::new(), |w| w.to_string()),
    };
    let name = name.trim_matches(|c| c == '"' || c == '\'').to_string();
    if is_name(&name) {
        name
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::super::chunk::chunks;
    use super::super::chunk::tests::headings;
    use super::*;

    #[test]
    fn rust_is_cut_by_definition_with_its_doc_comment() {
        let src = "use std::io;\n\n/// Parses args.\n#[inline]\npub fn parse_args() {\n    x();\n}\n\npub struct RetryPolicy {\n    n: u32,\n}\n";
        let c = chunks("src/lib.rs", src);
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!(
            (c[1].first, c[1].heading.as_str()),
            (3, "pub fn parse_args() {")
        );
        assert!(c[1].text.starts_with("/// Parses args."));
        assert_eq!(c[1].names, "parse_args");
        assert_eq!(c[2].names, "RetryPolicy");
    }

    #[test]
    fn a_long_class_is_cut_at_its_methods() {
        let mut src = String::from("class Signer:\n    \"\"\"Signs.\"\"\"\n");
        for m in ["sign", "verify", "unsign"] {
            src.push_str(&format!("    def {m}(self):\n"));
            for i in 0..20 {
                src.push_str(&format!("        x{i} = 1\n"));
            }
        }
        let h = headings("signer.py", &src);
        assert_eq!(h[0], (1, 2, "class Signer:".into()));
        assert_eq!(h[1].2, "class Signer: > def sign(self):");
        assert_eq!(h.len(), 4, "{h:?}");
    }

    #[test]
    fn c_functions_are_definitions() {
        let src = "#include <x.h>\n\nstatic int helper(int a)\n{\n  return a;\n}\n\nCJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value)\n{\n}\n";
        let h = headings("cJSON.c", src);
        assert_eq!(h[1].2, "static int helper(int a)", "{h:?}");
        assert_eq!(
            h[2].2, "CJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value)",
            "{h:?}"
        );
        for (head, name) in [
            (
                "CJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value)",
                "cJSON_Parse",
            ),
            (
                "static void * CJSON_CDECL internal_malloc(size_t size)",
                "internal_malloc",
            ),
            ("static int helper(int a)", "helper"),
            ("static MAX: usize = max(1, 2);", "MAX"),
            ("const parse = (s) => {", "parse"),
        ] {
            assert_eq!(super::super::terms::defined_names(head), [name], "{head}");
        }
        // A macro call alone, or an anonymous struct, defines no name.
        assert!(!is_definition("TEST_ASSERT_TRUE(x);"));
        assert!(super::super::terms::defined_names("typedef struct {").is_empty());
    }

    /// A struct of 16 documented fields, the given attribute lines above each.
    fn long_struct(head: &str, attribute: &[&str], field: impl Fn(usize) -> String) -> String {
        let mut src = format!("{head}\n");
        for i in 0..16 {
            src.push_str(&format!("    /// What field {i} does.\n"));
            for a in attribute {
                src.push_str(&format!("    {a}\n"));
            }
            src.push_str(&format!("    {},\n\n", field(i)));
        }
        src.push_str("}\n");
        src
    }

    #[test]
    fn a_long_struct_is_cut_at_its_documented_fields() {
        let src = long_struct(
            "pub struct Opt {",
            &["#[arg(", "    long,", "    default_value_t,", ")]"],
            |i| format!("pub field_{i}: bool"),
        );
        let c = chunks("src/main.rs", &src);
        assert_eq!(c.len(), 17, "the head and one unit per field: {c:?}");
        let plain = &c[4];
        assert_eq!(plain.heading, "pub struct Opt { > pub field_3: bool,");
        assert!(plain.names.split(' ').any(|n| n == "field_3"), "{plain:?}");
        assert!(
            plain.text.starts_with("    /// What field 3 does."),
            "{plain:?}"
        );
        assert!(plain.text.contains("field_3: bool"), "{plain:?}");
    }

    #[test]
    fn go_struct_fields_and_typescript_options_are_members() {
        let go = long_struct("type TextFormatter struct {", &[], |i| {
            format!("Field{i} bool")
        })
        .replace("///", "//");
        let c = chunks("text_formatter.go", &go);
        assert_eq!(c.len(), 17, "{c:?}");
        assert!(c[1].names.ends_with("Field0"), "{:?}", c[1]);
        let ts = long_struct("export interface ConsolaOptions {", &[], |i| {
            format!("throttle{i}?: number")
        });
        let c = chunks("src/types.ts", &ts);
        assert!(c[16].names.ends_with("throttle15"), "{:?}", c[16]);
    }

    #[test]
    fn a_long_function_is_not_cut_at_its_comments() {
        let src = long_struct("fn run() {", &[], |i| format!("step({i})"));
        let c = chunks("src/run.rs", &src);
        assert!(c.iter().all(|c| c.heading == "fn run() {"), "{c:?}");
        assert_eq!(c.len(), 2, "windows of MAX_LINES: {c:?}");
    }

    #[test]
    fn a_member_line_names_what_it_declares() {
        for (line, name) in [
            ("plain: bool,", "plain"),
            ("pub(crate) level: Level,", "level"),
            ("throttle?: number;", "throttle"),
            ("readonly tag: string", "tag"),
            ("private int maxDepth = 1000;", "maxDepth"),
            ("public static final String NAME;", "NAME"),
            ("ForceColors bool", "ForceColors"),
            ("TimestampFormat string `json:\"ts\"`", "TimestampFormat"),
            ("\"quoted-key\": 1,", ""),
            ("", ""),
        ] {
            assert_eq!(member_name(line), name, "{line}");
        }
    }
}
