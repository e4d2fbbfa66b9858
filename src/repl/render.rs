//! What the user sees, written to any `Write` so it can be snapshot-tested.

use std::io::{self, Write};

use super::commands::COMMANDS;
use crate::chat::agent::TurnEvent;
use crate::engine::{ModelInfo, TurnStats};
use crate::tools::ToolInfo;
// Tool events and diffs are drawn alike by the REPL and `harvey run` (term::events).
pub use crate::term::events::{diff, turn_event};

pub fn help(out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "Commands:")?;
    let width = COMMANDS.iter().map(|c| c.usage.len()).max().unwrap_or(10);
    for c in COMMANDS {
        let aliases = if c.aliases.is_empty() {
            String::new()
        } else {
            format!(
                " (also {})",
                c.aliases
                    .iter()
                    .map(|a| format!("/{a}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        writeln!(out, "  {:<width$}  {}{}", c.usage, c.help, aliases)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Multi-line input: end a line with \\ to continue it, or wrap text in \"\"\" … \"\"\"."
    )?;
    writeln!(
        out,
        "Start a line with // to send text that begins with /, !! for one that begins with !."
    )?;
    writeln!(
        out,
        "Ctrl-C stops a reply (or clears the line); Ctrl-D exits; Tab completes commands."
    )
}

/// Everything `/status` reports.
pub struct StatusView<'a> {
    pub info: &'a ModelInfo,
    pub context_used: usize,
    pub cached_tokens: usize,
    pub last_turn: Option<&'a TurnStats>,
    /// Where the last turn's time went (empty before any turn).
    pub steps: &'a [crate::chat::agent::Step],
    pub turns: usize,
    /// How the stable prompt prefix was set up (`/status` says if it came from cache).
    pub prefix: String,
    pub compressions: usize,
    /// SoC temperature and throttling, when the system exposes them.
    pub soc: Option<String>,
}

pub fn status(out: &mut impl Write, v: &StatusView<'_>) -> io::Result<()> {
    let i = v.info;
    writeln!(out, "model      {} ({})", i.name, i.path.display())?;
    writeln!(
        out,
        "           {} params, {}, trained context {}",
        human_count(i.n_params),
        human_bytes(i.file_bytes),
        i.n_ctx_train,
    )?;
    writeln!(
        out,
        "template   {} ({})",
        i.template_name, i.template_reason
    )?;
    writeln!(
        out,
        "context    {}/{} tokens used ({} in KV cache), n_batch {}",
        v.context_used, i.n_ctx, v.cached_tokens, i.n_batch
    )?;
    if i.kv_bytes > 0 {
        writeln!(
            out,
            "KV cache   {} ({}; engine.kv_cache_type)",
            human_bytes(i.kv_bytes),
            i.kv_type
        )?;
    }
    writeln!(
        out,
        "threads    {} decode, {} prefill",
        i.threads, i.threads_batch
    )?;
    writeln!(out, "loaded in  {} ms", i.load_time.as_millis())?;
    if let Some(soc) = &v.soc {
        writeln!(out, "soc        {soc}")?;
    }
    writeln!(out, "prefix     {}", v.prefix)?;
    writeln!(
        out,
        "summaries  {} compression(s) this session",
        v.compressions
    )?;
    match v.last_turn {
        Some(t) => writeln!(
            out,
            "last turn  {} (turn {} of this session)",
            turn_line(t),
            v.turns
        ),
        None => writeln!(out, "last turn  none yet"),
    }?;
    for step in v.steps {
        writeln!(out, "  step     {}", step.line())?;
    }
    Ok(())
}

/// `/tools`: one line per tool, and whether tool use is on.
pub fn tools(out: &mut impl Write, tools: &[ToolInfo], enabled: bool) -> io::Result<()> {
    writeln!(out, "tool use is {}", if enabled { "on" } else { "off" })?;
    for t in tools {
        writeln!(out, "  {}", t.summary_line())?;
    }
    Ok(())
}

/// The REPL's rendering of a turn: a `<think>` block is folded to one line
/// (`[thinking … 123 chars — /think show]`), everything else as [`turn_event`].
#[derive(Debug, Default)]
pub struct TurnView {
    /// Characters of the thought being folded (`None`: not inside one).
    thought_chars: Option<usize>,
}

impl TurnView {
    pub fn event(&mut self, out: &mut impl Write, event: &TurnEvent) -> io::Result<()> {
        if let TurnEvent::Thought(t) = event {
            if self.thought_chars.is_none() {
                write!(out, "[thinking …")?;
            }
            *self.thought_chars.get_or_insert(0) += t.chars().count();
            return Ok(());
        }
        self.close(out)?;
        turn_event(out, event)
    }

    /// Ends a folded thought line (before other output, or when the turn ends).
    pub fn close(&mut self, out: &mut impl Write) -> io::Result<()> {
        match self.thought_chars.take() {
            Some(n) => writeln!(out, " {n} chars — /think show]"),
            None => Ok(()),
        }
    }
}

/// A whole thought for `/think show`, dimmed.
pub fn thought(text: &str) -> String {
    format!("\x1b[2m<think>\n{text}\n</think>\x1b[22m")
}

/// One line of numbers after a reply; for a reply nothing generated (lines shown as a
/// read returned them), says so.
pub fn turn_line(t: &TurnStats) -> String {
    if t.completion_tokens == 0 && t.prompt_tokens == 0 {
        return "nothing generated: shown as the tool returned it".to_string();
    }
    let thinking = if t.thinking_tokens > 0 {
        format!(" ({} thinking)", t.thinking_tokens)
    } else {
        String::new()
    };
    let lookup = if t.draft_tokens > 0 {
        format!(
            ", lookup kept {}/{} drafted tokens",
            t.accepted_tokens, t.draft_tokens
        )
    } else {
        String::new()
    };
    format!(
        "{} tokens{thinking} at {:.1} tok/s, ttft {:.0} ms, prefill {}/{} tokens at {:.1} tok/s{lookup}",
        t.completion_tokens,
        t.decode_tps,
        t.ttft_ms,
        t.evaluated_tokens,
        t.prompt_tokens,
        t.prefill_tps
    )
}

pub fn human_count(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.1}B", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.0}M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.0}K", n as f64 / 1e3),
        n => n.to_string(),
    }
}

