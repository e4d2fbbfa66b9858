#!/usr/bin/env python3
"""The speed issue's rows a user feels, for one or more models, in one run.

For each model, rounds taking turns, in one temporary workspace per model that a first
round not counted has used (so the saved prompt prefix is there, as in a workspace used
before; `--fresh` gives every run a new workspace instead: a first run's cost):

* one-shot: `harvey run PROMPT` with the reply streamed to a pipe. `answer` is the time
  from the start to the last byte of the reply, `end` the time to the process's exit,
  `peak` its peak RSS (the kernel's own accounting of the reaped child).
* exit: the REPL fed two questions and `/exit` on its standard input. `exit` is the
  time from the last byte of the second reply to the process's exit: what `/exit`
  costs before the shell prompt returns.

Medians, min and max over the rounds are printed as a Markdown table. Run it on an idle
machine: every figure is a wall-clock time.

    python3 scripts/speed_rows.py [--rounds 3] [--harvey target/release/harvey] MODEL.gguf ...
"""

import argparse
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

QUESTION = "What is 17 times 3?"
SECOND = "And what is that number plus 4?"


def timed(cmd, stdin_text, cwd):
    """Runs `cmd`; returns (seconds to the last output byte, seconds to exit, peak RSS
    in bytes, exit code, the output)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if stdin_text is not None:
        proc.stdin.write(stdin_text.encode())
        proc.stdin.close()
    out = bytearray()
    chunks = []  # (time, length of `out` after the chunk)
    fd = proc.stdout.fileno()
    while True:
        select.select([fd], [], [])
        data = os.read(fd, 65536)
        if not data:
            break
        out.extend(data)
        chunks.append((time.monotonic() - start, len(out)))
    _, status, usage = os.wait4(proc.pid, 0)
    end = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return chunks, end, usage.ru_maxrss * 1024, proc.returncode, out.decode(errors="replace")


def last_reply_byte(chunks, out, marker):
    """Time of the last chunk that arrived before `marker` first appears in `out` (the
    end of the last reply), or of the last chunk when the marker never comes."""
    at = out.find(marker)
    if at < 0:
        return chunks[-1][0] if chunks else 0.0
    before = [t for t, n in chunks if n <= at]
    return before[-1] if before else 0.0


def one_shot(harvey, model, ws):
    chunks, end, peak, code, out = timed([harvey, "run", "-m", model, QUESTION], None, ws)
    if code != 0 or not out.strip():
        sys.exit(f"harvey run failed (exit {code}) with {model}: {out[-400:]}")
    return chunks[-1][0], end, peak


def repl_exit(harvey, model, ws):
    chunks, end, _, code, out = timed(
        [harvey, "-m", model], f"{QUESTION}\n{SECOND}\n/exit\n", ws
    )
    if code != 0:
        sys.exit(f"the REPL failed (exit {code}) with {model}: {out[-400:]}")
    answered = last_reply_byte(chunks, out, "[session saved")
    return end - answered


def workspace(keep, fresh):
    """A new temporary workspace (`fresh`), else the model's kept one."""
    return keep if not fresh else tempfile.mkdtemp(prefix="harvey-speed-")


def spread(values, fmt):
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="GGUF model files")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--harvey", default="target/release/harvey")
    ap.add_argument("--fresh", action="store_true", help="a new workspace for every run")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    harvey = args.harvey if os.sep not in args.harvey else os.path.abspath(args.harvey)
    harvey = shutil.which(harvey) or harvey
    if not os.access(harvey, os.X_OK):
        sys.exit(f"no harvey binary at {args.harvey}: build it (cargo build --release) or pass --harvey")
    models = [os.path.abspath(m) for m in args.models]
    for m in models:
        if not os.path.isfile(m):
            sys.exit(f"no model file {m}: scripts/fetch-models.sh --all fetches the registry's models")
    rows = {m: {"answer": [], "end": [], "peak": [], "exit": []} for m in models}
    kept = {m: tempfile.mkdtemp(prefix="harvey-speed-") for m in models}
    if not args.fresh:
        for m in models:
            one_shot(harvey, m, kept[m])
            repl_exit(harvey, m, kept[m])
    for r in range(args.rounds):
        for m in models:
            one, repl = workspace(kept[m], args.fresh), workspace(kept[m], args.fresh)
            answer, end, peak = one_shot(harvey, m, one)
            rows[m]["answer"].append(answer)
            rows[m]["end"].append(end)
            rows[m]["peak"].append(peak)
            rows[m]["exit"].append(repl_exit(harvey, m, repl))
            if args.fresh:
                shutil.rmtree(one, ignore_errors=True)
                shutil.rmtree(repl, ignore_errors=True)
            print(f"round {r + 1}/{args.rounds} {os.path.basename(m)}: answer {answer:.2f} s, "
                  f"end {end:.2f} s, peak {peak / 1e6:.0f} MB, /exit {rows[m]['exit'][-1]:.2f} s",
                  file=sys.stderr)
    secs = lambda v: f"{v:.2f} s"
    mb = lambda v: f"{v / 1e6:.0f} MB"
    for ws in kept.values():
        shutil.rmtree(ws, ignore_errors=True)
    print("| model | `harvey run`: answer | process end | end / answer | peak RSS | `/exit` after the last reply |")
    print("|---|---|---|---|---|---|")
    for m, v in rows.items():
        ratio = [e / a for a, e in zip(v["answer"], v["end"])]
        print(f"| {os.path.basename(m)} | {spread(v['answer'], secs)} | {spread(v['end'], secs)} | "
              f"{spread(ratio, lambda x: f'{x:.2f}×')} | {spread(v['peak'], mb)} | {spread(v['exit'], secs)} |")


if __name__ == "__main__":
    main()
