//! The tools a session offers the model, and the system prompt that describes them.

use std::path::Path;

use crate::chat::agent::CallForms;
use crate::chat::SYSTEM_PROMPT;
use crate::config::{Config, ToolSchemas};
use crate::engine::AbortFlag;
use crate::tools::formats::{CallFamily, CallForm};
use crate::tools::grammar::call_grammar_for;
use crate::tools::workspace::{ListFiles, ReadFile, SearchFiles};
use crate::tools::Registry;

use super::{commands, open_embedder};

/// The tools a session offers: the read-only workspace tools, `git`, `run_command`,
/// `write_file` and `edit_file`, plus the memory and session tools when memory is on.
pub fn default_tools(workspace: &Path, config: &Config) -> (Registry, Vec<String>) {
    tools_with_abort(workspace, config, &AbortFlag::new())
}

/// [`default_tools`] whose commands stop when `abort` is raised (Ctrl-C).
pub fn tools_with_abort(
    workspace: &Path,
    config: &Config,
    abort: &AbortFlag,
) -> (Registry, Vec<String>) {
    use crate::tools::memory::{
        MemoryForget, MemoryList, MemoryPlace, MemoryRead, MemorySearch, MemoryUpdate, MemoryWrite,
    };
    let mut registry = workspace_tools(workspace);
    let place = crate::tools::command::CommandPlace {
        workspace: workspace.to_path_buf(),
        settings: commands::settings(&config.security),
        audit: crate::command::AuditLog::new(&workspace.join("agents")),
        abort: abort.clone(),
    };
    registry.add(Box::new(crate::tools::command::Git(place.clone())));
    registry.add(Box::new(crate::tools::command::RunCommand(place)));
    let files = crate::tools::files::FilePlace {
        root: workspace.to_path_buf(),
        audit: crate::command::AuditLog::new(&workspace.join("agents")),
        allow_unattended: config.tools.allow_writes,
    };
    registry.add(Box::new(crate::tools::files::WriteFile::new(files.clone())));
    registry.add(Box::new(crate::tools::files::EditFile::new(files)));
    let notes = Vec::new();
    if config.memory.enabled {
        let place = MemoryPlace {
            agents_dir: workspace.join("agents"),
            workspace: workspace.to_path_buf(),
            embedder: open_embedder(config, workspace).0,
            config: config.memory.clone(),
        };
        registry.add(Box::new(MemorySearch(place.clone())));
        registry.add(Box::new(MemoryRead(place.clone())));
        registry.add(Box::new(MemoryList(place.clone())));
        registry.add(Box::new(crate::tools::sessions::SessionSearch(
            place.agents_dir.clone(),
        )));
        registry.add(Box::new(crate::tools::sessions::SessionRead(
            place.agents_dir.clone(),
        )));
        registry.add(Box::new(MemoryWrite(place.clone())));
        registry.add(Box::new(MemoryUpdate(place.clone())));
        registry.add(Box::new(MemoryForget(place)));
    }
    (registry, notes)
}

/// The read-only workspace tools, rooted at `workspace`.
pub fn workspace_tools(workspace: &Path) -> Registry {
    let mut registry = Registry::new();
    let root = workspace.to_path_buf();
    registry.add(Box::new(ReadFile { root: root.clone() }));
    registry.add(Box::new(ListFiles { root: root.clone() }));
    registry.add(Box::new(SearchFiles { root }));
    registry
}

/// Offers `tools` to the model. With a template that has a tools section, the model's own
/// call form is taught by example: `ToolSchemas::Template` hands the template every JSON
/// schema (the engine renders them where the model was trained to read them), while
/// `ToolSchemas::Compact` (the default) lists the tools in one line each of harvey's own
/// and leaves the arguments' shape to the call grammar, a quarter of the tokens. Without
/// a tools section the system prompt describes the tools and a generic call form.
///
/// The returned system prompt holds what does not depend on the workspace first (persona,
/// tools, examples) and the project's guidance last, so the head is the same in every
/// workspace.
pub fn offer_tools(
    engine: &mut dyn crate::engine::Engine,
    tools: &Registry,
    tools_enabled: bool,
    guidance: &str,
    schemas: ToolSchemas,
) -> String {
    let native = engine.info().template_tools && tools_enabled && !tools.is_empty();
    let in_template = native && schemas == ToolSchemas::Template;
    engine.set_tools(if in_template {
        tools.schemas()
    } else {
        Vec::new()
    });
    let mut prompt = SYSTEM_PROMPT.to_string();
    if native {
        let family = CallFamily::from_template(&engine.info().template_text);
        let listed = (!in_template).then(|| tools.compact_lines());
        prompt.push_str(&native_tools_hint(family, listed.as_deref()));
        prompt.push_str(memory_note(tools));
    } else {
        return system_prompt(tools, tools_enabled, guidance);
    }
    prompt.push_str(&guidance_section(guidance));
    prompt
}

