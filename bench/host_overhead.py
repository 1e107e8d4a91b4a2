"""Eager host time per call, ours next to torch's, on a launch-bound problem (16x1024x1024), with
where our time goes: the public function, the op called directly, and the op with autograd
dispatch switched off (inference mode) — the #4 bar is <= 10 us per call.

    python bench/host_overhead.py [--out host_overhead.json]

Method: best of 5 loops of 2000 back-to-back eager calls, wall clock on the host, divided by the
calls (the GPU keeps up: each call's kernel is a few us). Same process, same inputs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

import cutlass_gemm

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # appended: an installed cutlass_gemm wins
from bench.timing import eager_overhead_us  # noqa: E402


def per_call_us(fn) -> float:
    return eager_overhead_us(fn, (), iters=2000, loops=5)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    args = ap.parse_args()
    dev = "cuda"
    a = torch.randn(16, 1024, device=dev, dtype=torch.bfloat16)
    w = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    bias = torch.randn(1024, device=dev, dtype=torch.bfloat16)
    a8, sa = cutlass_gemm.quantize_fp8(a, "row")
    w8, sw = cutlass_gemm.quantize_fp8(w, "row")
    op = torch.ops.cutlass_gemm.gemm.default
    rows = [
        ("torch.mm (cuBLAS)", lambda: torch.mm(a, w.t())),
        ("torch.addmm (cuBLAS, bias)", lambda: torch.addmm(bias, a, w.t())),
        ("torch._scaled_mm row", lambda: torch._scaled_mm(a8, w8.t(), sa, sw.t(), out_dtype=torch.bfloat16)),
        ("cutlass_gemm.gemm", lambda: cutlass_gemm.gemm(a, w)),
        ("cutlass_gemm.gemm bias+gelu", lambda: cutlass_gemm.gemm(a, w, bias=bias, activation="gelu")),
        ("cutlass_gemm.scaled_mm row", lambda: cutlass_gemm.scaled_mm(a8, w8, sa, sw)),
        ("torch.ops.cutlass_gemm.gemm (autograd kernel)", lambda: op(a, w)),
    ]
    res = {name: per_call_us(fn) for name, fn in rows}
    with torch.inference_mode():
        res["torch.ops.cutlass_gemm.gemm, inference_mode"] = per_call_us(lambda: op(a, w))
        res["torch.mm, inference_mode"] = per_call_us(lambda: torch.mm(a, w.t()))
        # Where the op's time goes, in the same mode: the dispatcher round trip of an op of ours with no
        # tensor (12 ints boxed, the selection's lookup), and the output allocation the op makes.
        sel = torch.ops.cutlass_gemm._select_kernel.default
        res["parts: torch.ops.cutlass_gemm._select_kernel (12 ints, no tensor)"] = per_call_us(
            lambda: sel(90, 0, 0, 0, 0, 0, 16, 1024, 1024, False, False, False))
        res["parts: torch.empty 16x1024 bf16 cuda"] = per_call_us(
            lambda: torch.empty((16, 1024), device=dev, dtype=torch.bfloat16))
    print("| call (16x1024x1024) | host µs per call |\n|---|---|")
    for name, us in res.items():
        print(f"| {name} | {us:.1f} |")
    if args.out:
        meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                "commit": os.environ.get("CUTLASS_GEMM_COMMIT", "")}
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "us": res}, f, indent=1)


if __name__ == "__main__":
    main()
