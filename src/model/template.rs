//! Which chat template a model gets, and why: the file's own template, a built-in
//! llama.cpp format named by `model.template`, or — for a file without one — the built-in
//! format its architecture and vocabulary point to.
//!
//! Pure: the engine passes in the file's template text, `general.architecture` and a
//! predicate saying whether a text is one special token of the vocabulary. A wrong
//! fallback is not harmless: Gemma 3 given ChatML babbles and prints `<|im_end|>`.

/// llama.cpp's built-in chat formats (`llama-chat.cpp` of the pinned llama-cpp-sys-2),
/// the names `model.template` accepts besides `auto`.
pub const BUILTIN_TEMPLATES: &[&str] = &[
    "chatml",
    "gemma",
    "llama3",
    "llama4",
    "llama2",
    "llama2-sys",
    "llama2-sys-bos",
    "llama2-sys-strip",
    "mistral-v1",
    "mistral-v3",
    "mistral-v3-tekken",
    "mistral-v7",
    "mistral-v7-tekken",
    "phi3",
    "phi4",
    "falcon3",
    "zephyr",
    "monarch",
    "orion",
    "openchat",
    "vicuna",
    "vicuna-orca",
    "deepseek",
    "deepseek2",
    "deepseek3",
    "command-r",
    "chatglm3",
    "chatglm4",
    "glmedge",
    "minicpm",
    "exaone3",
    "exaone4",
    "granite",
    "gigachat",
    "megrez",
    "smolvlm",
];

/// Turn tokens that pick a format for architectures shared by several (checked in order).
const BY_TOKEN: &[(&str, &str)] = &[
    ("<|start_header_id|>", "llama3"),
    ("<|im_start|>", "chatml"),
    ("<start_of_turn>", "gemma"),
    ("[SYSTEM_PROMPT]", "mistral-v7"),
    ("[INST]", "mistral-v3"),
    ("<|START_OF_TURN_TOKEN|>", "command-r"),
];

/// Every token [`fallback`] may ask about (for readers of a GGUF's token list).
pub fn fallback_tokens() -> impl Iterator<Item = &'static str> {
    BY_TOKEN
        .iter()
        .map(|(t, _)| *t)
        .chain(std::iter::once("<|im_sep|>"))
}

/// What `model.template: auto` means.
pub const AUTO_TEMPLATE: &str = "auto";

/// Turn markers of the common formats. Generation stops before any of them when the model
/// spells one out as plain text (a reply never contains template text).
const TURN_MARKERS: &[&str] = &[
    "<|im_start|>",
    "<|im_end|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<|start_header_id|>",
    "<|eot_id|>",
    "<|end|>",
    "<|user|>",
    "<|assistant|>",
    "<|endoftext|>",
];

/// The template a model is run with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateChoice {
    /// A built-in format's name or the file's template text.
    pub template: String,
    /// Rendered by the Jinja engine (`jinja.rs`), not by llama.cpp's built-in applier.
    pub jinja: bool,
    /// Short name for `/status` (`gemma`, `chatml`, `custom`, …).
    pub family: String,
    /// Why this one, in words for `/status`.
    pub reason: String,
}

/// Is `name` something `model.template` accepts?
pub fn is_known_setting(name: &str) -> bool {
    name == AUTO_TEMPLATE || BUILTIN_TEMPLATES.contains(&name)
}

