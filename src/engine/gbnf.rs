//! The worst case of a GBNF grammar: the most bytes any sentence it accepts can have, and
//! so the most tokens a generation under it can take. Pure text work, no llama.cpp.
//!
//! Why bytes bound tokens: llama.cpp's grammar sampler masks every token whose piece is
//! empty, so each token it admits adds at least one byte to the output. A string of N
//! characters can be N tokens (`1.2.3.`: one token a character) and a character outside
//! ASCII can be one token per UTF-8 byte (byte-fallback pieces), so the bound counts the
//! UTF-8 length of the widest character a class admits, never "a word a token".
//!
//! The parser follows llama.cpp's `llama-grammar.cpp`: rules end at a newline outside
//! parentheses, `#` starts a comment, repetitions above 2000 are unbounded there too.

use std::collections::HashMap;

/// llama.cpp treats a larger `{m,n}` upper bound as "no limit".
const MAX_REPETITION: u64 = 2000;

/// Why a grammar has no finite worst case, or could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarBoundError {
    #[error("grammar syntax at byte {at}: {what}")]
    Syntax { at: usize, what: &'static str },
    #[error("grammar rule {0:?} is used but not defined")]
    Undefined(String),
    /// `*`, `+`, `{m,}` or recursion: the output has no length bound.
    #[error("grammar rule {0:?} has no length bound (*, +, {{m,}} or recursion)")]
    Unbounded(String),
}

/// Most UTF-8 bytes of any sentence of `grammar` (from rule `root`).
pub fn max_bytes(grammar: &str) -> Result<usize, GrammarBoundError> {
    let rules = Parser::new(grammar).rules()?;
    let mut eval = Eval {
        rules: &rules,
        memo: HashMap::new(),
        visiting: Vec::new(),
    };
    eval.rule("root")
}

/// The `max_tokens` a generation under `grammar` needs so that it always ends by the
/// grammar completing: one token per byte of the longest sentence, plus one step to
/// sample the end-of-generation token (the engine stops at `max_tokens` generated tokens
/// before it would sample again).
pub fn max_tokens(grammar: &str) -> Result<usize, GrammarBoundError> {
    max_bytes(grammar).map(|b| b + 1)
}

/// One item of a sequence and how often it may repeat (`None`: without limit).
#[derive(Debug)]
struct Term {
    item: Item,
    max_reps: Option<u64>,
}

#[derive(Debug)]
enum Item {
    Bytes(usize),
    Rule(String),
    Group(Alternatives),
}

type Alternatives = Vec<Vec<Term>>;

struct Parser<'g> {
    text: &'g str,
    pos: usize,
}

impl<'g> Parser<'g> {
    fn new(text: &'g str) -> Self {
        Self { text, pos: 0 }
    }

