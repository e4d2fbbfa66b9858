//! The user's skills as a first step. A request that shares a topic word with some
//! skills (their name or description; at most [`MAX_FITTING`]) is asked about those
//! alone, before the router proper: does it ask for the job one of them does? A request
//! that shares no word with any skill ("What is 17 times 3?") is never sent to one, and
//! the router's own instructions stay the same in every workspace (kept and saved as
//! they are).
//!
//! Measured with the 1.5B on `harvey bench --agent --skills --route only`: listed among
//! the router's options, the skills were chosen for 0 of 5 requests that fit one; listed
//! first, for 3 of 5, and "What is 17 times 3?" went to `code-review`; offered after the
//! request they share words with, 2 of 5. Asked apart as here: 5 of 5, and none for the 4
//! requests that fit none (those first tries had one skill fewer: see docs/benchmarks.md,
//! "How skills are offered").

use super::{Menu, SkillOption, Wording};
use crate::engine::{
    AbortFlag, Engine, EngineError, GenerateOptions, Message, Role, SamplingParams,
};
use crate::memory::query::topic_stems;

/// Most skills a request is asked about.
const MAX_FITTING: usize = 2;

/// The reply for "no skill".
const NO_SKILL: &str = "no_skill";

/// Made-up skills and requests (none from the benchmark), the same in every workspace.
const EXAMPLES: &str = "Examples, with the skills weekly-report (Builds the weekly status \
report from the tracker) and deploy-staging (Deploys the app to the staging server):\n\
Get this week's report out. -> weekly-report\n\
Push the new build to staging, please. -> deploy-staging\n\
Who deployed to staging last? -> no_skill\n\
How many tickets are open in the tracker? -> no_skill\n\
Is everything ready for the weekly report? -> weekly-report\n";

/// Words (stemmed) that say how to use a skill, not what it is about, and the words of
/// the request's own hint lines (`(files named like this: …)`).
const NOT_TOPICS: &[&str] = &[
    "user", "ask", "want", "request", "skill", "step", "file", "named", "like",
];

/// The skills that can be chosen: a name that is a plain word (letters, digits, `-`,
/// `_`) that no offered tool, nor a "no tool" or "no skill" reply, answers to.
pub(super) fn offered<'m>(
    menu: &'m Menu<'_>,
    wording: Wording,
) -> impl Iterator<Item = &'m SkillOption> {
    let taken: Vec<String> = super::offered(menu.registry)
        .0
        .iter()
        .map(|(n, _)| wording.label(n).to_string())
        .chain([wording.none.to_string(), NO_SKILL.to_string()])
        .collect();
    menu.skills.iter().filter(move |s| {
        !s.name.is_empty()
            && s.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !taken.contains(&s.name)
    })
}

/// The offered skills that share a topic word with `request`, most shared first.
pub(super) fn fitting(menu: &Menu<'_>, wording: Wording, request: &str) -> Vec<SkillOption> {
    let wanted = topics(request);
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, &SkillOption)> = offered(menu, wording)
        .filter_map(|s| {
            let have = topics(&format!("{} {}", s.name.replace(['-', '_'], " "), s.about));
            let shared = wanted.iter().filter(|w| have.contains(w)).count();
            (shared > 0).then_some((shared, s))
        })
        .collect();
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    scored
        .into_iter()
        .take(MAX_FITTING)
        .map(|(_, s)| s.clone())
        .collect()
}

/// The question about `fitting` skills for `request`.
pub(super) fn messages(fitting: &[SkillOption], request: &str) -> Vec<Message> {
    let list: String = fitting
        .iter()
        .map(|s| format!("- {}: {}\n", s.name, s.summary))
        .collect();
    let system = format!(
        "The user of a coding assistant wrote down skills: step-by-step jobs the assistant \
follows when it is asked for them. Decide whether the user's request asks for the whole job \
one skill does; reply {NO_SKILL} when it asks for anything else: one fact (a version, an author, \
a date), a file, a question the job does not answer, another job.\n\n{EXAMPLES}\n\
Skills:\n{list}\nReply with one skill's name or {NO_SKILL}."
    );
    let request: String = request.chars().take(super::MAX_REQUEST_CHARS).collect();
    vec![
        Message::new(Role::System, system),
        Message::new(Role::User, request),
    ]
}

/// The skill `request` asks for, when it shares words with some and the model, asked
/// about those alone (greedy, one name under a grammar), names one.
pub(super) fn ask(
    engine: &mut dyn Engine,
    menu: &Menu<'_>,
    wording: Wording,
    request: &str,
    abort: &AbortFlag,
) -> Result<Option<String>, EngineError> {
    let fitting = fitting(menu, wording, request);
    if fitting.is_empty() {
        return Ok(None);
    }
    let names: Vec<String> = fitting
        .iter()
        .map(|s| s.name.as_str())
        .chain([NO_SKILL])
        .map(|n| format!("\"{n}\""))
        .collect();
    let mut opts = GenerateOptions::new(SamplingParams::greedy());
    opts.grammar = Some(format!("root ::= {}", names.join(" | ")));
    opts.max_tokens = Some(16);
    opts.abort = abort.clone();
    let c = engine.generate_aside(&messages(&fitting, request), &opts, &mut |_| {})?;
    let reply = c.text.trim();
    tracing::debug!("skills {:?} for the request: {reply:?}", names);
    Ok(fitting
        .iter()
        .find(|s| s.name == reply)
        .map(|s| s.name.clone()))
}

/// Topic words, stemmed, without the words that say how to use a skill.
fn topics(text: &str) -> Vec<String> {
    topic_stems(text)
        .into_iter()
        .filter(|w| !NOT_TOPICS.contains(&w.as_str()))
        .collect()
}
