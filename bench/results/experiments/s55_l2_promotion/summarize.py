"""Median over rounds of our time at 256 B / at 128 B per cell of scheduler_knobs.py JSONs (and the competitor's
same ratio: its drift between children is the noise floor).

    python bench/results/experiments/s55_l2_promotion/summarize.py results_h100/l2_*.json
"""
import json
import statistics as st
import sys

if len(sys.argv) < 2:
    sys.exit("usage: summarize.py SCHEDULER_KNOBS.json [...]")
print("| cell | kernel | 128 B us | 256 B us | ours 256/128 | competitor 256/128 | our spread over rounds at 128 B |")
print("|---|---|---|---|---|---|---|")
for path in sys.argv[1:]:
    runs = json.load(open(path)).get("runs", {})
    base = [v for k, v in runs.items() if "l2=256B" not in k]
    wide = [v for k, v in runs.items() if "l2=256B" in k]
    if not base or not wide:
        sys.exit(f"summarize.py: expected runs at l2=256B and at another setting in {path}, got {list(runs)}")
    for key in base[0]:
        ua, ub = [r[key]["ours_us"] for r in base], [r[key]["ours_us"] for r in wide]
        ca, cb = [r[key]["competitor_us"] for r in base], [r[key]["competitor_us"] for r in wide]
        name = key.split(" sm90_")[0]
        print(f"| {name} | {base[0][key]['kernel']} | {st.median(ua):.1f} | {st.median(ub):.1f} | "
              f"{st.median(ub) / st.median(ua):.3f} | {st.median(cb) / st.median(ca):.3f} | {max(ua) / min(ua):.3f} |")