    fn err<T>(&self, what: &'static str) -> Result<T, GrammarBoundError> {
        Err(GrammarBoundError::Syntax { at: self.pos, what })
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_space(&mut self, newline_ok: bool) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\r' | '\n' if newline_ok => self.pos += 1,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\r' && c != '\n') {
                        self.bump();
                    }
                }
                _ => break,
            }
        }
    }

    fn name(&mut self) -> Result<String, GrammarBoundError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            self.pos += 1;
        }
        if self.pos == start {
            return self.err("expecting a rule name");
        }
        Ok(self.text[start..self.pos].to_string())
    }

    fn rules(mut self) -> Result<HashMap<String, Alternatives>, GrammarBoundError> {
        let mut rules = HashMap::new();
        self.skip_space(true);
        while self.peek().is_some() {
            let name = self.name()?;
            self.skip_space(false);
            if !self.text[self.pos..].starts_with("::=") {
                return self.err("expecting ::=");
            }
            self.pos += 3;
            self.skip_space(true);
            let body = self.alternatives(false)?;
            match self.peek() {
                None | Some('\r' | '\n') => {}
                Some(_) => return self.err("expecting a newline or the end"),
            }
            rules.insert(name, body);
            self.skip_space(true);
        }
        Ok(rules)
    }

    fn alternatives(&mut self, nested: bool) -> Result<Alternatives, GrammarBoundError> {
        let mut alts = vec![self.sequence(nested)?];
        while self.peek() == Some('|') {
            self.pos += 1;
            self.skip_space(true);
            alts.push(self.sequence(nested)?);
        }
        Ok(alts)
    }

    fn sequence(&mut self, nested: bool) -> Result<Vec<Term>, GrammarBoundError> {
        let mut seq: Vec<Term> = Vec::new();
        while let Some(c) = self.peek() {
            let item = match c {
                '"' => Item::Bytes(self.literal()?),
                '[' => Item::Bytes(self.class()?),
                '.' => {
                    self.pos += 1;
                    Item::Bytes(4)
                }
                '(' => {
                    self.pos += 1;
                    self.skip_space(true);
                    let alts = self.alternatives(true)?;
                    if self.bump() != Some(')') {
                        return self.err("expecting )");
                    }
                    Item::Group(alts)
                }
                '<' | '!' => return self.err("token references are not supported"),
                c if c.is_ascii_alphanumeric() || c == '-' => Item::Rule(self.name()?),
                '*' | '+' | '?' | '{' => {
                    let reps = self.repetition()?;
                    let Some(last) = seq.last_mut() else {
                        return self.err("a repetition needs an item before it");
                    };
                    last.max_reps = last.max_reps.zip(reps).map(|(a, b)| a.saturating_mul(b));
                    self.skip_space(nested);
                    continue;
                }
                _ => break,
            };
            seq.push(Term {
                item,
                max_reps: Some(1),
            });
            self.skip_space(nested);
        }
        Ok(seq)
    }

    /// The upper bound of `*`, `+`, `?`, `{m}`, `{m,}` or `{m,n}`.
    fn repetition(&mut self) -> Result<Option<u64>, GrammarBoundError> {
        match self.bump() {
            Some('*' | '+') => return Ok(None),
            Some('?') => return Ok(Some(1)),
            _ => {}
        }
        self.skip_space(true);
        let min = self.int()?;
        self.skip_space(true);
        let max = match self.bump() {
            Some('}') => Some(min),
            Some(',') => {
                self.skip_space(true);
                let max = if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    Some(self.int()?)
                } else {
                    None
                };
                self.skip_space(true);
                if self.bump() != Some('}') {
                    return self.err("expecting }");
                }
                max
            }
            _ => return self.err("expecting , or }"),
        };
        Ok(max.filter(|&m| m <= MAX_REPETITION))
    }

    fn int(&mut self) -> Result<u64, GrammarBoundError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        match self.text[start..self.pos].parse() {
            Ok(n) => Ok(n),
            Err(_) => self.err("expecting an integer"),
        }
    }

    /// UTF-8 length of a `"…"` literal.
    fn literal(&mut self) -> Result<usize, GrammarBoundError> {
        self.pos += 1;
        let mut bytes = 0;
        loop {
            match self.peek() {
                None => return self.err("unterminated literal"),
                Some('"') => {
                    self.pos += 1;
                    return Ok(bytes);
                }
                Some(_) => bytes += utf8_len(self.char()?),
            }
        }
    }

    /// UTF-8 length of the widest character a `[…]` class admits.
    fn class(&mut self) -> Result<usize, GrammarBoundError> {
        self.pos += 1;
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut widest = 0;
        loop {
            match self.peek() {
                None => return self.err("unterminated character class"),
                Some(']') => {
                    self.pos += 1;
                    // A negated class admits every character it does not list, up to U+10FFFF.
                    return Ok(if negated { 4 } else { widest });
                }
                Some(_) => {
                    let mut c = self.char()?;
                    let rest = &self.text[self.pos..];
                    if rest.starts_with('-') && !rest.starts_with("-]") {
                        self.pos += 1;
                        c = self.char()?;
                    }
                    widest = widest.max(utf8_len(c));
                }
            }
        }
    }

    /// One character of a literal or class, escapes decoded (as a code point).
    fn char(&mut self) -> Result<u32, GrammarBoundError> {
        match self.bump() {
            None => self.err("unexpected end"),
            Some('\\') => match self.bump() {
                Some('x') => self.hex(2),
                Some('u') => self.hex(4),
                Some('U') => self.hex(8),
                Some('t') => Ok(0x09),
                Some('r') => Ok(0x0D),
                Some('n') => Ok(0x0A),
                Some(c @ ('\\' | '"' | '[' | ']' | '-')) => Ok(u32::from(c)),
                _ => self.err("unknown escape"),
            },
            Some(c) => Ok(u32::from(c)),
        }
    }

    fn hex(&mut self, digits: usize) -> Result<u32, GrammarBoundError> {
        let end = self.pos + digits;
        let Some(Ok(v)) = self
            .text
            .get(self.pos..end)
            .map(|h| u32::from_str_radix(h, 16))
        else {
            return self.err("expecting hex digits");
        };
        self.pos = end;
        Ok(v)
    }
}

/// Bytes of `code_point` in UTF-8 (what llama.cpp matches it against).
fn utf8_len(code_point: u32) -> usize {
    match code_point {
        0..=0x7F => 1,
        0x80..=0x7FF => 2,
        0x800..=0xFFFF => 3,
        _ => 4,
    }
}

