//! Write safety (issue 14): every escape from the workspace is refused for writes even
//! with `tools.allow_writes` on; a `kill -9` in the middle of a write leaves the old file
//! or the new one, never a mix; and the real model's grammar-constrained `write_file`
//! call parses and meets the refusal of a session that cannot ask (`harvey run`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use harvey::app::App;
use harvey::engine::{
    Completion, Engine, EngineError, GenerateOptions, LlamaEngine, Message, ModelInfo, StopReason,
    TurnStats,
};
use harvey::tools::{ToolError, CALL_OPENER};

use super::writes::{names, workspace};
use crate::support::process::{rounds, Rng};

/// Every file under `dir` (symlinks not followed) and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                out.insert(entry.path(), std::fs::read(entry.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn every_escape_is_refused_for_writes_even_when_writes_are_allowed() {
    let outer = tempfile::tempdir().unwrap();
    let ws = outer.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let made = workspace(true);
    std::fs::create_dir_all(ws.join("agents")).unwrap();
    std::fs::copy(
        made.path().join("agents/harvey.yaml"),
        ws.join("agents/harvey.yaml"),
    )
    .unwrap();
    std::fs::write(outer.path().join("outside.txt"), "outside\n").unwrap();
    for (path, text) in [
        (".git/config", "[core]\n"),
        ("HARVEY.md", "outside rules\n"),
        ("AGENTS.md", "outside rules\n"),
        (".env", "outside=1\n"),
        ("keys/id_rsa", "outside\n"),
        ("credentials.json", "outside\n"),
        ("cert.p12", "outside\n"),
        (".ssh/authorized_keys", "outside\n"),
        ("ok.txt", "outside\n"),
    ] {
        std::fs::create_dir_all(ws.join(path).parent().unwrap()).unwrap();
        std::fs::write(ws.join(path), text).unwrap();
    }
    std::os::unix::fs::symlink(outer.path().join("outside.txt"), ws.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outer.path(), ws.join("linkdir")).unwrap();
    let config = harvey::config::load(&ws).unwrap();
    assert!(
        config.tools.allow_writes,
        "only the sandbox stands in the way"
    );
    let (registry, _) = harvey::app::default_tools(&ws, &config);
    let outside = outer.path().join("outside.txt");
    let targets: Vec<String> = vec![
        "../outside.txt".into(),
        "../new.txt".into(),
        "src/../../outside.txt".into(),
        outside.display().to_string(),
        outer.path().join("new.txt").display().to_string(),
        "link.txt".into(),
        "linkdir/outside.txt".into(),
        "linkdir/new.txt".into(),
        "linkdir/sub/new.txt".into(),
        "agents/harvey.yaml".into(),
        "agents/new.md".into(),
        ".git/config".into(),
        ".git/hooks/pre-commit".into(),
        "HARVEY.md".into(),
        "AGENTS.md".into(),
        ".env".into(),
        ".env.local".into(),
        "keys/id_rsa".into(),
        "credentials.json".into(),
        "cert.p12".into(),
        ".ssh/authorized_keys".into(),
        ".netrc".into(),
    ];
    let before = snapshot(outer.path());
    for target in &targets {
        let write = serde_json::json!({"path": target, "content": "PWNED\n"});
        let edit = serde_json::json!({"path": target, "old": "outside", "new": "PWNED"});
        for (tool, args) in [("write_file", write), ("edit_file", edit)] {
            let result = registry.call(tool, args.as_object().unwrap());
            assert!(
                matches!(result, Err(ToolError::Refused(_))),
                "{tool} {target}: {result:?}"
            );
        }
    }
    assert_eq!(snapshot(outer.path()), before, "nothing changed anywhere");
    assert!(!outer.path().join("new.txt").exists() && !outer.path().join("sub").exists());
    // The same tools do write an ordinary file.
    let args = serde_json::json!({"path": "ok.txt", "old": "outside", "new": "inside"});
    assert!(registry
        .call("edit_file", args.as_object().unwrap())
        .is_ok());
    assert_eq!(
        std::fs::read_to_string(ws.join("ok.txt")).unwrap(),
        "inside\n"
    );
}

