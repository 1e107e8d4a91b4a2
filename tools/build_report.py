#!/usr/bin/env python3
"""Per-arch build cost of the kernel units, from ninja's log of the last build, and the .so size.

    python tools/build_report.py [build_dir]     # default: build/

Unit times are ninja's start/end stamps of each nvcc job (one job per unit); "serial" is their
sum (the build's length at MAX_JOBS=1), "2 jobs" that sum halved (units are similar in size, so
two jobs overlap almost perfectly; the glue and the link add about a minute).
"""

from __future__ import annotations

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def unit_times(build_dir: str):
    """{unit stem: seconds} from the newest kernel ninja log (the last build of each unit)."""
    logs = glob.glob(os.path.join(build_dir, "**", "cutlass_gemm_kernels", ".ninja_log"), recursive=True)
    if not logs:
        return {}
    times = {}
    with open(max(logs, key=os.path.getmtime)) as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 4 and parts[3].endswith(".o"):
                times[os.path.basename(parts[3])[:-2]] = (int(parts[1]) - int(parts[0])) / 1000.0
    return times


def main() -> int:
    build_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    times = unit_times(build_dir)
    if not times:
        print(f"build_report: no kernel ninja log under {build_dir}")
        return 0
    by_arch = {}
    for stem, sec in sorted(times.items()):
        arch = re.search(r"_sm(\d+)$", stem).group(1)
        by_arch.setdefault(arch, []).append((stem, sec))
        print(f"  {stem:45s} {sec:7.1f} s")
    for arch, units in sorted(by_arch.items(), key=lambda x: int(x[0])):
        total = sum(s for _, s in units)
        print(f"sm{arch}: {len(units)} units, serial {total / 60:.1f} min, 2 jobs ~{total / 120:.1f} min")
    # The .so of that build: a wheel build leaves it under build/lib*/, an in-place one beside build/ in the checkout
    # (not necessarily this script's checkout: CI's clean clone is another).
    sos = (glob.glob(os.path.join(build_dir, "lib*", "cutlass_gemm", "_C*.so"))
           or glob.glob(os.path.join(os.path.dirname(os.path.abspath(build_dir)), "cutlass_gemm", "_C*.so")))
    for so in sos:
        print(f"{so}: {os.path.getsize(so) / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
