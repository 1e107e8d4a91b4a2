# Session 47: knobs.sh's ncu CSVs (one per swizzle:raster setting) as one table: per case, each setting's time, DRAM
# bytes read, L2 hit rate and SM clock.   python bench/results/experiments/s47_h100_ncu/summarize_knobs.py [DIR]
import csv
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "..", "..", "..", "probes", "ncu_h100_tiles.py")
NAMES = re.findall(r'^    \("([^"]*)"', open(PROBE).read(), re.M)


def launches(path):
    """[{metric: value}] per profiled launch, in order, from `ncu --csv` (raw metrics) output."""
    lines = [ln for ln in open(path) if ln.startswith('"')]
    rows = list(csv.DictReader(lines))
    got = {}
    for r in rows:
        got.setdefault(int(r["ID"]), {})[r["Metric Name"]] = (r["Metric Value"], r["Metric Unit"])
    return [got[i] for i in sorted(got)]


def main(d):
    cols = ["gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sector_hit_rate.pct",
            "sm__cycles_elapsed.avg.per_second"]
    print("| case | swizzle:raster | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    files = sorted(glob.glob(os.path.join(d, "ncu_*.csv")))
    per = {os.path.basename(f)[4:-4].replace("-", ":"): launches(f) for f in files}
    for i, name in enumerate(NAMES):
        for s, ls in per.items():
            if i < len(ls):
                print(f"| {name} | {s} | " + " | ".join(" ".join(ls[i].get(c, ("-", ""))).strip() for c in cols) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "knobs"))
