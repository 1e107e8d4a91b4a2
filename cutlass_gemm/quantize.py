"""FP8 quantization helpers producing the scales `scaled_mm` reads, in its native layouts.

    x8, s = quantize_fp8(x, "row")      # x ~= x8.float() * s

Granularities (x is [R, C]; for a weight b [N, K] use "row": one scale per output channel):
    "tensor"   s [1]
    "row"      s [R, 1]                     (per-token for a, per-channel for b)
    "column"   s [1, C]
    "1x128"    s [R, ceil(C/128)]           returned M-major (s.t() is contiguous): zero-copy for a
    "128x128"  s [ceil(R/128), ceil(C/128)] returned N-major (s.t() is contiguous): zero-copy for b

Rules: scale = amax(|group|) / max(dtype); a group whose amax is 0 gets scale 1 (it quantizes to
zeros); values are clamped to +-max(dtype) before the cast (no overflow for finite input). No
check for inf/NaN (it would sync): a non-finite value makes its group's scale and values
non-finite, and scaled_mm then propagates them.
"""

from __future__ import annotations

from typing import Tuple

import torch

GRANULARITIES = ("tensor", "row", "column", "1x128", "128x128")


def _blocks(x: torch.Tensor, br: int, bc: int) -> torch.Tensor:
    """amax over [br, bc] blocks of x (zero-padded to whole blocks): [ceil(R/br), ceil(C/bc)]."""
    r, c = x.shape
    pr, pc = -(-r // br) * br, -(-c // bc) * bc
    xp = torch.nn.functional.pad(x.abs().float(), (0, pc - c, 0, pr - r))
    return xp.reshape(pr // br, br, pc // bc, bc).amax(dim=(1, 3))


def quantize_fp8(x: torch.Tensor, granularity: str = "row", dtype: torch.dtype = torch.float8_e4m3fn
                 ) -> Tuple[torch.Tensor, torch.Tensor]:
    if granularity not in GRANULARITIES:
        raise ValueError(f"cutlass_gemm.quantize_fp8: expected granularity one of {GRANULARITIES}, got '{granularity}'")
    if dtype not in (torch.float8_e4m3fn, torch.float8_e5m2):
        raise ValueError(f"cutlass_gemm.quantize_fp8: expected dtype float8_e4m3fn or float8_e5m2, got {dtype}")
    if x.dim() != 2 or not x.is_floating_point():
        raise ValueError(f"cutlass_gemm.quantize_fp8: expected a 2-D floating-point x, got {tuple(x.shape)} {x.dtype}")
    fmax = torch.finfo(dtype).max
    r, c = x.shape
    xf = x.float()
    if granularity == "tensor":
        amax = xf.abs().amax().reshape(1) if x.numel() else xf.new_zeros(1)
    elif granularity == "row":
        amax = xf.abs().amax(dim=1, keepdim=True) if c else xf.new_zeros(r, 1)
    elif granularity == "column":
        amax = xf.abs().amax(dim=0, keepdim=True) if r else xf.new_zeros(1, c)
    elif granularity == "1x128":
        amax = _blocks(xf, 1, 128)
    else:
        amax = _blocks(xf, 128, 128)
    scale = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
    if granularity == "1x128":
        full = scale.repeat_interleave(128, 1)[:, :c]
    elif granularity == "128x128":
        full = scale.repeat_interleave(128, 0)[:r].repeat_interleave(128, 1)[:, :c]
    else:
        full = scale
    q = (xf / full).clamp(-fmax, fmax).to(dtype)
    if granularity in ("1x128", "128x128"):
        scale = scale.t().contiguous().t()  # MN-major: the layout the SM90 blockwise kernel reads
    return q, scale
