"""Decode-shaped GEMMs against K: each forced kernel's time at M x N x K for several K, fitted as
time = fixed cost per call + weight bytes / streaming rate, with the competitor alongside (cuBLAS mm
for bf16 kernels, `torch._scaled_mm` per-tensor for FP8 ones).

    python -m bench.decode_scan [--kernel NAME ...] [--m 1] [--n 8192] [--ks 1024,2048,...] [--json F]

Same timer as the tables (CUDA-graph replay over rotated inputs, bench/timing.py); every kernel's output
is checked against a float64 reference at each K before it is timed. Session 24 found this way that the
weight streams faster through 256-byte rows per k-tile than through 128-byte ones (the FP8 256-deep
decode tiles, cutlass_gemm/kernel_table.py `_sm90_fp8_decode`; bench/results/experiments/s24_decode_scan_*.json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

if __package__:  # python -m bench.decode_scan
    from . import kfit
else:  # python bench/decode_scan.py
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench import kfit

DEFAULT_KERNELS = ["sm90_bf16_t64x16x128_c1x1_pingpong_swapab",
                   "sm90_e4m3_scaled_promoted_t64x32x128_c1x1_pingpong_swapab",
                   "sm90_e4m3_scaled_promoted_t64x16x256_c1x1_pingpong_swapab",
                   "sm90_e4m3_scaled_fast_t128x16x256_c1x1_pingpong_swapab"]
DEFAULT_KS = "1024,2048,4096,8192,16384,32768"


def parse_ks(text: str):
    try:
        ks = [int(v) for v in text.split(",")]
    except ValueError:
        ks = []
    if len(ks) < 2 or any(k <= 0 or k % 16 for k in ks):
        raise argparse.ArgumentTypeError(f"{text!r}: expected two or more comma-separated K, each a positive multiple of 16")
    return ks


def fit(points):
    """Least-squares (intercept us, rate GB/s) of time = intercept + bytes / rate over (bytes, us) points."""
    intercept, slope = kfit.fit(points)
    return intercept, 1e-3 / slope


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", nargs="+", default=DEFAULT_KERNELS, help="bf16 or FP8 tensor/row-scaled kernels to force")
    ap.add_argument("--m", type=int, default=1)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--ks", type=parse_ks, default=parse_ks(DEFAULT_KS), metavar="K,K,...")
    ap.add_argument("--json", help="write the times here")
    args = ap.parse_args(argv)
    if args.m <= 0 or args.n <= 0 or args.n % 16:
        ap.error(f"expected --m >= 1 and --n a positive multiple of 16, got {args.m} and {args.n}")
    from cutlass_gemm import configs
    from cutlass_gemm import kernel_table as kt
    names = set(configs.compiled_kernels())
    for kern in args.kernel:  # refused before anything runs
        spec = kt.KERNELS[kt.KERNEL_IDS[kern]] if kern in kt.KERNEL_IDS else None
        if spec is None or kern not in names:
            ap.error(f"{kern}: not a compiled kernel (cutlass_gemm.configs.kernels() lists them)")
        if not ((spec.a == spec.b == "bf16" and spec.out == "bf16") or (spec.a == spec.b == "e4m3" and spec.scale == "tensor_row_col")):
            ap.error(f"{kern}: expected a bf16 -> bf16 kernel or an e4m3 tensor/row-scaled one (not f16, f32-output, "
                     "mixed e5m2 or blockwise)")
    from bench.cli import check_json_path, check_kernels_on_this_gpu
    check_json_path(ap, args.json)
    check_kernels_on_this_gpu(ap, args.kernel)

    import cutlass_gemm as cg
    from bench.timing import graph_times_ms, rotation_sets
    fp8 = [k for k in args.kernel if kt.KERNELS[kt.KERNEL_IDS[k]].a == "e4m3"]
    bf16 = [k for k in args.kernel if k not in fp8]
    m, n, us = args.m, args.n, {}
    for kind, kernels in (("bf16", bf16), ("fp8", fp8)):
        if not kernels:
            continue
        fns = {}
        for kern in kernels:
            acc = "fast" if kt.KERNELS[kt.KERNEL_IDS[kern]].accum == "fast" else "accurate"
            fns[kern] = ((lambda a, b, c=kern: cg.gemm(a, b, config=c)) if kind == "bf16" else
                         (lambda a, b, sa, sb, c=kern, acc=acc: cg.scaled_mm(a, b, sa, sb, accumulate=acc, config=c)))
        fns["cuBLAS mm" if kind == "bf16" else "torch._scaled_mm"] = (
            (lambda a, b: torch.mm(a, b.t())) if kind == "bf16" else
            (lambda a, b, sa, sb: torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16)))
        eb = 2 if kind == "bf16" else 1
        for k in args.ks:
            def make():
                if kind == "bf16":
                    return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                            torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
                one = torch.ones(1, device="cuda")
                return (torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn),
                        torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn), one, one)
            sets = rotation_sets(make, n * k * eb)
            a, b = sets[0][0].double(), sets[0][1].double()
            ref = a @ b.t()
            for name, f in fns.items():
                err = ((f(*sets[0]).double() - ref).norm() / ref.norm()).item()
                if not err <= 2e-2:
                    print(f"{m}x{n}x{k} {name}: relative error {err:.2e} against float64, not timed", file=sys.stderr)
                    return 1
            for name, t in zip(fns, graph_times_ms(list(fns.values()), sets)):
                us.setdefault(name, {"bytes_per_elem": eb, "us": {}})["us"][k] = (
                    None if isinstance(t, BaseException) else float(t) * 1e3)
            del sets
            torch.cuda.empty_cache()
    print(f"us per call at M = {m}, N = {n}; fit over K: time = fixed + weight bytes / rate")
    print("kernel".ljust(60), " ".join(f"{k:>8}" for k in args.ks), "   fixed us  rate GB/s")
    for name, d in us.items():
        pts = [(n * k * d["bytes_per_elem"], t) for k, t in d["us"].items() if t is not None]
        a0, rate = fit(pts) if len(pts) >= 2 else (float("nan"), float("nan"))
        print(name.ljust(60), " ".join(f"{d['us'][k]:8.2f}" if d["us"][k] else "     err" for k in args.ks),
              f"  {a0:8.2f}  {rate:9.0f}")
        d["fixed_us"], d["rate_gbps"] = a0, rate
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(m=m, n=n, ks=args.ks, gpu=torch.cuda.get_device_name(), contenders=us), fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
