"""How the shipped derivation generalizes, from the committed H200 sweeps alone (no GPU): per family, each measured
(N, K) held out in turn, the rules derived from the rest (tools/derive_rules.derive_family (the shipped derivation: since session 59 the M x N ladder), the same inputs
derive_rules.py reads), and the held-out shapes' pick timed against their best kernel (pick / best, from the sweeps).

    python bench/results/experiments/s58_unseen/loo.py [--family 'sm90 bf16'] [--min-ms 1]
"""
import argparse
import glob
import importlib.util
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
spec = importlib.util.spec_from_file_location("derive_rules", os.path.join(ROOT, "tools", "derive_rules.py"))
dr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dr)


def families():
    sweeps = [dr._read(p, dr.check_sweep) for p in sorted(glob.glob(os.path.join(ROOT, "bench/results/sweeps/*.json")))]
    abs_ = [dr._read(p, dr.check_ab) for p in sorted(glob.glob(os.path.join(dr.DEFAULT_AB, "*.json")))]
    return dr._rows_by_family(sweeps, abs_, [])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default=None)
    ap.add_argument("--tolerance", type=float, default=0.03)
    ap.add_argument("--worst", type=int, default=12)
    ap.add_argument("--compare", action="store_true", help="the variants table instead")
    a = ap.parse_args()
    for (label, ep), f in families().items():
        if a.family and label != a.family:
            continue
        res = dr.held_out(f["rows"], a.tolerance, f.get("per_nk_only", set()))
        fin = [r[3] for r in res if math.isfinite(r[3])]
        g = math.exp(sum(map(math.log, fin)) / len(fin)) if fin else math.nan
        print(f"{label} [{ep}]: {len(res)} held-out shapes, pick/best geomean {g:.3f}, "
              f">1.10x at {sum(x > 1.10 for x in fin)}, >1.25x at {sum(x > 1.25 for x in fin)}, no time {len(res) - len(fin)}")
        for m, n, k, x in sorted(res, key=lambda r: -r[3])[:a.worst]:
            print(f"   {m}x{n}x{k}: {x:.3f}")




# ---- variants (prototypes, evaluated with dr.held_out(..., derive=...); compare() prints the table of the README) ----
def area_family(rows, tol, per_nk_only, base=2.0):
    """As derive_family, but the global ladder steps over M x N (log-`base` bins, geomean of time / best within a
    bin) instead of M; rules carry "mn": [lo, hi]."""
    kernels = sorted({n for *_, t in rows for n in t})
    bins = {}
    for m, n, k, t in rows:
        if (m, n, k) not in per_nk_only:
            bins.setdefault(int(math.floor(math.log(m * n, base))), []).append(t)
    win = {}
    for b, ts in bins.items():
        cands = [k for k in kernels if all(k in t for t in ts)]
        win[b] = min(cands, key=lambda k: (dr._geomean([t[k] / min(t.values()) for t in ts]), k))
    bs = sorted(win)
    steps = []
    for i, b in enumerate(bs):
        lo = 1 if i == 0 else int(base ** b)
        hi = None if i == len(bs) - 1 else int(base ** bs[i + 1]) - 1
        if steps and steps[-1][0] == win[b]:
            steps[-1] = (win[b], (steps[-1][1][0], hi))
        else:
            steps.append((win[b], (lo, hi)))

    def gchoice(m, n, k):
        return next(x for x, (lo, hi) in steps if lo <= m * n and (hi is None or m * n <= hi))
    rules = dr.per_nk_rules(rows, tol, gchoice, None)
    rules += [{"kernel": nm, "mn": [lo, hi]} for nm, (lo, hi) in steps]
    return rules




def nclass_family(rows, tol, per_nk_only, edges=(3072, 12288), kedges=()):
    """As derive_family, but one global M ladder per N class (N split at `edges`; and K at `kedges`): at each M, the
    rows of the class where it has some, else every row at that M. Rules carry the class's n (k) range."""
    kernels = sorted({n for *_, t in rows for n in t})

    def classes(ed):
        lo = 1
        out = []
        for e in ed:
            out.append((lo, e - 1))
            lo = e
        out.append((lo, None))
        return out
    ncl, kcl = classes(edges), classes(kedges) if kedges else [(0, None)]
    inside = lambda v, r: r[0] <= v and (r[1] is None or v <= r[1])  # noqa: E731
    glob_rows = [(m, n, k, t) for m, n, k, t in rows if (m, n, k) not in per_nk_only]
    all_m = sorted({m for m, *_ in glob_rows})
    per_class = []
    for nr in ncl:
        for kr in kcl:
            win = {}
            for m in all_m:
                ts = [t for mm, n, k, t in glob_rows if mm == m and inside(n, nr) and inside(k, kr)]
                if not ts:
                    ts = [t for mm, n, k, t in glob_rows if mm == m]
                cands = [x for x in kernels if all(x in t for t in ts)]
                win[m] = min(cands, key=lambda x: (dr._geomean([t[x] / min(t.values()) for t in ts]), x))
            per_class.append((nr, kr, dr.ladder(win, dr.kt.m_rows)))

    def gchoice(m, n, k):
        for nr, kr, steps in per_class:
            if inside(n, nr) and inside(k, kr):
                return next(x for x, (lo, hi) in steps if lo <= m and (hi is None or m <= hi))
    rules = dr.per_nk_rules(rows, tol, gchoice, None)
    for nr, kr, steps in per_class:
        rules += [{"kernel": nm, "m": [lo, hi], "n": list(nr), "k": list(kr)} for nm, (lo, hi) in steps]
    return rules