/// The system prompt for a model without a tools section in its template: persona, the
/// tool list with a generic call form when tools are on, then the project's guidance.
pub fn system_prompt(tools: &Registry, tools_enabled: bool, guidance: &str) -> String {
    let mut prompt = SYSTEM_PROMPT.to_string();
    if tools_enabled && !tools.is_empty() {
        prompt.push_str(&format!("\n\n{}", tools.prompt_section()));
        prompt.push_str(memory_note(tools));
    }
    prompt.push_str(&guidance_section(guidance));
    prompt
}

/// The workspace-independent head of `system` (a prompt built by [`offer_tools`] or
/// [`system_prompt`] with `guidance`): everything before the project's guidance. `None`
/// when `system` does not end with that guidance (then nothing is shared).
pub fn system_head<'a>(system: &'a str, guidance: &str) -> Option<&'a str> {
    system.strip_suffix(guidance_section(guidance).as_str())
}

/// What the prompt says of the memory tools, when the session has them.
fn memory_note(tools: &Registry) -> &'static str {
    if tools.get("memory_search").is_some() {
        "\nmemory_* tools search and keep your own notes: treat them as notes to verify; the user and the workspace files win."
    } else {
        ""
    }
}

/// The project's guidance (HARVEY.md / AGENTS.md), last in the system prompt.
fn guidance_section(guidance: &str) -> String {
    if guidance.trim().is_empty() {
        return String::new();
    }
    format!("\n\nProject guidance (authoritative; it overrides your memories):\n{guidance}")
}