struct Eval<'r> {
    rules: &'r HashMap<String, Alternatives>,
    memo: HashMap<String, usize>,
    visiting: Vec<String>,
}

impl Eval<'_> {
    fn rule(&mut self, name: &str) -> Result<usize, GrammarBoundError> {
        if let Some(&b) = self.memo.get(name) {
            return Ok(b);
        }
        if self.visiting.iter().any(|v| v == name) {
            return Err(GrammarBoundError::Unbounded(name.to_string()));
        }
        let body = self
            .rules
            .get(name)
            .ok_or_else(|| GrammarBoundError::Undefined(name.to_string()))?;
        self.visiting.push(name.to_string());
        let bytes = self.alternatives(body, name);
        self.visiting.pop();
        let bytes = bytes?;
        self.memo.insert(name.to_string(), bytes);
        Ok(bytes)
    }

    fn alternatives(
        &mut self,
        alts: &Alternatives,
        rule: &str,
    ) -> Result<usize, GrammarBoundError> {
        let mut widest = 0;
        for seq in alts {
            let mut sum: usize = 0;
            for term in seq {
                let one = match &term.item {
                    Item::Bytes(b) => *b,
                    Item::Rule(name) => self.rule(name)?,
                    Item::Group(inner) => self.alternatives(inner, rule)?,
                };
                let unbounded = || GrammarBoundError::Unbounded(rule.to_string());
                let all = match term.max_reps {
                    _ if one == 0 => 0,
                    None => return Err(unbounded()),
                    Some(n) => usize::try_from(n)
                        .ok()
                        .and_then(|n| n.checked_mul(one))
                        .ok_or_else(unbounded)?,
                };
                sum = sum.checked_add(all).ok_or_else(unbounded)?;
            }
            widest = widest.max(sum);
        }
        Ok(widest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_case_bytes_table() {
        let cases: &[(&str, usize)] = &[
            ("root ::= \"abc\"", 3),
            ("root ::= \"a\" | \"bcd\"", 3),
            ("root ::= [a-z]{0,5}", 5),
            ("root ::= [a-z]{3}", 3),
            ("root ::= [a-z]?", 1),
            // A negated class admits any character: 4 UTF-8 bytes, 4 byte tokens.
            ("root ::= [^\"]{2}", 8),
            ("root ::= .", 4),
            ("root ::= \"é\"", 2),
            ("root ::= [a-\\u00ff]", 2),
            ("root ::= \"\\x41\\u20ac\\\"\"", 1 + 3 + 1),
            ("root ::= \"\\\"\" x \"\\\"\"\nx ::= [0-9]?", 3),
            ("root ::= ( \"ab\" | \"c\" ){1,3}", 6),
            ("root ::= (\n  \"a\"\n  | \"bb\"\n)", 2),
            ("# a comment\nroot ::= \"a\" # tail\n\n", 1),
            ("root ::= x x\nx ::= \"ab\" | y\ny ::= \"cde\"", 6),
            ("root ::= \"\" \"\"", 0),
            // The old tags grammar: `"""` is an empty literal then one running to the next quote.
            ("root ::= \"\"\" [a-z] \"\"\"", 7),
            ("root ::= \"a\"{0,2000}", 2000),
        ];
        for (grammar, want) in cases {
            assert_eq!(max_bytes(grammar), Ok(*want), "{grammar}");
            assert_eq!(max_tokens(grammar), Ok(*want + 1), "{grammar}");
        }
    }

    #[test]
    fn unbounded_and_broken_grammars_are_errors() {
        let unbounded: &[(&str, &str)] = &[
            ("root ::= \"a\"*", "root"),
            ("root ::= x\nx ::= [a-z]+", "x"),
            ("root ::= [a-z]{1,}", "root"),
            ("root ::= \"a\"{0,2001}", "root"),
            ("root ::= x\nx ::= \"x\" x | \"\"", "x"),
        ];
        for (grammar, rule) in unbounded {
            assert_eq!(
                max_bytes(grammar),
                Err(GrammarBoundError::Unbounded(rule.to_string())),
                "{grammar}"
            );
        }
        assert_eq!(
            max_bytes("root ::= x"),
            Err(GrammarBoundError::Undefined("x".into()))
        );
        assert_eq!(
            max_bytes("other ::= \"a\""),
            Err(GrammarBoundError::Undefined("root".into()))
        );
        for broken in [
            "root ::= \"abc",
            "root = \"a\"",
            "root ::= [a-z",
            "root ::= (\"a\"",
            "root ::= *",
            "root ::= \"\\q\"",
            "root ::= <[12]>",
        ] {
            assert!(
                matches!(max_bytes(broken), Err(GrammarBoundError::Syntax { .. })),
                "{broken}"
            );
        }
    }
}
