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
