"""The first-contact battery's kinds and its reports: the summary table, the step table
and two runs side by side. Used by scripts/first_contact.py; standard library only."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


class InputError(Exception):
    """Bad input: a battery file, an option, a missing file. Exit code 2."""

COMMON_KINDS = (
    "version",
    "license",
    "last_commit",
    "test_command",
    "dependency",
    "latest_release",
    "type_location",
)
OTHER_KINDS = (
    "min_version",
    "setting_default",
    "env_var",
    "error_text",
    "release_date",
    "commit_file",
    "feature_author",
    "flag",
    "method_location",
    "contributing",
)
KINDS = COMMON_KINDS + OTHER_KINDS
SPLITS = ("tune", "measure")


def _med(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return statistics.median(xs) if xs else None


def _max(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return max(xs) if xs else None


def _fmt(x, digits=1):
    if x is None:
        return "-"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.{digits}f}"
    return str(int(x))


def group_of(kind: str) -> str:
    return "common" if kind in COMMON_KINDS else "other"


def summary_rows(rows: list[dict]) -> list[tuple[str, list[dict]]]:
    out = []
    for s in SPLITS:
        sel = [r for r in rows if r["split"] == s]
        if sel:
            out.append((f"split {s}", sel))
            for g in ("common", "other"):
                gs = [r for r in sel if group_of(r["kind"]) == g]
                if gs:
                    out.append((f"  {s} {g}", gs))
    for g in ("common", "other"):
        gs = [r for r in rows if group_of(r["kind"]) == g]
        if gs:
            out.append((f"group {g}", gs))
    out.append(("overall", rows))
    return out


def print_table(rows: list[dict], file=sys.stdout) -> None:
    if not rows:
        print("no rows", file=file)
        return
    head = f"{'':<22} {'right':>9} {'med s':>7} {'max s':>7} {'med eval':>9} {'max eval':>9}"

    def line(label, sel):
        right = sum(1 for r in sel if r["passed"])
        secs = [r["seconds"] for r in sel]
        ev = [r.get("evaluated_tokens") for r in sel]
        return (
            f"{label:<22} {f'{right}/{len(sel)}':>9} {_fmt(_med(secs)):>7} "
            f"{_fmt(_max(secs)):>7} {_fmt(_med(ev)):>9} {_fmt(_max(ev)):>9}"
        )

    print(head, file=file)
    for label, sel in summary_rows(rows):
        print(line(label, sel), file=file)
    print(file=file)
    print(head.replace(" " * 22, f"{'kind':<22}", 1), file=file)
    for k in KINDS:
        sel = [r for r in rows if r["kind"] == k]
        if sel:
            print(line(k, sel), file=file)


def step_row(r: dict) -> dict | None:
    """One question's seconds split by step (None for a row saved without them)."""
    timing, steps = r.get("timing"), r.get("steps")
    if not timing or steps is None:
        return None
    out = {
        "open ms": timing.get("open_ms"),
        "prefix ms": timing.get("prefix_ms"),
        "evidence ms": 0.0, "router ms": 0.0, "tool ms": 0.0,
        "prefill tokens": 0, "prefill ms": 0.0, "decode tokens": 0, "decode ms": 0.0,
        "close ms": timing.get("close_ms"),
    }
    for st in steps:
        kind = st.get("kind")
        if kind in ("evidence", "router", "tool"):
            out[f"{kind} ms"] += st.get("ms") or 0.0
        if kind in ("call", "answer", "router"):
            out["prefill tokens"] += st.get("prefill_tokens") or 0
            out["prefill ms"] += st.get("prefill_ms") or 0.0
            out["decode tokens"] += st.get("decode_tokens") or 0
            out["decode ms"] += st.get("decode_ms") or 0.0
    return out


