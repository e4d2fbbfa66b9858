//! The counts a `harvey bench --agent` run reports over its tasks.

use serde::Serialize;

use super::{skill_tasks, TaskResult};

/// The counts over all tasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub tool_tasks: usize,
    pub right_first_tool: usize,
    pub no_tool_tasks: usize,
    pub no_tool_ok: usize,
    /// Every call of every task, and those whose arguments validate.
    pub calls: usize,
    pub valid_calls: usize,
    pub checkable: usize,
    pub answers_ok: usize,
    pub parroted: usize,
    /// Replies holding a call as text that never ran.
    pub calls_in_text: usize,
    /// Tool calls per task (mean over the tasks run).
    pub steps_per_task: f64,
    pub median_secs: f64,
    pub total_secs: f64,
    /// The skills run: requests that fit a skill and those where the router chose it;
    /// requests that fit none and those where it chose none.
    pub skill_tasks: usize,
    pub right_skill: usize,
    pub skill_free_tasks: usize,
    pub no_skill_ok: usize,
    /// Tasks whose workspace is checked afterwards, and those where it was right.
    pub state_tasks: usize,
    pub state_ok: usize,
}

/// The counts over `tasks`.
pub fn summarize(tasks: &[TaskResult]) -> Summary {
    let count = |f: &dyn Fn(&TaskResult) -> bool| tasks.iter().filter(|t| f(t)).count();
    let is_tool_task = |t: &TaskResult| !t.expected.is_empty();
    let mut secs: Vec<f64> = tasks.iter().map(|t| t.secs).collect();
    secs.sort_by(f64::total_cmp);
    Summary {
        tool_tasks: count(&is_tool_task),
        right_first_tool: count(&|t| is_tool_task(t) && t.first_tool_ok),
        no_tool_tasks: count(&|t| !is_tool_task(t)),
        no_tool_ok: count(&|t| !is_tool_task(t) && t.first_tool_ok),
        calls: tasks.iter().map(|t| t.calls.len()).sum(),
        valid_calls: tasks
            .iter()
            .map(|t| t.calls.iter().filter(|c| c.valid).count())
            .sum(),
        checkable: count(&|t| t.answer_ok.is_some()),
        answers_ok: count(&|t| t.answer_ok == Some(true)),
        parroted: count(&|t| t.parroted),
        calls_in_text: count(&|t| t.call_in_text),
        steps_per_task: if tasks.is_empty() {
            0.0
        } else {
            tasks.iter().map(|t| t.calls.len()).sum::<usize>() as f64 / tasks.len() as f64
        },
        median_secs: median(&secs),
        total_secs: secs.iter().sum(),
        skill_tasks: count(&|t| t.skill_ok.is_some() && fits_a_skill(t)),
        right_skill: count(&|t| t.skill_ok == Some(true) && fits_a_skill(t)),
        skill_free_tasks: count(&|t| t.skill_ok.is_some() && !fits_a_skill(t)),
        no_skill_ok: count(&|t| t.skill_ok == Some(true) && !fits_a_skill(t)),
        state_tasks: count(&|t| t.state_ok.is_some()),
        state_ok: count(&|t| t.state_ok == Some(true)),
    }
}

/// Whether the task's request fits one of the skills run's skills.
fn fits_a_skill(t: &TaskResult) -> bool {
    skill_tasks::expected(&t.id).flatten().is_some()
}

/// The median of sorted values (0 for none).
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{empty_result, tasks, CallOutcome, Task};
    use super::*;
    use tasks::Expected;

    fn result(
        expected: &[&str],
        first_ok: bool,
        calls: &[bool],
        answer: Option<bool>,
    ) -> TaskResult {
        let task = Task {
            id: "t",
            prompt: "p",
            expected: Expected::NoTool,
            check: tasks::Check::None,
            needs_git: false,
            answers_from_memory: false,
            then: None,
            state: None,
        };
        TaskResult {
            expected: expected.iter().map(|s| s.to_string()).collect(),
            first_tool_ok: first_ok,
            calls: calls
                .iter()
                .map(|&valid| CallOutcome {
                    call: "c".into(),
                    valid,
                    ok: true,
                })
                .collect(),
            answer_ok: answer,
            ..empty_result(&task, 2.0)
        }
    }
    #[test]
    fn summary_counts_tool_and_no_tool_tasks_apart() {
        let tasks = [
            result(&["read_file"], true, &[true, false], Some(true)),
            result(&["git"], false, &[], None),
            result(&[], true, &[], Some(false)),
            result(&[], false, &[true], Some(true)),
        ];
        let s = summarize(&tasks);
        assert_eq!((s.tool_tasks, s.right_first_tool), (2, 1));
        assert_eq!((s.no_tool_tasks, s.no_tool_ok), (2, 1));
        assert_eq!((s.calls, s.valid_calls), (3, 2));
        assert_eq!((s.checkable, s.answers_ok), (3, 2));
        assert_eq!(s.total_secs, 8.0);
        assert_eq!(s.median_secs, 2.0);
        assert_eq!((s.state_tasks, s.state_ok), (0, 0));
        let checked = |ok| TaskResult {
            state_ok: Some(ok),
            ..result(&[], true, &[], None)
        };
        let s = summarize(&[checked(true), checked(false), tasks[0].clone()]);
        assert_eq!((s.state_tasks, s.state_ok), (2, 1));
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[1.0, 5.0, 9.0]), 5.0);
        assert_eq!(median(&[1.0, 3.0]), 2.0);
    }
}
