"""Exit 1 (naming what is missing) unless the build on PYTHONPATH compiled every kernel of the named kernel_table
function and the twin each is measured against: a `_plain`'s `_noact` where the table still has one, a `_stN`
kernel's shipped build of its tile (call_b.sh, ../s40_plain_twins/call.sh, ../s41_stages/call.sh).
    PYTHONPATH=<build copy> python bench/results/experiments/s38_plain/require_twins.py _sm90_plain_twins_s40"""
import re
import sys

from cutlass_gemm import configs, kernel_table as kt

new = {k.name for k in getattr(kt, sys.argv[1])()}
table = set(configs.kernels())
base = lambda n: re.sub(r"_st\d+$", "", n)  # noqa: E731 - a `_stN` kernel's twin: the table's build of that tile
twins = {k for n in new if n != base(n) for k in table if base(k) == base(n) and k not in new}
twins |= {n[: -len("_plain")] + "_noact" for n in new if n.endswith("_plain")} & table
missing = sorted((new | twins) - set(configs.compiled_kernels()))
if missing:
    sys.exit(f"not compiled: {missing}")