pub fn human_bytes(n: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if n as f64 >= 1024.0 * MIB {
        format!("{:.2} GiB", n as f64 / (1024.0 * MIB))
    } else {
        format!("{:.1} MiB", n as f64 / MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    fn info() -> ModelInfo {
        ModelInfo {
            path: PathBuf::from("models/SmolLM2-135M-Instruct.Q4_1.gguf"),
            name: "SmolLM2 135M Instruct".into(),
            file_bytes: 98_362_432,
            n_params: 134_515_008,
            n_ctx_train: 8192,
            n_ctx: 4096,
            n_batch: 512,
            threads: 2,
            threads_batch: 2,
            template_name: "chatml".into(),
            template_reason: "the model file's own template".into(),
            load_time: Duration::from_millis(84),
            fingerprint: "98362432:abc".into(),
            template_fingerprint: "def".into(),
            template_tools: false,
            template_system_turns: false,
            template_text: String::new(),
            kv_type: "f16".into(),
            kv_bytes: 94_371_840,
            notes: Vec::new(),
        }
    }

    fn render(f: impl Fn(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_turn_line_says_what_lookup_kept_only_when_it_drafted() {
        let mut t = TurnStats {
            completion_tokens: 10,
            ..TurnStats::default()
        };
        assert!(!turn_line(&t).contains("lookup"));
        assert_eq!(
            turn_line(&TurnStats::default()),
            "nothing generated: shown as the tool returned it"
        );
        t.draft_tokens = 12;
        t.accepted_tokens = 9;
        assert!(
            turn_line(&t).ends_with(", lookup kept 9/12 drafted tokens"),
            "{}",
            turn_line(&t)
        );
    }

    #[test]
    fn help_snapshot() {
        insta::assert_snapshot!(render(help));
    }

    #[test]
    fn status_snapshot() {
        let info = info();
        let turn = TurnStats {
            prompt_tokens: 412,
            evaluated_tokens: 35,
            completion_tokens: 42,
            prefill_tps: 230.5,
            decode_tps: 91.25,
            ttft_ms: 152.4,
            ..TurnStats::default()
        };
        let before = StatusView {
            steps: &[],
            info: &info,
            context_used: 37,
            cached_tokens: 0,
            last_turn: None,
            turns: 0,
            prefix: "70 tokens prefilled and saved (no saved prefix yet)".into(),
            compressions: 0,
            soc: None,
        };
        let after = StatusView {
            steps: &[],
            info: &info,
            context_used: 454,
            cached_tokens: 453,
            last_turn: Some(&turn),
            turns: 3,
            prefix: "70 tokens restored from agents/cache".into(),
            compressions: 1,
            soc: Some("61.9 °C, throttled now".into()),
        };
        insta::assert_snapshot!("status_before_any_turn", render(|o| status(o, &before)));
        insta::assert_snapshot!("status_after_turn", render(|o| status(o, &after)));
    }

    #[test]
    fn human_units() {
        assert_eq!(human_count(134_515_008), "135M");
        assert_eq!(human_count(3_200_000_000), "3.2B");
        assert_eq!(human_bytes(98_362_432), "93.8 MiB");
        assert_eq!(human_bytes(2 * 1024 * 1024 * 1024), "2.00 GiB");
    }
}
