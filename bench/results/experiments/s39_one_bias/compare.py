"""The candidate build (b) against the shipped build (a), kernel by kernel, in sweeps of the same shapes run in
alternation in one lease: b / a time per kernel both builds compiled, per shape, with the geomean per kernel and file
pair. Files pair by name: X_a_N.json with X_b_N.json.
    python bench/results/experiments/s39_one_bias/compare.py R/kscan_*_a_*.json"""
import json
import math
import sys

for path_a in sys.argv[1:]:
    path_b = path_a.replace("_a_", "_b_")
    a, b = json.load(open(path_a)), json.load(open(path_b))
    rows_b = {(r["m"], r["n"], r["k"]): r["us"] for r in b["rows"]}
    print(f"{path_a} vs {path_b}: {a.get('title', '')}")
    ratios = {}
    for r in a["rows"]:
        ub = rows_b.get((r["m"], r["n"], r["k"]), {})
        line = f"  {r['m']}x{r['n']}x{r['k']}:"
        for name, ta in sorted(r["us"].items()):
            tb = ub.get(name)
            if ta and tb:
                ratios.setdefault(name, []).append(tb / ta)
                line += f" {name.split('_t', 1)[-1]} {tb:.1f}/{ta:.1f}={tb / ta:.3f};"
        print(line)
    for name, rs in sorted(ratios.items()):
        g = math.exp(sum(map(math.log, rs)) / len(rs))
        print(f"  geomean {name}: {g:.3f} over {len(rs)} shapes (min {min(rs):.3f}, max {max(rs):.3f})")