/// The two versions the child alternates between: different lengths, different bytes.
fn versions() -> (Vec<u8>, Vec<u8>) {
    let old = "old line of the first version\n".repeat(120_000);
    let new = "NEW LINE, SECOND VERSION!\n".repeat(150_000);
    (old.into_bytes(), new.into_bytes())
}

const CHILD_ENV: &str = "HARVEY_ATOMIC_CHILD";
/// The child's first line after its first whole write (the harness may print before it on the same line).
const CHILD_STARTED: &str = "atomic writer started";

/// Not a test on its own: the process `kill_9_mid_write_leaves_the_old_file_or_the_new`
/// starts and kills. It rewrites the file in a loop until killed.
#[test]
#[ignore = "the child process of kill_9_mid_write_leaves_the_old_file_or_the_new"]
fn atomic_writer_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (old, new) = versions();
    for i in 0u64.. {
        let bytes = if i % 2 == 0 { &new } else { &old };
        harvey::tools::atomic::write(Path::new(&path), bytes).unwrap();
        if i == 0 {
            println!("{CHILD_STARTED}");
        }
    }
}

#[test]
fn kill_9_mid_write_leaves_the_old_file_or_the_new() {
    let (old, new) = versions();
    let mut rng = Rng::new("kill_9_mid_write");
    let (mut olds, mut news, mut leftovers) = (0, 0, 0);
    let n = rounds(10);
    for round in 0..n {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        std::fs::write(&path, &old).unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "suite::files_safety::atomic_writer_child",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let started = stdout
            .lines()
            .map_while(Result::ok)
            .any(|l| l.contains(CHILD_STARTED));
        assert!(started, "round {round}: the child never wrote");
        std::thread::sleep(rng.delay(Duration::from_millis(60)));
        child.kill().unwrap();
        child.wait().unwrap();
        let now = std::fs::read(&path).unwrap();
        assert!(
            now == old || now == new,
            "round {round}: big.txt has {} bytes, neither wholly old ({}) nor wholly new ({})",
            now.len(),
            old.len(),
            new.len()
        );
        if now == old {
            olds += 1;
        } else {
            news += 1;
        }
        for name in names(dir.path()) {
            assert!(
                name == "big.txt" || harvey::tools::atomic::is_temp_name(&name),
                "round {round}: stray file {name}"
            );
            leftovers += usize::from(name != "big.txt");
        }
    }
    eprintln!("kill -9 mid-write: {n} rounds, {olds} old, {news} new, {leftovers} cut-off temporary files left");
    assert!(
        leftovers > 0,
        "no kill landed inside a write, so the test proved nothing; rerun with HARVEY_SOAK"
    );
}

/// The real model, except that its first free reply is taken to open a call: what the
/// grammar makes it write is then the model's own, and the agent turn handles it as in
/// `harvey run`. The call grammar is narrowed to `write_file` with short content, so
/// every call it admits fits the context.
struct OpensACall {
    inner: LlamaEngine,
    opened: bool,
    grammar: String,
}

impl harvey::tokens::TokenCounter for OpensACall {
    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
}

