"""How well a rules file picks where head-to-head A/Bs timed the contenders: at each A/B row, the launch
the rules make there, its median time over the row's best median (1.0: the rules pick the winner).

    python -m bench.ab_score [--rules OLD_RULES.json] AB.json [AB.json ...]

Without --rules it scores the shipped rules (plus any tuned cache); --rules takes a file in
default_rules.json's form, as `python -m bench.ab --against` does (e.g. the rules before a re-derivation), so
the two scores over the same A/B files say what the re-derivation bought. A row whose launch under the rules
is none of its contenders (another kernel, or the same one with the other PDL flag) is counted as untimed, not
scored. No GPU: it runs the selection only (torch and the built extension, as `configs.explain` does).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from typing import List, Optional

if __package__:  # python -m bench.ab_score
    from .ab import launch_label, launches_under
    from .cases import make_case
else:  # pragma: no cover - python bench/ab_score.py
    import os

    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench.ab import launch_label, launches_under
    from bench.cases import make_case


def case_of(doc: dict):
    """The bench case an A/B file timed (its "case" entry: op, epilogue, dtype, scale, accumulate), on the CPU."""
    c = doc.get("case") or {}
    if c.get("op") == "gemm":
        return make_case("gemm", c["epilogue"], c.get("dtype", "bf16"), device="cpu")
    if c.get("op") == "scaled_mm":
        return make_case("scaled_mm", c["epilogue"], scale=c["scale"], accumulate=c["accumulate"], device="cpu")
    raise ValueError(f"expected a bench.ab JSON with a 'case' of op gemm or scaled_mm, got {c!r}")


def score(doc: dict, rules_doc: Optional[dict] = None) -> dict:
    """{"scored", "untimed", "geomean", "worst": [ratio, "MxNxK", launch]} of one A/B document."""
    case = case_of(doc)
    shapes = [(r["m"], r["n"], r["k"]) for r in doc["rows"]]
    labels = [launch_label(case, *s) for s in shapes] if rules_doc is None else launches_under(case, shapes, rules_doc)
    ratios, untimed, worst = [], 0, None
    for row, shape, label in zip(doc["rows"], shapes, labels):
        med = {x: statistics.median(ts) for x, ts in row["us_rounds"].items()}
        if label not in med:
            untimed += 1
            continue
        x = med[label] / min(med.values())
        ratios.append(x)
        if worst is None or x > worst[0]:
            worst = [x, "x".join(map(str, shape)), label]
    g = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    return {"scored": len(ratios), "untimed": untimed, "geomean": g, "worst": worst}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ab", nargs="+", metavar="AB.json")
    ap.add_argument("--rules", metavar="RULES.json", help="score this rules file instead of the shipped rules")
    args = ap.parse_args(argv)
    rules_doc = None
    if args.rules:
        try:
            with open(args.rules) as fh:
                rules_doc = json.load(fh)
        except (OSError, ValueError) as e:
            ap.error(f"--rules {args.rules}: {e}")
    print("| A/B file | rows scored | untimed | launch / best (geomean) | worst |\n|---|---|---|---|---|")
    for path in args.ab:
        try:
            with open(path) as fh:
                doc = json.load(fh)
            s = score(doc, rules_doc)
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.error(f"{path}: {e}")
        g = "-" if s["geomean"] is None else f"{s['geomean']:.3f}"
        w = "-" if s["worst"] is None else f"{s['worst'][0]:.3f} ({s['worst'][1]}, {s['worst'][2]})"
        print(f"| {path} | {s['scored']} | {s['untimed']} | {g} | {w} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
