"""Session 43: the plain rules of cutlass_gemm/default_rules.json that name a kernel with the activation node while its
lean twin (`<name>_plain`, else `<name>_noact`) is compiled, and the sweep rows behind each (every committed sweep row
of the rule's range that timed both, where the act kernel was ahead; at most the first and last M). call.sh's --pair
lists are this output (one bench.ab call per family).

    python bench/results/experiments/s43_twins/pairs.py        (repository root; no GPU)
"""
import glob
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import derive_rules as dr  # noqa: E402  (loads cutlass_gemm/kernel_table.py as a plain module)

kt = dr.kt
names = {k.name for k in kt.KERNELS}
rules = json.load(open(os.path.join(ROOT, "cutlass_gemm", "default_rules.json")))
fams = dr._rows_by_family([json.load(open(f)) for f in sorted(glob.glob(os.path.join(ROOT, "bench/results/sweeps/*.json")))])


def within(v, r):
    return r is None or (r[0] <= v and (r[1] is None or v <= r[1]))


for fam in rules["families"]:
    f = fams.get((fam["family"], "any"))
    if fam.get("epilogue") == "fused" or f is None:
        continue
    for r in fam["rules"]:
        k = r["kernel"]
        twin = next((t for t in (k + "_plain", k + "_noact") if t in names and not k.endswith(("_plain", "_noact"))), None)
        if twin is None:
            continue
        rows = sorted((row for row in f["rows"] if within(row[0], r.get("m")) and within(row[1], r.get("n"))
                       and within(row[2], r.get("k")) and k in row[3] and twin in row[3] and row[3][k] <= row[3][twin]),
                      key=lambda row: row[0])
        print(f"# {fam['family']}: m {r.get('m')} n {r.get('n')} k {r.get('k')} {k} ({len(rows)} sweep rows with it ahead)")
        for m, n, kk, t in (rows if len(rows) <= 2 else [rows[0], rows[-1]]):
            print(f"  {m},{n},{kk}={k},{twin}   # sweep: twin / act {t[twin] / t[k]:.3f}")
