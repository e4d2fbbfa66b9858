//! Session records as Fountain screenplays, compatible with the Go tool's layout: a title
//! page, `FADE IN:`, one scene per exchange (`INT. HARVEY AND <USER> TALKING <time>`), the
//! user's and harvey's lines as dialogue, `[[…]]` notes, `THE END.` on close.
//!
//! Text survives a write/read round trip exactly. Inside dialogue a blank line would end
//! the speech, so an empty line is written as two spaces (Fountain's own convention), and a
//! line that a Fountain reader could take for syntax (a parenthetical, a note, a
//! whitespace-only line, a leading backslash) gets a leading `\` that reading removes.

pub use super::record::{Exchange, Record, TitlePage};

/// The title page and `FADE IN:`.
pub fn header(title: &TitlePage) -> String {
    format!(
        "Title: {}\nCredit: {}\nAuthor: {}\nDate: {}\nModel: {}\n\nFADE IN:\n\n",
        one_line(&title.title),
        one_line(&title.credit),
        one_line(&title.author),
        one_line(&title.date),
        one_line(&title.model)
    )
}

/// Character name for the user: letters, digits and spaces, upper case.
pub fn character(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase();
    if cleaned.is_empty() || cleaned == "HARVEY" {
        "USER".into()
    } else {
        cleaned
    }
}

/// One scene: heading, the user's speech, harvey's, then its notes.
pub fn scene(user_name: &str, exchange: &Exchange) -> String {
    let who = character(user_name);
    let mut out = format!(
        "INT. HARVEY AND {who} TALKING {}\n\n",
        one_line(&exchange.when)
    );
    out.push_str(&speech(&who, &exchange.user));
    out.push_str(&speech("HARVEY", &exchange.reply));
    for n in &exchange.notes {
        out.push_str(&note(n));
    }
    out
}

/// A skill's scene, as the Go tool writes one: `INT. SKILL <NAME> <time>`, the action
/// `Harvey executes the <name> skill.`, the skill's description as a second action,
/// then the skill speaking `speech` (what the run was given).
pub fn skill_scene(name: &str, description: &str, speech_text: &str, when: &str) -> String {
    let who = name.to_uppercase();
    let mut out = format!("INT. SKILL {} {}\n\n", one_line(&who), one_line(when));
    out.push_str(&format!(
        "Harvey executes the {} skill.\n\n",
        one_line(name)
    ));
    if !description.trim().is_empty() {
        out.push_str(&format!("{}\n\n", escape(&one_line(description))));
    }
    if !speech_text.trim().is_empty() {
        out.push_str(&speech(&one_line(&who), speech_text));
    }
    out
}

/// `[[text]]` followed by a blank line (`]]` inside is defused).
pub fn note(text: &str) -> String {
    format!("[[{}]]\n\n", one_line(text).replace("]]", "] ]"))
}

/// The closing line.
pub const THE_END: &str = "THE END.\n";

fn speech(who: &str, text: &str) -> String {
    let mut out = format!("{who}\n");
    for line in text.split('\n') {
        out.push_str(&escape(line));
        out.push('\n');
    }
    out.push('\n');
    out
}

fn escape(line: &str) -> String {
    if line.is_empty() {
        return "  ".into();
    }
    let risky = line.trim().is_empty()
        || line.starts_with('\\')
        || line.starts_with('(')
        || line.starts_with("[[")
        || line.starts_with('!')
        || line.starts_with('~');
    if risky {
        format!("\\{line}")
    } else {
        line.to_string()
    }
}