/// `auto, chatml, gemma, …` for error messages and `--help`.
pub fn settings_list() -> String {
    std::iter::once(AUTO_TEMPLATE)
        .chain(BUILTIN_TEMPLATES.iter().copied())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The templates to try, best first; the engine keeps the first that compiles and renders
/// a probe chat. `setting` is `model.template` (`None` or `auto`: the file's own, else the
/// fallback for `architecture`); `has_token(t)` says whether `t` is one special token of
/// the vocabulary. The order: the file's template through the Jinja engine (tools, tool
/// messages), then the same text through llama.cpp's built-in applier (which recognises
/// the common formats by their markers), then the built-in format the architecture and
/// vocabulary point to.
pub fn candidates(
    setting: Option<&str>,
    file_template: Option<&str>,
    architecture: &str,
    has_token: &dyn Fn(&str) -> bool,
) -> Vec<TemplateChoice> {
    if let Some(name) = setting.filter(|s| *s != AUTO_TEMPLATE) {
        return vec![TemplateChoice {
            template: name.to_string(),
            jinja: false,
            family: name.to_string(),
            reason: "set by model.template".into(),
        }];
    }
    let mut out = Vec::with_capacity(3);
    if let Some(text) = file_template.filter(|t| !t.trim().is_empty()) {
        let family = template_family(text).to_string();
        out.push(TemplateChoice {
            template: text.to_string(),
            jinja: true,
            family: family.clone(),
            reason: "the model file's own template (Jinja)".into(),
        });
        out.push(TemplateChoice {
            template: text.to_string(),
            jinja: false,
            family,
            reason: "the model file's own template (llama.cpp's applier)".into(),
        });
    }
    let (name, why) = fallback(architecture, has_token);
    let reason = if out.is_empty() {
        format!("the file has no template; {why}")
    } else {
        format!("the file's template could not be applied; {why}")
    };
    out.push(TemplateChoice {
        template: name.to_string(),
        jinja: false,
        family: name.to_string(),
        reason,
    });
    out
}

/// The built-in format for a file without a template, and the evidence for it.
pub fn fallback(architecture: &str, has_token: &dyn Fn(&str) -> bool) -> (&'static str, String) {
    let arch = architecture.to_ascii_lowercase();
    let by_arch = |name: &'static str| (name, format!("architecture {architecture}"));
    let by_token = |name: &'static str, token: &str| {
        (
            name,
            format!("architecture {architecture} with the {token} token"),
        )
    };
    if arch.starts_with("gemma") {
        return by_arch("gemma");
    }
    if arch == "phi3" {
        if has_token("<|im_sep|>") {
            return by_token("phi4", "<|im_sep|>");
        }
        return by_arch("phi3");
    }
    if arch == "llama4" {
        return by_arch("llama4");
    }
    // Architectures shared by several formats (llama carries Llama 2/3, Mistral, SmolLM…):
    // the vocabulary's turn tokens decide.
    if let Some((token, name)) = BY_TOKEN.iter().find(|(t, _)| has_token(t)) {
        return by_token(name, token);
    }
    match arch.as_str() {
        "qwen2" | "qwen2moe" | "qwen3" | "qwen3moe" | "smollm3" | "olmo2" => by_arch("chatml"),
        "mistral3" => by_arch("mistral-v7"),
        "command-r" | "cohere2" => by_arch("command-r"),
        "deepseek2" => by_arch("deepseek2"),
        "granite" | "granitemoe" => by_arch("granite"),
        "exaone" => by_arch("exaone3"),
        "chatglm" | "glm4" => by_arch("chatglm4"),
        "minicpm" => by_arch("minicpm"),
        "llama" => (
            "llama2",
            format!("architecture {architecture} without Llama 3, ChatML or Mistral turn tokens"),
        ),
        _ => (
            "chatml",
            format!("architecture {architecture} is not known and has no known turn tokens: ChatML as a guess; set model.template if replies look wrong"),
        ),
    }
}

/// Strings a reply must stop before: the common turn markers and the special tokens the
/// template's own scaffolding uses (`specials_in_scaffold`).
pub fn stop_markers(specials_in_scaffold: &[String]) -> Vec<String> {
    let mut stops: Vec<String> = TURN_MARKERS.iter().map(|s| s.to_string()).collect();
    for s in specials_in_scaffold {
        if !s.trim().is_empty() && !stops.contains(s) {
            stops.push(s.clone());
        }
    }
    stops
}

