"""Exit 1 (naming what is missing) unless the build on PYTHONPATH compiled every kernel of the named kernel_table
function and the twin each is measured against: a `_plain`'s `_noact` where the table still has one, a `_stN`
kernel's carveout build (call_b.sh, ../s40_plain_twins/call.sh, ../s41_stages/call.sh).
    PYTHONPATH=<build copy> python bench/results/experiments/s38_plain/require_twins.py _sm90_plain_twins_s40"""
import re
import sys

from cutlass_gemm import configs, kernel_table as kt

new = {k.name for k in getattr(kt, sys.argv[1])()}
twins = {re.sub(r"_st\d+$", "", n) for n in new}
twins |= {n[: -len("_plain")] + "_noact" for n in twins if n.endswith("_plain")} & set(configs.kernels())
missing = sorted((new | twins) - set(configs.compiled_kernels()))
if missing:
    sys.exit(f"not compiled: {missing}")