def print_steps(rows: list[dict], file=sys.stdout) -> None:
    """Median and max of each step over the questions that carry their steps."""
    split = [s for s in (step_row(r) for r in rows) if s]
    if not split:
        return
    print(file=file)
    print(f"{'step (' + str(len(split)) + ' questions)':<22} {'median':>9} {'max':>9}", file=file)
    for key in split[0]:
        xs = [s[key] for s in split if s[key] is not None]
        print(f"{key:<22} {_fmt(_med(xs)):>9} {_fmt(_max(xs)):>9}", file=file)
    rates = [s["prefill tokens"] / s["prefill ms"] * 1000 for s in split if s["prefill ms"]]
    if rates:
        print(f"{'prefill tok/s':<22} {_fmt(_med(rates)):>9}", file=file)


def load_run(path: str) -> tuple[dict, list[dict]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: cannot read a run: {e}")
    if isinstance(data, list):
        return {}, data
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        return data, data["rows"]
    raise InputError(f"{path}: not a first_contact run (no 'rows' list)")


def compare(a_path: str, b_path: str) -> None:
    a_meta, a_rows = load_run(a_path)
    b_meta, b_rows = load_run(b_path)
    key = lambda r: (r["repo"], r["question"])  # noqa: E731
    b_by = {key(r): r for r in b_rows}
    a_keys = {key(r) for r in a_rows}
    print(f"A = {a_path}  ({a_meta.get('harvey', '?')}, {a_meta.get('model', '?')})")
    print(f"B = {b_path}  ({b_meta.get('harvey', '?')}, {b_meta.get('model', '?')})")
    print()
    print(f"{'repo':<24} {'kind':<16} {'A':>4} {'A s':>7} {'A eval':>7}   "
          f"{'B':>4} {'B s':>7} {'B eval':>7}  question")
    pf = lambda r: "-" if r is None else ("PASS" if r["passed"] else "fail")  # noqa: E731
    both_a, both_b = [], []
    for ra in a_rows:
        rb = b_by.get(key(ra))
        if rb is not None:
            both_a.append(ra)
            both_b.append(rb)
        mark = "" if rb is None or ra["passed"] == rb["passed"] else "  <-"
        q = ra["question"] if len(ra["question"]) <= 60 else ra["question"][:57] + "..."
        print(
            f"{ra['repo']:<24} {ra['kind']:<16} {pf(ra):>4} {_fmt(ra['seconds']):>7} "
            f"{_fmt(ra.get('evaluated_tokens')):>7}   {pf(rb):>4} "
            f"{_fmt(rb['seconds'] if rb else None):>7} "
            f"{_fmt(rb.get('evaluated_tokens') if rb else None):>7}  {q}{mark}"
        )
    for rb in b_rows:
        if key(rb) not in a_keys:
            print(
                f"{rb['repo']:<24} {rb['kind']:<16} {'-':>4} {'-':>7} {'-':>7}   {pf(rb):>4} "
                f"{_fmt(rb['seconds']):>7} {_fmt(rb.get('evaluated_tokens')):>7}  "
                f"{rb['question'][:60]}"
            )
    print()
    print(f"on the {len(both_a)} questions in both runs:")
    print(f"{'':<22} {'A right':>8} {'B right':>8} {'A med s':>8} {'B med s':>8} "
          f"{'A med ev':>9} {'B med ev':>9}")
    pairs = list(zip(both_a, both_b))
    groups = [("overall", pairs)]
    for s in SPLITS:
        sel = [p for p in pairs if p[0]["split"] == s]
        if sel:
            groups.append((f"split {s}", sel))
    for g in ("common", "other"):
        sel = [p for p in pairs if group_of(p[0]["kind"]) == g]
        if sel:
            groups.append((f"group {g}", sel))
    for label, sel in groups:
        ra = [p[0] for p in sel]
        rb = [p[1] for p in sel]
        print(
            f"{label:<22} {sum(r['passed'] for r in ra):>4}/{len(ra):<3} "
            f"{sum(r['passed'] for r in rb):>4}/{len(rb):<3} "
            f"{_fmt(_med([r['seconds'] for r in ra])):>8} "
            f"{_fmt(_med([r['seconds'] for r in rb])):>8} "
            f"{_fmt(_med([r.get('evaluated_tokens') for r in ra])):>9} "
            f"{_fmt(_med([r.get('evaluated_tokens') for r in rb])):>9}"
        )


# ----------------------------------------------------------------------------- main
