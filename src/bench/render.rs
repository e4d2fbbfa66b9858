//! Renders a [`BenchReport`] as text for the terminal (the binary prints it).

use std::fmt::Write as _;

use super::agent::{AgentReport, Summary as AgentSummary, TaskResult};
use super::footprint::{Footprint, GOAL_SLACK_BYTES};
use super::kv::KvCacheRow;
use super::lookup::LookupRow;
use super::pace::PaceRow;
use super::reference::{Phase, Reference, Row, Side, PREFILL_GOAL};
use super::{BenchReport, Memory};
use crate::engine::cost::VerifyCost;

/// The human-readable report.
pub fn report(r: &BenchReport) -> String {
    let mut s = String::new();
    let mb = r.model_bytes as f64 / 1e6;
    let _ = writeln!(
        s,
        "model      {} ({mb:.0} MB), n_ctx {}, n_batch {}, threads {}/{}",
        r.model, r.n_ctx, r.n_batch, r.threads, r.threads_batch
    );
    let _ = writeln!(s, "load       {:.0} ms", r.load_ms);
    let _ = writeln!(s, "                 prefill tok/s   decode tok/s");
    let _ = writeln!(
        s,
        "harvey           {:>13.1}   {:>12.1}",
        r.harvey.prefill_tps, r.harvey.decode_tps
    );
    let _ = writeln!(
        s,
        "raw llama.cpp    {:>13.1}   {:>12.1}",
        r.reference.prefill_tps, r.reference.decode_tps
    );
    let _ = writeln!(
        s,
        "ratio            {:>13.2}   {:>12.2}",
        r.prefill_ratio, r.decode_ratio
    );
    let _ = writeln!(
        s,
        "turn   prompt  evaluated   ttft reuse ms   ttft full-prefill ms"
    );
    for i in 0..r.ttft_ms_reuse.len() {
        let _ = writeln!(
            s,
            "{:>4}   {:>6}  {:>9}   {:>13.1}   {:>20.1}",
            i + 1,
            r.prompt_tokens[i],
            r.evaluated_reuse[i],
            r.ttft_ms_reuse[i],
            r.ttft_ms_full.get(i).copied().unwrap_or(0.0)
        );
    }
    if let (Some(first), Some(last)) = (r.ttft_ms_reuse.first(), r.ttft_ms_reuse.last()) {
        let _ = writeln!(s, "ttft last/first turn: {:.2} with reuse", last / first);
    }
    let _ = writeln!(
        s,
        "first turn ttft: {:.1} ms cold, {:.1} ms with the {}-token prefix restored from a state file (ratio {:.2})",
        r.first_turn_ttft_cold_ms,
        r.first_turn_ttft_cached_ms,
        r.prefix_tokens,
        r.first_turn_ttft_cached_ms / r.first_turn_ttft_cold_ms
    );
    if let Some(mb) = r.peak_rss_minus_model_mb {
        let _ = writeln!(s, "peak RSS minus model size: {mb:.0} MB");
    }
    s.push_str(&memory(&r.memory, &r.kv_cache_type));
    s.push_str(&kv_table(&r.kv_cache));
    s.push_str(&cost_table(&r.verify_cost));
    s.push_str(&lookup_table(&r.lookup));
    if let Some(f) = &r.footprint {
        s.push_str(&footprint(f));
    }
    if let Some(l) = &r.llama_bench {
        s.push_str(&reference(l));
    }
    s
}

