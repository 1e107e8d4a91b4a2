"""The README's H200 results table, generated from bench/results/*.json (one row per suite,
configuration and competitor: geomean of our speedup, worst shape, the commit that measured it).

    python -m bench.summary                 # print the table
    python -m bench.summary --readme README.md           # rewrite the block between the markers
    python -m bench.summary --readme README.md --check   # exit 1 if that block is stale

No torch import: it reads the JSON the harness wrote.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from typing import Callable, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- results:begin (python -m bench.summary --readme README.md) -->", "<!-- results:end -->"
SUITE_ORDER = {"square": 0, "llama3_70b": 1, "deepseek_v3": 2, "odd": 3}


def load_result(path: str) -> Optional[dict]:
    """A (suite, configuration) result the harness wrote, or None for any other file."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    ok = isinstance(doc, dict) and all(k in doc for k in ("summary", "rows", "config", "suite"))
    return doc if ok else None


def rows(results_dir: str) -> List[tuple]:
    out = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        doc = load_result(path)
        if doc is None or doc["config"].get("quick") or doc["config"].get("interleave"):
            continue
        commit = str(doc.get("environment", {}).get("git_commit", ""))[:7]
        for comp, s in doc["summary"].items():
            if not s.get("n"):
                continue
            key = (SUITE_ORDER.get(doc["suite"], 9), doc["suite"], doc["config"].get("op") != "gemm", doc["config"]["title"], comp)
            n = f"{s['n']}" + (f", {s['missing']} missing" if s.get("missing") else "")
            worst = f"{s['min']:.2f}x at {s['min_shape']}"
            out.append(key + (n, f"{s['geomean']:.2f}x", worst, commit, os.path.basename(path)))
    return sorted(out)


def table(results_dir: str) -> str:
    lines = ["| suite (shapes) | op | competitor | geomean | worst shape | commit |", "|---|---|---|---|---|---|"]
    for _, suite, _, what, comp, n, geo, worst, commit, _ in rows(results_dir):
        lines.append(f"| {suite} ({n}) | {what} | {comp} | {geo} | {worst} | {commit} |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    return readme_cli(argv, __doc__.splitlines()[0], table, BEGIN, END, "python -m bench.summary")


def readme_cli(argv: Optional[List[str]], description: str, make_table: Callable[[str], str], begin: str, end: str,
               tool: str) -> int:
    """The command line of a generated README table: print it, or --readme FILE [--check] (write_block)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--readme", help="rewrite the block between this table's markers in this file")
    ap.add_argument("--check", action="store_true", help="with --readme: exit 1 if the block differs")
    args = ap.parse_args(argv)
    t = make_table(args.results)
    if not args.readme:
        print(t)
        return 0
    return write_block(args.readme, begin, end, t, args.check, tool)


def write_block(readme: str, begin: str, end: str, body: str, check: bool, tool: str) -> int:
    """Rewrite the block between the begin and end markers of readme with body (0); with check, exit code 1 if
    it differs instead of writing; 2 if the file lacks the markers."""
    with open(readme) as f:
        text = f.read()
    if begin not in text or end not in text:
        print(f"{tool}: {readme} has no '{begin}' ... '{end}' block", file=sys.stderr)
        return 2
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    new = f"{head}{begin}\n{body}\n{end}{tail}"
    if check:
        if new != text:
            print(f"{tool}: the block in {readme} is stale; run {tool} --readme {readme}", file=sys.stderr)
            return 1
        return 0
    with open(readme, "w") as f:
        f.write(new)
    return 0

if __name__ == "__main__":
    sys.exit(main())