impl Engine for OpensACall {
    fn info(&self) -> &ModelInfo {
        Engine::info(&self.inner)
    }
    fn count_prompt(&self, m: &[Message]) -> Result<usize, EngineError> {
        self.inner.count_prompt(m)
    }
    fn render_prompt(&self, m: &[Message]) -> Result<String, EngineError> {
        self.inner.render_prompt(m)
    }
    fn generate(
        &mut self,
        m: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        if !self.opened && opts.stop.iter().any(|s| s == CALL_OPENER) {
            self.opened = true;
            return Ok(Completion {
                text: String::new(),
                stop: StopReason::StopString,
                stats: TurnStats::default(),
            });
        }
        let mut o = opts.clone();
        if o.grammar.is_some() {
            o.grammar = Some(self.grammar.clone());
            o.max_tokens = Some(harvey::tools::grammar::call_max_tokens(&self.grammar));
        }
        Engine::generate(&mut self.inner, m, &o, on_text)
    }
    fn generate_aside(
        &mut self,
        m: &[Message],
        opts: &GenerateOptions,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion, EngineError> {
        self.inner.generate_aside(m, opts, on_text)
    }
    fn prompt_ids(&self, m: &[Message]) -> Result<Vec<i32>, EngineError> {
        Engine::prompt_ids(&self.inner, m)
    }
    fn warm_prefix(&mut self, ids: &[i32]) -> Result<usize, EngineError> {
        Engine::warm_prefix(&mut self.inner, ids)
    }
    fn save_state(&self, path: &Path) -> Result<usize, EngineError> {
        Engine::save_state(&self.inner, path)
    }
    fn load_state(&mut self, path: &Path, expected: &[i32]) -> Result<(), EngineError> {
        Engine::load_state(&mut self.inner, path, expected)
    }
    fn cached_tokens(&self) -> usize {
        Engine::cached_tokens(&self.inner)
    }
    fn reset(&mut self) {
        Engine::reset(&mut self.inner);
    }
}

#[test]
fn real_model_write_file_call_parses_and_is_refused_in_harvey_run() {
    let ws = workspace(false);
    let config = harvey::config::load(ws.path()).unwrap();
    let (registry, _) = harvey::app::default_tools(ws.path(), &config);
    let mut info = registry
        .list()
        .into_iter()
        .find(|t| t.name == "write_file")
        .unwrap();
    for p in &mut info.params {
        if p.name == "content" {
            p.kind = harvey::tools::ParamKind::Str { max_len: 120 };
        }
    }
    // And the path to a plain file name, which the sandbox accepts: what is left to
    // refuse the call is that nobody can say yes.
    let grammar: String = harvey::tools::grammar::call_grammar(&[info])
        .lines()
        .map(|rule| {
            if rule.starts_with("v-write-file-path ::=") {
                "v-write-file-path ::= \"\\\"\" [a-z] [a-z0-9_-]{0,20} \".txt\\\"\"".into()
            } else {
                rule.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert!(grammar.contains("[a-z0-9_-]{0,20}"), "{grammar}");
    let n_ctx = 4096;
    let engine = OpensACall {
        inner: crate::support::engine(n_ctx, 512),
        opened: false,
        grammar: grammar.clone(),
    };
    let mut app = App::with_engine(ws.path().canonicalize().unwrap(), config, Box::new(engine));
    assert!(app.asker().is_none(), "as in harvey run: nobody to ask");
    let before = snapshot(ws.path());
    let turn = app
        .agent_turn(
            "Create a file hello.txt that says hello world.",
            &mut |_| {},
        )
        .unwrap();
    let call = &turn.calls[0];
    let parsed = call.call.as_ref().unwrap_or_else(|| {
        panic!("the call did not parse: {:?}", call.result);
    });
    assert_eq!(parsed.name, "write_file");
    let path = parsed.arguments["path"].as_str().unwrap().to_string();
    assert!(
        harvey::sandbox::resolve_write(ws.path(), &path).is_ok(),
        "{path}"
    );
    let err = call.result.as_ref().unwrap_err();
    assert!(matches!(err, ToolError::Refused(_)), "{err}");
    assert!(err.to_string().contains("this session cannot ask"), "{err}");
    let audit = harvey::command::AuditLog::new(&ws.path().join("agents"));
    let entries = audit.last(10).unwrap().0;
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (
            entries[0].program.as_str(),
            entries[0].args[0].as_str(),
            entries[0].decision
        ),
        (
            "write_file",
            path.as_str(),
            harvey::command::Decision::Refused
        )
    );
    let after: BTreeMap<_, _> = snapshot(ws.path())
        .into_iter()
        .filter(|(p, _)| !p.starts_with(ws.path().join("agents")))
        .collect();
    let before: BTreeMap<_, _> = before
        .into_iter()
        .filter(|(p, _)| !p.starts_with(ws.path().join("agents")))
        .collect();
    assert_eq!(after, before, "nothing was written");
    eprintln!("the model's call: {}", parsed.summary());
}