/// harvey beside llama-bench: one line per phase and depth, then the prefill goal.
pub fn reference(r: &Reference) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "llama-bench  {}, threads {}/{}, KV {}, {} reps; harvey n_batch {} (= n_ubatch)",
        r.model, r.threads, r.threads_batch, r.kv_cache_type, r.reps, r.n_batch
    );
    match &r.llama_bench {
        Side::Ran {
            binary,
            n_batch,
            n_ubatch,
            ..
        } => {
            let _ = writeln!(
                s,
                "             {} (n_batch {n_batch}, n_ubatch {n_ubatch})",
                binary.display()
            );
        }
        Side::Unavailable { reason } => {
            let _ = writeln!(s, "             not run: {reason}");
        }
    }
    s.push_str(
        "  test      depth   harvey tok/s          llama-bench tok/s     harvey/llama-bench\n",
    );
    for row in &r.rows {
        s.push_str(&reference_row(row));
    }
    if let Some(holds) = r.prefill_goal_holds {
        let verdict = if holds { "holds" } else { "does not hold" };
        let _ = writeln!(
            s,
            "  goal: harvey's prefill ≥ {PREFILL_GOAL:.2}× llama-bench's pp{}: {verdict}",
            r.rows
                .iter()
                .find(|row| row.phase == Phase::Prefill)
                .and_then(|row| row.llama_bench_tokens)
                .unwrap_or(0)
        );
    }
    s
}

fn reference_row(row: &Row) -> String {
    let (phase, test) = match row.phase {
        Phase::Prefill => ("prefill", "pp"),
        Phase::Decode => ("decode", "tg"),
    };
    let rate =
        |tokens: usize, avg: f64, sd: f64| format!("{test}{tokens:<4}{avg:>6.1} ± {sd:<4.1}");
    let harvey = rate(row.harvey_tokens, row.harvey.avg_ts, row.harvey.stddev_ts);
    let reference = match (row.llama_bench, row.llama_bench_tokens) {
        (Some(r), Some(tokens)) => rate(tokens, r.avg_ts, r.stddev_ts),
        _ => "—".to_string(),
    };
    let ratio = row.ratio.map_or("—".to_string(), |x| format!("{x:.2}×"));
    format!(
        "  {phase:<8} {:>6}   {harvey:<20}  {reference:<20}  {ratio}\n",
        row.depth
    )
}

/// `verify k=…`: one decode of 1 + k rows against one row.
fn cost_table(rows: &[VerifyCost]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("verify     one decode of 1 + k rows:");
    for c in rows {
        let _ = write!(s, "  k={} {:.2} ms ({:.2}×)", c.k, c.ms, c.relative);
    }
    s.push('\n');
    s
}

/// Per workload and lookup mode: decode speed, acceptance, speedup over off.
fn lookup_table(rows: &[LookupRow]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    s.push_str("lookup     workload  mode  decode tok/s  drafted  accepted  speedup\n");
    for row in rows {
        for m in &row.modes {
            let _ = writeln!(
                s,
                "           {:<8}  {:<4}  {:>12.1}  {:>7}  {:>8}  {:>6.2}×",
                row.workload,
                m.mode.as_str(),
                m.decode_tps,
                m.draft_tokens,
                m.accepted_tokens,
                m.speedup
            );
        }
        if !row.same_text {
            for m in row
                .modes
                .iter()
                .filter(|m| m.agreement.identical < row.prompts)
            {
                let a = &m.agreement;
                let _ = writeln!(
                    s,
                    "           {} {}: {}/{} replies equal to off's; characters in common with off's, per prompt: {:?} (batched rows round differently)",
                    row.workload,
                    m.mode.as_str(),
                    a.identical,
                    row.prompts,
                    a.common_chars
                );
            }
        }
    }
    s
}