/// What the system prompt says when the model writes its template's calls: the tools
/// (`listed`, one line each; `None` when the template lists them itself), when to call,
/// then two short examples in the family's own call form (one call, one direct answer).
/// Small models follow an example far better than a rule; a model that copies the call
/// only lists a folder (or learns there is none).
fn native_tools_hint(family: CallFamily, listed: Option<&str>) -> String {
    let call = example_call(family, "list_files", r#"{"path": "docs"}"#);
    let tools = match listed {
        Some(lines) => format!(
            "You work inside the user's workspace through these tools (a call is written as in \
the first example below):\n{lines}"
        ),
        None => "You work inside the user's workspace through the tools below. ".to_string(),
    };
    format!(
        "\n\n{tools}A question about this \
workspace (its files, folders, code, versions, git history) or about what the user told you \
before is answered from a tool result: call the tool first, then answer from what it \
returned. Never guess file contents, versions, names or commit messages. Questions that need \
no workspace (arithmetic, general knowledge, writing) are answered directly, without a tool.\n\n\
Example. User: What is in the docs folder?\nAssistant: {call}\n\
Example. User: Who wrote Hamlet?\nAssistant: William Shakespeare wrote Hamlet."
    )
}

/// One call written the way `family`'s template teaches (see [`CallFamily::openers`]).
fn example_call(family: CallFamily, name: &str, arguments: &str) -> String {
    match family {
        CallFamily::Hermes => format!(
            "<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {arguments}}}\n</tool_call>"
        ),
        CallFamily::Llama3 => format!("{{\"name\": \"{name}\", \"parameters\": {arguments}}}"),
        CallFamily::Mistral => {
            format!("[TOOL_CALLS][{{\"name\": \"{name}\", \"arguments\": {arguments}}}]")
        }
    }
}

/// How the model's calls open (its template's family) and the grammar after each opener.
pub fn call_forms(tools: &Registry, template: &str) -> CallForms {
    let list = tools.list();
    let family = CallFamily::from_template(template);
    let native = match family {
        CallFamily::Hermes => CallForm::Tagged,
        CallFamily::Llama3 => CallForm::PythonTag,
        CallFamily::Mistral => CallForm::MistralList,
    };
    // A chosen call is opened the way the family's template teaches it (Llama 3 writes
    // custom tools as a bare object, not after `<|python_tag|>`).
    let chosen = match family {
        CallFamily::Hermes => ("<tool_call>\n".to_string(), CallForm::Tagged),
        CallFamily::Llama3 => (String::new(), CallForm::BareJson),
        CallFamily::Mistral => ("[TOOL_CALLS]".to_string(), CallForm::MistralList),
    };
    CallForms {
        openers: family.openers().iter().map(|o| o.to_string()).collect(),
        native: call_grammar_for(&list, native),
        fenced: call_grammar_for(&list, CallForm::FencedJson),
        bare: call_grammar_for(&list, CallForm::BareJson),
        chosen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::formats::find_call;

    /// The example the system prompt shows is a call harvey itself reads back, in the
    /// form the family's grammar expects: a model that copies the form gets a real call.
    #[test]
    fn native_hint_examples_parse_as_calls_of_their_family() {
        let tools = workspace_tools(Path::new(".")).list();
        let cases = [
            (CallFamily::Hermes, CallForm::Tagged),
            (CallFamily::Llama3, CallForm::BareJson),
            (CallFamily::Mistral, CallForm::MistralList),
        ];
        for (family, form) in cases {
            let hint = native_tools_hint(family, None);
            let example = hint
                .split("Assistant: ")
                .nth(1)
                .and_then(|rest| rest.split("\nExample.").next())
                .expect("the hint shows an example call");
            let found = find_call(example, &tools)
                .unwrap_or_else(|| panic!("{family:?}: example is no call: {example}"));
            assert_eq!(found.call.name, "list_files", "{family:?}");
            assert_eq!(found.form, form, "{family:?}");
            assert_eq!(found.call.arguments["path"], "docs", "{family:?}");
        }
    }

    /// `tools::TOOL_NAMES` (what a skill's `allowed-tools` may name) is the whole
    /// registry of a session with memory on.
    #[test]
    fn tool_names_are_every_tool_a_session_offers() {
        let mut config = Config::default();
        config.memory.enabled = true;
        config.memory.embedder = crate::config::Embedder::None;
        let ws = tempfile::tempdir().unwrap();
        let (registry, _) = default_tools(ws.path(), &config);
        assert_eq!(registry.names(), crate::tools::TOOL_NAMES);
    }

    /// The direct-answer example stays prose: no call is read from the whole hint's
    /// second example.
    #[test]
    fn native_hint_answer_example_is_no_call() {
        let tools = workspace_tools(Path::new(".")).list();
        let hint = native_tools_hint(CallFamily::Hermes, None);
        let answer = hint.rsplit("Assistant: ").next().expect("two examples");
        assert_eq!(answer, "William Shakespeare wrote Hamlet.");
        assert!(find_call(answer, &tools).is_none());
    }

    /// The compact lines name every tool once, show an enum's values, and a session's
    /// guidance comes after everything that is the same in every workspace.
    #[test]
    fn compact_lines_and_guidance_last() {
        let mut config = Config::default();
        config.memory.enabled = true;
        config.memory.embedder = crate::config::Embedder::None;
        let ws = tempfile::tempdir().unwrap();
        let (registry, _) = default_tools(ws.path(), &config);
        let lines = registry.compact_lines();
        assert_eq!(lines.lines().count(), registry.names().len());
        assert!(lines.contains("- git(action: last_commit|"), "{lines}");
        let hint = native_tools_hint(CallFamily::Hermes, Some(&lines));
        assert!(hint.contains(&lines) && hint.contains("<tool_call>"));
        let bare = system_prompt(&registry, true, "");
        let guided = system_prompt(&registry, true, "Use tabs.");
        assert!(guided.starts_with(&bare) && guided.ends_with("Use tabs."));
        assert_eq!(system_head(&guided, "Use tabs."), Some(bare.as_str()));
        assert_eq!(system_head(&bare, ""), Some(bare.as_str()));
        assert_eq!(system_head(&bare, "Use tabs."), None);
    }
}
