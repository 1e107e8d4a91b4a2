"""Quick demo: cutlass_gemm vs PyTorch on 4096^3 and one Llama-3-70B shape, same run.

    python bench/demo.py

Plain bf16 GEMM vs torch.matmul (cuBLAS), and bias + GELU(tanh) + residual fused vs the eager
unfused pipeline and torch._addmm_activation. Without a supported GPU it says so and runs the
CPU reference instead.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F

import cutlass_gemm

if __package__:  # python -m bench.demo
    from .timing import graph_time_ms, rotation_sets, tflops, eager_overhead_us
else:  # python bench/demo.py
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import graph_time_ms, rotation_sets, tflops, eager_overhead_us

SHAPES = [("square 4096^3", 4096, 4096, 4096), ("llama3_70b o, M=2048", 2048, 8192, 8192)]


def cpu_demo() -> None:
    print("No SM90/SM100 GPU here: running the CPU reference of the same op.")
    a = torch.randn(64, 256, dtype=torch.bfloat16)
    w = torch.randn(128, 256, dtype=torch.bfloat16) / 16
    bias, res = torch.randn(128, dtype=torch.bfloat16), torch.randn(64, 128, dtype=torch.bfloat16)
    out = cutlass_gemm.gemm(a, w, bias=bias, residual=res, activation="gelu_tanh")
    want = F.gelu(a.float() @ w.float().t() + bias.float(), approximate="tanh") + res.float()
    err = ((out.float() - want).norm() / want.norm()).item()
    print(f"gemm(a[64,256], w[128,256], bias, residual, gelu_tanh) -> {tuple(out.shape)} {out.dtype}; "
          f"relative error vs float32 = {err:.2e}")
    print(f"kernel the op would pick on an H200 for 4096^3: {cutlass_gemm.configs.explain(4096, 4096, 4096, arch=90)}")


def gpu_demo() -> None:
    dev = "cuda"
    rows = []
    for label, m, n, k in SHAPES:
        def make():
            return (torch.randn(m, k, device=dev, dtype=torch.bfloat16),
                    torch.randn(n, k, device=dev, dtype=torch.bfloat16) * k ** -0.5,
                    torch.randn(n, device=dev, dtype=torch.bfloat16),
                    torch.randn(m, n, device=dev, dtype=torch.bfloat16))
        sets = rotation_sets(make, 2 * (m * k + n * k + 2 * m * n))
        plain_sets = [s[:2] for s in sets]
        ours_mm = graph_time_ms(lambda a, b: cutlass_gemm.gemm(a, b), plain_sets)
        torch_mm = graph_time_ms(lambda a, b: torch.matmul(a, b.t()), plain_sets)
        ours_f = graph_time_ms(lambda a, b, bi, r: cutlass_gemm.gemm(a, b, bias=bi, residual=r, activation="gelu_tanh"), sets)
        eager_f = graph_time_ms(lambda a, b, bi, r: F.gelu(torch.addmm(bi, a, b.t()), approximate="tanh") + r, sets)
        addmm_f = graph_time_ms(lambda a, b, bi, r: torch._addmm_activation(bi, a, b.t(), use_gelu=True) + r, sets)
        t = lambda ms: tflops(m, n, k, ms)  # noqa: E731
        rows.append((label, "gemm", t(ours_mm), "torch.matmul", t(torch_mm)))
        rows.append((label, "bias+gelu+residual", t(ours_f), "eager unfused", t(eager_f)))
        rows.append((label, "bias+gelu+residual", t(ours_f), "_addmm_activation + add", t(addmm_f)))
    a = torch.randn(16, 1024, device=dev, dtype=torch.bfloat16)
    w = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    ovh = eager_overhead_us(lambda x, y: cutlass_gemm.gemm(x, y), (a, w))
    ovh_t = eager_overhead_us(lambda x, y: torch.matmul(x, y.t()), (a, w))
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  (TFLOP/s, CUDA-graph replay, median)")
    print(f"| shape | op | cutlass_gemm | competitor | competitor TFLOP/s | ratio |")
    print(f"|---|---|---|---|---|---|")
    for label, op, ours, comp, theirs in rows:
        print(f"| {label} | {op} | {ours:.0f} | {comp} | {theirs:.0f} | {ours / theirs:.2f}x |")
    print(f"eager host time per call (16x1024x1024): cutlass_gemm {ovh:.1f} us, torch.matmul {ovh_t:.1f} us")


if __name__ == "__main__":
    if torch.cuda.is_available() and cutlass_gemm.configs.current_arch():
        gpu_demo()
    else:
        cpu_demo()
