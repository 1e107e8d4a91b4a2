"""Each candidate against its twin in the same sweep row: `_sdN` against the kernel without it, a blockwise
`_noact` against the blockwise kernel with the activation node (same tile and cluster), a `_plain` kernel (session 38)
against its `_noact` twin, else the kernel with both nodes.

    python bench/results/experiments/s36_store_stages/twins.py SWEEP.json [SWEEP.json ...]

Prints per shape candidate / twin time (< 1: the candidate is faster) and the geomean per candidate.
"""
import json
import math
import re
import sys
from collections import defaultdict


def twins(name):
    """The kernels to compare a candidate with, the first one timed in the row counting."""
    if re.search(r"_sd\d$", name):
        return [re.sub(r"_sd\d$", "", name)]
    if "_blockwise_" in name and name.endswith("_noact"):
        return [name[: -len("_noact")]]
    if name.endswith("_plain"):
        return [name[: -len("_plain")] + "_noact", name[: -len("_plain")]]
    return []


def main(paths):
    for path in paths:
        try:
            with open(path) as fh:
                doc = json.load(fh)
            doc["rows"], doc["case"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"twins.py: expected a bench.sweep JSON file, got {path!r} ({e})")
        ratios = defaultdict(list)
        print(f"{path}: {doc['case']}")
        for row in doc["rows"]:
            us = row["us"]
            cells = []
            for name, t in sorted(us.items()):
                base = next((b for b in twins(name) if us.get(b)), None)
                if base is None or not t:
                    continue
                r = t / us[base]
                ratios[name].append(r)
                cells.append(f"{name.split('_t', 1)[1]} {t:.1f}/{us[base]:.1f}={r:.3f}")
            print(f"  {row['m']}x{row['n']}x{row['k']}: " + ("; ".join(cells) if cells else "no pair timed"))
        for name, rs in sorted(ratios.items()):
            g = math.exp(sum(math.log(r) for r in rs) / len(rs))
            print(f"  geomean {name}: {g:.3f} over {len(rs)} shapes (min {min(rs):.3f}, max {max(rs):.3f})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: twins.py SWEEP.json [SWEEP.json ...]")
    main(sys.argv[1:])
