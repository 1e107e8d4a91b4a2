"""FP8 quantization helpers producing the scales `scaled_mm` reads, in its native layouts.

    x8, s = quantize_fp8(x, "row")      # x ~= x8.float() * s

Granularities (x is [R, C]; for a weight b [N, K] use "row": one scale per output channel):
    "tensor"   s [1]
    "row"      s [R, 1]                     (per-token for a, per-channel for b)
    "column"   s [1, C]
    "1x128"    s [R, ceil(C/128)]           returned M-major, rows padded to 4 (s.stride() == (1,
                                            round_up(R, 4))): zero-copy for a
    "128x128"  s [ceil(R/128), ceil(C/128)] returned N-major (s.t() is contiguous): zero-copy for b

Rules: scale = max(amax(|group|) / max(dtype), 2^-126) in float32 (float64 input: the quotient is
taken in float64, then rounded; a float64 group beyond ~1.5e41 gets an infinite scale; the floor, float32's smallest
normal, only matters for groups below ~5e-36: their values then stay in range); a group whose
amax is 0 gets scale 1 (it quantizes to zeros); q = x / scale as a float32 quotient (float64 for
float64 x) rounded to nearest-even FP8 -- two roundings, as torch's FP8 casts of a float32 division:
a quotient within float32 rounding of an FP8 tie can land one FP8 step from the exactly rounded
value (a few per 1e5 on random bf16 data) --, never
beyond +-max(dtype) for finite input (|x| <= amax = scale * max, and the float32 quotient's
rounding stays far below the next FP8 rounding boundary, so no clamp pass is needed: the result
equals clamp(x / scale) bit for bit). No check for inf/NaN (it would sync): a non-finite value
makes its group's scale and values non-finite, and scaled_mm then propagates them. The outputs
carry no autograd history (quantization is not differentiable).

Speed (activations are quantized on every Fp8Linear call; `python bench/quant_cost.py` measures
it against the GEMM): on CUDA, per-token and 1x128 quantization of a 16/32-bit tensor with unit
column stride runs one kernel of this library (torch.ops.cutlass_gemm._quantize_fp8_rows_: one
read of x, one write of q; bit-identical to the eager CUDA formulation below;
CUTLASS_GEMM_QUANT_KERNEL=0 turns it off). Otherwise: the eager path reads x twice and writes the FP8 values once -- one inf-norm
reduction (NaN-propagating, in x's dtype: exact), a handful of tiny kernels on the scales, and
one division that computes in float32 and stores FP8 directly (`torch.div(..., out=fp8)`) -- where
a naive float32 formulation makes ~7 full passes. With CUTLASS_GEMM_QUANT_COMPILE=1 (opt-in: on
the H200's torch 2.11 Inductor's Triton build of it failed, "PassManager::run failed"), outside
torch.compile tracing and CUDA graph capture, per-token and 1x128 quantization of a tensor of at
least 2^18 elements on CUDA goes through the same function compiled by Inductor into one kernel
(lazily, on first use per granularity and dtype pair, dynamic shapes). If that compile fails the eager path
is used from then on (with a warning). When the caller is itself being compiled, the eager
formulation is traced and Inductor fuses it into the caller's graph; during CUDA graph capture
the eager path runs (capture-safe: no syncs, no compilation inside a capture).
"""

from __future__ import annotations

import os
import warnings
from typing import Dict, Tuple

import torch

GRANULARITIES = ("tensor", "row", "column", "1x128", "128x128")
_FLT_MIN = torch.finfo(torch.float32).tiny  # 2^-126


def _scale(amax: torch.Tensor, fmax: float) -> torch.Tensor:
    """float32 scales from group amax values (any float dtype, exact): 1 where amax == 0; a NaN
    amax stays NaN (clamp propagates it). A float64 amax is divided before it is rounded to float32:
    float64 groups up to float32's max x max(dtype) (~1.5e41 for e4m3) keep a finite scale (rounding
    amax first made the scale of a 2e39 group infinite and its values NaN)."""
    a = (amax / fmax).float() if amax.dtype == torch.float64 else amax.float() / fmax
    return torch.where(a == 0, 1.0, a.clamp_min_(_FLT_MIN))


