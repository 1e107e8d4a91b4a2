"""The one validator: the fake kernel and the CPU reference call it; csrc/torch_bindings.cpp
checks the same things in the same order with the same messages for CUDA calls."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch

from . import kernel_table as kt

GEMM = "cutlass_gemm.gemm"

_DTYPE_KEYS = {
    torch.bfloat16: "bf16",
    torch.float16: "f16",
    torch.float32: "f32",
    torch.float8_e4m3fn: "e4m3",
    torch.float8_e5m2: "e5m2",
}
_KEY_DTYPES = {v: k for k, v in _DTYPE_KEYS.items()}


def dtype_key(dtype: torch.dtype) -> Optional[str]:
    return _DTYPE_KEYS.get(dtype)


def torch_dtype(key: str) -> torch.dtype:
    return _KEY_DTYPES[key]


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def shape_str(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def device_str(t: torch.Tensor) -> str:
    return str(t.device) if t.device.type != "cuda" else f"cuda:{t.device.index if t.device.index is not None else 0}"


def fail(op: str, msg: str):
    raise RuntimeError(f"{op}: {msg}")


def out_dtypes_for(a: str, scale: str) -> List[str]:
    """Output dtypes some kernel of the table offers for input dtype `a`, in DTYPES order."""
    outs = {k.out for k in kt.KERNELS if k.a == a and k.scale == scale}
    return [d for d in kt.DTYPES if d in outs]


def _list(items: List[str], last_sep: str) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + last_sep + items[-1]


def check_gemm(
    a: torch.Tensor,
    b: torch.Tensor,
    bias: Optional[torch.Tensor],
    residual: Optional[torch.Tensor],
    activation: str,
    out_dtype: Optional[torch.dtype],
    config: str,
) -> Tuple[Tuple[int, ...], torch.dtype]:
    """Returns (output shape, output dtype) or raises RuntimeError naming what was expected."""
    op = GEMM
    if a.dim() < 1:
        fail(op, f"expected a of shape [..., K] (at least 1-D), got {shape_str(a.shape)}")
    if a.dtype not in (torch.bfloat16, torch.float16):
        fail(op, f"expected a of dtype bfloat16 or float16, got {dtype_name(a.dtype)}")
    if b.dim() != 2:
        fail(op, f"expected b of shape [N, K] (2-D), got {shape_str(b.shape)}")
    k = a.shape[-1]
    if b.shape[1] != k:
        fail(op, f"expected b of shape [N, K] = [*, {k}], got {shape_str(b.shape)}")
    if b.dtype != a.dtype:
        fail(op, f"expected b of dtype {dtype_name(a.dtype)} (the dtype of a), got {dtype_name(b.dtype)}")
    if b.device != a.device:
        fail(op, f"expected b on {device_str(a)} (the device of a), got {device_str(b)}")
    in_key = dtype_key(a.dtype)
    outs = out_dtypes_for(in_key, "none")
    out = a.dtype
    if out_dtype is not None:
        if dtype_key(out_dtype) not in outs:
            names = ["None"] + [kt.TORCH_DTYPE_NAMES[d] for d in outs]
            fail(
                op,
                f"expected out_dtype {_list(names, ' or ')} for {dtype_name(a.dtype)} inputs, "
                f"got {dtype_name(out_dtype)}",
            )
        out = out_dtype
    n = b.shape[0]
    out_shape = tuple(a.shape[:-1]) + (n,)
    if bias is not None:
        if bias.dim() != 1 or bias.shape[0] != n:
            fail(op, f"expected bias of shape [N] = [{n}], got {shape_str(bias.shape)}")
        if bias.dtype not in (out, torch.float32):
            fail(op, f"expected bias of dtype {dtype_name(out)} or float32, got {dtype_name(bias.dtype)}")
        if bias.device != a.device:
            fail(op, f"expected bias on {device_str(a)} (the device of a), got {device_str(bias)}")
    if residual is not None:
        if tuple(residual.shape) != out_shape:
            fail(op, f"expected residual of shape {shape_str(out_shape)} (the output's), got {shape_str(residual.shape)}")
        if residual.dtype != out:
            fail(op, f"expected residual of dtype {dtype_name(out)} (the output's), got {dtype_name(residual.dtype)}")
        if residual.device != a.device:
            fail(op, f"expected residual on {device_str(a)} (the device of a), got {device_str(residual)}")
    if activation not in kt.ACTIVATIONS:
        names = ", ".join(f"'{x}'" for x in kt.ACTIVATIONS)
        fail(op, f"expected activation one of {names}, got '{activation}'")
    if config:
        family = (in_key, in_key, dtype_key(out), "none", "f32")
        fits = [kk.name for kk in kt.KERNELS if (kk.a, kk.b, kk.out, kk.scale, kk.accum) == family]
        if config not in fits:
            what = f"unknown config '{config}'" if config not in kt.KERNEL_IDS else f"config '{config}' does not serve these inputs"
            fail(op, f"{what}; configs for {dtype_name(a.dtype)} -> {dtype_name(out)}: {', '.join(fits)}")
    return out_shape, out
