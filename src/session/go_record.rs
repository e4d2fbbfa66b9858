//! Session records written by the Go tool's recorder. Its chat scene:
//!
//! ```text
//! INT. HARVEY AND ADA TALKING 2026-05-25 12:00:00
//!
//! Harvey and ADA are in chat mode. Model: GEMMA4. Workspace: /home/ada/proj.
//!
//! [[rag: 2 chunks from notes, top score 0.61]]
//!
//! ADA
//! the user's text
//!
//! HARVEY
//! Forwarding to GEMMA4.
//!
//! [[tool: read_file({"path":"go.mod"}) — ok]]
//!
//! GEMMA4
//! the reply, written as it came (blank lines included)
//!
//! gemma4 · 120 reply + 900 ctx · 3.2s · 37.5 tok/s
//! ```
//!
//! Its dialogue is not escaped, so a scene is read up to the next scene heading.

use super::record::Exchange;

/// Whether the scene after its heading is the Go tool's (an action line first).
pub(super) fn is_go_scene(after_heading: &[&str]) -> bool {
    after_heading
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with("Harvey and ") && l.contains(" are in chat mode"))
}

/// Reads the scene whose heading is `lines[start]` (`rest`: the heading after
/// `INT. HARVEY AND `). Returns the user's character name, the exchange (`None` when
/// the scene stops before a reply) and the index of the next scene.
pub(super) fn read_scene(
    lines: &[&str],
    start: usize,
    rest: &str,
) -> (String, Option<Exchange>, usize) {
    let (who, when) = match rest.split_once(" TALKING ") {
        Some((w, t)) => (w.trim().to_string(), t.trim().to_string()),
        None => (
            rest.trim_end_matches(" TALKING").trim().to_string(),
            String::new(),
        ),
    };
    let end = scene_end(lines, start + 1);
    let body = &lines[start + 1..end];
    (who.clone(), exchange(body, &who, when), end)
}

/// The next scene heading (after a blank line) or the closing `THE END.`.
fn scene_end(lines: &[&str], from: usize) -> usize {
    (from..lines.len())
        .find(|&i| {
            let l = lines[i];
            let after_blank = i > 0 && lines[i - 1].trim().is_empty();
            let heading = after_blank && (l.starts_with("INT. ") || l.starts_with("EXT. "));
            let the_end =
                l.trim() == "THE END." && lines[i + 1..].iter().all(|l| l.trim().is_empty());
            heading || the_end
        })
        .unwrap_or(lines.len())
}

fn exchange(body: &[&str], who: &str, when: String) -> Option<Exchange> {
    let user_at = body.iter().position(|l| l.trim() == who)?;
    let forward_at = (user_at + 1..body.len().saturating_sub(1))
        .find(|&i| body[i].trim() == "HARVEY" && body[i + 1].starts_with("Forwarding to "))?;
    let model = body[forward_at + 1]
        .trim()
        .trim_start_matches("Forwarding to ")
        .trim_end_matches('.')
        .to_string();
    let reply_at = (forward_at + 2..body.len()).find(|&i| body[i].trim() == model)?;
    let mut notes: Vec<String> = body[..user_at]
        .iter()
        .chain(&body[forward_at + 2..reply_at])
        .filter_map(|l| note(l))
        .collect();
    notes.retain(|n| !n.is_empty());
    Some(Exchange {
        when,
        user: paragraphs(&body[user_at + 1..forward_at]),
        reply: paragraphs(without_trailer(&body[reply_at + 1..])),
        notes,
    })
}

fn note(line: &str) -> Option<String> {
    let line = line.trim();
    line.strip_prefix("[[")?
        .strip_suffix("]]")
        .map(|n| n.trim().to_string())
}

/// The reply without the action lines the recorder writes after it (routing, stats).
fn without_trailer<'a, 'b>(mut lines: &'b [&'a str]) -> &'b [&'a str] {
    loop {
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines = &lines[..lines.len() - 1];
        }
        let n = lines.len();
        let last = lines.last().map(|l| l.trim()).unwrap_or("");
        let own_paragraph = n >= 2 && lines[n - 2].trim().is_empty();
        let trailer = last.contains(" tok/s") || last.starts_with("Routing to ");
        if own_paragraph && trailer {
            lines = &lines[..n - 1];
        } else {
            return lines;
        }
    }
}

/// Lines joined, without the blank lines around them.
fn paragraphs(lines: &[&str]) -> String {
    let text: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    text.join("\n").trim_matches('\n').to_string()
}

#[cfg(test)]
mod tests {
    use super::super::fountain::parse;

    /// Two chat turns, an agent scene between them and a reply with paragraphs, as the
    /// Go recorder lays them out (shared with the integration tests).
    const GO_SESSION: &str = include_str!("../../tests/fixtures/go-session.spmd");

    #[test]
    fn the_go_recorders_scenes_give_their_exchanges() {
        let r = parse(GO_SESSION);
        assert_eq!(r.user_name, "ADA");
        assert_eq!(r.title.model, "GEMMA4 (ollama)");
        assert_eq!(r.exchanges.len(), 2);
        let (a, b) = (&r.exchanges[0], &r.exchanges[1]);
        assert_eq!(a.when, "2026-05-25 12:00:05");
        assert_eq!(a.user, "How do I publish a release?");
        assert_eq!(a.reply, "Tag it first.\n\nThen run the publish script.");
        assert_eq!(a.notes[0], "rag: 2 chunks from notes, top score 0.61");
        assert!(
            a.notes.contains(&"write: notes.md — ok".to_string()),
            "{:?}",
            a.notes
        );
        assert_eq!(b.user, "And the changelog?");
        assert_eq!(b.reply, "It is generated.");
        assert_eq!(
            b.notes,
            vec!["tool: read_file({\"path\":\"CHANGELOG.md\"}) — ok"]
        );
        assert!(r.ended);
    }

    #[test]
    fn a_go_scene_cut_before_the_reply_is_not_an_exchange() {
        let cut = GO_SESSION.split("GEMMA4\nIt is generated.").next().unwrap();
        let r = parse(cut);
        assert_eq!(r.exchanges.len(), 1);
        assert!(!r.ended);
    }
}