def _divide(x: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x / scale (broadcast) computed in float32 (float64 for float64 x) and stored as `dtype`."""
    if torch.compiler.is_compiling():  # traced: Inductor fuses the cast into the division
        return (x.float() / scale).to(dtype)
    q = torch.empty(torch.broadcast_shapes(x.shape, scale.shape), dtype=dtype, device=x.device)
    torch.div(x, scale, out=q)  # one pass: float32 math, FP8 store
    return q


def _absmax(x: torch.Tensor, dim=None, keepdim: bool = False) -> torch.Tensor:
    """max |x| over `dim` in x's dtype (exact), one read of x, NaN propagating."""
    return torch.linalg.vector_norm(x, float("inf"), dim=dim, keepdim=keepdim)


def _pad_to(x: torch.Tensor, br: int, bc: int) -> torch.Tensor:
    r, c = x.shape
    pr, pc = -(-r // br) * br, -(-c // bc) * bc
    return x if (pr, pc) == (r, c) else torch.nn.functional.pad(x, (0, pc - c, 0, pr - r))


def _quantize(x: torch.Tensor, granularity: str, dtype: torch.dtype) -> Tuple[torch.Tensor, torch.Tensor]:
    """The implementation (validated input). Eager, traceable, and what the CUDA fast path compiles."""
    fmax = torch.finfo(dtype).max
    r, c = x.shape
    if granularity == "tensor":
        amax = _absmax(x).reshape(1) if x.numel() else x.new_zeros(1)
        scale = _scale(amax, fmax)
        return _divide(x, scale, dtype), scale
    if granularity == "row":
        amax = _absmax(x, dim=1, keepdim=True) if c else x.new_zeros(r, 1)
        scale = _scale(amax, fmax)
        return _divide(x, scale, dtype), scale
    if granularity == "column":
        amax = _absmax(x, dim=0, keepdim=True) if r else x.new_zeros(1, c)
        scale = _scale(amax, fmax)
        return _divide(x, scale, dtype), scale
    br = 1 if granularity == "1x128" else 128
    xp = _pad_to(x, br, 128)  # zeros: they change no amax
    nr, nc = xp.shape[0] // br, xp.shape[1] // 128
    blocks = xp.reshape(nr, br, nc, 128)
    if br == 1:
        amax = _absmax(blocks, dim=3, keepdim=True)  # [nr, 1, nc, 1]
    else:
        amax = blocks.abs().amax(dim=(1, 3), keepdim=True)  # weights: once per load
    scale = _scale(amax, fmax)
    q = _divide(blocks, scale, dtype).reshape(xp.shape)
    if q.shape != x.shape:
        q = q[:r, :c].contiguous()
    scale = scale.reshape(nr, nc)
    # MN-major: the layout the blockwise kernels read.
    if br == 1:
        return q, _mn_major_padded(scale)
    return q, scale.t().contiguous().t()


def _m_ld(rows: int) -> int:
    """The leading dimension scaled_mm's TMA reads 1x128 scales with: M rounded up to 4 (16 bytes)."""
    return -(-rows // 4) * 4


def _mn_major_padded(scale: torch.Tensor) -> torch.Tensor:
    """[M, kb] 1x128 scales as the [M, kb] view of a [kb, round_up(M, 4)] buffer: what scaled_mm reads
    in place. Contiguous M-major scales with M % 4 != 0 (every decode step of M = 1-3) were copied
    by scaled_mm on every call. The padding is never read for an output row."""
    rows, kb = scale.shape
    buf = scale.new_empty((kb, _m_ld(rows)))
    buf[:, :rows].copy_(scale.t())
    return buf.t()[:rows]


# --- CUDA fast path: the same function, compiled once per (granularity, dtypes) --------------

_COMPILED: Dict[str, object] = {}
_COMPILE_FAILED = False
_FAST = ("row", "1x128")


# Below this many elements the eager path's few kernels are launch-bound either way, and the
# compiled function's guard evaluation would cost more host time than it saves GPU time.
_COMPILE_MIN_NUMEL = 1 << 18


def _use_compiled(x: torch.Tensor, granularity: str) -> bool:
    return (not torch.compiler.is_compiling() and granularity in _FAST and x.is_cuda and not _COMPILE_FAILED
            and x.numel() >= _COMPILE_MIN_NUMEL and os.environ.get("CUTLASS_GEMM_QUANT_COMPILE", "0") == "1"
            and not torch.cuda.is_current_stream_capturing())


def _options() -> dict:
    # IEEE float32 division in the generated kernel (Triton's `/` is approximate), so the compiled
    # path matches eager bit for bit; the option exists in newer torch versions only.
    import torch._inductor.config as inductor_config

    numerics = getattr(inductor_config, "eager_numerics", None)
    return {"eager_numerics.division_rounding": True} if hasattr(numerics, "division_rounding") else {}


def _quantize_row(x, dtype):
    return _quantize(x, "row", dtype)


def _quantize_1x128(x, dtype):
    return _quantize(x, "1x128", dtype)


def _compiled(granularity: str):
    fn = _COMPILED.get(granularity)
    if fn is None:
        # One function (code object) per granularity: each has its own recompile budget, spent
        # per input/FP8 dtype pair and M == 1 (which dynamic shapes specialize).
        impl = {"row": _quantize_row, "1x128": _quantize_1x128}[granularity]
        fn = _COMPILED[granularity] = torch.compile(impl, dynamic=True, fullgraph=True, options=_options())
    return fn


def _use_kernel(x: torch.Tensor, granularity: str) -> bool:
    """The CUDA kernel (torch.ops.cutlass_gemm._quantize_fp8_rows_) serves per-token and 1x128
    quantization of 16/32-bit CUDA tensors with unit column stride, outside torch.compile tracing
    (there the eager formulation is traced and fused). CUTLASS_GEMM_QUANT_KERNEL=0 turns it off."""
    return (granularity in _FAST and x.is_cuda and x.dtype in (torch.bfloat16, torch.float16, torch.float32)
            and x.stride(-1) == 1 and x.numel() > 0 and not torch.compiler.is_compiling()
            and os.environ.get("CUTLASS_GEMM_QUANT_KERNEL", "1") != "0")


_QUANTIZE_ROWS = None


def _quantize_rows_op():
    """torch.ops.cutlass_gemm._quantize_fp8_rows_.default, looked up once (~1.3 us per lookup)."""
    global _QUANTIZE_ROWS
    if _QUANTIZE_ROWS is None:
        _QUANTIZE_ROWS = torch.ops.cutlass_gemm._quantize_fp8_rows_.default
    return _QUANTIZE_ROWS


def _quantize_kernel(x: torch.Tensor, granularity: str, dtype: torch.dtype) -> Tuple[torch.Tensor, torch.Tensor]:
    r, c = x.shape
    q = torch.empty((r, c), dtype=dtype, device=x.device)
    if granularity == "row":
        scale = torch.empty((r, 1), dtype=torch.float32, device=x.device)
    else:  # MN-major [R, ceil(C/128)] with R padded to 4, as the eager path returns it
        scale = torch.empty((-(-c // 128), _m_ld(r)), dtype=torch.float32, device=x.device).t()[:r]
    _quantize_rows_op()(x, q, scale, 0 if granularity == "row" else 128)
    return q, scale


def _quantize_fast(x: torch.Tensor, granularity: str, dtype: torch.dtype) -> Tuple[torch.Tensor, torch.Tensor]:
    global _COMPILE_FAILED
    try:
        with torch.no_grad():
            return _compiled(granularity)(x, dtype)
    except Exception as e:  # pragma: no cover - depends on the toolchain (Triton, compiler)
        _COMPILE_FAILED = True
        warnings.warn(f"cutlass_gemm.quantize_fp8: the compiled CUDA path failed ({type(e).__name__}: {e}); "
                      "using the eager path from now on", stacklevel=3)
        return _quantize(x, granularity, dtype)


INPUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32, torch.float64)


def quantize_fp8(x: torch.Tensor, granularity: str = "row", dtype: torch.dtype = torch.float8_e4m3fn
                 ) -> Tuple[torch.Tensor, torch.Tensor]:
    if granularity not in GRANULARITIES:
        raise ValueError(f"cutlass_gemm.quantize_fp8: expected granularity one of {GRANULARITIES}, got '{granularity}'")
    if dtype not in (torch.float8_e4m3fn, torch.float8_e5m2):
        raise ValueError(f"cutlass_gemm.quantize_fp8: expected dtype float8_e4m3fn or float8_e5m2, got {dtype}")
    if x.dim() != 2 or x.dtype not in INPUT_DTYPES:
        raise ValueError("cutlass_gemm.quantize_fp8: expected a 2-D bfloat16, float16, float32 or float64 x, got "
                         f"{tuple(x.shape)} {x.dtype}")
    x = x.detach()  # not differentiable: the outputs carry no autograd history
    if _use_kernel(x, granularity):
        return _quantize_kernel(x, granularity, dtype)
    if _use_compiled(x, granularity):
        return _quantize_fast(x, granularity, dtype)
    return _quantize(x, granularity, dtype)
