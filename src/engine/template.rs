//! Naming the chat template a GGUF carries, so `/status` can say what is in use.

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
}
