"""Running harvey for scripts/first_contact.py: one question per process, or a checkout's
questions in one `harvey run --each` process, read back as result dicts.

Standard library only, Python 3.11.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path


def _spawn(cmd: list[str], ws: Path, timeout: float) -> tuple[str, str, int, bool, float]:
    """Runs `cmd` in `ws` in a process group of its own: (stdout, stderr, exit code,
    timed out, seconds). A timeout or Ctrl-C stops the whole group."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _stop(proc)
        out, err = proc.communicate()
    except KeyboardInterrupt:
        _stop(proc)
        raise
    return out, err, proc.returncode, timed_out, time.monotonic() - t0


def _empty(reply: str, seconds: float | None, exit_code: int, timed_out: bool) -> dict:
    return {
        "reply": reply, "seconds": seconds, "evaluated_tokens": None, "prompt_tokens": None,
        "completion_tokens": None, "ttft_ms": None, "exit_code": exit_code,
        "timed_out": timed_out, "error": None, "timing": None, "steps": None,
        "evidence_sources": None, "tools": None,
    }


def _fill(res: dict, obj: dict) -> None:
    """The fields of one `harvey run --json` object."""
    res["reply"] = str(obj.get("reply", ""))
    for k in ("evaluated_tokens", "prompt_tokens", "completion_tokens", "ttft_ms", "timing", "steps"):
        res[k] = obj.get(k)
    res["evidence_sources"] = (obj.get("evidence") or {}).get("sources")
    res["tools"] = [c.get("call") for c in obj.get("tool_calls") or []]


def run_harvey(harvey: Path, model: Path, ws: Path, question: str, timeout: float) -> dict:
    cmd = [str(harvey), "-w", str(ws), "-m", str(model), "run", "--json", question]
    out, err, code, timed_out, seconds = _spawn(cmd, ws, timeout)
    res = _empty("(timeout)" if timed_out else "", round(seconds, 2), code, timed_out)
    if timed_out:
        return res
    obj = _last_json_object(out)
    if obj is None:
        tail = (err or out).strip().splitlines()[-3:]
        res["error"] = "no JSON object on stdout" + (f": {' / '.join(tail)}" if tail else "")
        res["reply"] = "(no reply)"
        return res
    _fill(res, obj)
    if code != 0:
        tail = err.strip().splitlines()[-2:]
        res["error"] = " / ".join(tail) or None
    return res


def run_session(harvey: Path, model: Path, ws: Path, questions: list[str],
                timeout: float, conversation: bool = False) -> list[dict]:
    """All of one checkout's questions in one `harvey run --each` process, in order (one
    conversation with `conversation`: `--each --conversation`). A
    question's seconds are what the user waits for it (the model's open and the prefix
    for the first); one left without an answer counts the whole run's wall time."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("".join(q + "\n" for q in questions))
        listed = f.name
    cmd = [str(harvey), "-w", str(ws), "-m", str(model), "run", "--json", "--each", listed]
    if conversation:
        cmd.append("--conversation")
    try:
        out, err, code, timed_out, wall = _spawn(cmd, ws, timeout * len(questions))
    finally:
        os.unlink(listed)
    objects = []
    for line in out.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            objects.append(obj)
    results = []
    for i, _ in enumerate(questions):
        obj = objects[i] if i < len(objects) else None
        if obj is None:
            res = _empty("(timeout)" if timed_out else "(no reply)", round(wall, 2), code,
                         timed_out)
            tail = (err or "").strip().splitlines()[-2:]
            res["error"] = "no JSON line for this question" + (
                f": {' / '.join(tail)}" if tail else "")
        else:
            timing = obj.get("timing") or {}
            waited = sum(float(timing.get(k) or 0) for k in ("open_ms", "prefix_ms", "turn_ms"))
            res = _empty("", round(waited / 1000, 2), code, False)
            _fill(res, obj)
        results.append(res)
    return results


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the process group we started (harvey closes its session), then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _last_json_object(out: str) -> dict | None:
    out = out.strip()
    if not out:
        return None
    try:
        obj = json.loads(out)
        return obj if isinstance(obj, dict) else None
    except json.JSONDecodeError:
        pass
    for line in reversed(out.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return obj
    return None
