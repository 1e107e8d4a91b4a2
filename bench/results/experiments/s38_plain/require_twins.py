"""Exit 1 (naming what is missing) unless the build on PYTHONPATH compiled every `_plain` kernel of the named
kernel_table function and the `_noact` twin each is measured against (call_b.sh, ../s40_plain_twins/call.sh).
    PYTHONPATH=<build copy> python bench/results/experiments/s38_plain/require_twins.py _sm90_plain_twins_s40"""
import sys

from cutlass_gemm import configs, kernel_table as kt

plain = {k.name for k in getattr(kt, sys.argv[1])()}
missing = sorted((plain | {n[: -len("_plain")] + "_noact" for n in plain}) - set(configs.compiled_kernels()))
if missing:
    sys.exit(f"not compiled: {missing}")
