//! The session's side of skills: the workspace's catalog, a prompt skill's turn (only
//! its allowed tools, its scene in the record), and a skill's script run as the user's
//! own command — the policy of `!prog` (no shell unless the allowlist or safe mode says
//! so, a question otherwise, the timeout, the audit line) with the Go tool's
//! `HARVEY_*` environment.

use crate::chat::agent::{AgentTurn, Step, StepKind, TurnEvent};
use crate::chat::route::SkillOption;
use crate::chat::TurnError;
use crate::command::{self, Ask, Place, Report, Who};
use crate::engine::{gbnf, GenerateOptions, SamplingParams};
use crate::skills::run::{self, ScriptEnv};
use crate::skills::suggest::{self, Repeat};
use crate::skills::vars::{self, Filled};
use crate::skills::{Catalog, Skill};

use super::App;

impl App {
    /// The workspace's skills, read now (an edited `SKILL.md` counts at once).
    pub fn skills(&self) -> Catalog {
        crate::skills::load(&self.workspace)
    }

    /// A prompt skill's turn: the body with `filled` goes to the model as the user's
    /// message; the model may call only the skill's `allowed-tools` (all the session's
    /// tools when it has none); the record gets the skill's scene before the exchange.
    pub fn skill_turn(
        &mut self,
        skill: &Skill,
        filled: &Filled,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Result<AgentTurn, TurnError> {
        let text = run::message(skill, filled);
        let speech = given(filled);
        let lent = skill
            .allowed_tools
            .as_ref()
            .map(|names| self.tools.lend(names));
        let turn = self.turn_on(
            &text,
            lent.as_ref().map(|l| &l.registry),
            Some((skill, &speech)),
            false,
            on_event,
        );
        if let Some(l) = lent {
            self.tools.restore(l);
        }
        turn
    }

    /// The skills the router may choose: the prompt skills (a skill with a script runs
    /// only when the user asks for it, by `/NAME` or its trigger), one catalog line each.
    pub(crate) fn skill_options(&self) -> Vec<SkillOption> {
        if !self.tools_enabled {
            return Vec::new();
        }
        self.skills()
            .skills
            .iter()
            .filter(|s| !s.has_run_script())
            .map(|s| SkillOption {
                name: s.name.clone(),
                summary: crate::skills::catalog::summary(&s.description),
                about: s.description.clone(),
            })
            .collect()
    }

    /// The turn of the prompt skill whose `trigger` `text` matches, run without asking
    /// the model (its variables' defaults, the message as its request), as the REPL runs
    /// it; `None` when no prompt skill's trigger matches or it needs a value nobody gave
    /// (the message then goes to the model). A skill with a script runs from a trigger
    /// only in the REPL, where its command can be asked about.
    pub(super) fn triggered_turn(
        &mut self,
        text: &str,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Option<Result<AgentTurn, TurnError>> {
        if !self.tools_enabled {
            return None;
        }
        let catalog = self.skills();
        let skill = catalog.triggered(text).filter(|s| !s.has_run_script())?;
        let mut filled = vars::fill(skill, "", None).ok()?;
        filled.args = text.trim().to_string();
        filled.request = Some(text.trim().to_string());
        on_event(TurnEvent::Notice(format!(
            "skill {} (its trigger matched)",
            skill.name
        )));
        let turn = self.skill_turn(skill, &filled, on_event);
        Some(turn.map(|t| AgentTurn {
            skill: Some(skill.name.clone()),
            ..t
        }))
    }

    /// Runs the skill the router chose for `text` (the message as its request, its
    /// variables' defaults); `earlier` are the steps taken before (recall, the router).
    /// A skill that needs a value nobody gave, or is gone, leaves the message to an
    /// ordinary turn, said in a notice.
    pub(super) fn run_chosen_skill(
        &mut self,
        name: &str,
        text: &str,
        earlier: Vec<Step>,
        on_event: &mut dyn FnMut(TurnEvent),
    ) -> Result<AgentTurn, TurnError> {
        let catalog = self.skills();
        let turn = match catalog.get(name).map(|s| (s, vars::fill(s, "", None))) {
            Some((skill, Ok(mut filled))) => {
                filled.args = text.trim().to_string();
                filled.request = Some(text.trim().to_string());
                on_event(TurnEvent::Notice(format!(
                    "skill {}: {}",
                    skill.name,
                    crate::skills::catalog::summary(&skill.description)
                )));
                self.skill_turn(skill, &filled, on_event)
                    .map(|t| AgentTurn {
                        skill: Some(skill.name.clone()),
                        ..t
                    })
            }
            Some((skill, Err(e))) => {
                on_event(TurnEvent::Notice(format!(
                    "the skill {} fits this request, but {e}; answering without it",
                    skill.name
                )));
                self.turn_on(text, None, None, false, on_event)
            }
            None => self.turn_on(text, None, None, false, on_event),
        };
        // The session-start recall ran before the router (once: a second one, where
        // memory is off and nothing was pinned, is dropped).
        let recalled = earlier.iter().any(|s| s.kind == StepKind::Recall);
        turn.map(|mut t| {
            t.steps
                .retain(|s| !(recalled && s.kind == StepKind::Recall));
            t.steps.splice(0..0, earlier);
            t
        })
    }

    /// Runs the skill's script (`bash scripts/compiled.bash`, as the Go tool does) as the
    /// user's command: safe mode decides, `ask` answers its question (`None` refuses what
    /// needs a yes), the run is audited, its output attached to the next message, and the
    /// record gets the skill's scene. `None` when the skill has no script.
    pub fn run_skill_script(
        &mut self,
        skill: &Skill,
        filled: &Filled,
        ask: Option<Ask<'_>>,
        on_output: &mut dyn FnMut(&[u8]),
    ) -> Option<(Report, Option<usize>)> {
        let words = run::script_words(skill, &self.workspace)?;
        let session_id = self.recorder.session_id();
        let model = self.engine.info().name.clone();
        let env = run::script_env(
            filled,
            &ScriptEnv {
                workspace: &self.workspace,
                model: &model,
                session_id: &session_id,
            },
        );
        self.abort.clear();
        let abort = self.abort.clone();
        let stop = move || abort.is_raised();
        let place = Place {
            workspace: &self.workspace,
            settings: &self.security,
            audit: &self.audit,
            env: &env,
        };
        let report = command::run_program(&place, Who::User, words, false, ask, on_output, &stop);
        self.record_skill(skill, &format!("{}\n{}", given(filled), report.summary()));
        let tokens = self.after_command(&report);
        Some((report, tokens))
    }

    /// The skill's scene in the record; a failing disk is noted once, as for exchanges.
    pub(super) fn record_skill(&mut self, skill: &Skill, speech: &str) {
        if let Err(e) = self.recorder.skill(&skill.name, &skill.description, speech) {
            if self.record_problem.is_none() {
                let problem = format!("cannot write the session record: {e}");
                self.notices.push(problem.clone());
                self.record_problem = Some(problem);
            }
        }
    }
}

/// A skill drafted from a session record (`/skill suggest`): not written yet.
#[derive(Debug, Clone)]
pub struct Suggested {
    /// The record's file name.
    pub session: String,
    pub repeat: Repeat,
    pub name: String,
    /// The `SKILL.md` text, checked to read back as a skill.
    pub text: String,
}

impl App {
    /// Drafts a skill from the session record `session` (a file name under
    /// `agents/sessions/`; `None`: the newest other than this one) where a run of steps
    /// repeats ([`crate::skills::suggest`]); the chat model writes the draft, greedy,
    /// under a grammar. Errors are sentences for the user.
    pub fn suggest_skill(&mut self, session: Option<&str>) -> Result<Suggested, String> {
        let path = self.find_session(session)?;
        let shown = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let record = crate::session::fountain::parse(&text);
        let steps = suggest::steps(&record);
        let Some(repeat) = suggest::repeated(&steps) else {
            return Err(format!(
                "{shown}: no run of steps repeats there ({} tool calls and commands, none \
twice in a row of two or more): nothing to suggest; /skill new writes a skill from your own steps",
                steps.len()
            ));
        };
        let grammar = suggest::grammar();
        let mut opts = GenerateOptions::new(SamplingParams::greedy());
        opts.max_tokens = Some(gbnf::max_tokens(&grammar).map_err(|e| e.to_string())?);
        opts.grammar = Some(grammar);
        opts.abort = self.abort.clone();
        let messages = suggest::messages(&record, &repeat);
        let out = self
            .engine
            .generate_aside(&messages, &opts, &mut |_| {})
            .map_err(|e| format!("the model could not draft a skill: {e}"))?;
        let written = out.grammar_output().map_err(|stop| {
            format!("the draft was cut off ({}): nothing to show", stop.as_str())
        })?;
        let draft = suggest::parse_draft(written)
            .map_err(|e| format!("the draft did not parse ({e}): {written}"))?;
        let text = crate::skills::new::draft(&draft.name, &draft.description, &draft.steps)
            .map_err(|p| format!("the model's draft is no skill: {}", p.message))?;
        Ok(Suggested {
            session: shown,
            repeat,
            name: draft.name,
            text,
        })
    }
}

/// What a run was given, for its scene: the variables, else the arguments.
fn given(filled: &Filled) -> String {
    if !filled.values.is_empty() {
        let values: Vec<String> = filled
            .values
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        values.join(", ")
    } else if filled.args.is_empty() {
        "(no arguments)".into()
    } else {
        filled.args.clone()
    }
}
