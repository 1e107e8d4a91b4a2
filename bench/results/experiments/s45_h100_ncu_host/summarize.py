# Session 45: what ncu measured for bench/probes/ncu_fused_epilogue.py (1024^3, one launch per case, H100 80GB HBM3,
# `PROFILE=1 NCU=1 NCU_END=300 bash bench/results/experiments/s43_tables/call.sh c`): the per-launch metrics of the
# five cases, then for our three launches the SASS warp-stall samples split at the mainloop's HGMMA loop.
#   python bench/results/experiments/s45_h100_ncu_host/summarize.py   (reads the *.csv.gz beside it)
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "probes"))
from ncu_table import read_rows, table  # noqa: E402  (bench/probes/ncu_table.py)

CASES = ["ours fused (bias + GELU(tanh) + residual)", "ours act kernel, no epilogue inputs", "ours _plain_st7",
         "cuBLAS mm", "cuBLAS addmm"]
METRICS = ["Duration", "Executed Instructions", "Issue Slots Busy", "Warp Cycles Per Issued Instruction",
           "Achieved Occupancy", "DRAM Throughput", "Dynamic Shared Memory Per Block", "Registers Per Thread"]


def rows_of(name):
    return read_rows(os.path.join(HERE, name))


def details():
    print(table(os.path.join(HERE, "details.csv.gz"), CASES, METRICS))


def stalls(i):
    r = rows_of(f"source_{i}.csv.gz")
    head = r[1]
    sass = [x for x in r[2:] if x and x[0].startswith("0x")]
    half = len(sass) // 2  # the export lists a kernel's SASS twice when it has two function entries: keep one
    if half and sass[:half] and [x[1] for x in sass[:half]] == [x[1] for x in sass[half:]]:
        sass = sass[:half]
    i_s, i_e = head.index("Warp Stall Sampling (All Samples)"), head.index("Instructions Executed")
    hg = [j for j, x in enumerate(sass) if "GMMA" in x[1]]
    s = lambda a, b: sum(int(x[i_s] or 0) for x in sass[a:b])
    e = lambda a, b: sum(int(x[i_e] or 0) for x in sass[a:b])
    print(f"| {CASES[i]} | {len(sass)} | {s(0, len(sass))} | {s(0, hg[0])} | {s(hg[0], hg[-1] + 1)} | "
          f"{s(hg[-1] + 1, len(sass))} | {e(hg[-1] + 1, len(sass))} |")


if __name__ == "__main__":
    details()
    print()
    print("| launch | SASS instructions | stall samples | before the HGMMA loop | in it | after it (epilogue, "
          "producer tail) | instructions executed after it |")
    print("|---|---|---|---|---|---|---|")
    for i in range(3):
        stalls(i)
