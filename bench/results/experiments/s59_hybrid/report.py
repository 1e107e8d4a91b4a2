"""Session 59: call.sh's results as two tables: the M x N ladder's launch against the M-only ladder's where they
differ (bench.ab --against: each launch's median over the rounds), and ours (shipped rules) against torch.

    python bench/results/experiments/s59_hybrid/report.py OUT_FOLDER
"""
import glob
import json
import math
import os
import statistics
import sys


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main(folder: str) -> None:
    print("| family | shapes whose launch differs | M-only launch / M x N launch (geomean) | min | max |")
    print("|---|---|---|---|---|")
    lines = []
    for path in sorted(glob.glob(os.path.join(folder, "ab_*.json"))):
        doc = json.load(open(path))
        gains = []
        for r in doc["rows"]:
            (old, t_old), (new, t_new) = [(x, statistics.median(ts)) for x, ts in r["us_rounds"].items()]
            gains.append(t_old / t_new)  # launches are listed [M-only rules', shipped rules'] (bench.ab.changed_launches)
            lines.append(f"  {os.path.basename(path)[3:-5]} {r['m']}x{r['n']}x{r['k']}: {old} {t_old:.2f} us, "
                         f"{new} {t_new:.2f} us ({t_old / t_new:.3f}x)")
        if gains:
            print(f"| {os.path.basename(path)[3:-5]} | {len(gains)} | {geomean(gains):.3f} | {min(gains):.3f} | {max(gains):.3f} |")
    print("\n".join(lines))
    print("\n| family | shapes | competitor | competitor time / ours (geomean) | min | max |")
    print("|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(folder, "bench_*", "*.json"))):
        doc = json.load(open(path))
        by = {}
        for r in doc["rows"]:
            for name, c in r["competitors"].items():
                if c.get("status") == "ok" and r["ours"].get("status") == "ok":
                    by.setdefault(name, []).append(c["us"] / r["ours"]["us"])
        for name, xs in by.items():
            print(f"| {os.path.basename(os.path.dirname(path))[6:]} | {len(xs)} | {name} | {geomean(xs):.3f} | "
                  f"{min(xs):.3f} | {max(xs):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1])
