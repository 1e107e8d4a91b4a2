"""Large-shape sensitivity to the persistent tile scheduler's swizzle and raster order, same run,
against the competitor: does L2 reuse explain the gap to cuBLAS / _scaled_mm at large M x N?

    python bench/scheduler_knobs.py [--out scheduler_knobs.json]

The knobs (CUTLASS_GEMM_SWIZZLE 1/2/4/8, CUTLASS_GEMM_RASTER 1 = along M / 2 = along N) are read
once per process, so each setting runs in a child process (`--child`) on the same shapes and seed;
the competitor is timed in every child too (its spread is the noise floor). Timing is the
harness's CUDA-graph replay over rotated inputs; each output is checked before it is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

SETTINGS = [(0, 0), (1, 0), (2, 0), (4, 0), (8, 0), (8, 1), (8, 2)]  # (swizzle, raster); 0 = unset: the library's default
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 10240, 8192), (8192, 57344, 8192)]
CASES = [dict(op="gemm", dtype="bf16"), dict(op="scaled_mm", scale="row", accumulate="accurate")]


def child() -> dict:
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import torch

    from bench.cases import make_case
    from bench.sweep import sweep_shape

    out = {}
    for spec in CASES:
        case = make_case(epilogue="none", **spec)
        for m, n, k in SHAPES:
            torch.manual_seed(0)
            row = sweep_shape(case, [""], m, n, k)  # "": the op's own selection, checked before it is timed
            key = f"{spec['op']} {spec.get('dtype', spec.get('scale'))} {m}x{n}x{k}"
            out[key] = {"ours_us": row["us"][""], "competitor_us": row["competitor"]["us"], "err": row["rel_err"][""],
                        "kernel": row["selected"]}
    return {"meta": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__}, "rows": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child()))
        return
    runs, meta = {}, {"commit": os.environ.get("CUTLASS_GEMM_COMMIT", "")}
    for sw, ra in SETTINGS:
        env = dict(os.environ)
        env.pop("CUTLASS_GEMM_SWIZZLE", None)
        env.pop("CUTLASS_GEMM_RASTER", None)
        if sw:
            env["CUTLASS_GEMM_SWIZZLE"] = str(sw)
        if ra:
            env["CUTLASS_GEMM_RASTER"] = str(ra)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env, capture_output=True,
                           text=True)
        if r.returncode != 0:
            print(f"swizzle {sw} raster {ra}: failed\n{r.stderr[-2000:]}", file=sys.stderr)
            continue
        doc = json.loads(r.stdout.splitlines()[-1])
        meta.update(doc["meta"])
        runs[f"swizzle={sw or 'default'} raster={['heuristic', 'M', 'N'][ra]}"] = doc["rows"]
    keys = list(next(iter(runs.values())).keys()) if runs else []
    print("| shape | " + " | ".join(runs) + " |")
    print("|---|" + "---|" * len(runs))
    for key in keys:
        cells = []
        for run in runs.values():
            v = run[key]
            cells.append("-" if v["ours_us"] is None else f"{v['competitor_us'] / v['ours_us']:.3f}x ({v['ours_us']:.0f} us)")
        print(f"| {key} | " + " | ".join(cells) + " |")
    print("\ncells: our speedup over the competitor timed in the same child (cuBLAS mm / _scaled_mm row), our µs")
    if args.out:  # no torch import here: the children report the GPU and versions
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
