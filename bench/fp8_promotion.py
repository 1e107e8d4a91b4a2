"""FP8 accurate mode: speed and error against the FP32 promotion interval, same run, vs cuBLAS.

CUTLASS's promoted FP8 mainloop adds the tensor-core accumulator into an FP32 one every
`mma_promotion_interval` MMAs (k-blocks of 32: 4 = every 128 K, as DeepGEMM; the library's default
is 8 = every 256 K, chosen from this script's session-8 run). Each promotion
waits for the MMAs in flight, so the interval trades speed for accumulation error. This script
runs itself once per interval (CUTLASS_GEMM_FP8_PROMOTION_INTERVAL, read once per process) and
prints, per shape and accurate kernel: TFLOP/s, the ratio to torch._scaled_mm's default (accurate)
mode on the same inputs, and the relative Frobenius / worst-row error against a float64 reference
from the same FP8 values and scales, on data whose products share a sign (the case where a
long accumulation in the tensor core's reduced-precision accumulator loses most).

    python bench/fp8_promotion.py --intervals 4,8,16 [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 8192, 28672), (8192, 8192, 2048)]


def _child(out_path: str) -> None:
    import torch

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import cutlass_gemm
    from bench.timing import graph_time_ms, rotation_sets

    kernels = [k.name for k in cutlass_gemm.kernel_table.KERNELS
               if k.arch == 90 and k.a == "e4m3" and k.b == "e4m3" and k.scale == "tensor_row_col" and k.accum == "promoted"]
    rows = []
    for m, n, k in SHAPES:
        def make(sign_bias=0.0):
            a = (torch.randn(m, k, device="cuda") + sign_bias)
            b = (torch.randn(n, k, device="cuda") + sign_bias) / k ** 0.5
            a8, sa = cutlass_gemm.quantize_fp8(a, "row")
            b8, sb = cutlass_gemm.quantize_fp8(b, "row")
            return a8, b8, sa, sb

        sets = rotation_sets(make, (m + n) * k)
        flops = 2 * m * n * k
        t_ref = graph_time_ms(lambda a8, b8, sa, sb: torch._scaled_mm(a8, b8.t(), sa, sb.t(), out_dtype=torch.bfloat16,
                                                                       use_fast_accum=False), sets)
        # error: same-sign products (mean 1 on both sides) stress the accumulator
        a8, b8, sa, sb = make(sign_bias=1.0)
        ref = cutlass_gemm.scaled_mm_reference(a8, b8, sa, sb, compute_dtype=torch.float64, cast_output=False)
        cublas = torch._scaled_mm(a8, b8.t(), sa, sb.t(), out_dtype=torch.bfloat16, use_fast_accum=False).double()

        def err(d):
            e = (d.double() - ref)
            return (e.norm() / ref.norm()).item(), (e.norm(dim=1) / ref.norm(dim=1)).max().item()

        rows.append({"shape": [m, n, k], "kernel": "torch._scaled_mm (accurate)", "ms": t_ref,
                     "tflops": flops / t_ref / 1e9, "ratio": 1.0, "err": err(cublas)})
        for name in kernels + ["<selected>"]:
            cfg = None if name == "<selected>" else name
            fn = lambda a8, b8, sa, sb: cutlass_gemm.scaled_mm(a8, b8, sa, sb, config=cfg)
            t = graph_time_ms(fn, sets)
            out = fn(a8, b8, sa, sb)
            rows.append({"shape": [m, n, k], "kernel": name, "ms": t, "tflops": flops / t / 1e9, "ratio": t_ref / t,
                         "err": err(out)})
        fast = cutlass_gemm.scaled_mm(a8, b8, sa, sb, accumulate="fast")
        rows.append({"shape": [m, n, k], "kernel": "<selected, fast accumulation>", "err": err(fast)})
    with open(out_path, "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", default="4,8,16")
    ap.add_argument("--out", default="")
    ap.add_argument("--child", default="")
    args = ap.parse_args()
    if args.child:
        return _child(args.child)
    import datetime

    results = {"meta": {"commit": os.environ.get("CUTLASS_GEMM_COMMIT", ""),
                        "date": datetime.date.today().isoformat(), "command": " ".join(sys.argv)}}
    for iv in args.intervals.split(","):
        path = f"/tmp/fp8_promotion_{iv}.json"
        env = dict(os.environ, CUTLASS_GEMM_FP8_PROMOTION_INTERVAL=iv)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path], env=env, check=True)
        with open(path) as f:
            results[iv] = json.load(f)
    print("| interval (MMAs of K=32) | shape | kernel | TFLOP/s | vs _scaled_mm accurate | rel fro err | worst row |")
    print("|---|---|---|---|---|---|---|")
    for iv, res in results.items():
        for r in res.get("rows", []):
            tf = f"{r['tflops']:.0f}" if "tflops" in r else "-"
            ratio = f"{r['ratio']:.3f}x" if "ratio" in r else "-"
            print(f"| {iv} | {'x'.join(map(str, r['shape']))} | {r['kernel']} | {tf} | {ratio} | "
                  f"{r['err'][0]:.2e} | {r['err'][1]:.2e} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
