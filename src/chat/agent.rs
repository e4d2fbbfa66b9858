//! One agent turn with tools: the model may answer, or open a tool call; the call is
//! decoded under the registry's grammar, run, and its result appended in the tool role,
//! then the model continues — up to `max_rounds` calls per turn.
//!
//! Identical repeated calls are answered from the first result; a tool error goes back to
//! the model as the result; over the round cap the model is told to answer now. Where a
//! router chose the first step, the turn chooses again after a result that leaves the
//! request open ([`steps`]): a miss leads to a list or a search, a found file to reading it.

mod answer;
mod calls;
mod chosen;
mod definition;
mod fit_call;
mod focus;
mod guard;
mod hits;
mod one_reply;
mod parrot;
mod round;
mod routing;
mod shown;
mod steps;
mod timing;

use std::collections::HashMap;

use crate::engine::{Completion, Engine, GenerateOptions, StopReason};
use crate::tools::{formats, Registry, ToolCall, ToolError};

use super::call_watch::JsonHead;
use super::route::{self, Route};
pub use answer::FOUND_LEAD;
use answer::{answer_begun, fit_turn, limit_rounds, no_room_notice, Room, LIMIT_NOTE};
use calls::{run_call, Counting};
use round::{Asked, Round, Turn};
use routing::first_step;
pub use timing::{Step, StepKind};

use super::think::{self, Part, ThinkStream};
use super::{prepare_turn, rolling::Compression, Conversation, TurnError, TurnLimits};

/// The reply when the model, told to answer, only tried to call tools again.
pub const NO_ANSWER: &str =
    "(no answer: the model kept calling tools after this turn's tool limit; the results are above)";

/// Longest tool result shown to the model, in characters.
const MAX_RESULT_CHARS: usize = 6000;

/// What the user sees while a turn runs.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    Text(String),
    /// Part of a `<think>…</think>` block: shown apart, never stored as the reply.
    Thought(String),
    /// Something the user should see before the reply (e.g. the memory line).
    Notice(String),
    ToolCall(String),
    /// What a file write would change, shown before the user is asked.
    Diff(String),
    ToolResult {
        is_error: bool,
        text: String,
        reused: bool,
    },
    /// A step of the turn is done, with its time (faces may show or ignore it).
    Step(Step),
}

/// Asks the user whether a writing call (given as its one-line summary) may run.
pub type Confirm = dyn Fn(&str) -> bool;

/// Tools available to a turn.
pub struct ToolSet<'a> {
    pub registry: &'a Registry,
    /// How this model writes calls: its family's openers and the grammars that follow.
    pub forms: &'a CallForms,
    /// `max_tokens` for a call: the grammar's worst case (`engine::gbnf::max_tokens`), so
    /// a call ends by its grammar completing unless the context fills up first.
    pub max_call_tokens: usize,
    pub max_rounds: usize,
    /// Tokens this turn may add to the prompt before the model must answer
    /// (`tools.turn_tokens`; 0: only the context limits it).
    pub turn_tokens: usize,
    /// Asked before a tool that writes runs (`tools.confirm_memory_writes`): `Some` =
    /// confirmation is required; the function returns whether the user allowed it, and
    /// `None` inside means this session cannot ask (the write is refused).
    pub confirm: Option<Option<&'a Confirm>>,
    /// Asked before every call of a tool that always asks (`run_command`); `None` =
    /// nobody can answer here, and such calls are refused.
    pub ask: Option<&'a Confirm>,
    /// Asked before a file write (`write_file`, `edit_file`), after its diff is shown;
    /// `None` = nobody can answer here (no terminal), and such writes are refused unless
    /// `tools.allow_writes` lets the tool go ahead.
    pub ask_files: Option<&'a Confirm>,
    /// The user's own words when a router picks the turn's first step (see
    /// [`super::route`]); `None` = the model chooses in its reply.
    pub route: Option<&'a str>,
    /// Where the router's instructions are saved between processes (`None`: not saved).
    pub route_saved: Option<route::Saved<'a>>,
    /// The user's skills the router may choose for the first step. When it does, the
    /// turn ends before any generation with [`AgentTurn::route`] naming the skill, the
    /// user's message taken back out: the caller runs the skill instead.
    pub skills: &'a [route::SkillOption],
    /// The user's own words this turn (without attachments): what memory writes are
    /// judged against ([`crate::chat::memory_guard`]).
    pub request: &'a str,
    /// The session record's name, kept with each memory the model writes.
    pub session: Option<&'a str>,
    /// A memory about the request rides with it (`(already known: …)`): a question is
    /// then answered without the router ([`crate::memory::about`]).
    pub remembered: bool,
    /// The request's `[evidence]` block rides with it ([`crate::evidence`]): the model
    /// answers from it or calls a tool itself; no router or rule chooses the first step.
    pub evidence: bool,
}