fn unescape(line: &str) -> String {
    if line == "  " {
        return String::new();
    }
    line.strip_prefix('\\').unwrap_or(line).to_string()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads a record. A file cut off mid-write yields every complete exchange before the cut.
pub fn parse(text: &str) -> Record {
    let mut record = Record::default();
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = read_title_page(&lines, &mut record.title) + 1;
    let mut current: Option<Exchange> = None;
    while i < lines.len() {
        let line = lines[i];
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        if let Some(rest) = line.strip_prefix("INT. HARVEY AND ") {
            if let Some(done) = current.take() {
                record.exchanges.push(done);
            }
            if super::go_record::is_go_scene(&lines[i + 1..]) {
                let (who, exchange, next) = super::go_record::read_scene(&lines, i, rest);
                record.user_name = who;
                current = exchange;
                i = next;
                continue;
            }
            let (who, when) = heading_parts(rest, &lines[i + 1..]);
            record.user_name = who.clone();
            // The scene counts only when both speeches are complete (closed by a blank line).
            let Some((user, next)) = read_speech(&lines, i + 2, &who) else {
                break;
            };
            let Some((reply, next)) = read_speech(&lines, next, "HARVEY") else {
                break;
            };
            current = Some(Exchange {
                when,
                user,
                reply,
                notes: Vec::new(),
            });
            i = next;
            continue;
        }
        if let Some(rest) = line.strip_prefix("INT. SKILL ") {
            if let Some(done) = current.take() {
                record.exchanges.push(done);
            }
            i = skip_skill_scene(&lines, i + 1, rest);
            continue;
        }
        // A note counts once its line is ended (a cut `[[a]]]` must not read as `a`).
        let ended = i + 1 < lines.len();
        if let Some(n) = line
            .strip_prefix("[[")
            .and_then(|l| l.strip_suffix("]]"))
            .filter(|_| ended)
        {
            match current.as_mut() {
                Some(ex) => ex.notes.push(n.to_string()),
                None => record.closing_notes.push(n.to_string()),
            }
            i += 1;
            continue;
        }
        if line.trim() == "THE END." {
            record.ended = true;
            break;
        }
        i += 1;
    }
    if let Some(done) = current.take() {
        record.exchanges.push(done);
    }
    move_closing_notes(&mut record);
    record
}

/// The index after a skill scene that starts at `start` (after its heading, whose
/// rest is `rest`): its action lines, then the skill's speech, read whole so that no
/// line of it (a `THE END.`, a heading) is taken for the record's own.
fn skip_skill_scene(lines: &[&str], start: usize, rest: &str) -> usize {
    let who = rest.split_whitespace().next().unwrap_or_default();
    let mut i = start;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with("INT. ") || line == "THE END." || line.starts_with("[[") {
            return i;
        }
        if line == who {
            return read_speech(lines, i, who).map_or(lines.len(), |(_, next)| next);
        }
        i += 1;
    }
    i
}

/// Reads the title page's `Key: value` lines into `title`; returns the index of the
/// `FADE IN:` line (or the number of lines when there is none).
fn read_title_page(lines: &[&str], title: &mut TitlePage) -> usize {
    let mut i = 0;
    while i < lines.len() && lines[i].trim() != "FADE IN:" {
        if let Some((k, v)) = lines[i].split_once(':') {
            let v = v.trim().to_string();
            match k.trim() {
                "Title" => title.title = v,
                "Credit" => title.credit = v,
                "Author" => title.author = v,
                "Date" => title.date = v,
                "Model" => title.model = v,
                _ => {}
            }
        }
        i += 1;
    }
    i
}

/// Notes after the last scene that belong to the close (summary, tags) were attached to
/// it by position; moves the ones marked as closing notes.
fn move_closing_notes(record: &mut Record) {
    if let Some(last) = record.exchanges.last_mut() {
        let (closing, own): (Vec<String>, Vec<String>) =
            last.notes.drain(..).partition(|n| is_closing(n));
        last.notes = own;
        record.closing_notes.splice(0..0, closing);
    }
}

/// Notes written by the close sequence, not by an exchange.
pub const CLOSING_PREFIXES: &[&str] = &[
    "Summary: ",
    "Summary pending: ",
    "Tags: ",
    "Mined: ",
    "Mining failed: ",
    "Session stats: ",
    "Ended by ",
];

/// The user's character name and the time of a scene heading (after `INT. HARVEY AND `).
/// The name is the speaker line that follows, so a name or a time containing ` TALKING `
/// still splits where the writer joined them.
fn heading_parts(rest: &str, after: &[&str]) -> (String, String) {
    if let Some(who) = after.iter().map(|l| l.trim()).find(|l| !l.is_empty()) {
        let when = rest
            .strip_prefix(who)
            .and_then(|t| t.strip_prefix(" TALKING"))
            .filter(|t| t.is_empty() || t.starts_with(' '));
        if let Some(when) = when {
            return (who.to_string(), when.trim().to_string());
        }
    }
    match rest.split_once(" TALKING ") {
        Some((w, t)) => (w.to_string(), t.trim().to_string()),
        None => (rest.trim_end_matches(" TALKING").to_string(), String::new()),
    }
}

/// A note the close writes (`Summary: …`, or `Summary:` when the summary is empty).
fn is_closing(note: &str) -> bool {
    CLOSING_PREFIXES
        .iter()
        .any(|p| note.starts_with(p) || note == p.trim_end())
}

