"""The one validator: the fake kernel and the CPU reference call it; csrc/torch_bindings.cpp
checks the same things in the same order with the same messages for CUDA calls."""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import torch

from . import kernel_table as kt

GEMM = "cutlass_gemm.gemm"
SCALED_MM = "cutlass_gemm.scaled_mm"

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


def check_residual(op, residual, out_shape, out: torch.dtype) -> None:
    """The residual's shape and dtype are the output's (also for callers that add it outside the op:
    nn.Fp8Linear's cast, a row-parallel layer's activation after the all-reduce)."""
    if tuple(residual.shape) != tuple(out_shape):
        fail(op, f"expected residual of shape {shape_str(out_shape)} (the output's), got {shape_str(residual.shape)}")
    if residual.dtype != out:
        fail(op, f"expected residual of dtype {dtype_name(out)} (the output's), got {dtype_name(residual.dtype)}")


def _check_epilogue(op, a, n, out_shape, out, bias, residual, activation) -> None:
    """bias / residual / activation: shared by every op, same order as the C++ check_epilogue."""
    if bias is not None:
        if bias.dim() != 1 or bias.shape[0] != n:
            fail(op, f"expected bias of shape [N] = [{n}], got {shape_str(bias.shape)}")
        if bias.dtype not in (out, torch.float32):
            want = "float32" if out == torch.float32 else f"{dtype_name(out)} or float32"
            fail(op, f"expected bias of dtype {want}, got {dtype_name(bias.dtype)}")
        if bias.device != a.device:
            fail(op, f"expected bias on {device_str(a)} (the device of a), got {device_str(bias)}")
    if residual is not None:
        check_residual(op, residual, out_shape, out)
        if residual.device != a.device:
            fail(op, f"expected residual on {device_str(a)} (the device of a), got {device_str(residual)}")
    if activation not in kt.ACTIVATIONS:
        names = ", ".join(f"'{x}'" for x in kt.ACTIVATIONS)
        fail(op, f"expected activation one of {names}, got '{activation}'")


def _check_config(op, config, family, what, activation, residual) -> None:
    """`config` must name a kernel of the problem's family (a, b, out, scale, accum), with the
    activation node when the call applies an activation and the residual node when it adds a residual.
    A kernel that accumulates in plain FP32 serves either FP8 mode (SM100); the message lists the
    requested mode's."""
    if not config:
        return
    fits = [kk.name for kk in kt.KERNELS if (kk.a, kk.b, kk.out, kk.scale, kk.accum) == family]
    k = kt.KERNELS[kt.KERNEL_IDS[config]] if config in kt.KERNEL_IDS else None
    if k is not None and (k.a, k.b, k.out, k.scale) == family[:4] and kt.serves_accum(k.accum, family[4]):
        if activation != "none" and not k.activation:
            fail(op, f"config '{config}' has no activation in its epilogue; expected activation='none' with it")
        if residual is not None and not k.residual:
            fail(op, f"config '{config}' has no residual in its epilogue; expected residual=None with it")
        return
    if config not in fits:
        head = f"unknown config {kt.unknown_kernel(config)}" if config not in kt.KERNEL_IDS else f"config '{config}' does not serve these inputs"
        fail(op, f"{head}; configs for {what}: {', '.join(fits)}")


def _check_out_dtype(op, out_dtype, default, outs, inputs_name):
    if out_dtype is None:
        return default
    if dtype_key(out_dtype) not in outs:
        names = ["None"] + [kt.TORCH_DTYPE_NAMES[d] for d in outs]
        fail(op, f"expected out_dtype {_list(names, ' or ')} for {inputs_name} inputs, got {dtype_name(out_dtype)}")
    return out_dtype


