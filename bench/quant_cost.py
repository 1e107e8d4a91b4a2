"""Cost of Fp8Linear's per-call activation quantization next to its GEMM, llama3_70b projections.

    python bench/quant_cost.py [--m 512 2048 8192] [--out results.json]

For each (N, K) in {qkv (10240, 8192), o (8192, 8192), gate_up (57344, 8192), down (8192, 28672)}
and each M, in one run on the same inputs:

  * GEMM: `scaled_mm` of an [M, K] e4m3 activation with an [N, K] e4m3 weight, per-token x
    per-channel scales ("row", what Fp8Linear(weight_granularity="row") runs) and 1x128 x 128x128
    blockwise scales ("1x128", weight_granularity="128x128"); accurate accumulation, bf16 out.
  * quantization of the bf16 [M, K] activation with the matching granularity, three ways:
      naive     the previous float32 formulation (upcast, abs, amax, divide, clamp, cast; ~7 passes)
      eager     cutlass_gemm.quantize's eager path (inf-norm reduction + one FP8-storing division)
      compiled  the opt-in Inductor path (CUTLASS_GEMM_QUANT_COMPILE=1: the same function compiled
                by Inductor into one kernel; compiled during warm-up, outside the timed region)
      kernel    torch.ops.cutlass_gemm._quantize_fp8_rows_, what quantize_fp8 runs on CUDA by default
  * added: the kernel's quantization followed by the GEMM in one graph, minus the GEMM alone: what
    the quantization adds to Fp8Linear's call once the two kernels run back to back (launch gap,
    tail and prologue overlap included; with programmatic dependent launch the GEMM's prologue
    overlaps the quantizer). It is the difference of two timings, so next to a GEMM of 200 us or
    more it is inside the GEMM's own run-to-run spread (session 9: -2.7 to +28 us at 512x8192x28672).
    quantize_fp8 (what Fp8Linear calls) takes the compiled path on CUDA in eager mode, the eager
    path inside CUDA graph capture, and is fused into the caller's graph under torch.compile.

Method: GPU time per call from CUDA-graph replay (bench/timing.py: at least 20 back-to-back calls
per graph, a replay of at least 1 ms, median of 15 replays, CUDA events), activations rotated across sets larger than L2 so no
call reads the previous call's activation from L2 (the weight of every shape is larger than L2
already). Graph replay removes host launch overhead, so this is the GPU cost; in eager mode each
tiny kernel of the unfused paths also costs ~5 us of host time, which can hide behind the GEMM
only when the GEMM is longer. The percentage is quantization time / GEMM time; target <= 10% at
M >= 512. Prints a markdown table; --out writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

if __package__:  # python -m bench.quant_cost
    from .timing import graph_time_ms, rotation_sets
else:  # python bench/quant_cost.py
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import graph_time_ms, rotation_sets

import cutlass_gemm  # noqa: E402
from cutlass_gemm import quantize as qz  # noqa: E402

NK = {"qkv": (10240, 8192), "o": (8192, 8192), "gate_up": (57344, 8192), "down": (8192, 28672)}
E4 = torch.float8_e4m3fn


def naive(x: torch.Tensor, granularity: str, dtype=E4):
    """The pre-optimization formulation of quantize_fp8 (row and 1x128), for comparison."""
    fmax = torch.finfo(dtype).max
    xf = x.float()
    r, c = x.shape
    if granularity == "row":
        amax = xf.abs().amax(dim=1, keepdim=True)
    else:
        pc = -(-c // 128) * 128
        amax = torch.nn.functional.pad(xf.abs(), (0, pc - c)).reshape(r, pc // 128, 128).amax(dim=2)
    scale = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
    full = scale if granularity == "row" else scale.repeat_interleave(128, 1)[:, :c]
    return (xf / full).clamp(-fmax, fmax).to(dtype), scale


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, nargs="+", default=[512, 2048, 8192])
    ap.add_argument("--shapes", nargs="+", default=list(NK), choices=list(NK))
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench/quant_cost.py needs a CUDA GPU")
    dev = "cuda"
    rows = []
    print("| shape | N x K | M | granularity | GEMM us | naive us (%) | eager us (%) | compiled us (%) | kernel us (%) | added us (%) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.shapes:
        n, k = NK[name]
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16) * k ** -0.5
        weights = {"row": cutlass_gemm.quantize_fp8(w, "row"), "1x128": cutlass_gemm.quantize_fp8(w, "128x128")}
        del w
        for m in args.m:
            xs = rotation_sets(lambda: (torch.randn(m, k, device=dev, dtype=torch.bfloat16),), 2 * m * k)
            for gran in ("row", "1x128"):
                w8, sw = weights[gran]
                qsets = [cutlass_gemm.quantize_fp8(x, gran) for (x,) in xs]
                gemm = graph_time_ms(lambda a, s: cutlass_gemm.scaled_mm(a, w8, s, sw), qsets) * 1e3
                compiled = qz._compiled(gran)
                t = {
                    "naive": graph_time_ms(lambda x: naive(x, gran), xs) * 1e3,
                    "eager": graph_time_ms(lambda x: qz._quantize(x, gran, E4), xs) * 1e3,
                    "compiled": graph_time_ms(lambda x: compiled(x, E4), xs) * 1e3,
                    "kernel": graph_time_ms(lambda x: qz._quantize_kernel(x, gran, E4), xs) * 1e3,
                }
                def quantize_then_gemm(x):
                    q, sq = qz._quantize_kernel(x, gran, E4)
                    return cutlass_gemm.scaled_mm(q, w8, sq, sw)

                pair = graph_time_ms(quantize_then_gemm, xs)
                t["added"] = pair * 1e3 - gemm
                rec = {"shape": name, "n": n, "k": k, "m": m, "granularity": gran, "gemm_us": gemm,
                       **{f"{key}_us": v for key, v in t.items()},
                       **{f"{key}_pct": 100 * v / gemm for key, v in t.items()},
                       "compile_failed": qz._COMPILE_FAILED}
                rows.append(rec)
                cells = " | ".join(f"{t[key]:.1f} ({100 * t[key] / gemm:.1f}%)" for key in t)
                print(f"| {name} | {n}x{k} | {m} | {gran} | {gemm:.1f} | {cells} |", flush=True)
                del qsets
    if qz._COMPILE_FAILED:
        print("note: the compiled path failed on this machine; 'compiled' and 'quantize_fp8' ran eager")
    if args.out:
        meta = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                "commit": os.environ.get("CUTLASS_GEMM_COMMIT", "")}
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
