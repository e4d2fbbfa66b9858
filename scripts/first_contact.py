#!/usr/bin/env python3
"""First-contact benchmark: can harvey answer a newcomer's questions about a repository?

Each battery file benches/first_contact/<owner>+<name>.tsv holds questions about the
GitHub repository owner/name, with the answers read from one pinned commit:

    # commit: <40-hex sha>                 (first comment line: the pinned commit)
    # any other comment line
    split<TAB>kind<TAB>question<TAB>expected   (header, exactly these four names)
    tune<TAB>version<TAB>Which version is this checkout?<TAB>1.2.3|v1.2.3

split is `tune` or `measure`; kind is one of KINDS below. expected is a list of
case-insensitive substrings that must appear in the reply: `a|b` = a or b, `a && b` =
both, and `&&` binds looser than `|` (`1.2.3|v1.2.3 && 2021` = (1.2.3 or v1.2.3) and
2021). One refinement over plain substrings keeps short answers honest: an alternative
that starts with a letter (digit) does not match right after another letter (digit) in
the reply, and one that ends with a digit does not match right before another digit.
So `MIT` does not match "commit", `18` not "2018", `1000` not "10000", `8 oct` not
"18 oct"; but `0.17.0` matches "v0.17.0", `color` matches "colors". Runs of white
space in the reply count as one space.

For every question the runner resets the checkout (git checkout -- . ; git clean -fdq
-e agents/ ; back to the pinned commit if HEAD moved), removes everything under the
workspace's agents/ except the --keep names (so no question sees an earlier one's
session or memory), then runs, inside the checkout,

    harvey -w CHECKOUT -m MODEL run --json QUESTION

and reads the JSON object it prints (reply, prompt_tokens, evaluated_tokens,
completion_tokens, ttft_ms). A timeout is a fail with reply "(timeout)".

With --session, each repository's questions are asked in one process instead, as a user
asks them in one sitting with the model kept open: the checkout is reset once, then

    harvey -w CHECKOUT -m MODEL run --json --each QUESTIONS_FILE

answers them in order, each in a new conversation, one JSON line each. A question's
seconds are then what the user waits for it: the model's open and the prefix for the
first, its own turn for the others. With --conversation (which implies --session) they
are one conversation, as typed into the REPL one after another (`run --each
--conversation`): each question sees the earlier answers, so what only a conversation
shows (a question taken for a follow-up, an answer shaped like the one before) is scored.

Checkouts live at REPOS/<owner>+<name>. A missing one is cloned from the mirror
(MIRROR/<owner>+<name>/repo, as the fetch tool leaves it) and set to the pinned commit.

Use (from the project root):

    scripts/first_contact.py --check                       # validate the battery files only
    scripts/first_contact.py --model models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \\
        --repos ../checkouts --split tune --out tune-new.json
    scripts/first_contact.py --model M --repos R --repo sharkdp+hexyl --kind version,license
    scripts/first_contact.py --model M --repos R --keep cache --out a.json  # keep agents/cache
    scripts/first_contact.py --model M --repos R --session --out s.json  # one process per repository
    scripts/first_contact.py --model M --repos R --conversation --out c.json  # one conversation each
    scripts/first_contact.py --compare old.json new.json    # two runs side by side
    scripts/first_contact.py --table run.json               # the summary table of a saved run

Progress goes to stderr (one line per question); the summary table to stdout: answered
right / total, median and max wall seconds, median and max evaluated (prefilled) tokens,
per split, per kind group (common = version, license, last_commit, test_command,
dependency, latest_release, type_location; other = the rest) and overall, then per kind,
then the step table: median and max per question of the model's open, the prefix, the
evidence step, the router, the tools, the tokens prefilled and decoded (and their ms) and
the close, from the `timing` and `steps` of `harvey run --json`.
--out FILE.json is rewritten after every question, so an interrupted run keeps its rows.
Exit code: 0 when the run completed (whatever the score), 1 on a runtime error, 2 on bad
input (a battery file, an option, a missing model or binary).

Standard library only, Python 3.11.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATTERY_DIR = ROOT / "benches" / "first_contact"
# Where bare copies of the repositories are looked for when a checkout is missing
# (MIRROR/<owner>+<name>/repo); a checkout cloned by hand into REPOS needs none.
DEFAULT_MIRROR = Path(os.environ.get("FIRST_CONTACT_MIRROR", str(ROOT / "target" / "first_contact" / "mirrors")))
DEFAULT_REPOS = ROOT / "target" / "first_contact"

from first_contact_report import (  # noqa: E402  (the script's own folder)
    KINDS, SPLITS, InputError, _fmt, compare, group_of, load_run, print_steps, print_table,
)
from first_contact_run import run_harvey, run_session  # noqa: E402
HEADER = ["split", "kind", "question", "expected"]
SHA_RE = re.compile(r"^[0-9a-f]{40}$")
FILE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\+[A-Za-z0-9][A-Za-z0-9_.-]*$")

# Which fetch-models.sh option brings which model file.
FETCH_HINTS = {
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf": "scripts/fetch-models.sh --qwen",
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf": "scripts/fetch-models.sh --qwen-small",
    "SmolLM2-135M-Instruct.Q4_1.gguf": "scripts/fetch-models.sh (no option: the default model)",
}


# ----------------------------------------------------------------------------- batteries


@dataclass
class Question:
    repo: str  # owner+name
    split: str
    kind: str
    question: str
    expected: str
    groups: list[list[str]]  # AND of ORs
    source: str  # file:line


@dataclass
class Battery:
    repo: str
    path: Path
    commit: str
    questions: list[Question] = field(default_factory=list)


def parse_expected(text: str) -> list[list[str]]:
    groups = []
    for part in text.split("&&"):
        alts = [a.strip() for a in part.split("|")]
        if not part.strip() or any(not a for a in alts):
            raise ValueError(f"empty alternative in expected {text!r} (check the | and &&)")
        groups.append(alts)
    return groups


def load_battery(path: Path) -> tuple[Battery | None, list[str]]:
    """Parse one battery file; returns (battery or None, list of error messages)."""
    errors: list[str] = []
    repo = path.stem
    if not FILE_RE.match(repo):
        errors.append(f"{path}: file name must be <owner>+<name>.tsv (got {path.name!r})")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        return None, [f"{path}: cannot read: {e}"]
    commit = None
    header_seen = False
    battery = Battery(repo=repo, path=path, commit="")
    for no, raw in enumerate(lines, 1):
        where = f"{path}:{no}"
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        if line.startswith("#"):
            m = re.match(r"#\s*commit:\s*(\S*)\s*$", line)
            if m:
                if commit is not None:
                    errors.append(f"{where}: a second '# commit:' line")
                elif not SHA_RE.match(m.group(1).lower()):
                    errors.append(
                        f"{where}: pinned commit {m.group(1)!r} is not a 40-hex-digit sha"
                    )
                    commit = ""
                elif header_seen:
                    errors.append(f"{where}: '# commit:' must come before the header line")
                    commit = m.group(1).lower()
                else:
                    commit = m.group(1).lower()
            continue
        cols = line.split("\t")
        if not header_seen:
            header_seen = True
            if [c.strip().lower() for c in cols] != HEADER:
                errors.append(
                    f"{where}: the header must be split<TAB>kind<TAB>question<TAB>expected, "
                    f"got {line!r}"
                )
            continue
        if len(cols) != 4:
            errors.append(
                f"{where}: {len(cols)} tab-separated columns, want 4 "
                f"(split, kind, question, expected); spaces instead of a tab?"
            )
            continue
        split, kind, question, expected = (c.strip() for c in cols)
        bad = False
        if split not in SPLITS:
            errors.append(f"{where}: unknown split {split!r} (want tune or measure)")
            bad = True
        if kind not in KINDS:
            errors.append(f"{where}: unknown kind {kind!r} (known: {', '.join(KINDS)})")
            bad = True
        if not question:
            errors.append(f"{where}: empty question")
            bad = True
        try:
            groups = parse_expected(expected)
        except ValueError as e:
            errors.append(f"{where}: {e}")
            bad = True
        if not bad:
            battery.questions.append(
                Question(repo, split, kind, question, expected, groups, where)
            )
    if commit is None:
        errors.append(
            f"{path}: no pinned commit; the first comment line must be '# commit: <40-hex sha>'"
        )
    elif commit:
        battery.commit = commit
    if not header_seen:
        errors.append(f"{path}: no header line (split<TAB>kind<TAB>question<TAB>expected)")
    elif not battery.questions and not errors:
        errors.append(f"{path}: no questions")
    return (None if errors else battery), errors


def load_batteries(directory: Path) -> list[Battery]:
    files = sorted(directory.glob("*.tsv"))
    if not files:
        raise InputError(f"no battery files {directory}/*.tsv")
    batteries, errors = [], []
    for f in files:
        b, errs = load_battery(f)
        errors += errs
        if b:
            batteries.append(b)
    if errors:
        raise InputError("bad battery file(s):\n  " + "\n  ".join(errors))
    return batteries


# ----------------------------------------------------------------------------- matching

_WS = re.compile(r"\s+")


def _class(ch: str) -> str:
    if ch.isascii() and ch.isalpha():
        return "a"
    if ch.isascii() and ch.isdigit():
        return "d"
    return ""


def alt_matches(alt: str, text: str) -> bool:
    """text is already lowered and whitespace-collapsed."""
    needle = _WS.sub(" ", alt.lower())
    first, last = _class(needle[0]), _class(needle[-1])
    start = 0
    while True:
        i = text.find(needle, start)
        if i < 0:
            return False
        j = i + len(needle)
        ok_start = not first or i == 0 or _class(text[i - 1]) != first
        ok_end = last != "d" or j == len(text) or _class(text[j]) != "d"
        if ok_start and ok_end:
            return True
        start = i + 1


def passes(groups: list[list[str]], reply: str) -> bool:
    text = _WS.sub(" ", reply.lower())
    return all(any(alt_matches(a, text) for a in alts) for alts in groups)


# ----------------------------------------------------------------------------- checkouts


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    if check and p.returncode != 0:
        raise RuntimeError(
            f"git {' '.join(args)} in {cwd} failed ({p.returncode}): {p.stderr.strip()}"
        )
    return p


def mirror_source(mirror: Path, repo: str) -> Path | None:
    for cand in (mirror / repo / "repo", mirror / repo):
        if (cand / "HEAD").is_file() or (cand / ".git").exists():
            return cand
    return None


def has_commit(path: Path, sha: str) -> bool:
    return git(path, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def prepare_checkout(b: Battery, repos: Path, mirror: Path) -> Path:
    owner_name = b.repo.replace("+", "/", 1)
    ws = repos / b.repo
    if not ws.exists():
        src = mirror_source(mirror, b.repo)
        if src is None:
            raise InputError(
                f"{b.path}: no checkout at {ws} and no mirror at {mirror / b.repo}/repo; "
                f"bring it with the fetch tool (source github:{owner_name})"
            )
        repos.mkdir(parents=True, exist_ok=True)
        print(f"cloning {src} -> {ws}", file=sys.stderr)
        p = subprocess.run(
            ["git", "clone", "-q", "--no-checkout", str(src), str(ws)],
            capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )
        if p.returncode != 0:
            raise RuntimeError(f"git clone {src} {ws} failed: {p.stderr.strip()}")
        # A user's checkout names its public origin, not the mirror's path on this machine.
        git(ws, "remote", "set-url", "origin", f"https://github.com/{owner_name}.git")
    elif not (ws / ".git").exists():
        raise InputError(f"{ws} exists but is not a git checkout")
    if not has_commit(ws, b.commit):
        src = mirror_source(mirror, b.repo)
        if src is not None:
            git(ws, "fetch", "-q", str(src), "+refs/heads/*:refs/remotes/mirror/*", check=False)
        if not has_commit(ws, b.commit):
            raise InputError(
                f"{b.path}: pinned commit {b.commit} is not in {ws}"
                + (f" nor in the mirror {src}" if src else "")
                + f"; fetch github:{owner_name} again or fix the '# commit:' line"
            )
    git(ws, "checkout", "-q", "-f", "--detach", b.commit)
    return ws


def reset_checkout(ws: Path, sha: str, keep: set[str]) -> None:
    git(ws, "checkout", "-q", "--", ".", check=False)
    git(ws, "clean", "-fdq", "-e", "agents/")
    if git(ws, "rev-parse", "HEAD").stdout.strip() != sha:
        git(ws, "checkout", "-q", "-f", "--detach", sha)
        git(ws, "clean", "-fdq", "-e", "agents/")
    agents = ws / "agents"
    if agents.is_symlink() or agents.is_file():
        agents.unlink()
    elif agents.is_dir():
        for entry in agents.iterdir():
            if entry.name in keep:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()


# ----------------------------------------------------------------------------- tables


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Run the first-contact question batteries against harvey.",
        epilog="See the docstring at the top of this file for the battery format.",
    )
    ap.add_argument("--harvey", default=str(ROOT / "target" / "release" / "harvey"),
                    help="harvey binary (default: target/release/harvey)")
    ap.add_argument("--model", help="GGUF model file (required to run)")
    ap.add_argument("--repos", default=str(DEFAULT_REPOS),
                    help="folder of checkouts DIR/<owner>+<name>, created and cloned from "
                         "--mirror when missing (default: target/first_contact)")
    ap.add_argument("--mirror", default=str(DEFAULT_MIRROR),
                    help="where fetched mirrors are, MIRROR/<owner>+<name>/repo "
                         "(default: $FIRST_CONTACT_MIRROR, else target/first_contact/mirrors)")
    ap.add_argument("--batteries", default=str(BATTERY_DIR),
                    help="folder of <owner>+<name>.tsv files (default: benches/first_contact)")
    ap.add_argument("--split", choices=("tune", "measure", "all"), default="all")
    ap.add_argument("--repo", action="append", default=[],
                    help="only this repository (owner+name or owner/name); repeatable")
    ap.add_argument("--kind", action="append", default=[],
                    help="only this kind (comma-separated or repeated)")
    ap.add_argument("--limit", type=int, help="run at most N questions")
    ap.add_argument("--out", help="write every row to this JSON file")
    ap.add_argument("--keep", action="append", default=[], metavar="NAME",
                    help="a file or folder name under agents/ kept between questions "
                         "(e.g. cache); repeatable")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds per question (default 600); a timeout is a fail")
    ap.add_argument("--session", action="store_true",
                    help="ask each repository's questions in one `harvey run --each` process "
                         "(the model kept open), not one process per question")
    ap.add_argument("--conversation", action="store_true",
                    help="as --session, and the questions make one conversation, as typed "
                         "into the REPL one after another")
    ap.add_argument("--check", action="store_true",
                    help="only validate the battery files and print the question counts")
    ap.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"),
                    help="print two runs side by side and exit")
    ap.add_argument("--table", metavar="RUN.json", help="print the table of a saved run")
    args = ap.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        ap.error("--limit must be at least 1")
    if args.timeout <= 0:
        ap.error("--timeout must be positive")
    if args.conversation:
        args.session = True
    return args


def select(batteries, args) -> list[tuple[Battery, Question]]:
    kinds = {k.strip() for ks in args.kind for k in ks.split(",") if k.strip()}
    bad = sorted(kinds - set(KINDS))
    if bad:
        raise InputError(f"--kind: unknown kind(s) {', '.join(bad)} (known: {', '.join(KINDS)})")
    repos = {r.replace("/", "+", 1) for r in args.repo}
    known = {b.repo for b in batteries}
    missing = sorted(repos - known)
    if missing:
        raise InputError(
            f"--repo: no battery file for {', '.join(missing)} "
            f"(have: {', '.join(sorted(known))})"
        )
    chosen = []
    for b in batteries:
        if repos and b.repo not in repos:
            continue
        for q in b.questions:
            if args.split != "all" and q.split != args.split:
                continue
            if kinds and q.kind not in kinds:
                continue
            chosen.append((b, q))
    if args.limit:
        chosen = chosen[: args.limit]
    return chosen


def check_model(model: str | None) -> Path:
    if not model:
        raise InputError("--model PATH is required (e.g. models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf)")
    p = Path(model).expanduser()
    if not p.is_file():
        hint = FETCH_HINTS.get(p.name)
        raise InputError(
            f"--model: no model file {p}; "
            + (f"fetch it with {hint}" if hint else
               "fetch one with scripts/fetch-models.sh --qwen (1.5B) or --qwen-small (0.5B)")
        )
    return p.resolve()


def write_out(path: str | None, meta: dict, rows: list[dict]) -> None:
    if not path:
        return
    tmp = Path(path + ".tmp")
    tmp.write_text(json.dumps({**meta, "rows": rows}, indent=1, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)


def answers(chosen, checkouts, args, harvey: Path, model: Path, keep: set[str]):
    """(question, result) for each chosen question, in order: a fresh process each, or
    with --session one process for all of a checkout's questions, asked when its first
    one comes up. The checkout is reset before each process."""
    pending: dict[int, dict] = {}
    for i, (b, q) in enumerate(chosen):
        ws = checkouts[b.repo]
        if not args.session:
            reset_checkout(ws, b.commit, keep)
            yield q, run_harvey(harvey, model, ws, q.question, args.timeout)
            continue
        if i not in pending:
            same = [j for j, (c, _) in enumerate(chosen) if c.repo == b.repo and j >= i]
            reset_checkout(ws, b.commit, keep)
            got = run_session(harvey, model, ws, [chosen[j][1].question for j in same],
                              args.timeout, conversation=args.conversation)
            pending.update(zip(same, got))
        yield q, pending.pop(i)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.compare:
        compare(*args.compare)
        return 0
    if args.table:
        _, rows = load_run(args.table)
        print_table(rows)
        print_steps(rows)
        return 0
    batteries = load_batteries(Path(args.batteries))
    chosen = select(batteries, args)
    if args.check:
        for b in batteries:
            counts = {}
            for q in b.questions:
                counts[(q.split, group_of(q.kind))] = counts.get((q.split, group_of(q.kind)), 0) + 1
            desc = ", ".join(f"{s} {g} {n}" for (s, g), n in sorted(counts.items()))
            print(f"{b.repo:<28} {b.commit[:12]}  {len(b.questions):>3} questions ({desc})")
        per_kind = {k: sum(1 for b in batteries for q in b.questions if q.kind == k) for k in KINDS}
        print("per kind: " + ", ".join(f"{k} {n}" for k, n in per_kind.items()))
        print(f"selected by the filters: {len(chosen)}")
        return 0
    if not chosen:
        raise InputError("no question matches --split/--repo/--kind")
    model = check_model(args.model)
    harvey = Path(args.harvey).expanduser()
    if not (harvey.is_file() and os.access(harvey, os.X_OK)):
        raise InputError(f"--harvey: no executable at {harvey} (build it: cargo build --release)")
    harvey = harvey.resolve()
    repos = Path(args.repos).expanduser().resolve()
    mirror = Path(args.mirror).expanduser()
    keep = set(args.keep)
    for k in keep:
        if not k or "/" in k or k in (".", ".."):
            raise InputError(f"--keep {k!r}: give a plain file or folder name under agents/")

    checkouts = {}
    for b, _ in chosen:
        if b.repo not in checkouts:
            checkouts[b.repo] = prepare_checkout(b, repos, mirror)

    meta = {
        "harvey": str(harvey),
        "model": str(model),
        "started": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "timeout": args.timeout,
        "keep": sorted(keep),
        "commits": {b.repo: b.commit for b in batteries if b.repo in checkouts},
    }
    meta["session"] = args.session
    meta["conversation"] = args.conversation
    rows: list[dict] = []
    for i, (q, res) in enumerate(answers(chosen, checkouts, args, harvey, model, keep), 1):
        passed = (not res["timed_out"]) and passes(q.groups, res["reply"])
        row = {
            "repo": q.repo, "split": q.split, "kind": q.kind, "question": q.question,
            "expected": q.expected, "reply": res["reply"], "passed": passed,
            "seconds": res["seconds"], "evaluated_tokens": res["evaluated_tokens"],
            "prompt_tokens": res["prompt_tokens"],
            "completion_tokens": res["completion_tokens"], "ttft_ms": res["ttft_ms"],
            "exit_code": res["exit_code"], "source": q.source,
            "timing": res["timing"], "steps": res["steps"],
            "evidence_sources": res["evidence_sources"], "tools": res["tools"],
        }
        if res["error"]:
            row["error"] = res["error"]
        rows.append(row)
        write_out(args.out, meta, rows)
        note = " (timeout)" if res["timed_out"] else (
            f" (exit {res['exit_code']}: {res['error']})" if res["error"] else "")
        print(
            f"[{i}/{len(chosen)}] {q.repo} {q.kind} {'PASS' if passed else 'fail'} "
            f"{res['seconds']:.1f}s eval={_fmt(res['evaluated_tokens'])}{note}",
            file=sys.stderr, flush=True,
        )
    meta["finished"] = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    write_out(args.out, meta, rows)
    print_table(rows)
    print_steps(rows)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except InputError as e:
        print(f"first_contact: {e}", file=sys.stderr)
        sys.exit(2)
    except RuntimeError as e:
        print(f"first_contact: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("first_contact: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:  # stdout piped into head and closed early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