def _check_a_b(op, a, b, dtypes: Tuple[torch.dtype, ...], dtypes_text: str, same_dtype: bool) -> None:
    if a.dim() < 1:
        fail(op, f"expected a of shape [..., K] (at least 1-D), got {shape_str(a.shape)}")
    if a.dtype not in dtypes:
        fail(op, f"expected a of dtype {dtypes_text}, got {dtype_name(a.dtype)}")
    if b.dim() != 2:
        fail(op, f"expected b of shape [N, K] (2-D), got {shape_str(b.shape)}")
    k = a.shape[-1]
    if b.shape[1] != k:
        fail(op, f"expected b of shape [N, K] = [*, {k}], got {shape_str(b.shape)}")
    if same_dtype and b.dtype != a.dtype:
        fail(op, f"expected b of dtype {dtype_name(a.dtype)} (the dtype of a), got {dtype_name(b.dtype)}")
    if not same_dtype and b.dtype not in dtypes:
        fail(op, f"expected b of dtype {dtypes_text}, got {dtype_name(b.dtype)}")


def _check_device(op, name, t, a) -> None:
    if t.device != a.device:
        fail(op, f"expected {name} on {device_str(a)} (the device of a), got {device_str(t)}")


MAX_DIM = 2147483647  # CUTLASS problem shapes are int


def check_problem_size(op, m: int, n: int, k: int, out: torch.dtype, k_align: int) -> None:
    """As the C++ run_problem, after its empty-output return: M, N padded to 16 bytes of output and
    K padded to 16 bytes of input (at least 1) must fit CUTLASS's int problem shape."""
    if m == 0 or n == 0:
        return
    out_align = 4 if out == torch.float32 else 8
    np_, kp = -(-n // out_align) * out_align, -(-max(k, 1) // k_align) * k_align
    if m > MAX_DIM or np_ > MAX_DIM or kp > MAX_DIM:
        fail(op, f"expected M, N and K each at most {MAX_DIM}, got M = {m}, N = {n}, K = {k}")


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
    _check_a_b(op, a, b, (torch.bfloat16, torch.float16), "bfloat16 or float16", same_dtype=True)
    _check_device(op, "b", b, a)
    in_key = dtype_key(a.dtype)
    out = _check_out_dtype(op, out_dtype, a.dtype, out_dtypes_for(in_key, "none"), dtype_name(a.dtype))
    out_shape = tuple(a.shape[:-1]) + (b.shape[0],)
    _check_epilogue(op, a, b.shape[0], out_shape, out, bias, residual, activation)
    _check_config(op, config, (in_key, in_key, dtype_key(out), "none", "f32"),
                  f"{dtype_name(a.dtype)} -> {dtype_name(out)}", activation, residual)
    check_problem_size(op, math.prod(out_shape[:-1]), b.shape[0], a.shape[-1], out, k_align=8)
    return out_shape, out


FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)
ACCUMULATE = {"accurate": "promoted", "fast": "fast"}


def fp8_pairs() -> List[Tuple[str, str]]:
    """(a, b) FP8 dtype pairs some kernel serves, in table order."""
    pairs: List[Tuple[str, str]] = []
    for kk in kt.KERNELS:
        if kk.scale != "none" and (kk.a, kk.b) not in pairs:
            pairs.append((kk.a, kk.b))
    return pairs


def classify_scale_a(s: torch.Tensor, m: int, kb: int) -> Optional[str]:
    """"tensor" (one value), "row" ([M] or [M, 1]) or "block" ([M, ceil(K/128)]); None: no fit."""
    shape = tuple(s.shape)
    if s.numel() == 1:
        return "tensor"
    if shape in ((m,), (m, 1)):
        return "row"
    if shape == (m, kb):
        return "block"
    return None


def classify_scale_b(s: torch.Tensor, n: int, nb: int, kb: int) -> Optional[str]:
    """"tensor", "col" ([N] or [N, 1]) or "block" ([ceil(N/128), ceil(K/128)]); None: no fit."""
    shape = tuple(s.shape)
    if s.numel() == 1:
        return "tensor"
    if shape in ((n,), (n, 1)):
        return "col"
    if shape == (nb, kb):
        return "block"
    return None


