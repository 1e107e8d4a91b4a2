"""Shared test helpers: shape suites, fresh inputs, the three correctness measures, and the
bad-input table replayed through the Python validator and the C++ glue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import torch

import cutlass_gemm
from cutlass_gemm._reference import gemm_reference

# Shape suites (shared/benchmarks.md names).
SQUARE = [(s, s, s) for s in (1024, 2048, 4096, 8192)]
LLAMA3_70B_NK = {"qkv": (10240, 8192), "o": (8192, 8192), "gate_up": (57344, 8192), "down": (8192, 28672)}
LLAMA3_70B_M = (1, 16, 64, 128, 512, 2048, 8192)
DEEPSEEK_V3_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
ODD = [(1000, 1000, 1000), (77, 4097, 3000), (3, 50000, 256), (8191, 8193, 520)]

# Relative Frobenius error bounds against float64 (design: bf16/fp16 <= 1e-2).
FRO_TOL = {torch.bfloat16: 1e-2, torch.float16: 1e-2, torch.float32: 1e-4}
# Elementwise: |d - ref| <= ATOL + RTOL * (|alpha| |A| @ |B|^T + |bias| + |beta| |residual|): output
# rounding (2^-8 bf16, 2^-11 fp16) with headroom for the activation's slope and fp32 accumulation.
RTOL = {torch.bfloat16: 1.6e-2, torch.float16: 4e-3, torch.float32: 1e-4}
ATOL = 1e-5


def fresh(shape, dtype, device, scale=1.0, gen=None) -> torch.Tensor:
    """Fresh random data (never zeros), built in float32 then cast."""
    return (torch.randn(shape, device=device, generator=gen, dtype=torch.float32) * scale).to(dtype)



def poison_next_output(numel: int, device) -> None:
    """GPU: free a NaN-filled block for the caching allocator to carve the next output from, so a
    kernel that leaves part of its output unwritten shows NaN, not a stale earlier result."""
    if torch.device(device).type != "cpu":
        torch.full((numel + 256,), float("nan"), device=device, dtype=torch.float32)

def check_writer_then_gemm(step, x: torch.Tensor, adopt, check, what: str, out_numel: int, x_scale: float = 1.0) -> None:
    """step(x) -> (out, *inputs it wrote): a kernel writes the GEMM's inputs from x, then the GEMM runs on
    them (a PDL launch must wait for that writer). Eagerly once, then captured in a CUDA graph and
    replayed twice on new x with the output NaN-filled; adopt(inputs) puts the written inputs into the
    reference problem, check(out, what) compares against it."""
    poison_next_output(out_numel, x.device)
    out, *inputs = step(x)
    torch.cuda.synchronize()
    adopt(inputs)
    check(out, f"{what} eager")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        step(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out, *inputs = step(x)
    for _ in range(2):
        x.copy_(torch.randn_like(x) * x_scale)
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        adopt([t.clone() for t in inputs])
        check(out, f"{what} graph replay")


@dataclass
class Problem:
    a: torch.Tensor
    b: torch.Tensor
    bias: Optional[torch.Tensor]
    residual: Optional[torch.Tensor]
    activation: str
    alpha: float
    beta: float
    out_dtype: Optional[torch.dtype]

    def kwargs(self) -> dict:
        return dict(bias=self.bias, residual=self.residual, activation=self.activation, alpha=self.alpha,
                    beta=self.beta, out_dtype=self.out_dtype)


def make_problem(m, n, k, dtype, device, *, bias=None, residual=False, activation="none", alpha=1.0, beta=1.0,
                 out_dtype=None, lead=None) -> Problem:
    """bias: None, "out" (output dtype) or "f32". lead: leading dims of a instead of [M]."""
    out = out_dtype or dtype
    a_shape = tuple(lead) + (k,) if lead else (m, k)
    a = fresh(a_shape, dtype, device, scale=1.0)
    b = fresh((n, k), dtype, device, scale=k ** -0.5 if k else 1.0)  # keeps |D| ~ 1 for every K
    bias_t = None
    if bias == "out":
        bias_t = fresh((n,), out, device)
    elif bias == "f32":
        bias_t = fresh((n,), torch.float32, device)
    res_t = fresh(a_shape[:-1] + (n,), out, device) if residual else None
    return Problem(a, b, bias_t, res_t, activation, alpha, beta, out_dtype)


def epilogues_for(kernel, epilogues: List[dict]) -> List[dict]:
    """The epilogues a forced kernel serves: without the activation node (`_noact`, `_plain`) the same ones without
    the activation, without the residual node (`_plain`) without the residual (and its beta) too."""
    drop = set() if kernel.activation else {"activation"}
    drop |= set() if kernel.residual else {"residual", "beta"}
    return [{a: v for a, v in e.items() if a not in drop} for e in epilogues]


def measures(out: torch.Tensor, ref: torch.Tensor, bound: torch.Tensor, out_dtype, fro_tol: float,
             what: str, report: Optional[dict] = None, magnitude: Optional[torch.Tensor] = None) -> Dict[str, float]:
    """The three measures of `out` against the float64 `ref`; asserts the bounds.
    bound: the elementwise magnitude (|A| @ |B|^T, scaled, + |bias| + |beta residual|).
    magnitude: with an activation or a residual, max(|act(y)|, |y|) + |beta residual| (>= |ref|,
    _magnitude): the relative errors are taken against it, so an element the residual cancels or the
    activation squashes to near zero is not held to a relative bound on its own small value (a 1x1
    output at 9.6e-2 of itself, 1.7e-3 of its terms: session 11's fuzz; GELU(-6) output as 0 where
    float64 gives -6e-11: session 12's).
    report: if given, receives the figures before the bounds are asserted (also on failure)."""
    assert out.dtype == out_dtype, f"{what}: dtype {out.dtype} != {out_dtype}"
    assert tuple(out.shape) == tuple(ref.shape), f"{what}: shape {tuple(out.shape)} != {tuple(ref.shape)}"
    assert out.is_contiguous(), f"{what}: output not contiguous"
    d = out.to(torch.float64)
    assert not torch.isnan(d).any(), f"{what}: NaN in output"
    if ref.numel() == 0:
        return {"fro": 0.0, "row": 0.0, "col": 0.0, "elem": 0.0}
    d2, r2 = d.reshape(-1, ref.shape[-1]), ref.reshape(-1, ref.shape[-1])
    err = d2 - r2
    if magnitude is not None:
        r2 = magnitude.reshape(r2.shape)  # only the denominators below read r2 from here on
    ref_norm = r2.norm()
    fro = (err.norm() / ref_norm.clamp_min(1e-30)).item()
    # Worst row / column relative error: one bad tile cannot hide in the global norm. A row or
    # column far smaller than typical (e.g. a 1-element column at M = 1 near a zero of the
    # activation) is measured against 10% of the typical norm instead of its own.
    floor_row = max(0.1 * ref_norm.item() / max(r2.shape[0], 1) ** 0.5, 1e-30)  # an all-zero result: err must be 0
    floor_col = max(0.1 * ref_norm.item() / max(r2.shape[1], 1) ** 0.5, 1e-30)
    row = (err.norm(dim=1) / r2.norm(dim=1).clamp_min(floor_row)).max().item()
    col = (err.norm(dim=0) / r2.norm(dim=0).clamp_min(floor_col)).max().item()
    excess = (err.abs() - (ATOL + RTOL[out_dtype] * bound.reshape(err.shape))).max().item()
    if report is not None:
        report.update(fro=fro, row=row, col=col, elem=excess)
    assert fro <= fro_tol, f"{what}: relative Frobenius error {fro:.3e} > {fro_tol:.0e}"
    assert row <= 5 * fro_tol, f"{what}: worst row relative error {row:.3e} > {5 * fro_tol:.0e}"
    assert col <= 5 * fro_tol, f"{what}: worst column relative error {col:.3e} > {5 * fro_tol:.0e}"
    assert excess <= 0, f"{what}: elementwise bound exceeded by {excess:.3e}"
    return {"fro": fro, "row": row, "col": col, "elem": excess}


def _epilogue_bound(prod_bound, bias, residual, beta, n):
    if bias is not None:
        prod_bound = prod_bound + bias.to(torch.float64).abs()
    if residual is not None:
        prod_bound = prod_bound + abs(beta) * residual.reshape(-1, n).to(torch.float64).abs()
    return prod_bound


def check_result(out: torch.Tensor, p: Problem, what: str = "", report: Optional[dict] = None) -> Dict[str, float]:
    """gemm: the three measures against float64."""
    ref = gemm_reference(p.a, p.b, p.bias, p.residual, p.activation, p.alpha, p.beta, p.out_dtype,
                         compute_dtype=torch.float64, cast_output=False)
    out_dtype = p.out_dtype or p.a.dtype
    n = p.b.shape[0]
    if ref.numel() == 0:  # M or N = 0: shape, dtype and layout only
        return measures(out, ref, ref, out_dtype, FRO_TOL[out_dtype], what)
    rows = ref.numel() // n
    a64 = p.a.reshape(rows, p.a.shape[-1]).to(torch.float64).abs()
    bound = _epilogue_bound(abs(p.alpha) * (a64 @ p.b.to(torch.float64).abs().t()), p.bias, p.residual, p.beta, n)
    magnitude = _magnitude(lambda act: gemm_reference(p.a, p.b, p.bias, None, act, p.alpha, 1.0, p.out_dtype,
                                                      compute_dtype=torch.float64, cast_output=False),
                           p.activation, p.residual, p.beta)
    return measures(out, ref, bound, out_dtype, FRO_TOL[out_dtype], what, report, magnitude)


def _magnitude(z_of, activation: str, residual: Optional[torch.Tensor], beta: float) -> Optional[torch.Tensor]:
    """What relative errors are taken against, elementwise (None: the result itself):
    max(|act(y)|, |y|) + |beta residual|, y the product plus bias before the activation and z_of(act)
    the float64 result without the residual. An activation's tail (GELU at y = -6 is -6e-11, which
    FP32 rounds to 0) or a residual that cancels the rest leaves a result far below its own terms;
    a relative bound on that small value would hold the kernel to more digits than it computes."""
    if activation == "none" and residual is None:
        return None
    z = z_of(activation).abs()
    if activation != "none":
        z = torch.maximum(z, z_of("none").abs())
    if residual is not None:
        z = z + abs(beta) * residual.reshape(z.shape).to(torch.float64).abs()
    return z


# -------------------------------------------------------------------------------------------
# FP8 problems: fresh random data quantized with cutlass_gemm.quantize_fp8; the reference is
# computed in float64 from the same FP8 values and scales.

FP8_FRO_TOL = 3e-2
GRANULARITY = {  # scale kind -> (quantize_fp8 granularity for a, for b)
    "tensor": ("tensor", "tensor"),
    "row_col": ("row", "row"),
    "row_tensor": ("row", "tensor"),
    "tensor_col": ("tensor", "row"),
    "blockwise": ("1x128", "128x128"),
}


@dataclass
class ScaledProblem:
    a: torch.Tensor
    b: torch.Tensor
    scale_a: torch.Tensor
    scale_b: torch.Tensor
    bias: Optional[torch.Tensor]
    residual: Optional[torch.Tensor]
    activation: str
    beta: float
    accumulate: str

    def args(self):
        return (self.a, self.b, self.scale_a, self.scale_b)

    def kwargs(self) -> dict:
        return dict(bias=self.bias, residual=self.residual, activation=self.activation, beta=self.beta,
                    accumulate=self.accumulate)


def make_scaled_problem(m, n, k, device, *, scales="row_col", a_dtype=torch.float8_e4m3fn,
                        b_dtype=torch.float8_e4m3fn, bias=None, residual=False, activation="none", beta=1.0,
                        accumulate="accurate", lead=None) -> ScaledProblem:
    from cutlass_gemm import quantize_fp8

    ga, gb = GRANULARITY[scales]
    a_shape = tuple(lead) + (k,) if lead else (m, k)
    rows = 1
    for d in a_shape[:-1]:
        rows *= d
    x = torch.randn(rows, k, device=device) * 3.0
    w = torch.randn(n, k, device=device) * (k ** -0.5 if k else 1.0)
    a8, sa = quantize_fp8(x, ga, a_dtype)
    b8, sb = quantize_fp8(w, gb, b_dtype)
    bias_t = {"out": fresh((n,), torch.bfloat16, device), "f32": fresh((n,), torch.float32, device), None: None}[bias]
    res_t = fresh(a_shape[:-1] + (n,), torch.bfloat16, device) if residual else None
    return ScaledProblem(a8.reshape(a_shape), b8, sa, sb, bias_t, res_t, activation, beta, accumulate)


def check_scaled_result(out: torch.Tensor, p: ScaledProblem, what: str = "",
                        report: Optional[dict] = None) -> Dict[str, float]:
    """scaled_mm: the three measures against float64 from the same FP8 values and scales."""
    from cutlass_gemm import scaled_mm_reference

    ref = scaled_mm_reference(*p.args(), **p.kwargs(), compute_dtype=torch.float64, cast_output=False)
    if ref.numel() == 0:  # M or N = 0: shape, dtype and layout only
        return measures(out, ref, ref, torch.bfloat16, FP8_FRO_TOL, what)
    # |A| sa @ (|B| sb)^T through the same reference (|x| of an FP8 value is exact in FP8).
    absprod = scaled_mm_reference(p.a.float().abs().to(p.a.dtype), p.b.float().abs().to(p.b.dtype),
                                  p.scale_a.abs(), p.scale_b.abs(), compute_dtype=torch.float64, cast_output=False)
    n = p.b.shape[0]
    bound = _epilogue_bound(absprod.reshape(-1, n), p.bias, p.residual, p.beta, n)
    magnitude = _magnitude(lambda act: scaled_mm_reference(*p.args(), **dict(p.kwargs(), residual=None, activation=act),
                                                           compute_dtype=torch.float64, cast_output=False),
                           p.activation, p.residual, p.beta)
    return measures(out, ref, bound, torch.bfloat16, FP8_FRO_TOL, what, report, magnitude)


# -------------------------------------------------------------------------------------------
# Bad inputs: (id, builder(device) -> (args, kwargs), expected message). Each is replayed
# through the CPU path (Python validator) and on CUDA (C++ glue); both must raise exactly this.

BF, F16, F32 = torch.bfloat16, torch.float16, torch.float32


def _t(*shape, dtype=BF, device="cpu"):
    return torch.randn(shape, dtype=torch.float32, device=device).to(dtype)


BadCase = Tuple[str, Callable[[str], Tuple[tuple, dict]], str]

BAD_GEMM_INPUTS: List[BadCase] = [
    ("a_0d", lambda d: ((_t(device=d), _t(4, 1, device=d)), {}),
     "cutlass_gemm.gemm: expected a of shape [..., K] (at least 1-D), got []"),
    ("a_fp32", lambda d: ((_t(8, 16, dtype=F32, device=d), _t(4, 16, device=d)), {}),
     "cutlass_gemm.gemm: expected a of dtype bfloat16 or float16, got float32"),
    ("a_int8", lambda d: ((torch.ones(8, 16, dtype=torch.int8, device=d), _t(4, 16, device=d)), {}),
     "cutlass_gemm.gemm: expected a of dtype bfloat16 or float16, got int8"),
    ("b_1d", lambda d: ((_t(8, 16, device=d), _t(16, device=d)), {}),
     "cutlass_gemm.gemm: expected b of shape [N, K] (2-D), got [16]"),
    ("b_3d", lambda d: ((_t(8, 16, device=d), _t(2, 4, 16, device=d)), {}),
     "cutlass_gemm.gemm: expected b of shape [N, K] (2-D), got [2, 4, 16]"),
    ("k_mismatch", lambda d: ((_t(8, 4096, device=d), _t(4096, 4095, device=d)), {}),
     "cutlass_gemm.gemm: expected b of shape [N, K] = [*, 4096], got [4096, 4095]"),
    ("b_transposed", lambda d: ((_t(8, 16, device=d), _t(16, 4, device=d)), {}),
     "cutlass_gemm.gemm: expected b of shape [N, K] = [*, 16], got [16, 4]"),
    ("b_dtype", lambda d: ((_t(8, 16, device=d), _t(4, 16, dtype=F16, device=d)), {}),
     "cutlass_gemm.gemm: expected b of dtype bfloat16 (the dtype of a), got float16"),
    ("out_dtype_f16_for_bf16", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"out_dtype": F16}),
     "cutlass_gemm.gemm: expected out_dtype None, bfloat16 or float32 for bfloat16 inputs, got float16"),
    ("out_dtype_fp8", lambda d: ((_t(8, 16, dtype=F16, device=d), _t(4, 16, dtype=F16, device=d)),
                                 {"out_dtype": torch.float8_e4m3fn}),
     "cutlass_gemm.gemm: expected out_dtype None, float16 or float32 for float16 inputs, got float8_e4m3fn"),
    ("bias_shape", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"bias": _t(5, device=d)}),
     "cutlass_gemm.gemm: expected bias of shape [N] = [4], got [5]"),
    ("bias_2d", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"bias": _t(1, 4, device=d)}),
     "cutlass_gemm.gemm: expected bias of shape [N] = [4], got [1, 4]"),
    ("bias_dtype", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"bias": _t(4, dtype=F16, device=d)}),
     "cutlass_gemm.gemm: expected bias of dtype bfloat16 or float32, got float16"),
    ("bias_dtype_f32out", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)),
                                     {"bias": _t(4, device=d), "out_dtype": F32}),
     "cutlass_gemm.gemm: expected bias of dtype float32, got bfloat16"),
    ("residual_shape", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"residual": _t(8, 5, device=d)}),
     "cutlass_gemm.gemm: expected residual of shape [8, 4] (the output's), got [8, 5]"),
    ("residual_shape_3d", lambda d: ((_t(2, 3, 16, device=d), _t(4, 16, device=d)), {"residual": _t(6, 4, device=d)}),
     "cutlass_gemm.gemm: expected residual of shape [2, 3, 4] (the output's), got [6, 4]"),
    ("residual_dtype", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"residual": _t(8, 4, dtype=F32, device=d)}),
     "cutlass_gemm.gemm: expected residual of dtype bfloat16 (the output's), got float32"),
    ("activation", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"activation": "tanh"}),
     "cutlass_gemm.gemm: expected activation one of 'none', 'relu', 'gelu', 'gelu_tanh', 'silu', got 'tanh'"),
    ("config_unknown", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"config": "fastest"}),
     "cutlass_gemm.gemm: unknown config 'fastest'; configs for bfloat16 -> bfloat16: "
     + ", ".join(k.name for k in cutlass_gemm.kernel_table.KERNELS if (k.a, k.out, k.scale) == ("bf16", "bf16", "none"))),
    ("config_wrong_family", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"config": "sm90_f16_t128x128x64_c1x1_coop"}),
     "cutlass_gemm.gemm: config 'sm90_f16_t128x128x64_c1x1_coop' does not serve these inputs; configs for "
     "bfloat16 -> bfloat16: "
     + ", ".join(k.name for k in cutlass_gemm.kernel_table.KERNELS if (k.a, k.out, k.scale) == ("bf16", "bf16", "none"))),
    ("config_noact_with_activation", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)),
                                                {"config": "sm90_bf16_t128x256x64_c2x1_coop_noact", "activation": "gelu"}),
     "cutlass_gemm.gemm: config 'sm90_bf16_t128x256x64_c2x1_coop_noact' has no activation in its epilogue; "
     "expected activation='none' with it"),
    # Every other invalid class once more (issue #8): input/output dtypes, shapes, epilogue, config.
    ("a_fp8", lambda d: ((_t(8, 16, dtype=torch.float8_e4m3fn, device=d), _t(4, 16, device=d)), {}),
     "cutlass_gemm.gemm: expected a of dtype bfloat16 or float16, got float8_e4m3fn"),
    ("a_f64", lambda d: ((_t(8, 16, dtype=torch.float64, device=d), _t(4, 16, device=d)), {}),
     "cutlass_gemm.gemm: expected a of dtype bfloat16 or float16, got float64"),
    ("b_int32", lambda d: ((_t(8, 16, device=d), torch.ones(4, 16, dtype=torch.int32, device=d)), {}),
     "cutlass_gemm.gemm: expected b of dtype bfloat16 (the dtype of a), got int32"),
    ("k_mismatch_3d_a", lambda d: ((_t(2, 3, 16, device=d), _t(4, 8, device=d)), {}),
     "cutlass_gemm.gemm: expected b of shape [N, K] = [*, 16], got [4, 8]"),
    ("out_dtype_f64", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"out_dtype": torch.float64}),
     "cutlass_gemm.gemm: expected out_dtype None, bfloat16 or float32 for bfloat16 inputs, got float64"),
    ("out_dtype_int32", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"out_dtype": torch.int32}),
     "cutlass_gemm.gemm: expected out_dtype None, bfloat16 or float32 for bfloat16 inputs, got int32"),
    ("bias_0d", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"bias": _t(device=d)}),
     "cutlass_gemm.gemm: expected bias of shape [N] = [4], got []"),
    ("bias_int32", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"bias": torch.ones(4, dtype=torch.int32, device=d)}),
     "cutlass_gemm.gemm: expected bias of dtype bfloat16 or float32, got int32"),
    ("residual_1d", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"residual": _t(4, device=d)}),
     "cutlass_gemm.gemm: expected residual of shape [8, 4] (the output's), got [4]"),
    ("residual_broadcastable", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"residual": _t(1, 4, device=d)}),
     "cutlass_gemm.gemm: expected residual of shape [8, 4] (the output's), got [1, 4]"),
    ("residual_dtype_f32out", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)),
                                         {"residual": _t(8, 4, device=d), "out_dtype": F32}),
     "cutlass_gemm.gemm: expected residual of dtype float32 (the output's), got bfloat16"),
    ("activation_case", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"activation": "GELU"}),
     "cutlass_gemm.gemm: expected activation one of 'none', 'relu', 'gelu', 'gelu_tanh', 'silu', got 'GELU'"),
    ("activation_empty", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"activation": ""}),
     "cutlass_gemm.gemm: expected activation one of 'none', 'relu', 'gelu', 'gelu_tanh', 'silu', got ''"),
    ("config_fp8_kernel", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)),
                                     {"config": "sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong"}),
     "cutlass_gemm.gemm: config 'sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong' does not serve these inputs; "
     "configs for bfloat16 -> bfloat16: "
     + ", ".join(k.name for k in cutlass_gemm.kernel_table.KERNELS if (k.a, k.out, k.scale) == ("bf16", "bf16", "none"))),
    ("config_bf16out_for_f32out", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)),
                                             {"config": "sm90_bf16_t128x128x64_c1x1_coop", "out_dtype": F32}),
     "cutlass_gemm.gemm: config 'sm90_bf16_t128x128x64_c1x1_coop' does not serve these inputs; configs for "
     "bfloat16 -> float32: "
     + ", ".join(k.name for k in cutlass_gemm.kernel_table.KERNELS if (k.a, k.out, k.scale) == ("bf16", "f32", "none"))),
    ("config_f32out_for_default_out", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)),
                                                 {"config": "sm90_bf16_f32out_t128x128x64_c1x1_coop"}),
     "cutlass_gemm.gemm: config 'sm90_bf16_f32out_t128x128x64_c1x1_coop' does not serve these inputs; configs for "
     "bfloat16 -> bfloat16: "
     + ", ".join(k.name for k in cutlass_gemm.kernel_table.KERNELS if (k.a, k.out, k.scale) == ("bf16", "bf16", "none"))),
    # dtypes outside the common ones are named as Python prints them, on every path
    ("a_uint16", lambda d: ((torch.empty(8, 16, dtype=torch.uint16, device=d), _t(4, 16, device=d)), {}),
     "cutlass_gemm.gemm: expected a of dtype bfloat16 or float16, got uint16"),
    ("a_complex64", lambda d: ((torch.empty(8, 16, dtype=torch.complex64, device=d), _t(4, 16, device=d)), {}),
     "cutlass_gemm.gemm: expected a of dtype bfloat16 or float16, got complex64"),
    ("out_dtype_complex128", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"out_dtype": torch.complex128}),
     "cutlass_gemm.gemm: expected out_dtype None, bfloat16 or float32 for bfloat16 inputs, got complex128"),
    # CUTLASS's problem shape is int: a stride-0 view has 2**31 rows without the memory
    ("m_over_int_max", lambda d: ((_t(1, 16, device=d).expand(2**31, 16), _t(4, 16, device=d)), {}),
     "cutlass_gemm.gemm: expected M, N and K each at most 2147483647, got M = 2147483648, N = 4, K = 16"),
]


def device_mismatch_cases(device: str, other: str = "cpu") -> List[BadCase]:
    """Cases that need two devices (CUDA only): one operand on `other` (the CPU, or a second GPU)."""
    o = other
    return [
        (f"b_on_{o}", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=o)), {}),
         f"cutlass_gemm.gemm: expected b on {device} (the device of a), got {o}"),
        (f"a_on_{o}", lambda d: ((_t(8, 16, device=o), _t(4, 16, device=d)), {}),
         f"cutlass_gemm.gemm: expected b on {o} (the device of a), got {device}"),
        (f"bias_on_{o}", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"bias": _t(4, device=o)}),
         f"cutlass_gemm.gemm: expected bias on {device} (the device of a), got {o}"),
        (f"residual_on_{o}", lambda d: ((_t(8, 16, device=d), _t(4, 16, device=d)), {"residual": _t(8, 4, device=o)}),
         f"cutlass_gemm.gemm: expected residual on {device} (the device of a), got {o}"),
    ]


def scaled_device_mismatch_cases(device: str, other: str = "cpu") -> List[BadCase]:
    """scaled_mm: b, either scale, bias or residual on `other` (the CPU, or a second GPU)."""
    o = other
    return [
        (f"b_on_{o}", lambda d: _mm(d, b=_f8(4, 256, device=o)),
         f"cutlass_gemm.scaled_mm: expected b on {device} (the device of a), got {o}"),
        (f"a_on_{o}", lambda d: _mm(d, a=_f8(8, 256, device=o)),
         f"cutlass_gemm.scaled_mm: expected b on {o} (the device of a), got {device}"),
        (f"scale_a_on_{o}", lambda d: _mm(d, sa=_s(1, device=o)),
         f"cutlass_gemm.scaled_mm: expected scale_a on {device} (the device of a), got {o}"),
        (f"scale_b_row_on_{o}", lambda d: _mm(d, sb=_s(4, 1, device=o)),
         f"cutlass_gemm.scaled_mm: expected scale_b on {device} (the device of a), got {o}"),
        (f"bias_on_{o}", lambda d: _mm(d, bias=_t(4, device=o)),
         f"cutlass_gemm.scaled_mm: expected bias on {device} (the device of a), got {o}"),
        (f"residual_on_{o}", lambda d: _mm(d, residual=_t(8, 4, device=o)),
         f"cutlass_gemm.scaled_mm: expected residual on {device} (the device of a), got {o}"),
    ]


E4, E5 = torch.float8_e4m3fn, torch.float8_e5m2


def _f8(*shape, dtype=E4, device="cpu"):
    return torch.randn(shape, device=device).to(dtype)


def _s(*shape, device="cpu", dtype=torch.float32):
    return (torch.rand(shape, device=device) + 0.5).to(dtype)


_RETIRED = next(iter(cutlass_gemm.kernel_table.RETIRED))


def _mm(d, a=None, b=None, sa=None, sb=None, **kw):
    """scaled_mm args: a [8, 256] e4m3, b [4, 256] e4m3, per-tensor scales unless given."""
    a = _f8(8, 256, device=d) if a is None else a
    b = _f8(4, 256, device=d) if b is None else b
    return (a, b, _s(1, device=d) if sa is None else sa, _s(1, device=d) if sb is None else sb), kw


_SCALED_CONFIGS = lambda fam: ", ".join(  # noqa: E731
    k.name for k in cutlass_gemm.kernel_table.KERNELS if (k.a, k.b, k.out, k.scale, k.accum) == fam)

BAD_SCALED_MM_INPUTS: List[BadCase] = [
    ("a_bf16", lambda d: _mm(d, a=_t(8, 256, device=d)),
     "cutlass_gemm.scaled_mm: expected a of dtype float8_e4m3fn or float8_e5m2, got bfloat16"),
    ("b_1d", lambda d: _mm(d, b=_f8(256, device=d)),
     "cutlass_gemm.scaled_mm: expected b of shape [N, K] (2-D), got [256]"),
    ("k_mismatch", lambda d: _mm(d, b=_f8(4, 128, device=d)),
     "cutlass_gemm.scaled_mm: expected b of shape [N, K] = [*, 256], got [4, 128]"),
    ("b_bf16", lambda d: _mm(d, b=_t(4, 256, device=d)),
     "cutlass_gemm.scaled_mm: expected b of dtype float8_e4m3fn or float8_e5m2, got bfloat16"),
    ("e5m2_x_e5m2", lambda d: _mm(d, a=_f8(8, 256, dtype=E5, device=d), b=_f8(4, 256, dtype=E5, device=d)),
     "cutlass_gemm.scaled_mm: expected a x b of float8_e4m3fn x float8_e4m3fn, float8_e4m3fn x float8_e5m2 "
     "or float8_e5m2 x float8_e4m3fn, got float8_e5m2 x float8_e5m2"),
    ("scale_a_bf16", lambda d: _mm(d, sa=_s(1, device=d, dtype=torch.bfloat16)),
     "cutlass_gemm.scaled_mm: expected scale_a of dtype float32, got bfloat16"),
    ("scale_b_f64", lambda d: _mm(d, sb=_s(1, device=d, dtype=torch.float64)),
     "cutlass_gemm.scaled_mm: expected scale_b of dtype float32, got float64"),
    ("scale_a_shape", lambda d: _mm(d, sa=_s(7, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_a of shape [1] (per-tensor), [M, 1] = [8, 1] (per-row) or "
     "[M, ceil(K/128)] = [8, 2] (blockwise 1x128), got [7]"),
    ("scale_b_shape", lambda d: _mm(d, sb=_s(1, 4, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_b of shape [1] (per-tensor), [N, 1] = [4, 1] (per-column) or "
     "[ceil(N/128), ceil(K/128)] = [1, 2] (blockwise 128x128), got [1, 4]"),
    ("block_a_with_row_b", lambda d: _mm(d, sa=_s(8, 2, device=d), sb=_s(4, 1, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_b of shape [ceil(N/128), ceil(K/128)] = [1, 2] (blockwise 128x128) "
     "to go with a blockwise scale_a, got [4, 1]"),
    ("block_b_with_tensor_a", lambda d: _mm(d, sb=_s(1, 2, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_a of shape [M, ceil(K/128)] = [8, 2] (blockwise 1x128) "
     "to go with a blockwise scale_b, got [1]"),
    ("block_e5m2", lambda d: _mm(d, b=_f8(4, 256, dtype=E5, device=d), sa=_s(8, 2, device=d), sb=_s(1, 2, device=d)),
     "cutlass_gemm.scaled_mm: expected a x b of float8_e4m3fn x float8_e4m3fn for blockwise scales, got "
     "float8_e4m3fn x float8_e5m2"),
    ("out_dtype_f16", lambda d: _mm(d, out_dtype=torch.float16),
     "cutlass_gemm.scaled_mm: expected out_dtype None or bfloat16 for float8_e4m3fn x float8_e4m3fn inputs, "
     "got float16"),
    ("bias_shape", lambda d: _mm(d, bias=_t(5, device=d)),
     "cutlass_gemm.scaled_mm: expected bias of shape [N] = [4], got [5]"),
    ("residual_dtype", lambda d: _mm(d, residual=_t(8, 4, dtype=F16, device=d)),
     "cutlass_gemm.scaled_mm: expected residual of dtype bfloat16 (the output's), got float16"),
    ("activation", lambda d: _mm(d, activation="gelu_erf"),
     "cutlass_gemm.scaled_mm: expected activation one of 'none', 'relu', 'gelu', 'gelu_tanh', 'silu', got 'gelu_erf'"),
    ("accumulate", lambda d: _mm(d, accumulate="exact"),
     "cutlass_gemm.scaled_mm: expected accumulate 'accurate' or 'fast', got 'exact'"),
    ("config_plain_with_activation", lambda d: _mm(d, activation="silu",
                                                   config="sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_plain"),
     "cutlass_gemm.scaled_mm: config 'sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_plain' has no activation in "
     "its epilogue; expected activation='none' with it"),
    ("config_wrong_accum", lambda d: _mm(d, accumulate="fast", config="sm90_e4m3_scaled_promoted_t64x128x128_c1x1_pingpong"),
     "cutlass_gemm.scaled_mm: config 'sm90_e4m3_scaled_promoted_t64x128x128_c1x1_pingpong' does not serve these "
     "inputs; configs for float8_e4m3fn x float8_e4m3fn -> bfloat16 (tensor_row_col, fast): "
     + _SCALED_CONFIGS(("e4m3", "e4m3", "bf16", "tensor_row_col", "fast"))),
    # Every other invalid class once more (issue #8).
    ("a_0d", lambda d: _mm(d, a=_f8(device=d)),
     "cutlass_gemm.scaled_mm: expected a of shape [..., K] (at least 1-D), got []"),
    ("a_f32", lambda d: _mm(d, a=_t(8, 256, dtype=F32, device=d)),
     "cutlass_gemm.scaled_mm: expected a of dtype float8_e4m3fn or float8_e5m2, got float32"),
    ("b_3d", lambda d: _mm(d, b=_f8(1, 4, 256, device=d)),
     "cutlass_gemm.scaled_mm: expected b of shape [N, K] (2-D), got [1, 4, 256]"),
    ("k_mismatch_3d_a", lambda d: _mm(d, a=_f8(2, 4, 256, device=d), b=_f8(4, 255, device=d)),
     "cutlass_gemm.scaled_mm: expected b of shape [N, K] = [*, 256], got [4, 255]"),
    ("b_int8", lambda d: _mm(d, b=torch.ones(4, 256, dtype=torch.int8, device=d)),
     "cutlass_gemm.scaled_mm: expected b of dtype float8_e4m3fn or float8_e5m2, got int8"),
    ("scale_a_int32", lambda d: _mm(d, sa=torch.ones(1, dtype=torch.int32, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_a of dtype float32, got int32"),
    ("scale_b_bf16_row", lambda d: _mm(d, sb=_s(4, 1, device=d, dtype=torch.bfloat16)),
     "cutlass_gemm.scaled_mm: expected scale_b of dtype float32, got bfloat16"),
    ("scale_a_row_as_column", lambda d: _mm(d, sa=_s(1, 8, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_a of shape [1] (per-tensor), [M, 1] = [8, 1] (per-row) or "
     "[M, ceil(K/128)] = [8, 2] (blockwise 1x128), got [1, 8]"),
    ("scale_a_block_wrong_kb", lambda d: _mm(d, sa=_s(8, 3, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_a of shape [1] (per-tensor), [M, 1] = [8, 1] (per-row) or "
     "[M, ceil(K/128)] = [8, 2] (blockwise 1x128), got [8, 3]"),
    ("scale_a_empty", lambda d: _mm(d, sa=_s(0, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_a of shape [1] (per-tensor), [M, 1] = [8, 1] (per-row) or "
     "[M, ceil(K/128)] = [8, 2] (blockwise 1x128), got [0]"),
    ("scale_a_3d", lambda d: _mm(d, sa=_s(8, 1, 1, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_a of shape [1] (per-tensor), [M, 1] = [8, 1] (per-row) or "
     "[M, ceil(K/128)] = [8, 2] (blockwise 1x128), got [8, 1, 1]"),
    ("scale_b_col_wrong_n", lambda d: _mm(d, sb=_s(5, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_b of shape [1] (per-tensor), [N, 1] = [4, 1] (per-column) or "
     "[ceil(N/128), ceil(K/128)] = [1, 2] (blockwise 128x128), got [5]"),
    ("scale_b_block_wrong_nb", lambda d: _mm(d, sa=_s(8, 2, device=d), sb=_s(2, 2, device=d)),
     "cutlass_gemm.scaled_mm: expected scale_b of shape [1] (per-tensor), [N, 1] = [4, 1] (per-column) or "
     "[ceil(N/128), ceil(K/128)] = [1, 2] (blockwise 128x128), got [2, 2]"),
    ("out_dtype_f32", lambda d: _mm(d, out_dtype=F32),
     "cutlass_gemm.scaled_mm: expected out_dtype None or bfloat16 for float8_e4m3fn x float8_e4m3fn inputs, "
     "got float32"),
    ("out_dtype_fp8", lambda d: _mm(d, out_dtype=E4),
     "cutlass_gemm.scaled_mm: expected out_dtype None or bfloat16 for float8_e4m3fn x float8_e4m3fn inputs, "
     "got float8_e4m3fn"),
    ("bias_2d", lambda d: _mm(d, bias=_t(1, 4, device=d)),
     "cutlass_gemm.scaled_mm: expected bias of shape [N] = [4], got [1, 4]"),
    ("bias_dtype", lambda d: _mm(d, bias=_t(4, dtype=F16, device=d)),
     "cutlass_gemm.scaled_mm: expected bias of dtype bfloat16 or float32, got float16"),
    ("residual_shape", lambda d: _mm(d, residual=_t(8, 5, device=d)),
     "cutlass_gemm.scaled_mm: expected residual of shape [8, 4] (the output's), got [8, 5]"),
    ("residual_shape_3d", lambda d: _mm(d, a=_f8(2, 4, 256, device=d), residual=_t(8, 4, device=d)),
     "cutlass_gemm.scaled_mm: expected residual of shape [2, 4, 4] (the output's), got [8, 4]"),
    ("config_unknown", lambda d: _mm(d, config="fastest"),
     "cutlass_gemm.scaled_mm: unknown config 'fastest'; configs for float8_e4m3fn x float8_e4m3fn -> bfloat16 "
     "(tensor_row_col, promoted): " + _SCALED_CONFIGS(("e4m3", "e4m3", "bf16", "tensor_row_col", "promoted"))),
    ("config_retired", lambda d: _mm(d, config=_RETIRED),
     f"cutlass_gemm.scaled_mm: unknown config '{_RETIRED}' (retired: {cutlass_gemm.kernel_table.RETIRED[_RETIRED]}); "
     "configs for float8_e4m3fn x float8_e4m3fn -> bfloat16 "
     "(tensor_row_col, promoted): " + _SCALED_CONFIGS(("e4m3", "e4m3", "bf16", "tensor_row_col", "promoted"))),
    ("a_e4m3fnuz", lambda d: _mm(d, a=torch.empty(8, 256, dtype=torch.float8_e4m3fnuz, device=d)),
     "cutlass_gemm.scaled_mm: expected a of dtype float8_e4m3fn or float8_e5m2, got float8_e4m3fnuz"),
    ("n_over_int_max", lambda d: _mm(d, b=_f8(1, 256, device=d).expand(2**31, 256)),
     "cutlass_gemm.scaled_mm: expected M, N and K each at most 2147483647, got M = 8, N = 2147483648, K = 256"),
    ("config_16bit_kernel", lambda d: _mm(d, config="sm90_bf16_t128x128x64_c1x1_coop"),
     "cutlass_gemm.scaled_mm: config 'sm90_bf16_t128x128x64_c1x1_coop' does not serve these inputs; configs for "
     "float8_e4m3fn x float8_e4m3fn -> bfloat16 (tensor_row_col, promoted): "
     + _SCALED_CONFIGS(("e4m3", "e4m3", "bf16", "tensor_row_col", "promoted"))),
    ("config_blockwise_with_row_scales", lambda d: _mm(d, sa=_s(8, 1, device=d), sb=_s(4, 1, device=d),
                                                       config="sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop"),
     "cutlass_gemm.scaled_mm: config 'sm90_e4m3_blockwise_promoted_t128x128x128_c1x2_coop' does not serve these "
     "inputs; configs for float8_e4m3fn x float8_e4m3fn -> bfloat16 (tensor_row_col, promoted): "
     + _SCALED_CONFIGS(("e4m3", "e4m3", "bf16", "tensor_row_col", "promoted"))),
    ("config_scaled_for_blockwise", lambda d: _mm(d, sa=_s(8, 2, device=d), sb=_s(1, 2, device=d), accumulate="fast",
                                                  config="sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong"),
     "cutlass_gemm.scaled_mm: config 'sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong' does not serve these "
     "inputs; configs for float8_e4m3fn x float8_e4m3fn -> bfloat16 (blockwise, promoted): "
     + _SCALED_CONFIGS(("e4m3", "e4m3", "bf16", "blockwise", "promoted"))),
    ("config_mixed_for_e4m3", lambda d: _mm(d, config="sm90_e4m3xe5m2_scaled_promoted_t128x128x128_c1x2_coop"),
     "cutlass_gemm.scaled_mm: config 'sm90_e4m3xe5m2_scaled_promoted_t128x128x128_c1x2_coop' does not serve these "
     "inputs; configs for float8_e4m3fn x float8_e4m3fn -> bfloat16 (tensor_row_col, promoted): "
     + _SCALED_CONFIGS(("e4m3", "e4m3", "bf16", "tensor_row_col", "promoted"))),
]


# -------------------------------------------------------------------------------------------
# Direct torch.ops calls (every schema argument given) and the Python validator's verdict.

def op_kwargs(op: str, kwargs: dict) -> dict:
    """kwargs of a BadCase builder completed with the schema defaults of torch.ops.cutlass_gemm.<op>."""
    if op == "gemm":
        return {"bias": None, "residual": None, "activation": "none", "alpha": 1.0, "beta": 1.0, "out_dtype": None,
                "config": "", **kwargs}
    return {"bias": None, "residual": None, "activation": "none", "beta": 1.0, "out_dtype": torch.bfloat16,
            "accumulate": "accurate", "config": "", **kwargs}


def validator_message(op: str, args: tuple, kwargs: dict) -> str:
    """What the Python validator (fake kernel, CPU reference) says about these exact tensors ("" if
    it accepts them); compared with the C++ glue's message for CUDA tensors."""
    from cutlass_gemm._validate import check_gemm, check_scaled_mm

    kw = op_kwargs(op, kwargs)
    try:
        if op == "gemm":
            check_gemm(*args, kw["bias"], kw["residual"], kw["activation"], kw["out_dtype"], kw["config"])
        else:
            check_scaled_mm(*args, kw["bias"], kw["residual"], kw["activation"], kw["out_dtype"], kw["accumulate"],
                            kw["config"])
    except RuntimeError as e:
        return str(e)
    return ""
