"""Reproducibility of bench results: two result folders of the same suites, ratio by ratio.

    python -m bench.compare_runs OLD_DIR NEW_DIR [--tolerance 0.05] [--from-rounds] [--same-launch]

For every (suite, configuration) JSON in both folders: each competitor's geomean and each shape's
ratio (our speedup over that competitor), old vs new, as a relative change. Prints the worst
changes and how many fall within the tolerance; exits 1 if any geomean moved more than it.
--from-rounds: recompute every ratio from the per-round times ("us_rounds", `--rounds N` runs) as
the geometric mean of the per-round ratios (what runner.run_shape reports since session 7), so
runs written with the earlier median aggregation compare on the same footing; the geomeans are
then the geomeans of those per-shape ratios. --same-launch: only the shapes where both runs launched
the same kernel the same way (PDL or not), i.e. what rerunning the same selection reproduces; the
others are counted and left out. The worst moves say which side moved (our time, old -> new) and how far
each run's own rounds disagreed (the per-round ratios' max / min - 1); the count of moves past the
tolerance whose rounds already spread past it inside one run says how much of the miss is that noise.
No torch import.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import sys
from typing import List, Optional

if __package__:  # python -m bench.compare_runs
    from .metrics import rounds_spread
    from .summary import load_result
else:  # python bench/compare_runs.py
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from metrics import rounds_spread
    from summary import load_result


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def round_ratio(ours: dict, comp: dict) -> Optional[float]:
    """Geometric mean over rounds of comp / ours, from the rounds both timed (None without them)."""
    o, c = ours.get("us_rounds"), comp.get("us_rounds")
    if not o or not c or len(o) != len(c):
        return None
    return _geomean([x / y for x, y in zip(c, o)])


def round_spread(ours: dict, comp: Optional[dict]) -> Optional[float]:
    """max / min - 1 of one run's per-round ratios: comp / ours per round, or 1 / ours against a fixed figure
    (comp None); None without rounds."""
    theirs = None if comp is None else comp.get("us_rounds")
    if comp is not None and not theirs:
        return None
    return rounds_spread(ours.get("us_rounds") or [], theirs)


def _spreads(doc: dict) -> dict:
    """{(competitor, "MxNxK"): round spread} of the rows with per-round times (published figures: ours alone)."""
    out = {}
    for r in doc["rows"]:
        shape, ours = f"{r['m']}x{r['n']}x{r['k']}", r.get("ours") or {}
        for comp, c in (r.get("competitors") or {}).items():
            out[(comp, shape)] = round_spread(ours, c)
        pub = r.get("published") or {}
        if pub.get("name"):
            out[(pub["name"], shape)] = round_spread(ours, None)
    return out


def _from_rounds(doc: dict) -> dict:
    """doc with each competitor's ratio recomputed from the rounds and the summary's geomeans from those."""
    by_comp = {}
    for r in doc["rows"]:
        for comp, c in (r.get("competitors") or {}).items():
            c["ratio"] = round_ratio(r.get("ours") or {}, c)
            if c["ratio"]:
                by_comp.setdefault(comp, []).append(c["ratio"])
    doc["summary"] = {comp: {"n": len(v), "geomean": _geomean(v)} for comp, v in by_comp.items()}
    return doc


def _ratios(doc: dict) -> dict:
    """{(competitor, "MxNxK"): ratio} of the rows that have one (a failed check has none), published
    figures (DeepGEMM's table: our time against a fixed number) included."""
    out = {}
    for r in doc["rows"]:
        shape = f"{r['m']}x{r['n']}x{r['k']}"
        for comp, c in (r.get("competitors") or {}).items():
            if c.get("ratio"):
                out[(comp, shape)] = c["ratio"]
        pub = r.get("published") or {}
        if pub.get("ratio"):
            out[(pub["name"], shape)] = pub["ratio"]
    return out


def _launches(doc: dict) -> dict:
    """{"MxNxK": (kernel, pdl, our us)} of a result's rows."""
    return {f"{r['m']}x{r['n']}x{r['k']}": (r.get("kernel"), bool(r.get("pdl")), (r.get("ours") or {}).get("us"))
            for r in doc["rows"]}


def compare(old_dir: str, new_dir: str, from_rounds: bool = False, same_launch: bool = False):
    """(geomean moves, per-shape moves, unmatched, relaunched): geomeans are recomputed per file and
    competitor over the shapes both runs have a ratio for, so a shape missing from one run cannot move
    them; unmatched lists (file, competitor, shape) that only one run has; with same_launch, relaunched
    lists (file, shape) whose kernel or PDL launch differs between the runs, left out of both. A per-shape
    move is (|change|, file, competitor, shape, old ratio, new ratio, our old us, our new us, old round
    spread, new round spread)."""
    geo, shapes, unmatched, relaunched = [], [], [], []
    for path in sorted(glob.glob(os.path.join(old_dir, "*.json"))):
        name = os.path.basename(path)
        a, b = load_result(path), load_result(os.path.join(new_dir, name))
        if a is None or b is None:
            continue
        if from_rounds:
            a, b = _from_rounds(a), _from_rounds(b)
        old, new = _ratios(a), _ratios(b)
        la, lb = _launches(a), _launches(b)
        sa, sb = _spreads(a), _spreads(b)
        unmatched += [(name, comp, shape) for comp, shape in sorted(set(old) ^ set(new))]
        if same_launch:
            moved = sorted(s for s in set(la) & set(lb) if la[s][:2] != lb[s][:2])
            relaunched += [(name, s) for s in moved]
            old = {key: v for key, v in old.items() if key[1] not in moved}
        both: dict = {}
        for key in sorted(set(old) & set(new)):
            comp, shape = key
            both.setdefault(comp, []).append((old[key], new[key]))
            shapes.append((abs(new[key] / old[key] - 1), name, comp, shape, old[key], new[key],
                           la.get(shape, (None, None, None))[2], lb.get(shape, (None, None, None))[2],
                           sa.get(key), sb.get(key)))
        for comp, pairs in both.items():
            g0, g1 = _geomean([p[0] for p in pairs]), _geomean([p[1] for p in pairs])
            geo.append((abs(g1 / g0 - 1), name, comp, g0, g1))
    return sorted(geo, reverse=True), sorted(shapes, reverse=True), unmatched, relaunched


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--from-rounds", action="store_true",
                    help="ratios as the geometric mean of per-round ratios (needs --rounds N runs)")
    ap.add_argument("--same-launch", action="store_true",
                    help="only shapes where both runs launched the same kernel with the same PDL flag")
    args = ap.parse_args(argv)
    geo, shapes, unmatched, relaunched = compare(args.old, args.new, args.from_rounds, args.same_launch)
    if not geo:
        what = ("no ratio with per-round times in both folders (--from-rounds needs runs made with --rounds N)"
                if args.from_rounds else "no result JSON present in both folders")
        print(f"bench.compare_runs: {what}", file=sys.stderr)
        return 2
    tol = args.tolerance
    print(f"geomeans: {sum(g[0] <= tol for g in geo)} of {len(geo)} within {tol:.0%} (worst {geo[0][0]:.1%}: "
          f"{geo[0][1]} vs {geo[0][2]}, {geo[0][3]:.3f}x -> {geo[0][4]:.3f}x)")
    print(f"per-shape ratios: {sum(s[0] <= tol for s in shapes)} of {len(shapes)} within {tol:.0%}; worst:")
    for d, name, comp, shape, r0, r1, us0, us1, sp0, sp1 in shapes[:10]:
        ours = f" (ours {us0:.1f} -> {us1:.1f} us)" if us0 and us1 else ""
        spread = f"; rounds spread {sp0:.1%} / {sp1:.1%}" if sp0 is not None and sp1 is not None else ""
        print(f"  {d:6.1%}  {name}  {shape}  vs {comp}: {r0:.3f}x -> {r1:.3f}x{ours}{spread}")
    outside = [s for s in shapes if s[0] > tol and s[8] is not None and s[9] is not None]
    if outside:
        noisy = sum(max(s[8], s[9]) > tol for s in outside)
        print(f"{noisy} of the {len(outside)} outside {tol:.0%} (with rounds in both runs) had per-round ratios "
              f"spreading more than {tol:.0%} within one run (max / min of its rounds)")
    if relaunched:
        print(f"{len(relaunched)} shapes launched differently (another kernel or PDL flag), left out: "
              + ", ".join(f"{n} {s}" for n, s in relaunched[:5]) + (" ..." if len(relaunched) > 5 else ""))
    if unmatched:
        print(f"{len(unmatched)} ratios in one run only (left out of the geomeans): "
              + ", ".join(f"{n} {s} vs {c}" for n, c, s in unmatched[:5]) + (" ..." if len(unmatched) > 5 else ""))
    return 0 if geo[0][0] <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
