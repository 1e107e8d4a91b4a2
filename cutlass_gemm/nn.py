"""Drop-in modules. Both are `nn.Linear` subclasses (same parameters, same state_dict keys), so
tensor-parallel styles and other tooling that accept nn.Linear accept them.

    Linear(in, out, bias=True, activation="none")      y = act(x @ W^T + b)          (gemm)
    Fp8Linear(in, out, bias=True, activation="none",   y = act((x8 @ W8^T) sx sw + b) (scaled_mm)
              weight_granularity="row" | "128x128")
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple

import torch

from . import distributed as _tp
from . import kernel_table as kt
from ._ops import gemm, scaled_mm
from ._validate import check_residual, dtype_name, shape_str
from .quantize import INPUT_DTYPES as _FP8_LINEAR_INPUTS  # what quantize_fp8 takes
from .quantize import quantize_fp8

def _check_activation(activation: str) -> str:
    if activation not in kt.ACTIVATIONS:
        names = ", ".join(f"'{a}'" for a in kt.ACTIVATIONS)
        raise ValueError(f"cutlass_gemm.nn: expected activation one of {names}, got '{activation}'")
    return activation


class Linear(torch.nn.Linear):
    """nn.Linear computed by cutlass_gemm.gemm, with an optional fused activation and residual.

    forward(x, residual=None) = act(x @ weight^T + bias) + residual
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None,
                 activation: str = "none"):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.activation = _check_activation(activation)

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, activation: str = "none") -> "Linear":
        """A Linear sharing `linear`'s parameters (no copy)."""
        m = cls.__new__(cls)
        torch.nn.Module.__init__(m)
        m.in_features, m.out_features = linear.in_features, linear.out_features
        m.weight, m.bias = linear.weight, linear.bias
        m.activation = _check_activation(activation)
        return m

    def forward(self, x: torch.Tensor, residual: Optional[torch.Tensor] = None) -> torch.Tensor:
        w = self.weight  # a parameter lookup goes through Module.__getattr__: ~1.8 us each, so once
        if _tp.is_dtensor(w):  # tensor parallel (see cutlass_gemm.distributed)
            return _tp.linear_forward(self, x, residual)
        return gemm(x, w, bias=self.bias, residual=residual, activation=self.activation)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", activation={self.activation}"


