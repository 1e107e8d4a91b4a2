"""Small GPU cases touching every kernel and every host-side path, for compute-sanitizer.

    python tools/sanitize_cases.py                 # every compiled kernel forced + the fallback paths
    python tools/sanitize_cases.py --racecheck     # one kernel per family, one small shape
    python tools/sanitize_cases.py --list          # print the cases, run nothing

Run it under the sanitizer with tools/sanitize.sh (memcheck over everything, racecheck over one
kernel per family). Every result is checked against a float64 reference computed on the CPU
(the three measures of tests/gemm_checks.py), so a run is also a correctness check. Prints a
summary (kernels covered, cases, failures) and exits 1 on any failure or an uncovered kernel.
Shapes are small (a few CTAs each) so memcheck finishes in minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import torch  # noqa: E402

import cutlass_gemm  # noqa: E402
from cutlass_gemm import configs  # noqa: E402
from cutlass_gemm import kernel_table as kt  # noqa: E402
from gemm_checks import (Problem, ScaledProblem, check_result, check_scaled_result, make_problem,  # noqa: E402
                         make_scaled_problem)

DT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
      "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
DEV = "cuda"


def _cpu(p):
    """The same problem on the CPU (the float64 reference runs there: no extra GPU kernels)."""
    return dataclasses.replace(p, **{f.name: getattr(p, f.name).cpu() for f in dataclasses.fields(p)
                                     if isinstance(getattr(p, f.name), torch.Tensor)})


def _gemm(p: Problem, config=None):
    out = cutlass_gemm.gemm(p.a, p.b, config=config, **p.kwargs())
    torch.cuda.synchronize()
    return check_result(out.cpu(), _cpu(p))


def _scaled(p: ScaledProblem, config=None):
    out = cutlass_gemm.scaled_mm(*p.args(), config=config, **p.kwargs())
    torch.cuda.synchronize()
    return check_scaled_result(out.cpu(), _cpu(p))


def _offset(x: torch.Tensor, elems: int = 1) -> torch.Tensor:
    """x's values at a storage offset (a base pointer off the 16-byte rule)."""
    flat = torch.empty(x.numel() + elems, dtype=x.dtype, device=x.device)
    v = flat[elems:].view(x.shape)
    v.copy_(x)
    return v


def forced_cases(kernels, racecheck: bool):
    """(name, kernel, fn): each kernel forced on a shape with partial M and N tiles and the full
    epilogue (bias, residual, activation)."""
    cases = []
    for k in kernels:
        if k.scale == "none":
            m, n, kk = (128, 256, 256) if racecheck else (200, 136, 520)
            out = DT[k.out] if k.out != k.a else None
            bias = "f32" if out is not None else "out"

            def fn(k=k, m=m, n=n, kk=kk, out=out, bias=bias):
                p = make_problem(m, n, kk, DT[k.a], DEV, out_dtype=out, bias=bias, residual=True,
                                 activation="gelu_tanh", alpha=0.5, beta=0.75)
                return _gemm(p, config=k.name)
        else:
            m, n, kk = (128, 256, 256) if racecheck else (200, 136, 640)
            scales = "blockwise" if k.scale == "blockwise" else "row_col"

            def fn(k=k, m=m, n=n, kk=kk, scales=scales):
                p = make_scaled_problem(m, n, kk, DEV, scales=scales, a_dtype=DT[k.a], b_dtype=DT[k.b], bias="out",
                                        residual=True, activation="silu", beta=0.5,
                                        accumulate="fast" if k.accum == "fast" else "accurate")
                return _scaled(p, config=k.name)
        cases.append((f"forced {k.name} {m}x{n}x{kk}", k.name, fn))
    return cases