def check_scaled_mm(a, b, scale_a, scale_b, bias, residual, activation, out_dtype, accumulate, config):
    """Returns (output shape, output dtype, scale mode) or raises naming what was expected.
    The scale mode follows the scales' shapes: "tensor_row_col" or "blockwise"."""
    op = SCALED_MM
    _check_a_b(op, a, b, FP8, "float8_e4m3fn or float8_e5m2", same_dtype=False)
    pair = (dtype_key(a.dtype), dtype_key(b.dtype))
    pairs = fp8_pairs()
    if pair not in pairs:
        names = [f"{kt.TORCH_DTYPE_NAMES[x]} x {kt.TORCH_DTYPE_NAMES[y]}" for x, y in pairs]
        fail(op, f"expected a x b of {_list(names, ' or ')}, got {dtype_name(a.dtype)} x {dtype_name(b.dtype)}")
    _check_device(op, "b", b, a)
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s.dtype != torch.float32:
            fail(op, f"expected {name} of dtype float32, got {dtype_name(s.dtype)}")
        _check_device(op, name, s, a)
    k, n = a.shape[-1], b.shape[0]
    m = math.prod(a.shape[:-1])
    kb, nb = -(-k // 128), -(-n // 128)
    ka = classify_scale_a(scale_a, m, kb)
    if ka is None:
        fail(op, f"expected scale_a of shape [1] (per-tensor), [M, 1] = [{m}, 1] (per-row) or "
                 f"[M, ceil(K/128)] = [{m}, {kb}] (blockwise 1x128), got {shape_str(scale_a.shape)}")
    kb_ = classify_scale_b(scale_b, n, nb, kb)
    if kb_ is None:
        fail(op, f"expected scale_b of shape [1] (per-tensor), [N, 1] = [{n}, 1] (per-column) or "
                 f"[ceil(N/128), ceil(K/128)] = [{nb}, {kb}] (blockwise 128x128), got {shape_str(scale_b.shape)}")
    a_block_ok = tuple(scale_a.shape) == (m, kb) or (m * kb == 1 and scale_a.numel() == 1)
    b_block_ok = tuple(scale_b.shape) == (nb, kb) or (nb * kb == 1 and scale_b.numel() == 1)
    # A one-element scale is per-tensor, unless a forced blockwise kernel reads it as the only block.
    forced_block = config in kt.KERNEL_IDS and kt.KERNELS[kt.KERNEL_IDS[config]].scale == "blockwise"
    block = "block" in (ka, kb_) or (forced_block and a_block_ok and b_block_ok)
    mode = "blockwise" if block else "tensor_row_col"
    if mode == "blockwise":
        if not a_block_ok:
            fail(op, f"expected scale_a of shape [M, ceil(K/128)] = [{m}, {kb}] (blockwise 1x128) to go with a "
                     f"blockwise scale_b, got {shape_str(scale_a.shape)}")
        if not b_block_ok:
            fail(op, f"expected scale_b of shape [ceil(N/128), ceil(K/128)] = [{nb}, {kb}] (blockwise 128x128) to go "
                     f"with a blockwise scale_a, got {shape_str(scale_b.shape)}")
        if pair != ("e4m3", "e4m3"):
            fail(op, f"expected a x b of float8_e4m3fn x float8_e4m3fn for blockwise scales, got "
                     f"{dtype_name(a.dtype)} x {dtype_name(b.dtype)}")
    outs = sorted({kk.out for kk in kt.KERNELS if (kk.a, kk.b, kk.scale) == (*pair, mode)}, key=kt.DTYPES.index)
    out = _check_out_dtype(op, out_dtype, torch.bfloat16, outs, f"{dtype_name(a.dtype)} x {dtype_name(b.dtype)}")
    out_shape = tuple(a.shape[:-1]) + (n,)
    _check_epilogue(op, a, n, out_shape, out, bias, residual, activation)
    if accumulate not in ACCUMULATE:
        fail(op, f"expected accumulate 'accurate' or 'fast', got '{accumulate}'")
    accum = "promoted" if mode == "blockwise" else ACCUMULATE[accumulate]
    _check_config(op, config, (*pair, dtype_key(out), mode, accum),
                  f"{dtype_name(a.dtype)} x {dtype_name(b.dtype)} -> {dtype_name(out)} ({mode}, {accum})", activation,
                  residual)
    check_problem_size(op, m, n, k, out, k_align=16)
    return out_shape, out, mode