/// `harvey bench --pace`: one block per model, tok/s min/median/max and the ratio of each
/// median to the llama-bench loop's.
pub fn pace(rows: &[PaceRow]) -> String {
    let mut s = String::new();
    for r in rows {
        let _ = writeln!(
            s,
            "{} — decode of {} tokens at depth {}, {} threads",
            r.model, r.n_gen, r.depth, r.threads
        );
        s.push_str("  loop                      min  median     max  ratio   paired\n");
        let lines = [
            ("llama-bench loop", &r.llama_bench, 1.0, 1.0),
            (
                "same, harvey's context",
                &r.harvey_shape,
                r.shape_ratio,
                r.shape_paired,
            ),
            ("harvey, greedy", &r.greedy, r.greedy_ratio, r.greedy_paired),
            (
                "harvey, config sampling",
                &r.sampled,
                r.sampled_ratio,
                r.sampled_paired,
            ),
            (
                "free text, lookup off",
                &r.free_off,
                r.free_off_ratio,
                r.free_off_paired,
            ),
            (
                "free text, lookup auto",
                &r.free_auto,
                r.free_auto_ratio,
                r.free_auto_paired,
            ),
        ];
        for (name, spread, ratio, paired) in lines {
            let _ = writeln!(
                s,
                "  {name:<23} {:>6.1}  {:>6.1}  {:>6.1}  {ratio:.3}×  {paired:.3}×",
                spread.min, spread.median, spread.max
            );
        }
        let _ = writeln!(
            s,
            "  free text, auto: {} tokens drafted, {} kept over the rounds",
            r.free_auto_drafted, r.free_auto_accepted
        );
        s.push_str("  (ratio: medians over the llama-bench loop's; paired: the median of each round's own ratio)\n");
    }
    s
}

/// The footprint scenario: the split of the peak, the goal, and RSS after each step.
pub fn footprint(f: &Footprint) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "footprint  {} chunks in the store ({:.0} MB, built in {:.1} s); query {:.0} ms, turn {:.0} ms, summary {:.0} ms",
        f.chunks,
        mb(f.store_bytes as f64),
        f.build_s,
        f.query_ms,
        f.turn_ms,
        f.summary_ms
    );
    let _ = writeln!(
        s,
        "weights    {:.0} MB = {} {:.0} MB + {} {:.0} MB",
        mb(f.weights_bytes as f64),
        f.chat_model,
        mb(f.chat_model_bytes as f64),
        f.embedder,
        mb(f.embedder_bytes as f64)
    );
    let aside = if f.aside_n_ctx == 0 {
        format!(
            "no aside context ({} summary call(s) ran in the chat context's free cells)",
            f.aside_shared_calls
        )
    } else {
        format!(
            "aside {:.1} MB (n_ctx {})",
            mb(f.aside_kv_bytes as f64),
            f.aside_n_ctx
        )
    };
    let _ = writeln!(
        s,
        "KV         chat {:.1} MB (n_ctx {}), {aside}",
        mb(f.chat_kv_bytes as f64),
        f.n_ctx,
    );
    let verdict = match f.goal_holds {
        Some(true) => "holds",
        Some(false) => "does not hold",
        None => "unknown (no RSS here)",
    };
    if let (Some(peak), Some(rest)) = (f.peak_rss_bytes, f.rest_bytes) {
        let _ = writeln!(
            s,
            "peak RSS   {:.0} MB = weights + chat KV + rest {:.0} MB",
            mb(peak as f64),
            mb(rest as f64)
        );
    }
    let _ = writeln!(
        s,
        "goal       peak ≤ weights + chat KV + {:.0} MB = {:.0} MB: {verdict}",
        mb(GOAL_SLACK_BYTES as f64),
        mb(f.goal_bytes as f64)
    );
    for step in &f.steps {
        let _ = writeln!(
            s,
            "  {:<30} RSS {:>5.0} MB (anon {:>5.0}, file {:>5.0}), peak {:>5.0} MB",
            step.step,
            mb(step.rss_bytes as f64),
            mb(step.rss_anon_bytes.unwrap_or(0) as f64),
            mb(step.rss_file_bytes.unwrap_or(0) as f64),
            mb(step.peak_rss_bytes.unwrap_or(0) as f64)
        );
    }
    s
}

fn mb(bytes: impl Into<f64>) -> f64 {
    bytes.into() / 1e6
}

/// `memory  peak RSS … = weights … + KV … + rest …`.
fn memory(m: &Memory, kv_type: &str) -> String {
    let (Some(rss), Some(rest)) = (m.peak_rss_bytes, m.rest_bytes) else {
        return format!(
            "memory     weights {:.0} MB, KV cache {:.1} MB ({kv_type}); peak RSS unknown here\n",
            mb(m.weights_bytes as f64),
            mb(m.kv_bytes as f64)
        );
    };
    format!(
        "memory     peak RSS {:.0} MB = weights {:.0} MB + KV cache {:.1} MB ({kv_type}) + rest {:.0} MB\n",
        mb(rss as f64),
        mb(m.weights_bytes as f64),
        mb(m.kv_bytes as f64),
        mb(rest as f64)
    )
}