class Fp8Linear(torch.nn.Linear):
    """nn.Linear computed in FP8 by cutlass_gemm.scaled_mm.

    The weight is quantized once (per output channel, "row", or DeepSeek 128x128 blocks) into
    the attributes `weight_fp8` / `weight_scale`, re-derived by `quantize_weight()`, on
    load_state_dict and after every `.to()` / `.cuda()` / `.half()` (plain attributes, not
    buffers: a module-wide dtype cast must not turn them into bf16, and tensor-parallel styles
    must not replicate them; under TP they are sharded like `weight`); activations are quantized
    on the fly per token ("row") or per 1x128 block to match. `weight` stays the high-precision
    master copy (state_dict compatible with nn.Linear). Output dtype: bfloat16.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None,
                 activation: str = "none", weight_granularity: str = "row", accumulate: str = "accurate"):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self._setup(activation, weight_granularity, accumulate)
        self.quantize_weight()

    def _setup(self, activation, weight_granularity, accumulate):
        if weight_granularity not in ("row", "128x128"):
            raise ValueError(f"cutlass_gemm.nn.Fp8Linear: expected weight_granularity 'row' or '128x128', got '{weight_granularity}'")
        if accumulate not in ("accurate", "fast"):
            raise ValueError(f"cutlass_gemm.nn.Fp8Linear: expected accumulate 'accurate' or 'fast', got '{accumulate}'")
        self.activation = _check_activation(activation)
        self.weight_granularity = weight_granularity
        self.input_granularity = "row" if weight_granularity == "row" else "1x128"
        self.accumulate = accumulate

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, activation: str = "none", weight_granularity: str = "row",
                    accumulate: str = "accurate") -> "Fp8Linear":
        m = cls.__new__(cls)
        torch.nn.Module.__init__(m)
        m.in_features, m.out_features = linear.in_features, linear.out_features
        m.weight, m.bias = linear.weight, linear.bias
        m._setup(activation, weight_granularity, accumulate)
        m.quantize_weight()
        return m

    @torch.no_grad()
    def quantize_weight(self) -> None:
        """(Re)quantize `weight` into `weight_fp8` / `weight_scale`."""
        if _tp.is_dtensor(self.weight):  # sharded by a TP style: shard the FP8 copy the same way
            w8, sw = _tp.quantize_weight_sharded(self.weight.detach(), self.weight_granularity)
        else:
            w8, sw = quantize_fp8(self.weight.detach(), self.weight_granularity)
        self.weight_fp8, self.weight_scale = w8, sw

    def _apply(self, fn, recurse=True):
        super()._apply(fn, recurse)
        self.quantize_weight()  # the FP8 copy follows the moved/cast master weight
        return self

    def _load_from_state_dict(self, *args, **kwargs):
        super()._load_from_state_dict(*args, **kwargs)
        self.quantize_weight()  # the FP8 copy follows the loaded master weight

    def _check_inputs(self, x: torch.Tensor, residual: Optional[torch.Tensor]) -> None:
        """What forward reshapes and casts before the op sees it: x's features and dtype, the
        residual's shape (the output's) and dtype (x's, which is the output's)."""
        name = "cutlass_gemm.nn.Fp8Linear"
        if x.dim() < 1 or x.shape[-1] != self.in_features:
            raise RuntimeError(f"{name}: expected x of shape [..., in_features] = [..., {self.in_features}], "
                               f"got {shape_str(x.shape)}")
        if x.dtype not in _FP8_LINEAR_INPUTS:
            raise RuntimeError(f"{name}: expected x of dtype bfloat16, float16, float32 or float64, got "
                               f"{dtype_name(x.dtype)}")
        if residual is not None:  # the output is x's dtype (the kernel writes bf16, cast after)
            check_residual(name, residual, (*x.shape[:-1], self.out_features), x.dtype)

    def forward(self, x: torch.Tensor, residual: Optional[torch.Tensor] = None) -> torch.Tensor:
        self._check_inputs(x, residual)
        if _tp.is_dtensor(self.weight):  # tensor parallel (see cutlass_gemm.distributed)
            return _tp.fp8_linear_forward(self, x, residual)
        lead = x.shape[:-1]
        x8, sx = quantize_fp8(x.reshape(-1, x.shape[-1]), self.input_granularity)
        bias = self.bias
        if bias is not None and bias.dtype not in (torch.bfloat16, torch.float32):
            bias = bias.float()
        res = None if residual is None else residual.reshape(-1, self.out_features).to(torch.bfloat16)
        y = scaled_mm(x8, self.weight_fp8, sx, self.weight_scale, bias=bias, residual=res,
                      activation=self.activation, accumulate=self.accumulate)
        y = y.reshape(*lead, self.out_features)
        return y if x.dtype == torch.bfloat16 else y.to(x.dtype)  # the kernel writes bf16

    def extra_repr(self) -> str:
        return (super().extra_repr() + f", activation={self.activation}, weight={self.weight_granularity}, "
                f"input={self.input_granularity}, accumulate={self.accumulate}")


# ---------------------------------------------------------------------------------------------


@dataclass
class ConversionReport:
    converted: List[str] = field(default_factory=list)
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # (name, reason)

    def __str__(self) -> str:
        lines = [f"converted {len(self.converted)} Linear layers, skipped {len(self.skipped)}"]
        lines += [f"  skipped {n}: {why}" for n, why in self.skipped]
        return "\n".join(lines)


def _eligible(name: str, lin: torch.nn.Linear, fp8: bool) -> Optional[str]:
    """None if `lin` can be served, else the reason it is skipped."""
    w = lin.weight
    if w.dtype not in (torch.bfloat16, torch.float16) and not fp8:
        return f"weight dtype {str(w.dtype).replace('torch.', '')} (gemm takes bfloat16 or float16)"
    if fp8 and not w.is_floating_point():
        return f"weight dtype {w.dtype} is not floating point"
    if lin.bias is not None and not fp8 and lin.bias.dtype not in (w.dtype, torch.float32):
        return f"bias dtype {lin.bias.dtype} differs from the weight's"
    return None


def convert(model: torch.nn.Module, *, fp8: bool = False, weight_granularity: str = "row",
            accumulate: str = "accurate", include: Optional[Callable[[str, torch.nn.Linear], bool]] = None,
            exclude: Tuple[str, ...] = ("lm_head",)) -> ConversionReport:
    """Swap eligible nn.Linear modules of `model` in place for cutlass_gemm.nn.Linear (or
    Fp8Linear with fp8=True), sharing their parameters. `include(name, module)` filters;
    names containing any of `exclude` are skipped (default: the LM head, kept in high precision).
    Returns which layers were converted and why others were skipped."""
    report = ConversionReport()
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if type(child) is not torch.nn.Linear:
                continue
            name = f"{parent_name}.{child_name}" if parent_name else child_name
            if any(x in name for x in exclude):
                report.skipped.append((name, "excluded by name"))
                continue
            if include is not None and not include(name, child):
                report.skipped.append((name, "not selected by include"))
                continue
            reason = _eligible(name, child, fp8)
            if reason:
                report.skipped.append((name, reason))
                continue
            new = (Fp8Linear.from_linear(child, weight_granularity=weight_granularity, accumulate=accumulate)
                   if fp8 else Linear.from_linear(child))
            setattr(parent, child_name, new)
            report.converted.append(name)
    return report
