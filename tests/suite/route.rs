//! The router (`tools.route`): the first step of a turn chosen in an aside call, the
//! chosen call opened for the model, "no tool" holding the family's opener back; and with a
//! real instruction-tuned model, that every choice is one of the offered names.

use harvey::app::{call_forms, workspace_tools};
use harvey::chat::agent::{run_agent_turn, AgentTurn, CallForms, ToolSet, TurnEvent};
use harvey::chat::route::{self, Route};
use harvey::chat::{Conversation, TurnLimits};
use harvey::engine::scripted::ScriptedEngine;
use harvey::engine::{GenerateOptions, Role, SamplingParams};
use harvey::tools::Registry;

use crate::support::greedy;

const HERMES: &str = "{% if tools %}<tool_call>{% endif %}";

pub(super) fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "deploy with ./deploy.sh\n").unwrap();
    dir
}

/// One turn on `request` with the router on, the scripted `replies` answering (the
/// router's first).
pub(super) fn routed_turn(
    registry: &Registry,
    replies: &[&str],
    request: &str,
) -> (AgentTurn, ScriptedEngine, Conversation) {
    routed_turn_with(registry, replies, request, &greedy(64))
}

fn routed_turn_with(
    registry: &Registry,
    replies: &[&str],
    request: &str,
    opts: &GenerateOptions,
) -> (AgentTurn, ScriptedEngine, Conversation) {
    routed(registry, replies, request, opts, &mut |_| {})
}

fn routed_turn_events(
    registry: &Registry,
    replies: &[&str],
    request: &str,
    events: &mut Vec<TurnEvent>,
) -> (AgentTurn, ScriptedEngine, Conversation) {
    routed(registry, replies, request, &greedy(64), &mut |e| {
        events.push(e)
    })
}

fn tool_set<'a>(registry: &'a Registry, forms: &'a CallForms, request: &'a str) -> ToolSet<'a> {
    ToolSet {
        registry,
        forms,
        max_call_tokens: 256,
        max_rounds: 3,
        turn_tokens: 0,
        confirm: None,
        ask: None,
        ask_files: None,
        route: Some(request),
        route_saved: None,
        skills: &[],
        request,
        session: None,
        remembered: false,
        evidence: false,
    }
}

/// `requests` as the turns of one conversation with the router on, answered by `engine`.
pub(super) fn conversation_of(
    engine: &mut ScriptedEngine,
    registry: &Registry,
    requests: &[&str],
) -> (Vec<AgentTurn>, Conversation) {
    let forms = call_forms(registry, HERMES);
    let mut conversation = Conversation::new("system");
    let mut turns = Vec::new();
    for request in requests {
        let set = tool_set(registry, &forms, request);
        let turn = run_agent_turn(
            engine,
            &mut conversation,
            request,
            &greedy(64),
            limits(),
            Some(&set),
            &mut |_| {},
        )
        .unwrap();
        turns.push(turn);
    }
    (turns, conversation)
}

fn limits() -> TurnLimits {
    TurnLimits {
        reply_reserve: 256,
        keep_turns: None,
    }
}

fn routed(
    registry: &Registry,
    replies: &[&str],
    request: &str,
    opts: &GenerateOptions,
    on_event: &mut dyn FnMut(TurnEvent),
) -> (AgentTurn, ScriptedEngine, Conversation) {
    let mut engine = ScriptedEngine::new(8192, replies.iter().copied());
    let mut conversation = Conversation::new("system");
    let forms = call_forms(registry, HERMES);
    let set = tool_set(registry, &forms, request);
    let turn = run_agent_turn(
        &mut engine,
        &mut conversation,
        request,
        opts,
        limits(),
        Some(&set),
        on_event,
    )
    .unwrap();
    (turn, engine, conversation)
}

/// The router picks `read_file`, the model writes its arguments (after the prefilled head),
/// then the answer's first token (under the answer-start grammar) and the rest.
const READ_NOTES_THEN_ANSWER: [&str; 4] = [
    "read_file",
    r#" {"path": "notes.txt"}}</tool_call>"#,
    "You ",
    "deploy with ./deploy.sh.",
];

