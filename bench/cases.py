"""What is benchmarked, per op configuration: the input maker, our call, the same-run torch
competitors, and the reference our result is checked against. No CUDA calls at import; the
device is a parameter so the whole path runs on CPU in tests/test_bench.py."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import torch
import torch.nn.functional as F

import cutlass_gemm

from . import metrics, suites

OURS = "cutlass_gemm"
COMPILE_MODE = "max-autotune-no-cudagraphs"
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0
BLOCK = 128


@dataclass(frozen=True)
class Epilogue:
    name: str
    bias: bool
    gelu: bool  # gelu = GELU(tanh), the cuBLASLt epilogue's flavour
    residual: bool

    @property
    def activation(self) -> str:
        return "gelu_tanh" if self.gelu else "none"

    @property
    def fused(self) -> bool:
        """The selection table's epilogue class (configs.EPILOGUE_CLASSES): an activation or a residual."""
        return self.gelu or self.residual

    def label(self, head: str, gelu: bool = True) -> str:
        """The unfused torch pipeline, e.g. 'addmm+gelu+add' (gelu=False: head already applies it)."""
        return "+".join([head] + ["gelu"] * (self.gelu and gelu) + ["add"] * self.residual)


EPILOGUES = {e.name: e for e in (
    Epilogue("none", False, False, False),
    Epilogue("bias", True, False, False),
    Epilogue("bias_gelu", True, True, False),
    Epilogue("bias_residual", True, False, True),
    Epilogue("bias_gelu_residual", True, True, True),
)}

# --scale -> (granularity of a, of b): per-tensor, per-row of a / per-column (row of b), DeepSeek blocks.
SCALE_MODES = {"tensor": ("tensor", "tensor"), "row": ("row", "row"), "blockwise": ("1x128", "128x128")}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _block(gran: str, rows: int, cols: int) -> Tuple[int, int]:
    return {"tensor": (rows, cols), "row": (1, cols), "1x128": (1, BLOCK), "128x128": (BLOCK, BLOCK)}[gran]


def scale_shape(gran: str, rows: int, cols: int) -> Tuple[int, ...]:
    """The op's scale layout: [1], [rows, 1], [rows, ceil(cols/128)], [ceil(rows/128), ceil(cols/128)]."""
    if gran == "tensor":
        return (1,)
    br, bc = _block(gran, rows, cols)
    return (_cdiv(rows, br), _cdiv(cols, bc))


def expand_scale(s: torch.Tensor, gran: str, rows: int, cols: int) -> torch.Tensor:
    """A scale broadcastable to [rows, cols] (blocks repeated, the ragged edge cut)."""
    if gran in ("tensor", "row"):
        return s.reshape(-1, 1)
    br, bc = _block(gran, rows, cols)
    return s.repeat_interleave(br, 0).repeat_interleave(bc, 1)[:rows, :cols]


def quantize(x: torch.Tensor, gran: str) -> Tuple[torch.Tensor, torch.Tensor]:
    """x [rows, cols] -> (e4m3 values, float32 scale) with amax scaling per block; the same for both sides."""
    rows, cols = x.shape
    br, bc = _block(gran, rows, cols)
    r, c = _cdiv(rows, br), _cdiv(cols, bc)
    amax = F.pad(x.float().abs(), (0, c * bc - cols, 0, r * br - rows)).reshape(r, br, c, bc).amax(dim=(1, 3))
    scale = (amax.clamp_min(1e-12) / FP8_MAX).reshape(scale_shape(gran, rows, cols))
    q = (x.float() / expand_scale(scale, gran, rows, cols)).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    return q, scale


def quantize_for_op(x: torch.Tensor, gran: str) -> Tuple[torch.Tensor, torch.Tensor]:
    """The op's own quantize_fp8 where it exists (its scales come in the layouts scaled_mm reads without a
    copy), else quantize(); either way torch gets the very same values."""
    q = getattr(cutlass_gemm, "quantize_fp8", None)
    return q(x, gran) if q is not None else quantize(x, gran)


