//! Applying the chosen chat template: the file's Jinja template through `jinja.rs`, or a
//! format llama.cpp knows through its built-in applier. Choosing walks
//! [`template::candidates`] in order and keeps the first that compiles and renders a probe
//! chat (system, user, assistant, user); the probe's special tokens become the stops that
//! keep template text out of replies.

use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use serde_json::Value as Json;

use super::jinja::JinjaTemplate;
use super::load::{sha256_hex, specials_in};
use super::prompt::placeholder;
use super::template::{self, TemplateChoice};
use super::types::{Message, Role};

/// How a chat is turned into prompt text.
pub enum Renderer {
    Jinja(Box<JinjaTemplate>),
    Builtin(LlamaChatTemplate),
}

/// The template in use, how it renders, and what it stops before.
pub struct Chosen {
    pub renderer: Renderer,
    pub choice: TemplateChoice,
    /// Keys saved state: the template text (and how it is applied) or the built-in name.
    pub fingerprint: String,
    /// Template text a reply stops before (turn markers spelt out as plain text).
    pub turn_stops: Vec<String>,
    /// Whether a second system message renders as a turn of its own.
    pub system_turns: bool,
}

impl Renderer {
    /// The prompt for `messages`, with `tools` (JSON schemas) where the template has a
    /// place for them, ending with the assistant's opener.
    pub fn render(
        &self,
        model: &LlamaModel,
        messages: &[Message],
        tools: &[Json],
    ) -> Result<String, String> {
        match self {
            Renderer::Jinja(t) => t.render(messages, tools, true),
            Renderer::Builtin(t) => {
                let chat = messages
                    .iter()
                    .map(|m| LlamaChatMessage::new(m.role.as_str().to_string(), m.content.clone()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| e.to_string())?;
                model
                    .apply_chat_template(t, &chat, true)
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// Whether the template itself lists the tools (then the system prompt must not).
    pub fn has_tools_section(&self) -> bool {
        matches!(self, Renderer::Jinja(t) if t.knows_tools())
    }
}

/// Walks the candidates for `setting` (`model.template`) and keeps the first that works;
/// the error lists why each failed.
pub fn choose(model: &LlamaModel, setting: Option<&str>) -> Result<Chosen, String> {
    let file = model
        .chat_template(None)
        .ok()
        .and_then(|t| t.to_string().ok());
    let arch = model
        .meta_val_str("general.architecture")
        .unwrap_or_default();
    let has_token = |text: &str| super::load::is_special_token(model, text);
    let mut failures = Vec::new();
    for choice in template::candidates(setting, file.as_deref(), &arch, &has_token) {
        match build(model, &choice) {
            Ok((renderer, turn_stops)) => {
                let system_turns = renders_second_system(model, &renderer);
                let how = if choice.jinja { "jinja" } else { "builtin" };
                let fingerprint = sha256_hex(format!("{how}:{}", choice.template).as_bytes());
                return Ok(Chosen {
                    renderer,
                    choice,
                    fingerprint,
                    turn_stops,
                    system_turns,
                });
            }
            Err(e) => failures.push(format!("{} ({}): {e}", choice.family, choice.reason)),
        }
    }
    Err(failures.join("; "))
}

/// Whether `[system, system, user]` renders with the second system text in a turn of its
/// own (some templates refuse it, some fold it into the user turn).
fn renders_second_system(model: &LlamaModel, renderer: &Renderer) -> bool {
    let probe = [
        Message::new(Role::System, placeholder(0)),
        Message::new(Role::System, placeholder(1)),
        Message::new(Role::User, placeholder(2)),
    ];
    let Ok(rendered) = renderer.render(model, &probe, &[]) else {
        return false;
    };
    match (
        rendered.find(&placeholder(0)),
        rendered.find(&placeholder(1)),
        rendered.find(&placeholder(2)),
    ) {
        (Some(a), Some(b), Some(c)) => {
            let between = &rendered[b + placeholder(1).len()..c];
            a < b && b < c && between.contains("user")
        }
        _ => false,
    }
}

fn build(model: &LlamaModel, choice: &TemplateChoice) -> Result<(Renderer, Vec<String>), String> {
    let renderer = if choice.jinja {
        let vocab = model.vocab();
        let text = |t| String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned();
        let (bos, eos) = (text(vocab.bos()), text(vocab.eos()));
        Renderer::Jinja(Box::new(JinjaTemplate::new(&choice.template, &bos, &eos)?))
    } else {
        Renderer::Builtin(LlamaChatTemplate::new(&choice.template).map_err(|e| e.to_string())?)
    };
    let probe: Vec<Message> = [Role::System, Role::User, Role::Assistant, Role::User]
        .iter()
        .enumerate()
        .map(|(i, r)| Message::new(*r, placeholder(i)))
        .collect();
    let rendered = renderer.render(model, &probe, &[])?;
    let found = (0..probe.len()).all(|i| rendered.contains(&placeholder(i)));
    if !found {
        return Err("the template drops messages of a plain chat".into());
    }
    let stops = template::stop_markers(&specials_in(model, &rendered));
    Ok((renderer, stops))
}
