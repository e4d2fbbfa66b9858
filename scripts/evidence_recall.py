#!/usr/bin/env python3
"""Evidence recall: does a first-contact question's [evidence] block hold its answer?

A model-free companion of scripts/first_contact.py. For every question of the batteries
in benches/first_contact/ it runs, inside the checkout at the pinned commit,

    harvey -w CHECKOUT evidence show --json QUESTION

and scores the block the model would have been given with the battery's expected
strings (the same matching as first_contact.py): the block holds the answer, and the
rank (by score, whatever order the block is written in) of the first snippet that holds
it alone. A question whose block misses its answer
can only be answered by a tool call; one whose answer sits low in the block asks the
model to pick it out of the others. No model is loaded, so a whole battery takes seconds
and a retrieval change can be judged before the model runs.

Use (from the project root):

    scripts/evidence_recall.py --harvey target/release/harvey --repos DIR --split tune
    scripts/evidence_recall.py --harvey B --repos DIR --split all --out recall.json
    scripts/evidence_recall.py --compare a.json b.json     # the questions that moved

Checkouts are prepared as first_contact.py prepares them (cloned from --mirror when
missing). Exit code: 0 when the run completed, 1 on a runtime error, 2 on bad input.

Standard library only, Python 3.11.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import first_contact as fc  # noqa: E402


def block_for(harvey: Path, ws: Path, question: str) -> dict:
    p = subprocess.run(
        [str(harvey), "-w", str(ws), "evidence", "show", "--json", question],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )
    if p.returncode != 0:
        raise RuntimeError(f"harvey evidence show failed in {ws}: {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout)


def snippet_texts(text: str) -> list[str]:
    """The block's text cut at its `--- source` headers, one string per snippet."""
    parts: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("--- "):
            parts.append([line])
        elif parts:
            parts[-1].append(line)
    return ["\n".join(p) for p in parts]


def score(groups: list[list[str]], block: dict) -> dict:
    snippets = block.get("snippets", [])
    pieces = snippet_texts(block.get("text", ""))

    def text_of(source: str) -> str:
        # The block may be rendered in another order than its rank: find each by label.
        head = f"--- {source}"
        return next(
            (p for p in pieces
             if p.split("\n", 1)[0] == head or p.startswith(head + " (")),
            "",
        )

    texts = [text_of(s.get("source", "")) for s in snippets]
    rank = next((i + 1 for i, t in enumerate(texts) if fc.passes(groups, t)), None)
    return {
        "in_block": fc.passes(groups, block.get("text", "")),
        "rank": rank,
        "snippets": len(snippets),
        "tokens": block.get("tokens", 0),
        "sources": [s.get("source") for s in snippets],
    }


def summary(rows: list[dict]) -> str:
    lines = [f"{'':24} {'in block':>9} {'top 1':>7} {'top 2':>7} {'med tok':>8}"]
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(f"split {r['split']}", []).append(r)
        groups.setdefault(f"  {r['split']} {r['group']}", []).append(r)
    groups["overall"] = rows
    for name, rs in groups.items():
        n = len(rs)
        inb = sum(r["in_block"] for r in rs)
        top1 = sum(r["rank"] == 1 for r in rs)
        top2 = sum(r["rank"] is not None and r["rank"] <= 2 for r in rs)
        tok = statistics.median(r["tokens"] for r in rs) if rs else 0
        lines.append(f"{name:24} {inb:>4}/{n:<4} {top1:>4}/{n:<2} {top2:>4}/{n:<2} {tok:>8}")
    return "\n".join(lines)


def compare(a_path: str, b_path: str) -> int:
    a = {(r["repo"], r["question"]): r for r in json.loads(Path(a_path).read_text())["rows"]}
    b = json.loads(Path(b_path).read_text())["rows"]
    for r in b:
        old = a.get((r["repo"], r["question"]))
        if old and (old["in_block"], old["rank"]) != (r["in_block"], r["rank"]):
            print(f"{r['repo']} {r['kind']}: in block {old['in_block']} -> {r['in_block']}, "
                  f"rank {old['rank']} -> {r['rank']}  ({r['question']})")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--harvey", default="target/release/harvey")
    ap.add_argument("--repos", help="directory of the checkouts (owner+name)")
    ap.add_argument("--mirror", default=str(fc.DEFAULT_MIRROR))
    ap.add_argument("--split", default="all", choices=["tune", "measure", "all"])
    ap.add_argument("--batteries", default=str(fc.BATTERY_DIR))
    ap.add_argument("--out", help="write the rows as JSON")
    ap.add_argument("--misses", action="store_true", help="print each question whose block misses")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.repos:
        ap.error("--repos is required")
    try:
        batteries = fc.load_batteries(Path(args.batteries))
    except fc.InputError as e:
        print(e, file=sys.stderr)
        return 2
    harvey = Path(args.harvey)
    if not harvey.is_file():
        print(f"no harvey binary at {harvey}; build it with cargo build --release", file=sys.stderr)
        return 2
    rows = []
    try:
        for b in batteries:
            qs = [q for q in b.questions if args.split in ("all", q.split)]
            if not qs:
                continue
            ws = fc.prepare_checkout(b, Path(args.repos), Path(args.mirror))
            for q in qs:
                s = score(q.groups, block_for(harvey, ws, q.question))
                group = fc.group_of(q.kind)
                rows.append({"repo": b.repo, "split": q.split, "kind": q.kind, "group": group,
                             "question": q.question, "expected": q.expected, **s})
                if args.misses and not s["in_block"]:
                    print(f"miss {b.repo} {q.kind}: {q.question} | {q.expected} | {s['sources']}",
                          file=sys.stderr)
    except fc.InputError as e:
        print(e, file=sys.stderr)
        return 2
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(e, file=sys.stderr)
        return 1
    print(summary(rows))
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