def dequantize(q: torch.Tensor, s: torch.Tensor, gran: str, dtype=torch.bfloat16) -> torch.Tensor:
    return (q.float() * expand_scale(s, gran, *q.shape)).to(dtype)


def torch_accepts_fp8(n: int, k: int, scale: str) -> bool:
    """torch._scaled_mm rejects K or N not divisible by 16; its blockwise form takes whole 128-blocks."""
    step = BLOCK if scale == "blockwise" else 16
    return n % step == 0 and k % step == 0


def tail(y: torch.Tensor, bias=None, gelu: bool = False, res=None) -> torch.Tensor:
    """The epilogue as a torch user writes it: one kernel per step."""
    if bias is not None:
        y = y + bias
    if gelu:
        y = F.gelu(y, approximate="tanh")
    if res is not None:
        y = y + res
    return y


def selected(m: int, n: int, k: int, dtype: torch.dtype, **extra):
    """The op's choice (configs.explain's Decision), passing only the keywords it accepts; None if it can't say."""
    explain = cutlass_gemm.configs.explain
    kw = {key: v for key, v in extra.items() if key in inspect.signature(explain).parameters}
    try:
        return explain(m, n, k, dtype, **kw)
    except Exception:
        return None


@dataclass
class Entry:
    name: str
    fn: Callable
    check: bool = True  # compared with the reference (False: a different expression, e.g. plain mm)
    note: str = ""
    expr: str = ""  # the torch expression, naming its torch.compile competitor


class Case:
    """One op configuration. Inputs are a tuple; ours and every competitor take it as *args."""

    op: str
    tag: str  # file-name part, e.g. gemm_bf16_bias_gelu
    peak: str  # ceiling key: bf16 | f16 | fp8
    tol: float

    def __init__(self, epilogue: str, device: str = "cuda"):
        self.ep = EPILOGUES[epilogue]
        self.device = device

    def _randn(self, *shape, dtype=torch.float32):
        return torch.randn(*shape, device=self.device, dtype=dtype)

    def entries(self, m: int, n: int, k: int, compile: bool) -> List[Entry]:
        """Ours first, then the torch competitors, then torch.compile of the reference expression."""
        comps = self.torch_entries(m, n, k)
        if compile:
            torch._dynamo.reset()  # compile once per shape, never hitting the recompile limit across shapes
            ref = next(e for e in comps if e.check)
            comps.append(Entry(f"torch.compile {ref.expr or ref.name}",
                               torch.compile(ref.fn, mode=COMPILE_MODE, dynamic=False), note=ref.note))
        return [Entry(OURS, self.ours)] + comps

    def describe(self) -> dict:
        return {"op": self.op, "epilogue": self.ep.name, "tol": self.tol, "title": self.title}

    def choice(self, m: int, n: int, k: int):
        return None

    def launch(self, m: int, n: int, k: int) -> Tuple[Optional[str], bool]:
        """(the kernel the op picks for this case's calls, None if it can't say; whether it launches it with
        programmatic dependent launch: CUTLASS_GEMM_PDL if set, else the selecting rule's flag, as the op's
        C++ resolves it for configs.explain)."""
        sel = self.selection(m, n, k)
        return sel["kernel"], sel["pdl"]

    def selection(self, m: int, n: int, k: int) -> dict:
        """A results row's kernel, pdl and launch (how the op launches the kernel: configs.explain's `launch`, TMA L2
        promotion, decomposition, ...) fields, from one explain call."""
        d = self.choice(m, n, k)
        if d is None:
            return {"kernel": None, "pdl": False, "launch": None}
        return {"kernel": d.kernel, "pdl": d.launches_with_pdl, "launch": None if d.launch is None else str(d.launch)}

    def kernel(self, m: int, n: int, k: int) -> Optional[str]:
        return self.launch(m, n, k)[0]

    def published(self, m: int, n: int, k: int) -> Optional[dict]:
        return None

    # per op: make, ours, torch_entries, reference_fns, nbytes, kernel, title