/// One line per KV cache type: size, then prefill/decode tok/s at each depth.
fn kv_table(rows: &[KvCacheRow]) -> String {
    let mut s = String::new();
    for row in rows {
        let _ = write!(
            s,
            "KV {:<6}  {:>7.1} MB at n_ctx {}",
            row.kv_type.as_str(),
            mb(row.kv_bytes as f64),
            row.n_ctx
        );
        for d in &row.depths {
            let _ = write!(
                s,
                "  | depth {}: prefill {:.1}, decode {:.1} tok/s",
                d.depth, d.prefill_tps, d.decode_tps
            );
        }
        s.push('\n');
    }
    s
}

/// The agent benchmark: the counts, then one line per task.
pub fn agent(r: &AgentReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "agent bench  {} ({:.0} MB), n_ctx {}, replies <= {} tokens, <= {} tool rounds, {} tool schemas, load {:.1} s",
        r.model_file,
        mb(r.model_bytes as f64),
        r.n_ctx,
        r.reply_tokens,
        r.max_rounds,
        r.schemas,
        r.load_secs
    );
    s.push_str(&agent_summary(&r.summary));
    s.push_str(&agent_table(&r.tasks));
    for t in &r.tasks {
        if let Some(e) = &t.error {
            let _ = writeln!(s, "{}: the turn failed: {e}", t.id);
        }
        if !t.state_problems.is_empty() {
            let _ = writeln!(s, "{}: state: {}", t.id, t.state_problems.join("; "));
        }
    }
    for note in &r.notes {
        let _ = writeln!(s, "note: {note}");
    }
    s
}

fn agent_summary(m: &AgentSummary) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ANSWERED RIGHT          {}/{} checkable (the reply holds the needed fact)",
        m.answers_ok, m.checkable
    );
    let _ = writeln!(
        s,
        "right first tool        {}/{} tool tasks",
        m.right_first_tool, m.tool_tasks
    );
    let _ = writeln!(
        s,
        "no tool when none needed {}/{} no-tool tasks",
        m.no_tool_ok, m.no_tool_tasks
    );
    if m.skill_tasks + m.skill_free_tasks > 0 {
        let _ = writeln!(
            s,
            "right skill             {}/{} requests that fit a skill",
            m.right_skill, m.skill_tasks
        );
        let _ = writeln!(
            s,
            "no skill                {}/{} requests that fit none",
            m.no_skill_ok, m.skill_free_tasks
        );
    }
    if m.state_tasks > 0 {
        let _ = writeln!(
            s,
            "STATE RIGHT             {}/{} checked (memories and files after the task)",
            m.state_ok, m.state_tasks
        );
    }
    let _ = writeln!(
        s,
        "schema-valid args       {}/{} calls",
        m.valid_calls, m.calls
    );
    let _ = writeln!(s, "parroting               {}", m.parroted);
    let _ = writeln!(
        s,
        "calls left as text      {} (a JSON call in the reply that never ran)",
        m.calls_in_text
    );
    let _ = writeln!(
        s,
        "seconds                 median {:.1}, total {:.1}; {:.1} tool calls per task",
        m.median_secs, m.total_secs, m.steps_per_task
    );
    s
}

/// The first tool called, after the skill that ran (`code-review>read_file`).
fn got(t: &TaskResult) -> String {
    let tool = t.first_tool.as_deref().unwrap_or("none");
    match &t.skill {
        Some(skill) => format!("{skill}>{tool}"),
        None => tool.to_string(),
    }
}

