"""Session 49: the overlap A/B as a table: per shape, the rules' launch and, per tile, CUTLASS's loop against the
overlapped one (medians of the rounds, us; ratio ovl / CUTLASS's), and the best `_ovl` launch against the rules'.
    python bench/results/experiments/s49_overlap/summary.py AB_JSON"""
import json
import statistics
import sys

d = json.load(open(sys.argv[1]))
print(f"{d['gpu']}, commit {d['commit'][:12]}, {d['rounds']} rounds\n")
rows = d["rows"]
tiles = sorted({c[len("sm90_e4m3_blockwise_promoted_"):].replace("_ovl", "").replace("+pdl", "")
                for r in rows for c in r["us_rounds"] if "_ovl" in c})
print("| shape | rules' launch us | " + " | ".join(f"{t} us, ovl/CUTLASS" for t in tiles) + " | best ovl / rules |")
print("|---" * (len(tiles) + 3) + "|")
for r in rows:
    med = {c: statistics.median(v) for c, v in r["us_rounds"].items()}
    cands = list(r["us_rounds"])
    rules = cands[0]
    cells = []
    for t in tiles:
        a = med.get(f"sm90_e4m3_blockwise_promoted_{t}+pdl")
        b = med.get(f"sm90_e4m3_blockwise_promoted_{t}_ovl+pdl")
        cells.append(f"{a:.2f} -> {b:.2f} ({b / a:.3f})" if a and b else "")
    best = min((c for c in cands if "_ovl" in c), key=med.get)
    print(f"| {r['m']}x{r['n']}x{r['k']} | {med[rules]:.2f} | " + " | ".join(cells) + f" | {med[best] / med[rules]:.3f} |")
