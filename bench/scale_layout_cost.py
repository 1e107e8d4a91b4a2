"""Cost of handing scaled_mm blockwise scales in a layout other than the one its kernel reads
(MN-major, as quantize_fp8 returns them): K-major scales are transposed into scratch per call.

    python bench/scale_layout_cost.py
"""

from __future__ import annotations

import os
import sys

import torch

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import graph_time_ms  # noqa: E402
else:
    from .timing import graph_time_ms

import cutlass_gemm  # noqa: E402

SHAPES = [(64, 7168, 2048), (4096, 7168, 2048), (4096, 24576, 1536), (77, 4096, 7168)]


def main() -> None:
    print("| M x N x K | native scales us | K-major scales us | extra us |")
    print("|---|---|---|---|")
    for m, n, k in SHAPES:
        a8, sa = cutlass_gemm.quantize_fp8(torch.randn(m, k, device="cuda"), "1x128")
        b8, sb = cutlass_gemm.quantize_fp8(torch.randn(n, k, device="cuda"), "128x128")
        native = graph_time_ms(lambda *x: cutlass_gemm.scaled_mm(*x), [(a8, b8, sa, sb)]) * 1e3
        kmajor = graph_time_ms(lambda *x: cutlass_gemm.scaled_mm(*x), [(a8, b8, sa.contiguous(), sb.contiguous())]) * 1e3
        print(f"| {m}x{n}x{k} | {native:.1f} | {kmajor:.1f} | {kmajor - native:.1f} |")


if __name__ == "__main__":
    main()