#[test]
fn a_chosen_tool_is_opened_for_the_model_which_writes_only_its_arguments() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let (turn, engine, conversation) =
        routed_turn(&registry, &READ_NOTES_THEN_ANSWER, "How do I deploy?");
    assert_eq!(turn.route, Some(Route::Tool("read_file".into())));
    assert_eq!(engine.aside_calls, 1, "the router runs aside, once");
    let router_prompt = &engine.prompts[0];
    assert!(router_prompt[0].content.contains("- read_file: "));
    assert_eq!(router_prompt[1].content, "How do I deploy?");
    assert_eq!(turn.calls.len(), 1);
    assert!(turn.calls[0].result.as_ref().unwrap().contains("deploy.sh"));
    assert_eq!(turn.completion.text, "You deploy with ./deploy.sh.");
    let call = conversation
        .turns()
        .iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert!(
        call.content
            .starts_with("<tool_call>\n{\"name\": \"read_file\""),
        "the family's opener is written for the model: {}",
        call.content
    );
    // The call's arguments are decoded under the grammar (nothing banned); the reply
    // after its result (its first token, then the rest) with the native opener held back.
    let held = vec!["<tool_call>".to_string()];
    assert_eq!(engine.banned, vec![vec![], held.clone(), held]);
}

/// After the chosen call's result, the answer is asked for with the user's request again
/// nearest the reply; that note is for the reply only and is not kept.
#[test]
fn the_answer_after_a_result_sees_the_request_again_and_the_note_is_not_kept() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let request = "How do I deploy?";
    let (turn, engine, conversation) = routed_turn(&registry, &READ_NOTES_THEN_ANSWER, request);
    assert_eq!(turn.completion.text, "You deploy with ./deploy.sh.");
    // The answer's two generations (its first token, then the rest): the result, then the note.
    for prompt in &engine.prompts[engine.prompts.len() - 2..] {
        let n = prompt.len();
        assert_eq!(prompt[n - 2].role, Role::Tool, "{prompt:?}");
        assert!(
            prompt[n - 1]
                .content
                .contains(&format!("in plain text: {request}")),
            "{:?}",
            prompt[n - 1]
        );
    }
    // The call's own generation saw no such note.
    let call_prompt = &engine.prompts[1];
    assert!(!call_prompt
        .iter()
        .any(|m| m.content.contains("in plain text: ")));
    assert!(!conversation
        .turns()
        .iter()
        .any(|m| m.content.contains("in plain text: ")));
}

/// The router's prompts of a turn (its system turn lists the options).
pub(super) fn router_requests(engine: &ScriptedEngine) -> Vec<String> {
    engine
        .prompts
        .iter()
        .filter(|p| p[0].content.contains("Options:"))
        .map(|p| p[1].content.clone())
        .collect()
}

/// A failed first step is not the end: the router chooses again, told what the last
/// step showed; a listing that only locates leads to a read; the answer comes from
/// what the turn found.
#[test]
fn after_a_failed_chosen_call_the_router_chooses_a_second_step() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let mut events = Vec::new();
    let (turn, engine, _) = routed_turn_events(
        &registry,
        &[
            "read_file",
            r#" {"path": "nope.txt"}}</tool_call>"#,
            "list_files",
            r#" {}}</tool_call>"#,
            "read_file",
            r#" {"path": "notes.txt"}}</tool_call>"#,
            "You ",
            "deploy with ./deploy.sh.",
        ],
        "How do I deploy?",
        &mut events,
    );
    let names: Vec<&str> = turn
        .calls
        .iter()
        .map(|c| c.call.as_ref().unwrap().name.as_str())
        .collect();
    assert_eq!(names, ["read_file", "list_files", "read_file"]);
    assert!(turn.calls[0].result.is_err());
    assert!(turn.calls[2].result.as_ref().unwrap().contains("deploy.sh"));
    assert_eq!(engine.aside_calls, 3);
    let asked = router_requests(&engine);
    assert_eq!(asked[0], "How do I deploy?");
    assert!(
        asked[1].starts_with("How do I deploy?\n(Done so far: read_file(")
            && asked[1].contains("failed: not found"),
        "{}",
        asked[1]
    );
    assert!(
        asked[2].contains("list_files({}) showed: notes.txt"),
        "{}",
        asked[2]
    );
    assert_eq!(turn.completion.text, "You deploy with ./deploy.sh.");
    let shown: Vec<&TurnEvent> = events
        .iter()
        .filter(|e| matches!(e, TurnEvent::ToolCall(_) | TurnEvent::Notice(_)))
        .collect();
    assert_eq!(shown.len(), 5, "each step is shown: {shown:?}");
}

