"""The semantics, in plain PyTorch: the CPU kernel of every op and the tests' float64 reference.

    gemm: D = act(alpha * (A @ B^T) + bias) + beta * residual
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F

from ._validate import check_gemm

ACTIVATION_FNS = {
    "none": lambda x: x,
    "relu": torch.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}


def gemm_reference(
    a: torch.Tensor,
    b: torch.Tensor,
    bias: Optional[torch.Tensor] = None,
    residual: Optional[torch.Tensor] = None,
    activation: str = "none",
    alpha: float = 1.0,
    beta: float = 1.0,
    out_dtype: Optional[torch.dtype] = None,
    config: str = "",
    compute_dtype: torch.dtype = torch.float32,
    cast_output: bool = True,
) -> torch.Tensor:
    """Validated like the op; computes in `compute_dtype` (float64 in tests); `config` is ignored."""
    _, out = check_gemm(a, b, bias, residual, activation, out_dtype, config)
    acc = torch.matmul(a.to(compute_dtype), b.to(compute_dtype).t()) * alpha
    if bias is not None:
        acc = acc + bias.to(compute_dtype)
    acc = ACTIVATION_FNS[activation](acc)
    if residual is not None:
        acc = acc + beta * residual.to(compute_dtype)
    return acc.to(out) if cast_output else acc


def gemm_cpu(a, b, bias=None, residual=None, activation="none", alpha=1.0, beta=1.0, out_dtype=None, config=""):
    """The CPU kernel of cutlass_gemm::gemm: float32 compute, fresh contiguous output."""
    return gemm_reference(a, b, bias, residual, activation, alpha, beta, out_dtype, config).contiguous()


def _expand_scale(s: torch.Tensor, rows: int, cols: int, kind: str, block_rows: int, compute_dtype) -> torch.Tensor:
    """A scale as a [rows, cols] (or broadcastable) factor for the dequantized operand."""
    s = s.to(compute_dtype)
    if kind == "tensor":
        return s.reshape(())
    if kind in ("row", "col"):
        return s.reshape(rows, 1)
    # blockwise: [ceil(rows/block_rows), ceil(cols/128)] -> [rows, cols]
    return s.repeat_interleave(block_rows, 0)[:rows].repeat_interleave(128, 1)[:, :cols]


def scaled_mm_reference(a, b, scale_a, scale_b, bias=None, residual=None, activation="none", beta=1.0,
                        out_dtype=None, accumulate="accurate", config="", compute_dtype=torch.float32,
                        cast_output=True):
    """D = act((A @ B^T) * scale_a * scale_b + bias) + beta * residual, as a dequantized matmul
    (the same value for every granularity: blockwise scales multiply each 128-wide K block)."""
    from ._validate import check_scaled_mm, classify_scale_a, classify_scale_b

    _, out, mode = check_scaled_mm(a, b, scale_a, scale_b, bias, residual, activation, out_dtype, accumulate, config)
    k, n = a.shape[-1], b.shape[0]
    m = 1
    for d in a.shape[:-1]:
        m *= d
    a2 = a.reshape(m, k)
    kb, nb = -(-k // 128), -(-n // 128)
    ka = "block" if mode == "blockwise" else classify_scale_a(scale_a, m, kb)
    kbk = "block" if mode == "blockwise" else classify_scale_b(scale_b, n, nb, kb)
    if mode == "blockwise":  # [1]-shaped scales of a 1-block problem
        scale_a, scale_b = scale_a.reshape(m, kb), scale_b.reshape(nb, kb)
    af = a2.to(compute_dtype) * _expand_scale(scale_a, m, k, ka, 1, compute_dtype)
    bf = b.to(compute_dtype) * _expand_scale(scale_b, n, k, kbk, 128, compute_dtype)
    acc = af @ bf.t()
    if bias is not None:
        acc = acc + bias.to(compute_dtype)
    acc = ACTIVATION_FNS[activation](acc)
    if residual is not None:
        acc = acc + beta * residual.reshape(m, n).to(compute_dtype)
    acc = acc.reshape(tuple(a.shape[:-1]) + (n,))
    return acc.to(out) if cast_output else acc


def scaled_mm_cpu(a, b, scale_a, scale_b, bias=None, residual=None, activation="none", beta=1.0, out_dtype=None,
                  accumulate="accurate", config=""):
    """The CPU kernel of cutlass_gemm::scaled_mm: float32 compute, fresh contiguous output."""
    return scaled_mm_reference(a, b, scale_a, scale_b, bias, residual, activation, beta, out_dtype, accumulate,
                               config).contiguous()