/// How calls open and what grammar each opening continues under.
#[derive(Debug, Clone)]
pub struct CallForms {
    /// The family's own openers (`<tool_call>`): generation stops before them.
    pub openers: Vec<String>,
    /// After a native opener (the family's closer included).
    pub native: String,
    /// After the opener of a ```json block (the closing fence included), and of a bare
    /// JSON object that starts a line.
    pub fenced: String,
    pub bare: String,
    /// How a call the router chose is opened for the model (`<tool_call>\n` for Hermes)
    /// and the form the chosen tool's grammar continues in.
    pub chosen: (String, crate::tools::formats::CallForm),
}

/// How one call began.
struct Opening {
    /// The text before the call (shown to the user already).
    before: String,
    /// The opener the model wrote (`<tool_call>`, ```` ```json\n ````, or nothing).
    opener: String,
    /// The call's own text written for the model after the opener (a chosen tool's name
    /// and arguments key, [`crate::tools::grammar::chosen_split`]); empty when the model
    /// writes the whole call.
    head: String,
    /// What the model decodes after the head.
    grammar: String,
    /// The rest of a call whose arguments the request fixed entirely
    /// ([`crate::tools::grammar::fixed_rest`]): written, not decoded.
    fixed: Option<String>,
}

/// One call made during a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    pub call: Option<ToolCall>,
    pub result: Result<String, ToolError>,
    pub reused: bool,
}

/// The outcome of an agent turn.
#[derive(Debug, Clone)]
pub struct AgentTurn {
    /// The final generation (its text is the reply after the last tool result, without
    /// any `<think>` block; `stats.thinking_tokens` counts the thoughts' tokens).
    pub completion: Completion,
    /// The turn's `<think>` blocks (joined), kept apart from the reply.
    pub thought: Option<String>,
    pub calls: Vec<CallRecord>,
    pub compression: Option<Compression>,
    /// What the router chose for the first step (`None` when no router ran or it could
    /// not choose).
    pub route: Option<Route>,
    /// Where the turn's time went, step by step (also sent as [`TurnEvent::Step`]).
    pub steps: Vec<Step>,
    /// The skill the router chose, which ran as this turn (its route is the skill
    /// turn's own first step).
    pub skill: Option<String>,
}

/// Runs a turn; without tools it is a plain fitted turn. Its steps are sent as they end
/// and kept in [`AgentTurn::steps`].
pub fn run_agent_turn(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    user_text: &str,
    opts: &GenerateOptions,
    limits: TurnLimits,
    tools: Option<&ToolSet<'_>>,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<AgentTurn, TurnError> {
    let mut steps = Vec::new();
    let mut listen = |e: TurnEvent| {
        if let TurnEvent::Step(s) = &e {
            steps.push(s.clone());
        }
        on_event(e);
    };
    let turn = agent_turn(
        engine,
        conversation,
        user_text,
        opts,
        limits,
        tools,
        &mut listen,
    );
    turn.map(|t| AgentTurn { steps, ..t })
}

fn agent_turn(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    user_text: &str,
    opts: &GenerateOptions,
    limits: TurnLimits,
    tools: Option<&ToolSet<'_>>,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<AgentTurn, TurnError> {
    let before = conversation.turns().len();
    let previous = tools
        .filter(|t| t.route.is_some())
        .and_then(|t| steps::previous_exchange(conversation.turns(), &t.registry.list()));
    let started = std::time::Instant::now();
    let compression = prepare_turn(engine, conversation, user_text, limits)?;
    if let Some(c) = &compression {
        let what = format!("{} turns", c.folded_turns);
        Step::timed(StepKind::Compression, what, started).send(on_event);
    }
    let start = conversation.turns().len() - 1;
    let route = match first_step(engine, tools, opts, previous.as_deref(), on_event) {
        Ok(r) => r,
        Err(e) => {
            conversation.truncate(start);
            return Err(e.into());
        }
    };
    if let Some(Route::Skill(name)) = &route {
        // The caller runs the skill: its body carries the request from here.
        conversation.truncate(start);
        return Ok(AgentTurn {
            completion: Completion {
                text: String::new(),
                stop: StopReason::EndOfGeneration,
                stats: Default::default(),
            },
            thought: None,
            calls: Vec::new(),
            compression,
            route: Some(Route::Skill(name.clone())),
            steps: Vec::new(),
            skill: None,
        });
    }
    let result = rounds(engine, conversation, opts, tools, route.clone(), on_event);
    match result {
        Ok(((completion, thought), calls))
            if !(completion.stop == StopReason::Aborted
                && completion.text.trim().is_empty()
                && calls.is_empty()) =>
        {
            Ok(AgentTurn {
                completion,
                thought,
                calls,
                compression,
                route,
                steps: Vec::new(),
                skill: None,
            })
        }
        Ok(((completion, thought), calls)) => {
            conversation.truncate(start.min(before));
            Ok(AgentTurn {
                completion,
                thought,
                calls,
                compression,
                route,
                steps: Vec::new(),
                skill: None,
            })
        }
        Err(e) => {
            conversation.truncate(start);
            Err(e.into())
        }
    }
}