class GemmCase(Case):
    op = "gemm"

    def __init__(self, epilogue: str, dtype: str = "bf16", device: str = "cuda"):
        super().__init__(epilogue, device)
        self.dtype_name, self.dtype = dtype, DTYPES[dtype]
        self.peak, self.tol = dtype, 2e-2
        self.tag = f"gemm_{dtype}_{epilogue}"
        self.title = f"gemm {dtype}, epilogue {epilogue}"

    def make(self, m, n, k):
        r = lambda *s: self._randn(*s, dtype=self.dtype)  # noqa: E731
        return (r(m, k), r(n, k) * k ** -0.5, r(n) if self.ep.bias else None, r(m, n) if self.ep.residual else None)

    def ours(self, a, b, bias, res, config=None):
        return cutlass_gemm.gemm(a, b, bias=bias, residual=res, activation=self.ep.activation, config=config)

    def mm(self, a, b, bias, res):
        return torch.matmul(a, b.t())

    def eager(self, a, b, bias, res):
        y = torch.addmm(bias, a, b.t()) if bias is not None else torch.matmul(a, b.t())
        return tail(y, gelu=self.ep.gelu, res=res)

    def addmm_activation(self, a, b, bias, res):
        return tail(torch._addmm_activation(bias, a, b.t(), use_gelu=True), res=res)

    def torch_entries(self, m, n, k):
        if self.ep.name == "none":
            return [Entry("cuBLAS mm", self.eager, expr="mm")]
        out = [Entry("cuBLAS mm (no epilogue)", self.mm, check=False),  # the bar: fused >= 0.95x plain cuBLAS
               Entry("eager " + self.ep.label("addmm"), self.eager, expr=self.ep.label("addmm"))]
        if self.ep.gelu:
            out.append(Entry(self.ep.label("torch._addmm_activation", gelu=False), self.addmm_activation))
        return out

    def reference_fns(self, m, n, k):
        return [self.eager]

    def nbytes(self, m, n, k):
        es = self.dtype.itemsize
        return metrics.bytes_moved(m, n, k, es, es, es if self.ep.bias else 0, self.ep.residual)

    def choice(self, m, n, k):
        return selected(m, n, k, self.dtype, fused=self.ep.fused, activation=self.ep.gelu)

    def describe(self):
        return dict(super().describe(), dtype=self.dtype_name)


