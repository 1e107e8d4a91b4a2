"""Autograd for cutlass_gemm::gemm, in plain PyTorch ops (traceable by torch.compile).

    Z = alpha * (A @ B^T) + bias,   D = act(Z) + beta * R
    dR = beta * dD;   dZ = dD * act'(Z);   dA = alpha * dZ @ B;   dB = alpha * dZ^T @ A;   dbias = sum_rows(dZ)

Z is recomputed in backward with our forward kernel (no activation), so forward saves only its
inputs (as activation checkpointing would). The backward GEMMs run in aten (cuBLAS): they need
NN/TN layouts of dZ, B and A that our TN-only kernel table does not have without a transpose copy.
"""

from __future__ import annotations

import math

import torch

_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def activation_grad(z: torch.Tensor, activation: str) -> torch.Tensor:
    """act'(z), float32, for every activation of kernel_table.ACTIVATIONS."""
    z = z.float()
    if activation == "none":
        return torch.ones_like(z)
    if activation == "relu":
        return (z > 0).to(z.dtype)
    if activation == "gelu":
        cdf = 0.5 * (1.0 + torch.erf(z * (1.0 / math.sqrt(2.0))))
        pdf = torch.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
        return cdf + z * pdf
    if activation == "gelu_tanh":
        u = _SQRT_2_PI * (z + 0.044715 * z * z * z)
        t = torch.tanh(u)
        return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * _SQRT_2_PI * (1.0 + 3 * 0.044715 * z * z)
    if activation == "silu":
        s = torch.sigmoid(z)
        return s * (1.0 + z * (1.0 - s))
    raise ValueError(f"cutlass_gemm: no gradient for activation '{activation}'")


def _setup_context(ctx, inputs, output, keyword_only_inputs=None):
    a, b, bias, residual = inputs  # the schema's positional Tensors; the rest are keyword-only
    kw = keyword_only_inputs or {}
    ctx.activation, ctx.alpha, ctx.beta = kw.get("activation", "none"), kw.get("alpha", 1.0), kw.get("beta", 1.0)
    ctx.has_bias, ctx.has_residual = bias is not None, residual is not None
    ctx.residual_shape = None if residual is None else residual.shape
    ctx.bias_dtype = None if bias is None else bias.dtype
    ctx.save_for_backward(a, b, bias)


def _backward(ctx, grad):
    a, b, bias = ctx.saved_tensors
    k = a.shape[-1]
    a2 = a.reshape(-1, k)
    g2 = grad.reshape(-1, b.shape[0])
    needs = ctx.needs_input_grad
    if ctx.activation == "none":
        dz = g2.float()
    else:
        f32 = _has_f32_out(a.dtype)  # recompute Z in fp32 where the table has it
        zbias = bias.float() if (bias is not None and f32) else bias
        z = torch.ops.cutlass_gemm.gemm.default(a2, b, zbias, alpha=ctx.alpha, out_dtype=torch.float32 if f32 else None)
        dz = g2.float() * activation_grad(z, ctx.activation)
    da = db = dbias = dres = None
    dz16 = dz.to(a.dtype)  # backward GEMMs in the input dtype with FP32 accumulation (cuBLAS), as nn.Linear's
    if needs[0]:
        da = (torch.matmul(dz16, b) * ctx.alpha).reshape(a.shape)
    if needs[1]:
        db = torch.matmul(dz16.t(), a2) * ctx.alpha
    if ctx.has_bias and needs[2]:
        dbias = dz.sum(0).to(ctx.bias_dtype)
    if ctx.has_residual and needs[3]:
        dres = (ctx.beta * grad).reshape(ctx.residual_shape)
    return da, db, dbias, dres


def _has_f32_out(dtype: torch.dtype) -> bool:
    from . import kernel_table as kt
    from ._validate import dtype_key

    return any(k.a == dtype_key(dtype) and k.out == "f32" and k.scale == "none" for k in kt.KERNELS)


def register() -> None:
    torch.library.register_autograd("cutlass_gemm::gemm", _backward, setup_context=_setup_context)
