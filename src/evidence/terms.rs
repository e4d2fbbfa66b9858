//! Code-aware terms: what a chunk is found by, and what a question searches for.
//!
//! An identifier is kept whole (`MAX_RETRIES`, `--dry-run`, `parse_args`) and also split
//! into its words (`max retries`, `dry run`, `parse args`; `RetryPolicy` → `retry
//! policy`), so a question in plain words finds the name and a question that quotes the
//! name finds it exactly. The index's tokenizer keeps `_` and `-` inside a token (see
//! `storage::evidence`), so the whole form stays one term there. Pure: no I/O.

use crate::text::words::{american_spelling, name_words};

/// A compound token: letters, digits, `_` and `-` (a leading `--` included).
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|t| t.trim_end_matches('-'))
        .filter(|t| !t.trim_start_matches('-').is_empty())
}

/// Whether `token` is a compound name whose parts are worth indexing apart: it holds a
/// `_` or `-` between letters, or a lower-to-upper case change.
fn is_compound(token: &str) -> bool {
    let inner = token.trim_start_matches('-');
    inner.contains(['_', '-'])
        || inner
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// The compound names in `text` (`cJSON_SetBoolValue`, `max_retries`, `--dry-run`), in
/// order, with repeats.
pub fn compound_names(text: &str) -> Vec<String> {
    tokens(text)
        .filter(|t| is_compound(t) && t.len() > 3)
        .map(str::to_string)
        .collect()
}

/// The split forms of the compound names in `text`, each once, space-separated: appended
/// to a chunk's searchable text beside the text itself.
pub fn split_forms(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out = String::new();
    for token in tokens(text).filter(|t| is_compound(t)) {
        if !seen.insert(token) {
            continue;
        }
        for word in name_words(token) {
            out.push_str(&word);
            out.push(' ');
        }
    }
    out.trim_end().to_string()
}

/// Most terms one question searches for.
const MAX_QUERY_TERMS: usize = 16;

/// Words of a question that carry no topic in any project: the memory recall's
/// stopwords and the words every question about code is phrased in.
fn is_filler(word: &str) -> bool {
    const FILLER: &[&str] = &[
        "file",
        "files",
        "project",
        "repo",
        "repository",
        "code",
        "here",
        "used",
        "show",
        "find",
        "give",
        "say",
        "says",
        "mean",
        "means",
        "look",
        "happen",
        "happens",
        "set",
        "never",
        "first",
        "kind",
        "actually",
        "exactly",
        "currently",
        "checkout",
        "workspace",
        "defined",
        "define",
        "declared",
        "implemented",
        "implements",
        "located",
        "live",
        "lives",
        "kept",
    ];
    !crate::memory::query::is_topic(word) || FILLER.contains(&word)
}

/// Dotted tokens of a question kept whole: a version (`5.0.1`) or a member (`app.use`,
/// `res.redirect()`): searched as a phrase, so `5.0.1` is not the digits 5, 0 and 1
/// anywhere, and `use` counts though alone it is a stopword.
fn dotted(question: &str) -> Vec<String> {
    question
        .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_'))
        .map(|t| t.trim_matches('.'))
        .filter(|t| t.contains('.') && !t.contains("..") && t.len() > 2)
        .map(str::to_lowercase)
        .collect()
}

/// The stem of a dotted term named like a source file (`node.js` → `node`, `vue.js`):
/// a product named by its language. Settings files' names (`package.json`) stay whole.
fn file_stem(dotted: &str) -> Option<&str> {
    let (stem, _) = dotted.split_once('.')?;
    let named = dotted.matches('.').count() == 1
        && stem.len() > 2
        && stem.chars().all(|c| c.is_alphabetic())
        && super::chunk::kind_of(dotted) == super::chunk::Kind::Code;
    (named && !is_filler(stem)).then_some(stem)
}

/// The names a question writes as code (`cJSON`, `TimestampSigner`, `max_retries`,
/// `--dry-run`, `app.use`): its compound tokens and dotted members, lowercased.
pub fn code_names(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let members = dotted(question).into_iter().filter(|d| {
        d.split('.')
            .all(|p| p.starts_with(|c: char| c.is_alphabetic() || c == '_'))
    });
    for t in tokens(question)
        .filter(|t| is_compound(t))
        .map(|t| t.trim_start_matches('-').to_lowercase())
        .chain(members)
    {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// What a raising line starts with (`throw new TypeError('…')`, `raise ValueError("…")`,
/// `bail!("…")`, `errors.New("…")`): with a string literal after it on the line, the
/// literal is an error's message.
const RAISERS: &[&str] = &[
    "throw ",
    "raise ",
    "bail!(",
    "panic!(",
    "anyhow!(",
    "Err(",
    "errors.New(",
    "Errorf(",
    "Error(",
    "Exception(",
    "Fatal(",
    "Fatalf(",
    "die(",
];

/// Whether `text` raises an error with a message written out: such a unit is also found
/// as an `error message` (the question asks for "the error", the code says `bail!`).
pub fn raises_message(text: &str) -> bool {
    text.lines().any(|l| {
        RAISERS.iter().any(|r| {
            l.find(r)
                .is_some_and(|at| l[at + r.len()..].contains(['"', '\'', '`']))
        })
    })
}

/// The terms a question searches for: dotted versions and members whole, each compound
/// name whole and split, each other topic word once, in the question's order (so the
/// first terms survive the cap).
pub fn query_terms(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |t: String, out: &mut Vec<String>| {
        if !out.contains(&t) && out.len() < MAX_QUERY_TERMS {
            out.push(t);
        }
    };
    let whole = dotted(question);
    for d in &whole {
        push(d.clone(), &mut out);
    }
    // A product named like a source file (`node.js`) is also its stem: `engines.node`
    // answers a question about Node.js. A member or a version stays whole only.
    for d in &whole {
        if let Some(stem) = file_stem(d) {
            push(stem.to_string(), &mut out);
        }
    }
    let in_dotted = |w: &str| whole.iter().any(|d| d.split(['.', '_']).any(|p| p == w));
    for token in tokens(question) {
        if is_compound(token) {
            push(token.to_lowercase(), &mut out);
        }
        for word in name_words(token) {
            if !is_filler(&word) && !in_dotted(&word) {
                let twin = also_searched(&word);
                push(word, &mut out);
                if let Some(twin) = twin {
                    push(twin, &mut out);
                }
            }
        }
    }
    out
}

/// The form of `word` the index holds too, where its own does not meet it:
/// - code and its docs are mostly written in American spelling, so a question about the
///   "colour" column searches for "color" too;
/// - the index's Porter stemmer undoubles a consonant after a suffix, so "added" is stored
///   as `ad` while "Add colors to --help" holds `add`: a question about the commit that
///   "added" something searches for "add" too (`err`/"erred" alike).
fn also_searched(word: &str) -> Option<String> {
    match word {
        "added" | "adding" => Some("add".to_string()),
        "erred" | "erring" => Some("err".to_string()),
        _ => american_spelling(word),
    }
}

/// Words projects use for the same step of their life or the same part of their make-up,
/// each group one: a question in one word ("How do I cut a release?") finds the text in
/// another ("we deploy with ./deploy.sh"). Small on purpose: only what every project has,
/// whose words are interchangeable in its docs and its users' mouths.
const SAME_STEP: &[&[&str]] = &[
    &[
        "release",
        "releases",
        "deploy",
        "deploys",
        "deployment",
        "publish",
        "ship",
    ],
    &["install", "installation", "setup"],
    // What a project builds on: asked as the library or crate it uses, written down as
    // the manifest's dependencies (`[dependencies]`, `"devDependencies"`, `<dependency>`).
    &[
        "dependency",
        "dependencies",
        "library",
        "libraries",
        "crate",
        "crates",
    ],
    &["config", "configuration", "configure", "settings"],
];

/// The other words of the steps `terms` name ([`SAME_STEP`]), not already among them.
pub fn related(terms: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for group in SAME_STEP {
        if !terms.iter().any(|t| group.contains(&t.as_str())) {
            continue;
        }
        for w in group.iter().map(|w| w.to_string()) {
            if !terms.contains(&w) && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// The FTS5 query for `terms`: each quoted (so no operator or punctuation of the user's
/// reaches `MATCH`), OR-ed; `None` when nothing is left to search for.
pub fn fts_query(terms: &[String]) -> Option<String> {
    // A dotted term is a phrase of its parts (the index's tokenizer splits at dots).
    let quoted: Vec<String> = terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "").replace('.', " ")))
        .filter(|q| q.len() > 2)
        .collect();
    (!quoted.is_empty()).then(|| quoted.join(" OR "))
}

/// Words that open a definition in some language: not names of the project's own.
const KEYWORDS: &[&str] = &[
    "pub",
    "crate",
    "fn",
    "struct",
    "enum",
    "impl",
    "trait",
    "type",
    "mod",
    "const",
    "static",
    "let",
    "mut",
    "async",
    "def",
    "class",
    "func",
    "function",
    "export",
    "default",
    "var",
    "interface",
    "public",
    "private",
    "protected",
    "final",
    "abstract",
    "void",
    "int",
    "char",
    "unsigned",
    "extern",
    "inline",
    "module",
    "package",
    "self",
    "return",
    "for",
    "where",
];

/// Words after which a definition's own name follows (`fn NAME`, `typedef struct NAME`);
/// the chunker's definers too.
pub const NAMERS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "mod",
    "def",
    "class",
    "func",
    "function",
    "interface",
    "module",
    "const",
    "static",
    "object",
    "record",
    "typedef",
    "namespace",
    "impl",
    "let",
    "var",
];

/// The names a definition's first line defines (its `names` column, weighted above the
/// body): the word after a definer (`fn parse_args`, `class Signer`, `typedef struct
/// cJSON`, both types of `impl Display for Printer`), else the last word before the first
/// parenthesis (a C function's head); every name on the line when neither is found.
pub fn defined_names(line: &str) -> Vec<String> {
    let line = without_export_macro(line.trim_start());
    let mut out: Vec<String> = Vec::new();
    // A member given a function (`app.use = function use(fn) {`): the member whole first.
    if let Some((target, value)) = line.split_once(" = ") {
        let member = target.trim();
        let is_member = member.contains('.')
            && member
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$');
        if is_member && (value.starts_with("function") || value.contains("=>")) {
            out.push(member.to_string());
        }
    }
    // A Go method, `func (l *Logger) WithField(…)`: its name, then its receiver's type.
    if let Some((recv, after)) = line
        .trim_start()
        .strip_prefix("func (")
        .and_then(|r| r.split_once(')'))
    {
        out.extend(tokens(after).next().map(str::to_string));
        out.extend(tokens(recv).last().map(str::to_string));
        return out;
    }
    let words: Vec<&str> = tokens(line).collect();
    let add = |w: &str, out: &mut Vec<String>| {
        if !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    };
    // `static int helper(int a)`: in a C head a storage word stands before a type, and
    // the name is the last word before the parenthesis (`static void * CJSON_CDECL
    // internal_malloc(…)` defines `internal_malloc`, not the calling convention).
    let c_head = line
        .split('(')
        .next()
        .filter(|h| line.contains('(') && !h.contains(['=', ':']))
        .is_some();
    for (i, w) in words.iter().enumerate() {
        if NAMERS.contains(w) && !(c_head && matches!(*w, "static" | "const")) {
            let next = words[i + 1..]
                .iter()
                .find(|n| !KEYWORDS.contains(n) && !NAMERS.contains(n));
            if let Some(next) = next {
                add(next, &mut out);
            }
        }
    }
    if let Some((_, target)) = line
        .trim_start()
        .strip_prefix("impl")
        .and_then(|l| l.split_once(" for "))
    {
        if let Some(t) = tokens(target).next() {
            add(t, &mut out);
        }
    }
    if out.is_empty() && line.contains('(') {
        let head = line.split('(').next().unwrap_or("");
        if let Some(name) = tokens(head).last().filter(|n| !KEYWORDS.contains(n)) {
            add(name, &mut out);
        }
    }
    if out.is_empty() {
        return names_in(line);
    }
    out
}

/// `line` without the export macro a C library wraps its functions' return type in
/// (`CJSON_PUBLIC(const char *) cJSON_Version(void)` is read as `cJSON_Version(void)`):
/// an upper-case name and its parenthesis, where a head with its own parenthesis follows.
pub fn without_export_macro(line: &str) -> &str {
    let name_len = line
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(line.len());
    if name_len < 2 || !line[name_len..].starts_with('(') {
        return line;
    }
    let mut depth = 0;
    for (i, c) in line.char_indices().skip(name_len) {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            let rest = line[i + 1..].trim_start();
            return if rest.contains('(') && !rest.starts_with(['(', ';']) {
                rest
            } else {
                line
            };
        }
    }
    line
}

/// Every name on a line but the language's keywords and definers.
pub fn names_in(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tokens(line).filter(|t| t.len() > 1 && !t.starts_with('-')) {
        if !KEYWORDS.contains(&t) && !NAMERS.contains(&t) && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_split_on_case_underscore_and_dash() {
        assert_eq!(split_forms("let MAX_RETRIES = 3;"), "max retries");
        assert_eq!(split_forms("RetryPolicy::new()"), "retry policy");
        assert_eq!(split_forms("pass --dry-run here"), "dry run");
        assert_eq!(
            split_forms("APP_LOG_LEVEL and parse_args"),
            "app log level parse args"
        );
        assert_eq!(split_forms("plain words only"), "");
    }

    #[test]
    fn a_question_searches_names_whole_and_split() {
        let t = query_terms("What does the --dry-run flag do?");
        assert!(t.contains(&"--dry-run".to_string()), "{t:?}");
        assert!(t.contains(&"dry".to_string()) && t.contains(&"run".to_string()));
        assert!(t.contains(&"flag".to_string()));
        assert!(!t.contains(&"the".to_string()) && !t.contains(&"what".to_string()));
        let t = query_terms("Where is RetryPolicy defined?");
        assert_eq!(t, ["retrypolicy", "retry", "policy"]);
        let t = query_terms("which env var sets APP_LOG_LEVEL");
        assert!(t.contains(&"app_log_level".to_string()), "{t:?}");
    }

    #[test]
    fn versions_and_members_are_searched_whole() {
        let t = query_terms("When was Express 5.0.1 released?");
        assert_eq!(t[0], "5.0.1");
        assert!(
            !t.contains(&"5".to_string()) && !t.contains(&"1".to_string()),
            "{t:?}"
        );
        let t = query_terms("What error do I get if I call app.use() without a function?");
        assert_eq!(t[0], "app.use");
        assert!(!t.contains(&"app".to_string()), "{t:?}");
        let t = query_terms("What is the minimum Node.js version?");
        assert_eq!(t[..2], ["node.js", "node"], "{t:?}");
        let t = query_terms("Which key of package.json names the entry point?");
        assert!(t.contains(&"package.json".to_string()), "{t:?}");
        assert!(!t.contains(&"package".to_string()), "{t:?}");
        assert_eq!(fts_query(&["5.0.1".into()]).unwrap(), "\"5 0 1\"");
    }

    #[test]
    fn british_words_and_undoubled_stems_are_searched_in_the_index_s_form_too() {
        let t = query_terms("Which variable changes the colour of the offset column?");
        let at = t.iter().position(|w| w == "colour").unwrap();
        assert_eq!(t[at + 1], "color", "{t:?}");
        let t = query_terms("Which file holds the licence?");
        assert!(t.contains(&"license".to_string()), "{t:?}");
        // The stemmer keeps "add" and stores "added" as `ad`: both are searched.
        let t = query_terms("Which commit added colours to the help output?");
        assert!(
            t.contains(&"added".to_string()) && t.contains(&"add".to_string()),
            "{t:?}"
        );
    }

    #[test]
    fn punctuation_never_reaches_match() {
        let q = fts_query(&query_terms("what's \"retry\": (policy) ? b* OR c")).unwrap();
        assert!(
            !q.contains('?') && !q.contains('(') && !q.contains('*'),
            "{q}"
        );
        assert_eq!(fts_query(&query_terms("what is the?")), None);
    }

    #[test]
    fn a_definition_names_what_it_defines() {
        assert_eq!(
            defined_names("pub fn parse_args(x: u32) -> Args {"),
            ["parse_args"]
        );
        assert_eq!(defined_names("typedef struct cJSON"), ["cJSON"]);
        assert_eq!(defined_names("class Signer(object):"), ["Signer"]);
        assert_eq!(
            defined_names("impl fmt::Display for Printer {"),
            ["fmt", "Printer"]
        );
        assert_eq!(defined_names("static int helper(int a)"), ["helper"]);
        assert_eq!(
            defined_names("func (l *Logger) WithField(key string) *Entry {"),
            ["WithField", "Logger"]
        );
        assert_eq!(
            defined_names("app.use = function use(fn) {"),
            ["app.use", "use"]
        );
        assert_eq!(defined_names("exports.etag = function"), ["exports.etag"]);
    }

    #[test]
    fn names_written_as_code_are_told_from_words_and_versions() {
        assert_eq!(
            code_names("Why does app.use() in version 5.0.1 reject a TimestampSigner or max_age?"),
            ["timestampsigner", "max_age", "app.use"]
        );
        assert!(code_names("Which file holds the license?").is_empty());
    }

    #[test]
    fn a_raising_line_with_its_text_is_an_error_message() {
        for raising in [
            "    throw new TypeError('app.use() requires a middleware function')",
            "        raise BadSignature(\"Signature does not match\")",
            "        bail!(\"'{}' is a directory.\", name);",
            "\treturn errors.New(\"logrus: no hook\")",
        ] {
            assert!(raises_message(raising), "{raising}");
        }
        for plain in ["    throw err;", "raise", "let error = 'x';", "Err(e) => {"] {
            assert!(!raises_message(plain), "{plain}");
        }
    }

    #[test]
    fn a_long_question_is_capped() {
        let long: String = (0..100).map(|i| format!("word{i} ")).collect();
        assert_eq!(query_terms(&long).len(), MAX_QUERY_TERMS);
    }
}