def compare():
    fams = families()
    keys = [("sm90 bf16", "any"), ("sm90 bf16", "fused"), ("sm90 e4m3 scaled fast", "any"),
            ("sm90 e4m3 scaled promoted", "any"), ("sm90 e4m3 blockwise", "any")]
    variants = [("M ladder (shipped to session 58; --m-ladder)", lambda r, t, p: dr.derive_family(r, t, p, hybrid=False))] + \
        [(f"M x N ladder, bins x{b}", lambda r, t, p, b=b: area_family(r, t, p, b)) for b in (1.5, 2.0, 4.0)] + \
        [(f"M ladder per N class {e}", lambda r, t, p, e=e: nclass_family(r, t, p, e)) for e in
         ((4096,), (3072, 12288), (2048, 8192, 32768))] + \
        [("M ladder per N class (3072, 12288) x K class (2048,)", lambda r, t, p: nclass_family(r, t, p, (3072, 12288), (2048,))),
         ("derive_rules.py --hybrid (M ladder to M = 256, M x N past it; per-(N, K) steps reach 2x; the default since session 59)",
          lambda r, t, p: dr.derive_family(r, t, p, hybrid=True))]
    print("| derivation | " + " | ".join(f"{a} [{e}]" for a, e in keys) + " | " +
          " | ".join(f"H100 probe: {a} [{e}]" for a, e in PROBE_FAMILY.values()) + " |")
    print("|---|" + "---|" * (len(keys) + len(PROBE_FAMILY)))
    for name, d in variants:
        cells = []
        for key in keys:
            f = fams[key]
            res = dr.held_out(f["rows"], 0.03, f.get("per_nk_only", set()), d)
            fin = [r[3] for r in res if math.isfinite(r[3])]
            g = math.exp(sum(map(math.log, fin)) / len(fin))
            cells.append(f"{g:.3f} ({sum(x > 1.25 for x in fin)})")
        for res in probe(d).values():
            xs = [r[3] for r in res]
            cells.append(f"{math.exp(sum(map(math.log, xs)) / len(xs)):.3f} ({sum(x > 1.25 for x in xs)}, max {max(xs):.2f})")
        print(f"| {name} | " + " | ".join(cells) + " |")



PROBE_FAMILY = {"gemm bf16, epilogue none": ("sm90 bf16", "any"),
                "gemm bf16, epilogue bias_gelu_residual": ("sm90 bf16", "fused"),
                "scaled_mm e4m3 -> bf16, row scales, fast accumulation, epilogue bias": ("sm90 e4m3 scaled fast", "any")}


def probe(derive=None, folders=("h100_a", "h100_b")):
    """{family key: [pick / best]} at the s58 probe's shapes (H100 sweeps: every kernel timed there, the median of the
    folders' runs), for the rules `derive` gives from every committed H200 sweep."""
    here = os.path.dirname(os.path.abspath(__file__))
    fams = families()
    out = {}
    for title, key in PROBE_FAMILY.items():
        f = fams[key]
        rules = (derive or dr.derive_family)(f["rows"], 0.03, f.get("per_nk_only", set()))
        times = {}
        for fo in folders:
            for p in glob.glob(os.path.join(here, fo, "sweep_*.json")):
                d = dr._read(p, dr.check_sweep)
                if d["case"]["title"] != title:
                    continue
                for r in d["rows"]:
                    for name, us in r["us"].items():
                        if us:
                            times.setdefault((r["m"], r["n"], r["k"]), {}).setdefault(name, []).append(us)
        res = []
        for (m, n, k), ts in sorted(times.items()):
            t = {name: sorted(v)[len(v) // 2] for name, v in ts.items()}
            got = dr.choose(rules, m, n, k)
            res.append((m, n, k, t[got] / min(t.values()) if got in t else math.inf, got))
        out[key] = res
    return out


if __name__ == "__main__":
    compare() if "--compare" in sys.argv else main()
