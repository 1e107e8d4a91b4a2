"""Each blockwise `_plain` kernel against its act twin (same tile and cluster, both nodes) in every row of the given
bench.sweep files, with the per-file geomean; and the row's fastest kernel.
    python bench/results/experiments/s38_plain/blockwise_twins.py SWEEP.json [...]"""
import json
import math
import sys

for path in sys.argv[1:]:
    doc = json.load(open(path))
    print(f"{path} ({doc.get('gpu')}, {doc.get('commit')})")
    ratios = {}
    for r in doc["rows"]:
        us = {k: v for k, v in r["us"].items() if v}
        best = min(us, key=us.get)
        line = f"  {r['m']}x{r['n']}x{r['k']}: fastest {best.split('promoted_')[-1]} {us[best]:.1f} us"
        for k in sorted(k for k in us if k.endswith("_plain")):
            twin = k[:-len("_plain")]
            if twin in us:
                ratios.setdefault(k, []).append(us[k] / us[twin])
                line += f" | {k.split('promoted_')[-1]} {us[k]:.1f} / act {us[twin]:.1f} = {us[k] / us[twin]:.3f}"
        print(line)
    for k, rs in ratios.items():
        g = math.exp(sum(map(math.log, rs)) / len(rs))
        print(f"  geomean {k}: {g:.3f} over {len(rs)} shapes (min {min(rs):.3f}, max {max(rs):.3f})")
