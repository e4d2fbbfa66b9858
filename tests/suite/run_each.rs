//! `harvey run --each`: a list of questions answered in one process, each in a new
//! conversation or (`--conversation`) all in one.

use super::cli::{harvey, harvey_in, stderr};
use crate::support::model_path;

#[test]
fn run_each_answers_every_line_in_one_session() {
    let model = model_path();
    let work = tempfile::tempdir().unwrap();
    // Outside the workspace, so that no question's evidence holds the file itself.
    let lists = tempfile::tempdir().unwrap();
    let questions = lists.path().join("questions.txt");
    std::fs::write(
        &questions,
        "What is 2+2?\n\n   \nName a colour.\nSay hello.\n",
    )
    .unwrap();
    let out = harvey_in(
        work.path(),
        &[
            "-m",
            model.to_str().unwrap(),
            "run",
            "--json",
            "--max-tokens",
            "8",
            "--each",
            questions.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 3, "one line per question, blank lines skipped");
    for v in &lines {
        assert!(v["completion_tokens"].as_u64().unwrap() > 0, "{v}");
        assert!(v["timing"]["turn_ms"].as_f64().unwrap() > 0.0, "{v}");
    }
    // The model is loaded once: only the first line pays for the opening.
    assert!(lines[0]["timing"]["open_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(lines[1]["timing"]["open_ms"], 0.0);
    assert_eq!(lines[2]["timing"]["prefix_ms"], 0.0);
    // Each question starts a new conversation: the third prompt is shorter than the first
    // with the two replies after it, which a carried-on conversation would hold.
    let tokens = |i: usize, key: &str| lines[i][key].as_u64().unwrap();
    assert!(
        tokens(2, "prompt_tokens")
            < tokens(0, "prompt_tokens")
                + tokens(0, "completion_tokens")
                + tokens(1, "completion_tokens"),
        "{:?}",
        lines
            .iter()
            .map(|v| (&v["prompt_tokens"], &v["completion_tokens"]))
            .collect::<Vec<_>>()
    );
    // One session, closed after the last question and named on its line.
    assert!(lines[2]["session"].is_string(), "{}", lines[2]);
    assert!(lines[0]["session"].is_null());
    let record = std::fs::read_to_string(lines[2]["session"].as_str().unwrap()).unwrap();
    for question in ["What is 2+2?", "Name a colour.", "Say hello."] {
        assert!(record.contains(question), "{record}");
    }
}

#[test]
fn run_each_reads_the_questions_from_stdin_with_a_dash() {
    let model = model_path();
    let out = harvey(
        &[
            "-m",
            model.to_str().unwrap(),
            "run",
            "--json",
            "--max-tokens",
            "4",
            "--each",
            "-",
        ],
        "Say hi.\nSay bye.\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let replies = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| v["reply"].is_string())
        })
        .count();
    assert_eq!(replies, 2, "{}", String::from_utf8_lossy(&out.stdout));
    // Each question is announced on stderr, so stdout stays JSON.
    let said = stderr(&out);
    assert!(
        said.contains("[question 1 of 2]") && said.contains("[question 2 of 2]"),
        "{said}"
    );
}

#[test]
fn run_each_stops_at_a_question_too_long_naming_its_line_and_keeps_the_answers_before() {
    let model = model_path();
    let work = tempfile::tempdir().unwrap();
    let lists = tempfile::tempdir().unwrap();
    let questions = lists.path().join("questions.txt");
    let long = "word ".repeat(5000);
    std::fs::write(&questions, format!("Say hi.\n{long}\nSay bye.\n")).unwrap();
    let out = harvey_in(
        work.path(),
        &[
            "-m",
            model.to_str().unwrap(),
            "run",
            "--json",
            "--max-tokens",
            "4",
            "--each",
            questions.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!("{}:2: ", questions.display())) && said.contains("tokens"),
        "{said}"
    );
    assert!(
        !said.contains("[question 3 of 3]"),
        "the rest is skipped: {said}"
    );
    // The answer before it is printed, with the session it was saved in.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let record = lines[0]["session"].as_str().unwrap();
    assert!(std::fs::read_to_string(record).unwrap().contains("Say hi."));
}

#[test]
fn run_each_names_a_missing_or_empty_questions_file() {
    let work = tempfile::tempdir().unwrap();
    let missing = harvey_in(work.path(), &["run", "--each", "nope.txt"], "");
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains("cannot read the questions file nope.txt"),
        "{}",
        stderr(&missing)
    );
    let blank = work.path().join("blank.txt");
    std::fs::write(&blank, "\n  \n").unwrap();
    let empty = harvey_in(work.path(), &["run", "--each", blank.to_str().unwrap()], "");
    assert_eq!(empty.status.code(), Some(2), "{}", stderr(&empty));
    assert!(
        stderr(&empty).contains(&format!("no question in {}", blank.display())),
        "{}",
        stderr(&empty)
    );
}

#[test]
fn run_each_with_conversation_keeps_the_earlier_questions_and_answers() {
    let model = model_path();
    let work = tempfile::tempdir().unwrap();
    let lists = tempfile::tempdir().unwrap();
    let questions = lists.path().join("questions.txt");
    std::fs::write(
        &questions,
        "What is 2+2?
Name a colour.
Say hello.
",
    )
    .unwrap();
    let out = harvey_in(
        work.path(),
        &[
            "-m",
            model.to_str().unwrap(),
            "run",
            "--json",
            "--max-tokens",
            "8",
            "--each",
            questions.to_str().unwrap(),
            "--conversation",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 3);
    // The third prompt holds the first with both replies and the questions after it.
    let tokens = |i: usize, key: &str| lines[i][key].as_u64().unwrap();
    assert!(
        tokens(2, "prompt_tokens")
            > tokens(0, "prompt_tokens")
                + tokens(0, "completion_tokens")
                + tokens(1, "completion_tokens"),
        "{:?}",
        lines
            .iter()
            .map(|v| (&v["prompt_tokens"], &v["completion_tokens"]))
            .collect::<Vec<_>>()
    );
    // Without --each there is no list to make a conversation of.
    let alone = harvey(&["run", "--conversation", "Say hi."], "");
    assert_eq!(alone.status.code(), Some(2), "{}", stderr(&alone));
    assert!(stderr(&alone).contains("--each"), "{}", stderr(&alone));
}
