//! The router's part of a turn: the first step (a skill the user's words ask for, a
//! memory write they ask for, the model's own choice when the question came with its
//! evidence, git for a commit named by its place, or the router's choice) and the next
//! step after a routed call, each sent as a timed step.

use crate::chat::route::{self, Route};
use crate::engine::{Engine, GenerateOptions};

use super::steps;
use super::timing::{Step, StepKind};
use super::{CallRecord, ToolSet, TurnEvent};

/// The router's choice for the turn's first step, when the tool set asks for one. A
/// router that could not choose leaves the step to the model.
pub(super) fn first_step(
    engine: &mut dyn Engine,
    tools: Option<&ToolSet<'_>>,
    opts: &GenerateOptions,
    previous: Option<&str>,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<Option<Route>, crate::engine::EngineError> {
    match tools.and_then(|t| t.route.map(|request| (t, request))) {
        // Told to remember (the user's own words, not the previous exchange's nor the
        // hint lines): no router model is asked.
        Some((set, _)) if route::told_to_remember(set.registry, set.request).is_some() => {
            Ok(route::told_to_remember(set.registry, set.request))
        }
        Some((set, request)) => {
            if !set.skills.is_empty() {
                let started = std::time::Instant::now();
                let menu = route::Menu {
                    registry: set.registry,
                    skills: set.skills,
                };
                if let Some(skill) = route::skill_for(engine, menu, set.request, &opts.abort)? {
                    let name = match &skill {
                        Route::Skill(name) => name.as_str(),
                        _ => "",
                    };
                    Step::timed(StepKind::Router, name, started).send(on_event);
                    return Ok(Some(skill));
                }
            }
            if set.evidence {
                Step::timed(StepKind::Router, "evidence", std::time::Instant::now()).send(on_event);
                return Ok(None);
            }
            if let Some((label, step)) = known_step(set) {
                Step::timed(StepKind::Router, label, std::time::Instant::now()).send(on_event);
                return Ok(Some(step));
            }
            // The router reads the request, not the block of memories sent with it.
            let request = steps::with_previous(crate::evidence::block::words_of(request), previous);
            routed(engine, set, &request, opts, on_event)
        }
        None => Ok(None),
    }
}

/// The first step [`route`] knows without the router model (a commit named by its
/// place, who or when something changed: git), with the label its step is timed under;
/// `None` leaves the choice to the router.
fn known_step(set: &ToolSet<'_>) -> Option<(&'static str, Route)> {
    route::about_change(set.registry, set.request).map(|step| ("who or when changed", step))
}

/// The router's choice for `request`, its time sent as a step.
fn routed(
    engine: &mut dyn Engine,
    set: &ToolSet<'_>,
    request: &str,
    opts: &GenerateOptions,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<Option<Route>, crate::engine::EngineError> {
    let started = std::time::Instant::now();
    let choice = route::choose(
        engine,
        set.registry,
        request,
        set.request,
        &opts.abort,
        set.route_saved,
    )?;
    let what = match &choice {
        Some(Route::Tool(name) | Route::Skill(name)) => name.as_str(),
        Some(Route::Answer) => "answer",
        None => "",
    };
    Step::timed(StepKind::Router, what, started).send(on_event);
    Ok(choice)
}

/// After the routed call `record` (the turn's `earlier` calls before it), the next step: `Some(route)` when the request is still
/// open and the router chose again (told what the last step showed), `None` when the
/// result may answer it or the router could not choose.
pub(super) fn next_step(
    engine: &mut dyn Engine,
    set: &ToolSet<'_>,
    opts: &GenerateOptions,
    (earlier, record): (&[CallRecord], &CallRecord),
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<Option<Route>, crate::engine::EngineError> {
    let Some(request) = set.route else {
        return Ok(None);
    };
    if steps::blame_next(set.request, record) {
        on_event(TurnEvent::Notice(
            "next step: git (who changed the line found)".into(),
        ));
        return Ok(Some(Route::Tool("git".into())));
    }
    if super::definition::definition_found(set.request, std::slice::from_ref(record)).is_some() {
        on_event(TurnEvent::Notice(
            "next step: read_file (the definition found)".into(),
        ));
        return Ok(Some(Route::Tool("read_file".into())));
    }
    let Some(note) = steps::open_after(request, record) else {
        return Ok(None);
    };
    let asked = steps::next_request(request, earlier, &note);
    let next = routed(engine, set, &asked, opts, on_event)?;
    if let Some(Route::Tool(name)) = &next {
        on_event(TurnEvent::Notice(format!("next step: {name}")));
    }
    Ok(next)
}
