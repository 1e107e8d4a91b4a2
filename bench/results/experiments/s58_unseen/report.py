"""Per shape of the s58 sweeps: the rules' pick (the row's `selected`, chosen on the GPU that ran it) against the
fastest forced kernel and against the torch competitor, same run.

    python bench/results/experiments/s58_unseen/report.py SWEEP.json [...]
"""
import json
import math
import sys


def main(paths):
    for p in paths:
        d = json.load(open(p))
        print(f"## {d['case']['title']} ({d['gpu']}, {d['commit']}, complete={d['complete']})")
        print("| M x N x K | rules' pick | us | best forced kernel | us | pick / best | torch us | torch / pick | torch / best |")
        print("|---|---|---|---|---|---|---|---|---|")
        lp, lb = [], []
        for r in d["rows"]:
            us = {k: v for k, v in r["us"].items() if v}
            best = min(us, key=us.get)
            sel, t = r["selected"], r["competitor"]["us"]
            ps = us.get(sel, math.nan)
            lp.append(t / ps)
            lb.append(t / us[best])
            print(f"| {r['m']}x{r['n']}x{r['k']} | `{sel}` | {ps:.1f} | `{best}` | {us[best]:.1f} | {ps / us[best]:.3f} | "
                  f"{t:.1f} | {t / ps:.3f} | {t / us[best]:.3f} |")
        g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
        print(f"\nvs torch: the rules' picks geomean {g(lp):.3f} (min {min(lp):.3f}), the best kernels' {g(lb):.3f} "
              f"(min {min(lb):.3f}), {len(lp)} shapes\n")


if __name__ == "__main__":
    main(sys.argv[1:])