/// The family of a chat template, recognised by the markers it uses.
pub fn template_family(template: &str) -> &'static str {
    const MARKERS: &[(&str, &str)] = &[
        ("<|im_start|>", "chatml"),
        ("<|start_header_id|>", "llama3"),
        ("<start_of_turn>", "gemma"),
        ("<|user|>", "zephyr/phi3"),
        ("[INST]", "mistral/llama2"),
        ("<|START_OF_TURN_TOKEN|>", "command-r"),
        ("### Instruction", "alpaca"),
    ];
    MARKERS
        .iter()
        .find(|(marker, _)| template.contains(marker))
        .map_or("custom", |(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(list: &'static [&'static str]) -> impl Fn(&str) -> bool {
        move |t| list.contains(&t)
    }

    #[test]
    fn families() {
        assert_eq!(
            template_family("{% for m in messages %}<|im_start|>{{ m.role }}"),
            "chatml"
        );
        assert_eq!(
            template_family("<|start_header_id|>user<|end_header_id|>"),
            "llama3"
        );
        assert_eq!(
            template_family("<s>[INST] {{ x }} [/INST]"),
            "mistral/llama2"
        );
        assert_eq!(template_family("{{ messages }}"), "custom");
    }

    #[test]
    fn fallback_table() {
        let none = tokens(&[]);
        let cases: &[(&str, &[&'static str], &str)] = &[
            ("gemma3", &["<start_of_turn>", "<end_of_turn>"], "gemma"),
            ("gemma2", &[], "gemma"),
            ("gemma", &[], "gemma"),
            ("llama", &["<|start_header_id|>", "<|eot_id|>"], "llama3"),
            ("llama", &["<|im_start|>", "<|im_end|>"], "chatml"),
            ("llama", &["[INST]", "[/INST]"], "mistral-v3"),
            ("llama", &["[SYSTEM_PROMPT]", "[INST]"], "mistral-v7"),
            ("llama", &[], "llama2"),
            ("phi3", &["<|user|>", "<|end|>"], "phi3"),
            ("phi3", &["<|im_sep|>"], "phi4"),
            ("qwen2", &[], "chatml"),
            ("qwen3", &["<|im_start|>"], "chatml"),
            ("smollm3", &[], "chatml"),
            ("mistral3", &[], "mistral-v7"),
            ("cohere2", &[], "command-r"),
            ("something-new", &[], "chatml"),
        ];
        for (arch, list, want) in cases {
            let has = |t: &str| list.contains(&t);
            let (name, why) = fallback(arch, &has);
            assert_eq!(name, *want, "{arch} {list:?}: {why}");
            assert!(why.contains(arch), "{why}");
            assert!(BUILTIN_TEMPLATES.contains(&name), "{name}");
        }
        assert!(fallback("llama", &none).1.contains("without"));
        assert!(fallback("xyz", &none).1.contains("model.template"));
    }

    #[test]
    fn candidate_order_is_setting_then_jinja_then_applier_then_table() {
        let none = tokens(&[]);
        let file = "{% for m in messages %}<|im_start|>{{ m.role }}";
        let c = candidates(Some("gemma"), Some(file), "llama", &none);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].template.as_str(), c[0].jinja), ("gemma", false));
        assert_eq!(c[0].reason, "set by model.template");
        for setting in [None, Some("auto")] {
            let c = candidates(setting, Some(file), "gemma3", &none);
            let got: Vec<(&str, bool)> = c.iter().map(|c| (c.template.as_str(), c.jinja)).collect();
            assert_eq!(got, vec![(file, true), (file, false), ("gemma", false)]);
            assert_eq!(c[0].family, "chatml");
            assert_eq!(c[0].reason, "the model file's own template (Jinja)");
            assert!(
                c[2].reason.contains("could not be applied"),
                "{}",
                c[2].reason
            );
        }
        let c = candidates(Some("auto"), None, "gemma3", &none);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].template, "gemma");
        assert_eq!(c[0].reason, "the file has no template; architecture gemma3");
        let c = candidates(None, Some("  "), "qwen2", &none);
        assert_eq!((c.len(), c[0].template.as_str()), (1, "chatml"));
    }

    #[test]
    fn settings_are_validated_against_the_builtin_list() {
        assert!(is_known_setting("auto"));
        assert!(is_known_setting("gemma"));
        assert!(is_known_setting("llama3"));
        assert!(!is_known_setting("gemma3"));
        assert!(!is_known_setting(""));
        let list = settings_list();
        assert!(list.starts_with("auto, chatml, gemma, llama3"), "{list}");
    }

    #[test]
    fn stop_markers_add_scaffold_specials_once() {
        let stops = stop_markers(&["<end_of_turn>".into(), "<bos>".into(), " ".into()]);
        assert!(stops.contains(&"<|im_end|>".to_string()));
        assert_eq!(stops.iter().filter(|s| *s == "<end_of_turn>").count(), 1);
        assert!(stops.contains(&"<bos>".to_string()));
        assert!(!stops.iter().any(|s| s.trim().is_empty()));
    }
}
