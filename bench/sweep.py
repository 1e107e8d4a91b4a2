"""Every compiled 16-bit kernel (forced by name) against cuBLAS on the shape suites, same run:
the data the default selection rules are chosen from.

    python bench/sweep.py [--dtype bf16] [--suite square,llama3_70b] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

import cutlass_gemm
from cutlass_gemm import kernel_table as kt

if __package__:  # python -m bench.sweep
    from .suites import SUITES
    from .timing import graph_time_ms, rotation_sets, tflops
else:  # python bench/sweep.py
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from suites import SUITES
    from timing import graph_time_ms, rotation_sets, tflops


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--suite", default="square,llama3_70b")
    ap.add_argument("--epilogue", default="none", choices=["none", "fused"])
    ap.add_argument("--json")
    args = ap.parse_args()
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    names = [k.name for k in kt.KERNELS if k.a == args.dtype and k.out == args.dtype and k.scale == "none"
             and k.name in cutlass_gemm.configs.compiled_kernels() and k.arch == cutlass_gemm.configs.current_arch()]
    fused = args.epilogue == "fused"
    results = []
    print("| M x N x K | cuBLAS | " + " | ".join(names) + " | selected | sel/cuBLAS |")
    print("|---|---|" + "---|" * len(names) + "---|---|")
    for suite in args.suite.split(","):
        for m, n, k in SUITES[suite]:
            def make():
                return (torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(n, k, device="cuda", dtype=dtype) * k ** -0.5,
                        torch.randn(n, device="cuda", dtype=dtype), torch.randn(m, n, device="cuda", dtype=dtype))
            sets = rotation_sets(make, 2 * (m * k + n * k + 2 * m * n))
            if fused:
                kw = lambda bi, r: dict(bias=bi, residual=r, activation="gelu_tanh")  # noqa: E731
                ref = graph_time_ms(lambda a, b, bi, r: torch._addmm_activation(bi, a, b.t(), use_gelu=True) + r, sets)
            else:
                kw = lambda bi, r: {}  # noqa: E731
                ref = graph_time_ms(lambda a, b, bi, r: torch.matmul(a, b.t()), sets)
            times = {nm: graph_time_ms(lambda a, b, bi, r, nm=nm: cutlass_gemm.gemm(a, b, config=nm, **kw(bi, r)), sets)
                     for nm in names}
            sel = graph_time_ms(lambda a, b, bi, r: cutlass_gemm.gemm(a, b, **kw(bi, r)), sets)
            row = {"m": m, "n": n, "k": k, "suite": suite, "cublas_tflops": tflops(m, n, k, ref),
                   "kernels": {nm: tflops(m, n, k, t) for nm, t in times.items()}, "selected_tflops": tflops(m, n, k, sel),
                   "selected": cutlass_gemm.configs.explain(m, n, k, dtype).kernel}
            results.append(row)
            print(f"| {m}x{n}x{k} | {row['cublas_tflops']:.0f} | " + " | ".join(f"{row['kernels'][nm]:.0f}" for nm in names)
                  + f" | {row['selected_tflops']:.0f} | {row['selected_tflops'] / row['cublas_tflops']:.2f} |", flush=True)
            del sets
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "dtype": args.dtype,
                       "epilogue": args.epilogue, "rows": results}, fh, indent=1)


if __name__ == "__main__":
    main()