/// The same call twice is answered from the first result and ends the steps.
#[test]
fn an_identical_second_call_is_not_run_again_and_the_turn_answers() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let call = r#" {"path": "nope.txt"}}</tool_call>"#;
    let (turn, engine, _) = routed_turn(
        &registry,
        &[
            "read_file",
            call,
            "read_file",
            call,
            "There is no such file.",
        ],
        "How do I deploy?",
    );
    assert_eq!(turn.calls.len(), 2);
    assert!(turn.calls[1].reused);
    assert_eq!(engine.aside_calls, 2);
    assert_eq!(turn.completion.text, "There is no such file.");
}

/// A follow-up's first step is chosen with the previous exchange in view.
#[test]
fn a_follow_ups_router_sees_the_previous_exchange() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let mut engine = ScriptedEngine::new(
        8192,
        [
            "read_file",
            r#" {"path": "notes.txt"}}</tool_call>"#,
            "You ",
            "deploy with ./deploy.sh.",
            "read_file",
            r#" {"path": "notes.txt", "start_line": 1}}</tool_call>"#,
            "Here ",
            "it is.",
        ],
    );
    conversation_of(
        &mut engine,
        &registry,
        &["How do I deploy?", "Show me its first line."],
    );
    let asked = router_requests(&engine);
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0], "How do I deploy?");
    assert_eq!(
        asked[1],
        "(Earlier the user asked: \"How do I deploy?\"; that used the file notes.txt; the answer began: \"You deploy with ./deploy.sh.\".)\nShow me its first line."
    );
}

#[test]
fn none_lets_the_model_answer_with_the_native_opener_held_back() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let (turn, engine, conversation) = routed_turn(
        &registry,
        &[route::Wording::PLAIN.none, "51.", ""],
        "What is 17 times 3?",
    );
    assert_eq!(turn.route, Some(Route::Answer));
    assert!(turn.calls.is_empty());
    assert_eq!(turn.completion.text, "51.");
    assert_eq!(engine.aside_calls, 1);
    let held = vec!["<tool_call>".to_string()];
    assert_eq!(engine.banned, vec![held.clone(), held]);
    // The reply's prompts (its first token, the rest) end with a note after the user's
    // message saying no tool is needed; the conversation does not keep it.
    for prompt in &engine.prompts[1..] {
        let n = prompt.len();
        assert_eq!(prompt[n - 2].content, "What is 17 times 3?");
        assert!(
            prompt[n - 1].content.contains("needs no tool"),
            "{:?}",
            prompt[n - 1]
        );
    }
    let kept: Vec<_> = conversation.turns().iter().map(|m| m.role).collect();
    assert_eq!(kept, vec![Role::User, Role::Assistant]);
}

/// The answer's first token is chosen greedily under sampling settings that draw: with
/// the opener banned, what is left of a tool-primed model's distribution is a flat tail
/// (the 1.5B began "What is 17 times 3?" with "3" at temperature 0.7). The rest of the
/// reply is drawn as configured.
#[test]
fn the_answers_first_token_is_greedy_and_the_rest_sampled_as_configured() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let drawn = SamplingParams {
        temperature: 0.7,
        top_k: 40,
        top_p: 0.9,
        min_p: 0.05,
        repeat_penalty: 1.1,
        repeat_last_n: 64,
        seed: 7,
    };
    let mut opts = greedy(64);
    opts.sampling = drawn.clone();
    let (turn, engine, _) = routed_turn_with(
        &registry,
        &[route::Wording::PLAIN.none, "17 ", "times 3 is 51."],
        "What is 17 times 3?",
        &opts,
    );
    assert_eq!(turn.route, Some(Route::Answer));
    assert_eq!(turn.completion.text, "17 times 3 is 51.");
    assert_eq!(engine.sampling.len(), 2, "{:?}", engine.sampling);
    assert!(engine.sampling[0].is_greedy(), "{:?}", engine.sampling[0]);
    assert_eq!(engine.sampling[1], drawn);
}

