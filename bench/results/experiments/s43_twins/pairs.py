"""Session 43: the plain rules of cutlass_gemm/default_rules.json that name a kernel with the activation node while its
lean twin (`<name>_plain`, else `<name>_noact`) is compiled, and the sweep rows behind each (every committed sweep row
of the rule's range that timed both, where the act kernel was ahead; at most the first and last M). call.sh's --pair
lists come from it (one bench.ab call per family).

    python bench/results/experiments/s43_twins/pairs.py                  the rules and their rows, commented
    python bench/results/experiments/s43_twins/pairs.py --pairs FAMILY   one family's M,N,K=ACT,TWIN list (call.sh)
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


seen = set()
only = sys.argv[2] if sys.argv[1:2] == ["--pairs"] and len(sys.argv) == 3 else None
if sys.argv[1:] and only is None:
    raise SystemExit(f"usage: {sys.argv[0]} [--pairs FAMILY]  (FAMILY as default_rules.json names it, e.g. 'sm90 bf16')")
known = sorted({fam["family"] for fam in rules["families"]})
if only is not None and only not in known:
    raise SystemExit(f"pairs.py: unknown family {only!r}; expected one of {known}")
for fam in rules["families"]:
    f = fams.get((fam["family"], "any"))
    if fam.get("epilogue") == "fused" or f is None or only not in (None, fam["family"]):
        continue
    for r in fam["rules"]:
        k = r["kernel"]
        twin = next((t for t in (k + "_plain", k + "_noact") if t in names and not k.endswith(("_plain", "_noact"))), None)
        if twin is None:
            continue
        rows = sorted((row for row in f["rows"] if within(row[0], r.get("m")) and within(row[1], r.get("n"))
                       and within(row[2], r.get("k")) and k in row[3] and twin in row[3] and row[3][k] <= row[3][twin]),
                      key=lambda row: row[0])
        if only is None:
            print(f"# {fam['family']}: m {r.get('m')} n {r.get('n')} k {r.get('k')} {k} ({len(rows)} sweep rows with it ahead)")
        for m, n, kk, t in (rows if len(rows) <= 2 else [rows[0], rows[-1]]):
            pair = f"{m},{n},{kk}={k},{twin}"
            if only is None:
                print(f"  {pair}   # sweep: twin / act {t[twin] / t[k]:.3f}")
            elif pair not in seen:
                seen.add(pair)
                print(pair)