fn agent_table(tasks: &[TaskResult]) -> String {
    let yes_no = |b: Option<bool>| match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    let mut s = format!(
        "{:<16} {:<26} {:<14} {:<5} {:<6} {:<6} {:<17} {:>6} {:>5} {}\n",
        "task", "expected", "got", "valid", "answer", "parrot", "stop", "secs", "calls", "state"
    );
    for t in tasks {
        let expected = if t.expected.is_empty() {
            "none".to_string()
        } else {
            t.expected.join("|")
        };
        let _ = writeln!(
            s,
            "{:<16} {:<26} {:<14} {:<5} {:<6} {:<6} {:<17} {:>6.1} {:>5} {}",
            t.id,
            expected,
            got(t),
            yes_no(t.args_valid),
            yes_no(t.answer_ok),
            if t.parroted { "YES" } else { "no" },
            t.stop.map_or("failed", |r| r.as_str()),
            t.secs,
            t.calls.len(),
            yes_no(t.state_ok)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::kv::DepthSpeed;
    use crate::engine::KvCacheType;

    #[test]
    fn memory_line_adds_up_and_says_when_rss_is_unknown() {
        let m = Memory::new(Some(232_000_000), 98_000_000, 94_000_000);
        assert_eq!(
            memory(&m, "f16"),
            "memory     peak RSS 232 MB = weights 98 MB + KV cache 94.0 MB (f16) + rest 40 MB\n"
        );
        let unknown = memory(&Memory::new(None, 98_000_000, 50_000_000), "q8_0");
        assert!(
            unknown.contains("KV cache 50.0 MB (q8_0); peak RSS unknown"),
            "{unknown}"
        );
    }

    #[test]
    fn kv_table_has_a_line_per_type_with_each_depth() {
        let row = |kv_type, kv_bytes, decode_tps| KvCacheRow {
            kv_type,
            kv_bytes,
            n_ctx: 4096,
            depths: vec![DepthSpeed {
                depth: 501,
                prefill_tps: 64.0,
                generated_tokens: 16,
                decode_tps,
            }],
        };
        let text = kv_table(&[
            row(KvCacheType::F16, 94_371_840, 4.3),
            row(KvCacheType::Q8_0, 50_135_040, 9.9),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].starts_with("KV f16        94.4 MB at n_ctx 4096  | depth 501:"),
            "{text}"
        );
        assert!(
            lines[1].contains("q8_0") && lines[1].contains("decode 9.9 tok/s"),
            "{text}"
        );
    }

    #[test]
    fn lookup_table_lists_only_the_modes_whose_replies_part_from_off() {
        use crate::bench::lookup::{Agreement, ModeSpeed};
        use crate::engine::LookupMode;
        let mode = |mode, identical, common_chars| ModeSpeed {
            mode,
            generated_tokens: 96,
            decode_tps: 100.0,
            draft_tokens: 10,
            accepted_tokens: 8,
            acceptance: 0.8,
            speedup: 1.0,
            agreement: Agreement {
                identical,
                common_chars,
            },
        };
        let text = lookup_table(&[LookupRow {
            workload: "quote",
            prompts: 2,
            skipped: 0,
            modes: vec![
                mode(LookupMode::Auto, 1, vec![40, 300]),
                mode(LookupMode::Off, 2, vec![300, 300]),
            ],
            same_text: false,
        }]);
        assert!(
            text.contains("quote auto: 1/2 replies equal to off's; characters in common with off's, per prompt: [40, 300]"),
            "{text}"
        );
        assert!(!text.contains("quote off:"), "{text}");
    }

    #[test]
    fn agent_table_has_a_line_per_task_and_says_none_for_no_tool() {
        use crate::bench::agent::{summarize, TaskResult};
        let task = |id: &str, expected: &[&str], got: Option<&str>| TaskResult {
            id: id.into(),
            prompt: "p".into(),
            expected: expected.iter().map(|s| s.to_string()).collect(),
            first_tool: got.map(str::to_string),
            first_tool_ok: true,
            route: None,
            args_valid: got.map(|_| true),
            calls: Vec::new(),
            answer_ok: None,
            parroted: false,
            call_in_text: false,
            secs: 1.25,
            stop: Some(crate::engine::StopReason::EndOfGeneration),
            reply: String::new(),
            memory_block: String::new(),
            error: None,
            skill: None,
            skill_ok: None,
            state_ok: None,
            state_problems: Vec::new(),
        };
        let tasks = vec![
            task("version", &["read_file", "search_files"], Some("read_file")),
            task("arithmetic", &[], None),
        ];
        let text = agent_table(&tasks);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].ends_with("calls state") && lines[1].ends_with(" -"),
            "{text}"
        );
        assert!(
            lines[1].starts_with(
                "version          read_file|search_files     read_file      yes   -      no"
            ),
            "{text}"
        );
        assert!(
            lines[2].starts_with(
                "arithmetic       none                       none           -     -      no"
            ),
            "{text}"
        );
        let summary = agent_summary(&summarize(&tasks));
        assert!(
            summary.contains("right first tool        1/1 tool tasks"),
            "{summary}"
        );
        assert!(summary.contains("1/1 no-tool tasks"), "{summary}");
    }

    fn reference_report(side: Side, ratio: Option<f64>) -> Reference {
        use crate::bench::reference::Rate;
        let rate = |avg_ts, stddev_ts| Rate { avg_ts, stddev_ts };
        let measured = ratio.is_some();
        let row = |phase, depth, tokens, harvey: Rate, theirs: Rate| Row {
            phase,
            depth,
            harvey_tokens: tokens,
            harvey,
            harvey_samples: Vec::new(),
            llama_bench_tokens: measured.then_some(if phase == Phase::Prefill { 512 } else { 128 }),
            llama_bench: measured.then_some(theirs),
            ratio: ratio.map(|_| harvey.avg_ts / theirs.avg_ts),
        };
        Reference {
            model: "qwen".into(),
            threads: 2,
            threads_batch: 2,
            n_batch: 256,
            kv_cache_type: "f16".into(),
            reps: 3,
            rows: vec![
                row(Phase::Prefill, 0, 509, rate(32.6, 0.4), rate(39.2, 0.1)),
                row(Phase::Decode, 1502, 128, rate(9.0, 0.1), rate(10.0, 0.2)),
            ],
            prefill_goal_holds: ratio.map(|r| r >= PREFILL_GOAL),
            llama_bench: side,
        }
    }

    #[test]
    fn reference_lines_put_harvey_beside_llama_bench_with_the_ratio_and_the_goal() {
        let side = Side::Ran {
            binary: "target/llama-bench/bin/llama-bench".into(),
            n_batch: 2048,
            n_ubatch: 512,
            tests: Vec::new(),
        };
        let text = reference(&reference_report(side, Some(0.83)));
        assert_eq!(
            text,
            "llama-bench  qwen, threads 2/2, KV f16, 3 reps; harvey n_batch 256 (= n_ubatch)\n\
             \x20            target/llama-bench/bin/llama-bench (n_batch 2048, n_ubatch 512)\n\
             \x20 test      depth   harvey tok/s          llama-bench tok/s     harvey/llama-bench\n\
             \x20 prefill       0   pp509   32.6 ± 0.4    pp512   39.2 ± 0.1    0.83×\n\
             \x20 decode     1502   tg128    9.0 ± 0.1    tg128   10.0 ± 0.2    0.90×\n\
             \x20 goal: harvey's prefill ≥ 0.95× llama-bench's pp512: does not hold\n"
        );
    }

    #[test]
    fn without_llama_bench_the_reference_says_why_and_keeps_harveys_numbers() {
        let side = Side::Unavailable {
            reason: "no llama-bench at x: build it with scripts/build-llama-bench.sh".into(),
        };
        let text = reference(&reference_report(side, None));
        assert!(
            text.contains(
                "not run: no llama-bench at x: build it with scripts/build-llama-bench.sh"
            ),
            "{text}"
        );
        assert!(text.contains("pp509   32.6 ± 0.4    —"), "{text}");
        assert!(!text.contains("goal"), "{text}");
    }
}
