# Session 47: knobs.sh's ncu CSVs (one per swizzle:raster setting) as one table: per case, each setting's time, DRAM
# bytes read, L2 hit rate and SM clock.   python bench/results/experiments/s47_h100_ncu/summarize_knobs.py [DIR]
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "probes"))
from ncu_h100_tiles import NAMES  # noqa: E402  (bench/probes/: the probe's cases, in profiling order)
from ncu_table import per_launch  # noqa: E402


def main(d):
    cols = ["gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sector_hit_rate.pct",
            "sm__cycles_elapsed.avg.per_second"]
    print("| case | swizzle:raster | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    files = sorted(glob.glob(os.path.join(d, "ncu_*.csv")))
    per = {os.path.basename(f)[4:-4].replace("-", ":"): per_launch(f, cols) for f in files}
    for i, name in enumerate(NAMES):
        for s, got in per.items():
            if i in got:
                print(f"| {name} | {s} | " + " | ".join(got[i].get(c, "-") for c in cols) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "knobs"))
