"""new / old time per case from call.sh's alternating processes (t_old_<i>.json, t_new_<i>.json): the ratio of the
medians over the rounds and the per-round range (< 1: the one-bias build is faster).   python compare.py DIR"""
import glob
import json
import os
import statistics
import sys

d = sys.argv[1]
runs = {b: [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, f"t_{b}_*.json")))] for b in ("old", "new")}
n = min(len(runs["old"]), len(runs["new"]))
print(f"{n} rounds each (old: the shipped build; new: one_bias.patch)")
print("| case | old us | new us | new / old | rounds |")
print("|---|---|---|---|---|")
for case in (runs["old"][0] if n else {}):
    o = [r[case] for r in runs["old"][:n]]
    w = [r[case] for r in runs["new"][:n]]
    if not all(isinstance(x, float) for x in o + w):
        print(f"| {case} | {o} | {w} | - | - |")
        continue
    per = [b / a for a, b in zip(o, w)]
    print(f"| {case} | {statistics.median(o):.1f} | {statistics.median(w):.1f} | "
          f"{statistics.median(w) / statistics.median(o):.3f} | {min(per):.3f}-{max(per):.3f} |")