def fallback_cases():
    """The host-side paths around the kernels, with the selected kernel: K/N padding, K = 0, M = 1,
    copies of non-contiguous / misaligned operands, 3-D inputs, scale conversions."""
    bf, f16 = torch.bfloat16, torch.float16

    def gemm_pad_k_n():  # K % 8 != 0 and N % 8 != 0: A, B padded, output through scratch
        return _gemm(make_problem(77, 129, 100, bf, DEV, bias="out", residual=True, activation="gelu"))

    def gemm_k0():
        return _gemm(make_problem(33, 40, 0, f16, DEV, bias="f32", residual=True, activation="gelu", beta=0.5))

    def gemm_m1_tiny():
        return _gemm(make_problem(1, 8, 8, bf, DEV, bias="out", activation="relu"))

    def gemm_1x1x1():
        return _gemm(make_problem(1, 1, 1, f16, DEV, bias="out", residual=True))

    def gemm_f32out_n_odd():  # fp32 output, N % 4 != 0
        return _gemm(make_problem(50, 30, 64, bf, DEV, out_dtype=torch.float32, bias="f32", residual=True))

    def gemm_transposed_a():
        p = make_problem(64, 96, 128, bf, DEV, bias="out", activation="silu")
        p.a = p.a.t().contiguous().t()
        return _gemm(p)

    def gemm_misaligned_views():  # offset a, b, residual; strided bias
        p = make_problem(48, 64, 72, f16, DEV, residual=True, activation="gelu_tanh")
        p.a, p.b, p.residual = _offset(p.a), _offset(p.b, 3), _offset(p.residual)
        p.bias = torch.randn(128, device=DEV, dtype=f16)[::2]
        return _gemm(p)

    def gemm_3d():
        return _gemm(make_problem(0, 72, 64, bf, DEV, lead=(2, 3), bias="out", residual=True, activation="gelu"))

    def scaled_pad_k_n():  # K % 16 != 0, N % 8 != 0
        return _scaled(make_scaled_problem(77, 129, 100, DEV, scales="row_col", bias="out", residual=True,
                                           activation="gelu"))

    def scaled_k0():
        return _scaled(make_scaled_problem(3, 130, 0, DEV, scales="tensor", bias="out", residual=True))

    def scaled_tensor_col():
        return _scaled(make_scaled_problem(40, 96, 256, DEV, scales="tensor_col", accumulate="fast"))

    def scaled_scale_views():  # 1-D per-column scale at an odd offset: copied to an aligned vector
        p = make_scaled_problem(40, 96, 256, DEV, scales="row_col", bias="f32")
        p.scale_b = _offset(p.scale_b.reshape(-1))
        p.scale_a = p.scale_a.reshape(-1)
        return _scaled(p)

    def blockwise_native_m4():  # M % 4 == 0, MN-major scales: zero-copy
        return _scaled(make_scaled_problem(128, 256, 384, DEV, scales="blockwise", bias="out", residual=True))

    def blockwise_kmajor_partial():  # K-major scales (converted), partial M/N/K blocks, K padded
        p = make_scaled_problem(77, 300, 520, DEV, scales="blockwise", bias="out", activation="gelu_tanh")
        p.scale_a, p.scale_b = p.scale_a.contiguous(), p.scale_b.contiguous()
        return _scaled(p)

    def blockwise_one_block_forced():  # 1-element scales read as the only block
        names = [k.name for k in kt.KERNELS if k.scale == "blockwise" and k.arch == configs.current_arch()]
        return _scaled(make_scaled_problem(1, 16, 16, DEV, scales="blockwise"), config=names[0])

    def mixed_e5m2_n_odd():
        return _scaled(make_scaled_problem(33, 129, 96, DEV, scales="row_col", a_dtype=torch.float8_e5m2,
                                           residual=True, activation="relu"))

    def scaled_3d():
        p = make_scaled_problem(0, 64, 128, DEV, scales="row_col", lead=(2, 5), residual=True)
        return _scaled(p)

    fns = [gemm_pad_k_n, gemm_k0, gemm_m1_tiny, gemm_1x1x1, gemm_f32out_n_odd, gemm_transposed_a,
           gemm_misaligned_views, gemm_3d, scaled_pad_k_n, scaled_k0, scaled_tensor_col, scaled_scale_views,
           blockwise_native_m4, blockwise_kmajor_partial, blockwise_one_block_forced, mixed_e5m2_n_odd,
           scaled_3d]
    return [(f"path {f.__name__}", None, f) for f in fns]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--racecheck", action="store_true", help="one kernel per family, one small shape, no paths")
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args()

    arch = configs.current_arch()
    if not arch:
        print("sanitize_cases: needs an SM90/SM100 GPU", file=sys.stderr)
        return 2
    compiled = set(configs.compiled_kernels())
    table = [k for k in kt.KERNELS if k.arch == arch and k.name in compiled]
    if args.racecheck:
        seen, kernels = set(), []
        for k in table:  # the first kernel of each family (dtypes, output, scale mode, accumulation)
            if k.family not in seen:
                seen.add(k.family)
                kernels.append(k)
    else:
        kernels = table
    cases = forced_cases(kernels, args.racecheck) + ([] if args.racecheck else fallback_cases())
    if args.only:
        cases = [c for c in cases if args.only in c[0]]
    if args.list:
        for name, _, _ in cases:
            print(name)
        return 0

    torch.manual_seed(0)
    failures, covered, t0 = [], set(), time.time()
    for i, (name, kernel, fn) in enumerate(cases):
        t = time.time()
        try:
            figs = fn()
            status = "ok   fro {fro:.2e} row {row:.2e} col {col:.2e} elem {elem:+.1e}".format(**figs)
            if kernel:
                covered.add(kernel)
        except Exception as e:  # noqa: BLE001 - every failure is listed in the summary
            failures.append((name, f"{type(e).__name__}: {e}"))
            status = f"FAIL {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            traceback.print_exc()
        print(f"[{i + 1}/{len(cases)}] {name}: {status} ({time.time() - t:.1f} s)", flush=True)

    want = {k.name for k in kernels}
    if args.only:
        want = {k for _, k, _ in cases if k}
    missing = sorted(want - covered)
    print("\n==== sanitize_cases summary ====")
    print(f"mode: {'racecheck (one kernel per family)' if args.racecheck else 'every kernel + fallback paths'}; "
          f"GPU: {torch.cuda.get_device_name()} (sm_{arch})")
    print(f"cases: {len(cases)}, passed: {len(cases) - len(failures)}, failed: {len(failures)}, "
          f"time: {time.time() - t0:.0f} s")
    which = "one per family" if args.racecheck else "every compiled kernel"
    print(f"kernels covered: {len(covered)}/{len(want)} {which} (sm_{arch}: {len(table)} compiled; "
          f"{len(kt.KERNELS)} in kernel_table.py)")
    for k in sorted(covered):
        print(f"  covered  {k}")
    for k in missing:
        print(f"  MISSING  {k}")
    for name, err in failures:
        print(f"  FAILED   {name}: {err.splitlines()[0] if err else ''}")
    return 1 if failures or missing else 0


if __name__ == "__main__":
    sys.exit(main())