#[test]
fn a_reply_that_names_no_offered_step_leaves_the_choice_to_the_model() {
    let dir = workspace();
    let registry = workspace_tools(dir.path());
    let (turn, _, _) = routed_turn(
        &registry,
        &[
            "calculator",
            r#"<tool_call>{"name": "list_files", "arguments": {"path": "."}}</tool_call>"#,
            "There is notes.txt.",
        ],
        "What is here?",
    );
    assert_eq!(turn.route, None);
    assert_eq!(turn.calls.len(), 1, "the model's own call still runs");
    assert_eq!(turn.completion.text, "There is notes.txt.");
}

#[test]
fn every_offered_first_step_has_an_example_in_the_router_prompt() {
    let dir = workspace();
    // A memory, so that memory_search has something to find and is offered.
    let notes = dir.path().join("agents/memories/project_fact");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("kestrel.spmd"), "---\n---\nstaging is kestrel\n").unwrap();
    let (registry, _) = harvey::app::default_tools(dir.path(), &harvey::config::Config::default());
    let routes = registry.routes();
    assert!(routes.len() >= 9, "{routes:?}");
    for wording in [route::Wording::PLAIN, route::Wording::STEERED] {
        let system = &route::messages(&registry, wording, "Hi")[0].content;
        for name in routes
            .iter()
            .map(|(n, _)| wording.label(n))
            .chain([wording.none])
        {
            assert!(
                system.contains(&format!(" -> {name}\n")),
                "no example for {name} ({wording:?})"
            );
        }
    }
}

/// With Qwen2.5-Coder-0.5B (its own template, greedy, under the router's grammar): every
/// choice is one of the offered names, for requests of every kind. Which name is the
/// model's business; the agent benchmark measures that.
#[test]
fn qwen_routes_every_request_to_an_offered_name() {
    let mut engine = crate::support::load(crate::support::qwen_path(), 2048, 256);
    let dir = workspace();
    let (registry, _) = harvey::app::default_tools(dir.path(), &harvey::config::Config::default());
    let requests = [
        "What version is this package?",
        "What is 17 times 3?",
        "Remember that I prefer tabs over spaces.",
        "Who made the last commit?",
        "",
    ];
    for request in requests {
        let choice = route::choose(
            &mut engine,
            &registry,
            request,
            request,
            &Default::default(),
            None,
        )
        .unwrap_or_else(|e| panic!("{request:?}: {e}"));
        assert!(choice.is_some(), "{request:?}: no offered name");
    }
    assert_eq!(engine.cached_tokens(), 0, "the chat's cache is left alone");
}

/// The names of the router's saved states in `dir`, with their modification times.
fn saved_states(dir: &std::path::Path) -> Vec<(String, std::time::SystemTime)> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let at = e.metadata().and_then(|m| m.modified()).ok()?;
            (name.starts_with("aside-") && name.ends_with(".state")).then_some((name, at))
        })
        .collect();
    found.sort();
    found
}

