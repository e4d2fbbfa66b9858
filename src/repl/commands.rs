//! The slash-command table and the line parser.
//!
//! One table drives `/help`, tab completion and parsing; the dispatcher matches the
//! [`CommandKind`] exhaustively, so adding a command without a handler does not compile.

/// Which command a table row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    Help,
    Status,
    Clear,
    Tools,
    Memory,
    Rag,
    Kb,
    Context,
    Read,
    Attach,
    Compact,
    Session,
    Rename,
    Think,
    Model,
    Run,
    Git,
    Safemode,
    Audit,
    Write,
    Skill,
    Exit,
}

/// One row of the command table.
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    pub kind: CommandKind,
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub usage: &'static str,
    pub help: &'static str,
}

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        kind: CommandKind::Help,
        name: "help",
        aliases: &["?"],
        usage: "/help",
        help: "list commands and how to enter multi-line text",
    },
    CommandSpec {
        kind: CommandKind::Status,
        name: "status",
        aliases: &[],
        usage: "/status",
        help: "model, context size, threads, context used, last turn's speed",
    },
    CommandSpec {
        kind: CommandKind::Clear,
        name: "clear",
        aliases: &[],
        usage: "/clear",
        help: "start a new conversation (the system prompt and the pinned context stay, cached)",
    },
    CommandSpec {
        kind: CommandKind::Tools,
        name: "tools",
        aliases: &[],
        usage: "/tools [on|off]",
        help: "list the tools the model can call, or turn tool use on/off",
    },
    CommandSpec {
        kind: CommandKind::Memory,
        name: "memory",
        aliases: &[],
        usage: "/memory …",
        help: "memories: list [--type T] [--kind K] | show ID | add TYPE TEXT | edit ID | forget ID | flag ID | recall QUERY | index | status",
    },
    CommandSpec {
        kind: CommandKind::Rag,
        name: "rag",
        aliases: &[],
        usage: "/rag …",
        help: "document stores for recall: new NAME | use NAME… | list | status | on | off | drop NAME | import NAME (a Go harvey store) | ingest PATH… | query TEXT | prune",
    },
    CommandSpec {
        kind: CommandKind::Kb,
        name: "kb",
        aliases: &[],
        usage: "/kb …",
        help: "knowledge base: status | project list|add|use | observe [KIND] TEXT | concept list|add | link OBS_ID CONCEPT | search TERMS | inject [PROJECT] | import (the Go harvey's)",
    },
    CommandSpec {
        kind: CommandKind::Context,
        name: "context",
        aliases: &[],
        usage: "/context …",
        help: "what the model sees, part by part in tokens | add TEXT | pin FILE (kept for the session, survives /clear) | clear (the pinned context) | memory (the injected [memory context])",
    },
    CommandSpec {
        kind: CommandKind::Read,
        name: "read",
        aliases: &[],
        usage: "/read FILE [START-END]…",
        help: "attach a workspace file's lines (a PDF's pages, via pdftotext) to your next message, if it fits the context",
    },
    CommandSpec {
        kind: CommandKind::Attach,
        name: "attach",
        aliases: &[],
        usage: "/attach FILE…",
        help: "attach whole workspace files (text or PDF) to your next message, if they fit the context",
    },
    CommandSpec {
        kind: CommandKind::Compact,
        name: "compact",
        aliases: &[],
        usage: "/compact [FOCUS]",
        help: "fold the conversation into a summary now (FOCUS: what the summary must keep); shows tokens before and after",
    },
    CommandSpec {
        kind: CommandKind::Session,
        name: "session",
        aliases: &[],
        usage: "/session …",
        help: "past sessions: list | show [FILE] | continue FILE | replay FILE",
    },
    CommandSpec {
        kind: CommandKind::Rename,
        name: "rename",
        aliases: &[],
        usage: "/rename NAME",
        help: "name this session (shown by /session list)",
    },
    CommandSpec {
        kind: CommandKind::Model,
        name: "model",
        aliases: &[],
        usage: "/model …",
        help: "models: list | show [NAME] | use NAME (free this model, load NAME, keep the conversation)",
    },
    CommandSpec {
        kind: CommandKind::Think,
        name: "think",
        aliases: &[],
        usage: "/think [show]",
        help: "show the last reply's <think> block (folded to one line while it streams)",
    },
    CommandSpec {
        kind: CommandKind::Run,
        name: "run",
        aliases: &[],
        usage: "/run PROG ARGS…",
        help: "run a program in the workspace (also !PROG ARGS…; no shell); its output goes with your next message",
    },
    CommandSpec {
        kind: CommandKind::Git,
        name: "git",
        aliases: &[],
        usage: "/git SUB ARGS…",
        help: "read-only git: status | diff | log | show | blame; its output goes with your next message",
    },
    CommandSpec {
        kind: CommandKind::Safemode,
        name: "safemode",
        aliases: &[],
        usage: "/safemode …",
        help: "which programs run without asking: status | on | off | allow PROG | deny PROG | reset (saved in agents/harvey.yaml)",
    },
    CommandSpec {
        kind: CommandKind::Audit,
        name: "audit",
        aliases: &[],
        usage: "/audit [N]",
        help: "the last N commands run or refused (agents/harvey-audit.jsonl)",
    },
    CommandSpec {
        kind: CommandKind::Write,
        name: "write",
        aliases: &[],
        usage: "/write PATH [--code]",
        help: "save the last reply (--code: its first ``` block) to a workspace file; asks before overwriting",
    },
    CommandSpec {
        kind: CommandKind::Skill,
        name: "skill",
        aliases: &[],
        usage: "/skill …",
        help: "your workflows in agents/skills/NAME/SKILL.md: list | show NAME | run NAME ARGS… (also /NAME ARGS…) | new | suggest [SESSION] (a draft from steps a session repeated)",
    },
    CommandSpec {
        kind: CommandKind::Exit,
        name: "exit",
        aliases: &["quit", "bye"],
        usage: "/exit",
        help: "leave harvey (Ctrl-D does the same)",
    },
];