class ScaledMMCase(Case):
    op = "scaled_mm"

    def __init__(self, epilogue: str, scale: str = "row", accumulate: str = "accurate", device: str = "cuda"):
        super().__init__(epilogue, device)
        self.scale, self.accumulate, self.fast = scale, accumulate, accumulate == "fast"
        self.ga, self.gb = SCALE_MODES[scale]
        self.peak, self.tol = "fp8", 5e-2
        self.tag = f"scaled_mm_{scale}_{accumulate}_{epilogue}"
        self.title = f"scaled_mm e4m3 -> bf16, {scale} scales, {accumulate} accumulation, epilogue {epilogue}"
        bias = "" if not self.ep.bias else "+bias" if scale == "blockwise" else "(+bias)"  # () = _scaled_mm's bias argument
        self.torch_expr = self.ep.label(f"_scaled_mm {scale}{' fast' if self.fast else ''}{bias}")
        self.torch_name = "torch." + self.torch_expr

    def torch_scales(self, sa, sb):
        """torch's layouts: rowwise b as [1, N]; blockwise both outer-dim-major, b as [K/128, N/128] (a view
        of a row-major [N/128, K/128], the one layout torch 2.11 accepted on the H200) with its K-block count
        padded to a multiple of 4 (as torch's own blockwise tests do; no-op on deepseek_v3)."""
        if self.scale == "row":
            return sa, sb.reshape(1, -1)
        if self.scale == "blockwise":
            return sa.t().contiguous().t(), F.pad(sb.contiguous(), (0, -sb.shape[1] % 4)).t()
        return sa, sb

    def make(self, m, n, k):
        a8, sa = quantize_for_op(self._randn(m, k), self.ga)
        b8, sb = quantize_for_op(self._randn(n, k) * k ** -0.5, self.gb)
        bias = self._randn(n, dtype=torch.bfloat16) if self.ep.bias else None
        res = self._randn(m, n, dtype=torch.bfloat16) if self.ep.residual else None
        return (a8, b8, sa, sb, bias, res) + self.torch_scales(sa, sb)  # torch layouts made outside the timing

    def ours(self, a8, b8, sa, sb, bias, res, *_, config=None):
        return cutlass_gemm.scaled_mm(a8, b8, sa, sb, bias=bias, residual=res, activation=self.ep.activation,
                                      out_dtype=torch.bfloat16, accumulate=self.accumulate, config=config)

    def scaled(self, a8, b8, sa, sb, bias, res, sa_t, sb_t):
        fuse = self.scale != "blockwise"  # torch's blockwise form takes no bias: add it eagerly
        y = torch._scaled_mm(a8, b8.t(), sa_t, sb_t, bias=bias if fuse else None, out_dtype=torch.bfloat16,
                             use_fast_accum=self.fast)
        return tail(y, None if fuse else bias, self.ep.gelu, res)

    def dequant(self, a8, b8, sa, sb, bias, res, *_):
        y = torch.matmul(dequantize(a8, sa, self.ga), dequantize(b8, sb, self.gb).t())
        return tail(y, bias, self.ep.gelu, res)

    def torch_entries(self, m, n, k):
        if torch_accepts_fp8(n, k, self.scale):
            return [Entry(self.torch_name, self.scaled, expr=self.torch_expr)]
        return [Entry(self.torch_name, self.dequant, expr=self.torch_expr,
                      note="torch path: dequantize to bf16 + matmul (_scaled_mm rejects this shape)")]

    def reference_fns(self, m, n, k):
        return [e.fn for e in self.torch_entries(m, n, k)] + [self.dequant]

    def nbytes(self, m, n, k):
        scales = 4 * sum(math.prod(scale_shape(g, r, k)) for g, r in ((self.ga, m), (self.gb, n)))
        return metrics.bytes_moved(m, n, k, 1, 2, 2 if self.ep.bias else 0, self.ep.residual, extra=scales)

    def choice(self, m, n, k):
        mode = "blockwise" if self.scale == "blockwise" else "tensor_row_col"  # the kernel table's scale modes
        return selected(m, n, k, FP8, out_dtype=torch.bfloat16, scale=mode, accumulate=self.accumulate,
                               fused=self.ep.fused, activation=self.ep.gelu)

    def published(self, m, n, k):
        tf = suites.deepgemm_floor(m, n, k) if self.scale == "blockwise" else None
        return {"name": "DeepGEMM H800 (published, not same-run)", "tflops": tf, "source": suites.DEEPGEMM_SOURCE} if tf else None

    def describe(self):
        return dict(super().describe(), dtype="e4m3", out_dtype="bf16", scale=self.scale, accumulate=self.accumulate)


def make_case(op: str, epilogue: str, dtype: str = "bf16", scale: str = "row", accumulate: str = "accurate",
              device: str = "cuda") -> Case:
    """One op under one epilogue; a value outside bench's choices is a ValueError naming them."""
    checks = [("op", op, ("gemm", "scaled_mm")), ("epilogue", epilogue, tuple(EPILOGUES))]
    checks += [("dtype", dtype, tuple(DTYPES))] if op == "gemm" else \
        [("scale", scale, tuple(SCALE_MODES)), ("accumulate", accumulate, ("accurate", "fast"))]  # the op's own
    for name, value, valid in checks:
        if value not in valid:
            raise ValueError(f"bench: expected {name} one of {', '.join(valid)}, got {value!r}")
    if op == "gemm":
        return GemmCase(epilogue, dtype, device)
    return ScaledMMCase(epilogue, scale, accumulate, device)