/// `CHARACTER` at `start`, then lines up to a blank line: the unescaped speech and the
/// index after the blank line. `None` when the file ends before the speech is closed.
fn read_speech(lines: &[&str], start: usize, who: &str) -> Option<(String, usize)> {
    let mut i = start;
    while i < lines.len() && lines[i].trim().is_empty() {
        i += 1;
    }
    if lines.get(i)?.trim() != who {
        return None;
    }
    i += 1;
    let mut text = Vec::new();
    while i < lines.len() {
        if lines[i].is_empty() {
            // A blank line closes the speech only if something follows it (the writer
            // always ends a scene part with "\n\n").
            return (i + 1 < lines.len()).then(|| (text.join("\n"), i + 1));
        }
        text.push(unescape(lines[i]));
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn title() -> TitlePage {
        TitlePage {
            title: "Harvey Session".into(),
            credit: "Written by harvey".into(),
            author: "harvey and ada".into(),
            date: "2026-11-23 10:00:00".into(),
            model: "SmolLM2".into(),
        }
    }

    const TRICKY: &str = "First paragraph.\n\nSecond paragraph after a blank line.\n\n```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\nINT. SOMETHING - DAY\n(parenthetical)\n[[not a note]]\n  \n\\backslash\n!forced\nHARVEY\nTHE END.\n";

    /// A skill's scene reads as the Go tool writes it, and nothing in it — a `THE END.`,
    /// a heading, a note — is taken for the record's own.
    #[test]
    fn a_skill_scene_is_written_and_skipped_whole() {
        let scene_text = skill_scene(
            "release-checklist",
            "Walks a release through its steps.",
            "VERSION=1.2.0\nTHE END.\nINT. HARVEY AND ADA TALKING now\n[[x]]",
            "2026-11-23 10:00:00",
        );
        assert!(scene_text.starts_with(
            "INT. SKILL RELEASE-CHECKLIST 2026-11-23 10:00:00\n\nHarvey executes the release-checklist skill.\n\nWalks a release through its steps.\n\nRELEASE-CHECKLIST\nVERSION=1.2.0\n"
        ), "{scene_text}");
        let ex = Exchange {
            when: "2026-11-23 10:00:05".into(),
            user: "[skill: release-checklist]\nrun it".into(),
            reply: "done".into(),
            notes: vec![],
        };
        let text = format!(
            "{}{scene_text}{}{THE_END}",
            header(&title()),
            scene("ada", &ex)
        );
        let record = parse(&text);
        assert_eq!(record.exchanges, vec![ex]);
        assert!(record.ended);
        assert!(
            record.closing_notes.is_empty(),
            "{:?}",
            record.closing_notes
        );
    }

    #[test]
    fn tricky_text_round_trips_exactly() {
        let ex = Exchange {
            when: "2026-11-23 10:00:05".into(),
            user: "(aside) show me\n\ncode".into(),
            reply: TRICKY.into(),
            notes: vec!["recall: tool_use_1 (0.93)".into()],
        };
        let second = Exchange {
            when: "2026-11-23 10:01:00".into(),
            user: "thanks".into(),
            reply: "".into(),
            notes: vec![],
        };
        let text = format!(
            "{}{}{}{}{}",
            header(&title()),
            scene("ada", &ex),
            scene("ada", &second),
            note("Summary: we talked"),
            THE_END
        );
        let back = parse(&text);
        assert_eq!(back.title, title());
        assert_eq!(back.user_name, "ADA");
        assert_eq!(back.exchanges, vec![ex, second], "{text}");
        assert_eq!(back.closing_notes, vec!["Summary: we talked"]);
        assert!(back.ended);
    }

    #[test]
    fn a_truncated_file_keeps_every_complete_exchange() {
        let a = Exchange {
            when: "t1".into(),
            user: "one".into(),
            reply: "reply one\n\nmore".into(),
            notes: vec![],
        };
        let b = Exchange {
            when: "t2".into(),
            user: "two".into(),
            reply: "reply two".into(),
            notes: vec![],
        };
        let full = format!("{}{}{}", header(&title()), scene("u", &a), scene("u", &b));
        let cut_points = (full.len() - 30)..full.len() - 1;
        for cut in cut_points {
            if !full.is_char_boundary(cut) {
                continue;
            }
            let back = parse(&full[..cut]);
            assert_eq!(back.exchanges, vec![a.clone()], "cut at {cut}");
            assert!(!back.ended);
        }
        assert_eq!(parse(&full).exchanges.len(), 2);
    }

    #[test]
    fn user_names_become_character_names() {
        assert_eq!(character("ada.lovelace"), "ADA LOVELACE");
        assert_eq!(character(""), "USER");
        assert_eq!(character("harvey"), "USER");
    }
}
