"""Fixed and per-K cost of every kernel and of the competitor, from sweeps that time one (M, N) at several K.

    python -m bench.kfit SWEEP.json [SWEEP.json ...] [--all] [--pool] [--sms 132]

At one (M, N) a GEMM's time is close to linear in K: time = fixed + slope * K. The slope is the mainloop's
throughput; the fixed part is what every output tile pays once (prologue, the epilogue and its stores,
the tile switch) plus the launch. Comparing the two parts, ours against the competitor's at the same
(M, N), says whether a gap is in the mainloop or in the per-tile cost. For a persistent kernel the
fixed part is also given per output tile an SM runs (ceil(tiles / SMs), clusters rounded up), the cost
a tile pays outside its K loop. Least squares over every K of the (M, N) in one sweep file (a sweep's
rows are one run: same inputs and clocks for every contender); kernels with no time at some K (a
failed check) are left out of that (M, N). --pool fits the points of every file of one case (op, scales,
accumulation, epilogue) together instead: rounds of the same sweep, fewer swings from one run's clocks.
No GPU needed: it reads bench.sweep JSON
(bench/results/sweeps/).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from typing import Dict, List, Optional, Sequence, Tuple

COMPETITOR = "competitor"
_NAME = re.compile(r"_t(\d+)x(\d+)x(\d+)_c(\d+)x(\d+)_(coop|pingpong|ws|1sm|2sm)(_swapab)?(_streamk)?(?:_noact)?(?:_sd\d)?"
                   r"(?:_(\d)persm)?")


def fit(points: Sequence[Tuple[float, float]]) -> Tuple[float, float]:
    """Least-squares (intercept, slope) of y = intercept + slope * x over two or more distinct x."""
    n = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    den = n * sxx - sx * sx
    if n < 2 or den == 0:
        raise ValueError(f"expected two or more distinct K to fit, got {sorted({x for x, _ in points})}")
    slope = (n * sxy - sx * sy) / den
    return (sy - slope * sx) / n, slope


def tiles_per_sm(kernel: str, m: int, n: int, sms: int) -> Optional[int]:
    """Output tiles one SM runs for a persistent (or ws: one tile per CTA) kernel at M x N; None for stream-K
    (its work units are not tiles) and for names that carry no tile."""
    g = _NAME.search(kernel)
    if g is None or g.group(8):
        return None
    t0, t1, _, c0, c1 = (int(v) for v in g.groups()[:5])
    rows, cols = (n, m) if g.group(7) else (m, n)  # swap-AB: the tile's first extent runs over N
    per_tile = 1
    if g.group(6) == "2sm":  # an SM100 2-SM tile is one MMA of the CTA pair (its 2x1 cluster): two CTAs per tile
        c0, per_tile = c0 // 2, 2
    tiles = math.ceil(math.ceil(rows / t0) / c0) * c0 * math.ceil(math.ceil(cols / t1) / c1) * c1 * per_tile
    resident = sms * int(g.group(9) or 1)
    return math.ceil(tiles / resident)


def fits(docs: Sequence[dict], sms: int = 132) -> List[dict]:
    """One entry per (M, N) timed at two or more K in the sweeps (rounds of one case): each contender's fit over
    every point, fastest at the largest K first. Contender = a kernel timed at every K of that (M, N) in each
    sweep that has it, or the competitor."""
    by_mn: Dict[Tuple[int, int], List[Dict[int, dict]]] = defaultdict(list)
    for doc in docs:
        one: Dict[Tuple[int, int], Dict[int, dict]] = defaultdict(dict)
        for r in doc.get("rows", []):
            one[(r["m"], r["n"])][r["k"]] = r
        for mn, rows in one.items():
            by_mn[mn].append(rows)
    out = []
    for (m, n), runs in sorted(by_mn.items()):
        ks = sorted(set().union(*runs))
        if len(ks) < 2:
            continue
        series: Dict[str, List[Tuple[int, float]]] = defaultdict(list)
        for rows in runs:
            if len(rows) < 2:
                continue  # a run with one K adds a level, not a slope
            rks = sorted(rows)
            names = set().union(*(r.get("us", {}).keys() for r in rows.values()))
            for name in names:
                pts = [(k, rows[k]["us"].get(name)) for k in rks]
                if all(us is not None for _, us in pts):
                    series[name] += pts
            comp = [(k, (rows[k].get("competitor") or {}).get("us")) for k in rks]
            if all(us is not None for _, us in comp):
                series[COMPETITOR] += comp
        entry = {"m": m, "n": n, "ks": ks, "contenders": []}
        for name, pts in series.items():
            pts = sorted(pts)
            fixed, slope = fit(pts)
            tps = None if name == COMPETITOR else tiles_per_sm(name, m, n, sms)
            entry["contenders"].append({
                "name": name, "fixed_us": fixed, "us_per_1024_k": 1024 * slope, "tiles_per_sm": tps,
                "fixed_us_per_tile": fixed / tps if tps else None, "fit_us_at_largest_k": fixed + slope * ks[-1]})
        entry["contenders"].sort(key=lambda c: c["fit_us_at_largest_k"])
        out.append(entry)
    return out


def _bad_rows(doc) -> Optional[str]:
    """What is wrong with a would-be sweep document, or None."""
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        return "got no 'rows' list"
    for i, r in enumerate(doc["rows"]):
        ok = isinstance(r, dict) and isinstance(r.get("us"), dict) and all(
            isinstance(r.get(d), int) and r[d] > 0 for d in ("m", "n", "k"))
        if not ok:
            return f"row {i} is {json.dumps(r)[:120]}"
    return None


def _short(name: str) -> str:
    return re.sub(r"^sm\d+_[a-z0-9]+_(scaled_|blockwise_)?(promoted_|fast_)?", "", name)


def render(title: str, docs: Sequence[dict], entries: List[dict], show_all: bool) -> List[str]:
    lines = [f"## {title}", ""]
    lines += [f"- `{d.get('command', '')}` ({d.get('commit', '?')}, {d.get('date', '?')})" for d in docs]
    lines += ["", "| M x N | K | contender | fixed us | us per 1024 K | tiles per SM | fixed us per tile |",
              "|---|---|---|---|---|---|---|"]
    for e in entries:
        cs = e["contenders"]
        ours = [c for c in cs if c["name"] != COMPETITOR]
        shown = cs if show_all else [c for c in cs if c["name"] == COMPETITOR] + ours[:1]
        for c in shown:
            per_tile = f"{c['fixed_us_per_tile']:.2f}" if c["fixed_us_per_tile"] is not None else "-"
            tps = c["tiles_per_sm"] if c["tiles_per_sm"] is not None else "-"
            name = c["name"] if c["name"] == COMPETITOR else f"`{_short(c['name'])}`"
            lines.append(f"| {e['m']}x{e['n']} | {','.join(map(str, e['ks']))} | {name} | {c['fixed_us']:.1f} | "
                         f"{c['us_per_1024_k']:.2f} | {tps} | {per_tile} |")
    return lines + [""]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweeps", nargs="+", help="bench.sweep JSON files")
    ap.add_argument("--all", action="store_true", help="every kernel, not only the competitor and our fastest")
    ap.add_argument("--pool", action="store_true", help="fit the files of one case together (rounds of a sweep)")
    ap.add_argument("--sms", type=int, default=132, help="SMs the sweeps ran on (default 132, the H200's)")
    args = ap.parse_args(argv)
    if args.sms < 1:
        ap.error(f"--sms: expected a positive SM count, got {args.sms}")
    loaded = []
    for path in args.sweeps:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"bench.kfit: cannot read {path}: expected a bench.sweep JSON file ({e})", file=sys.stderr)
            return 2
        bad = _bad_rows(doc)
        if bad:
            print(f"bench.kfit: {path}: expected a bench.sweep JSON object whose 'rows' are objects with positive "
                  f"integer m, n, k and a 'us' object of kernel times; {bad}", file=sys.stderr)
            return 2
        loaded.append((path, doc))
    groups: Dict[str, List[Tuple[str, dict]]] = defaultdict(list)
    for path, doc in loaded:  # a file that names no case is never pooled with another
        case = doc.get("case")
        groups[json.dumps(case, sort_keys=True) if args.pool and case else path].append((path, doc))
    printed = 0
    for key, members in groups.items():
        docs = [d for _, d in members]
        entries = fits(docs, args.sms)
        if entries:
            title = members[0][0] if len(members) == 1 else f"{(docs[0].get('case') or {}).get('title', key)} ({len(members)} sweeps)"
            print("\n".join(render(title, docs, entries, args.all)))
            printed += 1
    if not printed:
        print("bench.kfit: no (M, N) timed at two or more K in these sweeps: nothing to fit", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