/// The router's instructions are decoded once per workspace: the first process saves
/// them under the cache directory, the next restores them (no new save) and chooses the
/// same names, a damaged state is decoded and saved again; the chat's cache is never
/// touched.
#[test]
fn qwen_router_instructions_are_saved_once_then_restored_with_the_same_choices() {
    use harvey::chat::prefix_cache::{restore_or_save_held, Held, PrefixOutcome};
    use harvey::engine::Engine;
    let load = || crate::support::load(crate::support::qwen_path(), 2048, 256);
    let dir = workspace();
    let cache = tempfile::tempdir().unwrap();
    let (registry, _) = harvey::app::default_tools(dir.path(), &harvey::config::Config::default());
    let saved = Some(route::Saved {
        dir: cache.path(),
        keep: 2,
    });
    let requests = ["What is 17 times 3?", "Who made the last commit?"];
    let choose_all = |engine: &mut harvey::engine::LlamaEngine| -> Vec<Option<Route>> {
        requests
            .iter()
            .map(|r| route::choose(engine, &registry, r, r, &Default::default(), saved).unwrap())
            .collect()
    };

    let mut first = load();
    let chosen = choose_all(&mut first);
    let states = saved_states(cache.path());
    assert_eq!(states.len(), 1, "{states:?}");
    let ids = route::instruction_ids(&first, &registry);
    assert!(ids.len() > 100, "{} instruction tokens", ids.len());
    assert!(first.kept_aside_len() >= ids.len(), "kept between messages");
    assert_eq!(first.cached_tokens(), 0, "the chat's cache is left alone");

    let mut second = load();
    assert_eq!(choose_all(&mut second), chosen);
    assert_eq!(
        saved_states(cache.path()),
        states,
        "restored, not saved again"
    );
    assert_eq!(second.cached_tokens(), 0);
    let mut third = load();
    assert_eq!(
        restore_or_save_held(Held::Aside, &mut third, cache.path(), &ids, 2),
        PrefixOutcome::Restored { tokens: ids.len() }
    );
    assert_eq!(third.kept_aside_len(), ids.len());

    // A damaged state is never loaded: decoded again, saved again, same choices.
    let state = cache.path().join(&states[0].0);
    let mut bytes = std::fs::read(&state).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&state, bytes).unwrap();
    let mut fourth = load();
    assert_eq!(choose_all(&mut fourth), chosen);
    let mut fifth = load();
    assert_eq!(
        restore_or_save_held(Held::Aside, &mut fifth, cache.path(), &ids, 2),
        PrefixOutcome::Restored { tokens: ids.len() }
    );
}

/// The REPL's start work (`App::prepare_start`, run while its first prompt waits) makes
/// the router's instructions ready; they are harvey's own text, so they go to the
/// shared cache: a second workspace restores them (no new state), and no workspace's
/// words are in what was saved.
#[test]
fn qwen_router_instructions_are_shared_across_workspaces_without_their_words() {
    let shared = tempfile::tempdir().unwrap();
    let mut config = harvey::config::Config::default();
    config.engine.n_ctx = 2048;
    config.memory.embedder = harvey::config::Embedder::None;
    let open = |ws: &std::path::Path| {
        let engine = crate::support::load(crate::support::qwen_path(), 2048, 256);
        let mut app =
            harvey::app::App::with_engine(ws.to_path_buf(), config.clone(), Box::new(engine));
        app.set_shared_cache(Some(shared.path().to_path_buf()));
        app
    };
    // A memory in each workspace: with one, memory_search is offered (its line is part
    // of the instructions), so both offer the same steps.
    let remember = |app: &mut harvey::app::App, fact: &str| {
        let mut out = Vec::new();
        harvey::repl::handle_line(app, &format!("/memory add project_fact {fact}"), &mut out)
            .unwrap();
    };
    let one = workspace();
    let mut a = open(one.path());
    remember(&mut a, "The build host is osprey");
    assert_eq!(a.prepare_start(), None, "the prefix was saved");
    let states = saved_states(shared.path());
    assert_eq!(states.len(), 1, "{states:?}");
    assert!(
        a.engine().kept_aside_len() > 100,
        "ready for the first message"
    );
    assert!(
        saved_states(&one.path().join("agents/cache")).is_empty(),
        "not in the workspace"
    );
    drop(a);

    let two = workspace();
    std::fs::write(two.path().join("HARVEY.md"), "Always zebra the quokka.").unwrap();
    let mut b = open(two.path());
    remember(&mut b, "The staging host is kestrel");
    b.prepare_start();
    assert!(b.engine().kept_aside_len() > 100);
    assert_eq!(
        saved_states(shared.path()),
        states,
        "restored, not saved again"
    );
    for entry in std::fs::read_dir(shared.path()).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for word in ["kestrel", "osprey", "zebra", "quokka", "deploy.sh"] {
            assert!(!text.contains(word), "{word} in {}", entry.path().display());
        }
    }
}