type Rounds = ((Completion, Option<String>), Vec<CallRecord>);

/// One generation with its `<think>` block streamed apart (as [`TurnEvent::Thought`]).
fn generate_sorted(
    engine: &mut dyn Engine,
    conversation: &Conversation,
    opts: &GenerateOptions,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<Completion, crate::engine::EngineError> {
    let mut stream = ThinkStream::default();
    let emit = |parts: Vec<Part>, on_event: &mut dyn FnMut(TurnEvent)| {
        for part in parts {
            on_event(match part {
                Part::Thought(t) => TurnEvent::Thought(t),
                Part::Answer(a) => TurnEvent::Text(a),
            });
        }
    };
    let c = engine.generate(&conversation.messages(), opts, &mut |t| {
        emit(stream.push(t), on_event)
    })?;
    emit(stream.finish(), on_event);
    Ok(c)
}

/// The turn's `<think>` blocks, moved out of each reply, and their tokens.
#[derive(Default)]
struct Thoughts {
    texts: Vec<String>,
    tokens: usize,
}

impl Thoughts {
    /// Moves the thought out of `c.text` (its tokens counted in `c.stats` too).
    fn take(&mut self, engine: &dyn Engine, c: &mut Completion) {
        let split = think::split(&c.text);
        if let Some(thought) = split.thought {
            c.stats.thinking_tokens += engine.count_tokens(&thought);
            self.texts.push(thought);
            c.text = split.answer;
        }
        self.tokens += c.stats.thinking_tokens;
    }

    /// The last reply with the whole turn's thinking tokens, and the thoughts joined.
    fn close(self, mut c: Completion) -> (Completion, Option<String>) {
        c.stats.thinking_tokens = self.tokens;
        let thought = (!self.texts.is_empty()).then(|| self.texts.join("\n\n"));
        (c, thought)
    }
}

/// A call the stream did not catch (JSON after text on its line, another family's
/// opener) is still a call once the reply is whole: it is run, after the reply is kept.
fn call_in_text(
    engine: &dyn Engine,
    conversation: &mut Conversation,
    set: &ToolSet<'_>,
    text: &str,
    seen: &mut Seen,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Option<CallRecord> {
    let found = formats::find_call(text, &set.registry.list())?;
    conversation.push_assistant(text);
    let counter = Counting(engine);
    Some(run_call(
        conversation,
        set,
        Ok(found.call),
        seen,
        &counter,
        on_event,
    ))
}

/// The reply that ends the turn, kept. `capped`: the tools of a turn past its call cap,
/// where an empty reply means the model tried yet another call; it gets once more with
/// the answer begun for it, else says so rather than leave an empty reply.
fn last_reply(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    opts: &GenerateOptions,
    capped: Option<&ToolSet<'_>>,
    mut c: Completion,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<Completion, crate::engine::EngineError> {
    c.text = answer::without_template(&c.text);
    if let Some(set) = capped.filter(|_| c.text.trim().is_empty()) {
        c = answer_begun(engine, conversation, opts, set, on_event)?;
    }
    // A reply that only says the request again: the last result stands for it.
    if parrot::echoes_request(conversation, &c.text) {
        if let Some(text) = parrot::instead("", conversation) {
            on_event(TurnEvent::Notice(ECHOED.into()));
            on_event(TurnEvent::Text(text.clone()));
            c.text = text;
        }
    }
    conversation.push_assistant(&c.text);
    Ok(c)
}

/// Said where a reply only repeated the request and the last result stands for it.
const ECHOED: &str = "(the model repeated the question instead of answering; the last result:)";

/// Results of the calls made so far in a turn, by their exact call text.
type Seen = HashMap<String, Result<String, ToolError>>;

fn rounds(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    opts: &GenerateOptions,
    tools: Option<&ToolSet<'_>>,
    mut first: Option<Route>,
    on_event: &mut dyn FnMut(TurnEvent),
) -> Result<Rounds, crate::engine::EngineError> {
    let mut calls: Vec<CallRecord> = Vec::new();
    let mut seen = Seen::new();
    let mut thoughts = Thoughts::default();
    // After a routed call whose result may answer the request (or when the router says
    // so), the model answers from the results: small models otherwise call the same tool
    // again and again. Where the request is still open the router chooses the next step.
    let mut answer_next = false;
    // The user's message: this turn's rounds follow it.
    let user_at = conversation.turns().len().saturating_sub(1);
    let mut room = Room::Left;
    let mut turn = Turn {
        engine,
        conversation,
        opts,
        calls: &mut calls,
        seen: &mut seen,
        user_at,
    };
    loop {
        if room == Room::None {
            // Said once: the turn answers next and ends.
            on_event(TurnEvent::Notice(no_room_notice(turn.engine.info().n_ctx)));
        }
        if let (Some(set), Some(Route::Tool(name))) = (tools, &first) {
            let (r, next) = turn.routed(set, name, on_event)?;
            room = r;
            (first, answer_next) = next;
            continue;
        }
        // A call repeated word for word is answered from the first result, and then the
        // model must answer: small models otherwise repeat it until the round cap. So
        // must a model whose results no longer fit in the context.
        let repeated = turn.calls.last().is_some_and(|c: &CallRecord| c.reused);
        let may_call = tools.is_some_and(|t| turn.calls.len() < t.max_rounds)
            && !repeated
            && room == Room::Left;
        let routed_answer = first.take() == Some(Route::Answer);
        let must_answer = routed_answer || std::mem::take(&mut answer_next) || room != Room::Left;
        if let Some(c) = shown_answer(turn.conversation, tools, turn.calls, on_event) {
            return Ok((thoughts.close(c), calls));
        }
        let asked = Asked {
            tools,
            may_call,
            must_answer,
            routed_answer,
        };
        match turn.generated(asked, &mut thoughts, on_event)? {
            Round::Next(r) => room = r,
            Round::Done(c) => return Ok((thoughts.close(c), calls)),
        }
    }
}

/// Asked to see the lines just read, or a listing whose result is the answer: it is the
/// answer, as it came ([`shown`]), kept in the conversation; nothing is generated.
fn shown_answer(
    conversation: &mut Conversation,
    tools: Option<&ToolSet<'_>>,
    calls: &[CallRecord],
    on_event: &mut dyn FnMut(TurnEvent),
) -> Option<Completion> {
    let set = tools?;
    let text = shown::lines_shown(set.request, calls)
        .or_else(|| shown::result_shown(set.registry, calls))?;
    on_event(TurnEvent::Text(text.clone()));
    conversation.push_assistant(&text);
    Some(Completion {
        text,
        stop: StopReason::EndOfGeneration,
        stats: Default::default(),
    })
}

fn after_call(
    engine: &mut dyn Engine,
    conversation: &mut Conversation,
    opts: &GenerateOptions,
    set: &ToolSet<'_>,
    calls: &mut Vec<CallRecord>,
    record: CallRecord,
    user_at: usize,
) -> Result<Room, crate::engine::EngineError> {
    calls.push(record);
    let room = fit_turn(engine, conversation, opts, user_at, set.turn_tokens)?;
    match room {
        Room::Left => limit_rounds(conversation, set, calls.len()),
        Room::Spent => conversation.push_tool(LIMIT_NOTE),
        Room::None => {}
    }
    Ok(room)
}

/// The call that stopped a generation: a JSON head the watcher found, else the family's
/// own opener.
fn opening(forms: &CallForms, before: String, head: Option<JsonHead>) -> Opening {
    match head {
        Some(h) if h.opener.is_empty() => Opening {
            before,
            opener: String::new(),
            head: String::new(),
            grammar: forms.bare.clone(),
            fixed: None,
        },
        Some(h) => Opening {
            before,
            opener: h.opener,
            head: String::new(),
            grammar: forms.fenced.clone(),
            fixed: None,
        },
        None => Opening {
            before,
            opener: forms.openers.first().cloned().unwrap_or_default(),
            head: String::new(),
            grammar: forms.native.clone(),
            fixed: None,
        },
    }
}