/// What one line of input is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Empty,
    /// Text for the model.
    Text(String),
    Command {
        kind: CommandKind,
        args: String,
    },
    /// `/something` that is not in the table.
    Unknown(String),
}

/// Parses a (possibly multi-line) input. A line starting with `//` sends a literal `/`;
/// `!PROGRAM ARGS…` is `/run PROGRAM ARGS…` (`!!` sends a literal `!`).
pub fn parse(line: &str) -> Input {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Input::Empty;
    }
    if let Some(rest) = trimmed.strip_prefix("!!") {
        return Input::Text(format!("!{rest}"));
    }
    if let Some(rest) = trimmed.strip_prefix('!') {
        return Input::Command {
            kind: CommandKind::Run,
            args: rest.trim().to_string(),
        };
    }
    if let Some(rest) = trimmed.strip_prefix("//") {
        return Input::Text(format!("/{rest}"));
    }
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Input::Text(line.trim_end().to_string());
    };
    let (word, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    match find(word) {
        Some(spec) => Input::Command {
            kind: spec.kind,
            args: args.trim().to_string(),
        },
        None => Input::Unknown(word.to_string()),
    }
}

/// The table row named `word` (name or alias).
pub fn find(word: &str) -> Option<&'static CommandSpec> {
    COMMANDS
        .iter()
        .find(|c| c.name == word || c.aliases.contains(&word))
}

/// Command names (with `/`) that start with `prefix` (which includes the `/`).
pub fn complete(prefix: &str) -> Vec<String> {
    let Some(partial) = prefix.strip_prefix('/') else {
        return Vec::new();
    };
    COMMANDS
        .iter()
        .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
        .filter(|name| name.starts_with(partial))
        .map(|name| format!("/{name}"))
        .collect()
}

/// Joins continuation lines: a line ending in `\` continues on the next line, and
/// text between `"""` markers is taken as is.
pub fn join_multiline(raw: &str) -> String {
    if raw.contains("\"\"\"") {
        return raw.replace("\"\"\"", "").trim_matches('\n').to_string();
    }
    raw.lines()
        .map(|l| l.strip_suffix('\\').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the input so far needs more lines (for the line editor).
pub fn is_incomplete(raw: &str) -> bool {
    raw.ends_with('\\') || raw.matches("\"\"\"").count() % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        assert_eq!(parse("   "), Input::Empty);
        assert_eq!(parse("hello"), Input::Text("hello".into()));
        assert_eq!(parse("//etc/passwd"), Input::Text("/etc/passwd".into()));
        assert_eq!(
            parse("/bye"),
            Input::Command {
                kind: CommandKind::Exit,
                args: String::new()
            }
        );
        assert_eq!(
            parse("/quit"),
            Input::Command {
                kind: CommandKind::Exit,
                args: String::new()
            }
        );
        assert_eq!(
            parse("/status  now "),
            Input::Command {
                kind: CommandKind::Status,
                args: "now".into()
            }
        );
        assert_eq!(parse("/frobnicate x"), Input::Unknown("frobnicate".into()));
        assert_eq!(
            parse("!echo a; rm x"),
            Input::Command {
                kind: CommandKind::Run,
                args: "echo a; rm x".into()
            }
        );
        assert_eq!(parse("!!important"), Input::Text("!important".into()));
    }

    #[test]
    fn completion_uses_the_table() {
        assert_eq!(complete("/st"), vec!["/status"]);
        assert_eq!(complete("/q"), vec!["/quit"]);
        assert_eq!(complete("/com"), vec!["/compact"]);
        assert!(complete("/").len() >= COMMANDS.len());
        assert!(complete("st").is_empty());
    }

    #[test]
    fn multiline_forms() {
        assert!(is_incomplete("first line\\"));
        assert!(is_incomplete("\"\"\"\ncode"));
        assert!(!is_incomplete("\"\"\"\ncode\n\"\"\""));
        assert_eq!(join_multiline("a\\\nb"), "a\nb");
        assert_eq!(
            join_multiline("\"\"\"\nfn main() {}\n\n}\n\"\"\""),
            "fn main() {}\n\n}"
        );
    }
}
