"""Cost of the shape fallback: aligned shape vs the same shape with K and/or N off the 16-byte
rule (operands padded into scratch, output copied out), same run.

    python bench/fallback_cost.py
"""

from __future__ import annotations

import os
import sys

import torch

import cutlass_gemm

if __package__:  # python -m bench.fallback_cost
    from .timing import graph_time_ms
else:  # python bench/fallback_cost.py
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import graph_time_ms

CASES = [(2048, 8192, 8192), (128, 8192, 8192), (4096, 4096, 4096)]


def main() -> None:
    dev = "cuda"
    print("| M x N x K | aligned us | K-1 us (pad A, B) | N-1 us (pad out) | K-1 & N-1 us | unaligned a view us |")
    print("|---|---|---|---|---|---|")
    for m, n, k in CASES:
        row = []
        for dn, dk in [(0, 0), (0, 1), (1, 0), (1, 1)]:
            a = torch.randn(m, k - dk, device=dev, dtype=torch.bfloat16)
            b = torch.randn(n - dn, k - dk, device=dev, dtype=torch.bfloat16)
            row.append(graph_time_ms(lambda x, y: cutlass_gemm.gemm(x, y), [(a, b)]) * 1e3)
        big = torch.randn(m, k + 8, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        row.append(graph_time_ms(lambda x, y: cutlass_gemm.gemm(x, y), [(big[:, 1 : k + 1], b)]) * 1e3)
        print(f"| {m}x{n}x{k} | " + " | ".join(f"{t:.0f}" for t in row) + " |")


if __name__ == "__main__":
    main()
