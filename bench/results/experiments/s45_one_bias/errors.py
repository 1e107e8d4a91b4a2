"""Session 45: the error figures behind the one-bias change. Every compiled SM90 kernel it touched (16-bit and FP8
scaled, Normal orientation, with the activation and residual nodes), forced by name on fresh random data against a
float64 reference (cutlass_gemm._reference), the output poisoned (NaN) before the call, with a bias in the output
dtype and in float32, GELU(tanh) and a residual, at 257x1000x4096 (ragged M and N tiles). Prints each kernel's worst
relative Frobenius error and exits 1 if any is above the tests' bound for its dtype.
    PYTHONPATH=. python bench/results/experiments/s45_one_bias/errors.py"""
import sys

import os

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "tests"))
from gemm_checks import poison_next_output  # noqa: E402  (the tests' NaN fill of the block the op's output reuses)
from cutlass_gemm import configs, kernel_table as kt
from cutlass_gemm._ops import _GEMM, _SCALED_MM
from cutlass_gemm._reference import gemm_reference, scaled_mm_reference

BOUND = {"bf16": 1e-2, "f16": 2e-3, "e4m3": 2e-2, "e5m2": 2e-2}  # relative Frobenius error: output rounding plus FP8 inputs' noise
M, N, K = 257, 1000, 4096


def rel(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


def main():
    torch.manual_seed(45)
    compiled = set(configs.compiled_kernels())
    touched = [k for k in kt.KERNELS if k.name in compiled and k.arch == 90 and not k.swap_ab and k.serves_fused
               and k.scale in ("none", "tensor_row_col")]
    worst, bad = 0.0, []
    for k in touched:
        errs = []
        for bias_dtype in ("out", "f32"):
            if k.scale == "none":
                dt = {"bf16": torch.bfloat16, "f16": torch.float16}[k.a]
                out_dt = torch.float32 if k.out == "f32" else dt
                a, b = torch.randn(M, K, device="cuda", dtype=dt), torch.randn(N, K, device="cuda", dtype=dt)
                bias = torch.randn(N, device="cuda", dtype=out_dt if bias_dtype == "out" else torch.float32)
                res = torch.randn(M, N, device="cuda", dtype=out_dt)
                kw = dict(activation="gelu_tanh", alpha=0.5, beta=0.75, config=k.name,
                          out_dtype=torch.float32 if k.out == "f32" else None)
                poison_next_output(M * N, a.device)
                out = _GEMM(a, b, bias, res, **kw)
                ref = gemm_reference(a, b, bias, res, "gelu_tanh", 0.5, 0.75, out_dtype=kw["out_dtype"],
                                     compute_dtype=torch.float64, cast_output=False)
            else:
                a = (torch.randn(M, K, device="cuda") / 2).to(getattr(torch, kt.TORCH_DTYPE_NAMES[k.a]))
                b = (torch.randn(N, K, device="cuda") / 2).to(getattr(torch, kt.TORCH_DTYPE_NAMES[k.b]))
                sa, sb = torch.rand(M, 1, device="cuda") + 0.5, torch.rand(N, 1, device="cuda") + 0.5
                bias = torch.randn(N, device="cuda", dtype=torch.bfloat16 if bias_dtype == "out" else torch.float32)
                res = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
                acc = "fast" if k.accum == "fast" else "accurate"
                poison_next_output(M * N, a.device)
                out = _SCALED_MM(a, b, sa, sb, bias, res, activation="gelu_tanh", beta=0.75, accumulate=acc,
                                 config=k.name)
                ref = scaled_mm_reference(a, b, sa, sb, bias, res, "gelu_tanh", 0.75, accumulate=acc,
                                          compute_dtype=torch.float64, cast_output=False)
            torch.cuda.synchronize()
            errs.append(rel(out, ref) if torch.isfinite(out).all() else float("inf"))
        e = max(errs)
        worst = max(worst, e)
        if e > BOUND[k.a]:
            bad.append(k.name)
        print(f"{k.name:60s} bias out {errs[0]:.2e}  bias f32 {errs[1]:.2e}")
    print(f"{len(touched)} kernels, worst relative error {worst:.2e}; above the bound: {bad or 'none'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
