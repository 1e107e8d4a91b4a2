#!/usr/bin/env python3
"""Each SM90 kernel's mainloop stage count and shared memory, as CUTLASS sizes them at compile time.

    python tools/stage_counts.py [REGEX] [--build-dir build/temp.linux-x86_64-cpython-311/cutlass_gemm_kernels]

The carveout (`Kernel.stages = 0`) gives the mainloop as many stages as fit beside the epilogue, so the count moves with
the epilogue (a `_plain` build of the bf16 64x128 ping-pong gets 9 to its `_noact` build's 8) and is not always the
fastest (at 7 that tile ran up to 22% faster: bench/results/experiments/s42_stages). This prints what each kernel of
the table (or those whose name matches REGEX) gets, from one host-only probe compiled with the kernel units' nvcc
flags (read from the build's build.ninja, so run it after `python setup.py build_ext`; ~1 min per 20 kernels).
No kernel is instantiated on the device.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile
from typing import List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import generate  # noqa: E402  (tools/generate.py: the C++ type of each kernel)


def probe_source(kernels) -> str:
    """A host program printing name, stages, mainloop and epilogue shared memory (bytes) per kernel."""
    headers = sorted({h for k in kernels for h in generate.kernel_headers(k)})
    out = ["#include <cstdio>\n"] + [f'#include "{h}"\n' for h in headers]
    out.append("using namespace cutlass_gemm;\nusing namespace cutlass_gemm::kernels;\n\nint main() {\n")
    for k in kernels:
        t = generate.kernel_type(k)
        out.append(f'  printf("%s %d %zu %zu\\n", "{k.name}", (int){t}::CollectiveMainloop::DispatchPolicy::Stages, '
                   f"sizeof(typename {t}::CollectiveMainloop::SharedStorage), "
                   f"sizeof(typename {t}::CollectiveEpilogue::SharedStorage));\n")
    out.append("  return 0;\n}\n")
    return "".join(out)


def sm90_kernels(table, pattern: str = "") -> List:
    return [k for k in table.KERNELS if k.arch == 90 and re.search(pattern, k.name)]


def nvcc_flags(build_dir: str) -> List[str]:
    path = os.path.join(build_dir, "build.ninja")
    if not os.path.exists(path):
        sys.exit(f"stage_counts: no {path}: build the extension first (python setup.py build_ext --inplace) or pass "
                 "--build-dir")
    with open(path) as fh:
        line = next((ln for ln in fh if ln.startswith("flags = ")), None)
    if line is None:
        sys.exit(f"stage_counts: {path} has no 'flags = ' line")
    return shlex.split(line[len("flags = "):])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pattern", nargs="?", default="", help="only kernels whose name matches (re.search)")
    default_dir = next(iter(sorted(glob.glob(os.path.join(ROOT, "build", "temp.*", "cutlass_gemm_kernels")))), "")
    ap.add_argument("--build-dir", default=default_dir, help="the kernel units' ninja folder (default: %(default)s)")
    args = ap.parse_args(argv)
    try:
        re.compile(args.pattern)
    except re.error as e:
        ap.error(f"expected a Python regular expression for the kernel names, got {args.pattern!r} ({e})")
    kernels = sm90_kernels(generate.load_table(), args.pattern)
    if not kernels:
        sys.exit(f"stage_counts: no SM90 kernel matches {args.pattern!r}")
    flags = nvcc_flags(args.build_dir)
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.cu"), os.path.join(tmp, "probe")
        with open(src, "w") as fh:
            fh.write(probe_source(kernels))
        cmd = ["nvcc", *flags, "-gencode=arch=compute_90a,code=sm_90a", src, "-o", exe]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # template warnings go to stderr
        rows = [ln.split() for ln in subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()]
    print("| kernel | stages | mainloop smem (KB) | per stage (KB) | epilogue smem (KB) |\n|---|---|---|---|---|")
    for name, stages, main_b, epi_b in rows:
        s, mb, eb = int(stages), int(main_b), int(epi_b)
        print(f"| {name} | {s} | {mb / 1024:.1f} | {mb / s / 1024:.1f} | {eb / 1024:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
