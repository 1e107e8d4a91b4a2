"""Property-based tests against the float64 reference with the three correctness measures:
random M/N/K (1, primes, K < 16, N = 1, zeros), dtypes, epilogues, scale granularities and
operand layouts (transposed views, row strides above K, storage offsets). The CPU variant runs
in CI through the reference kernels; the GPU variant runs the real kernels (more examples)."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cutlass_gemm
from conftest import GPU_ARCH
from gemm_checks import Problem, ScaledProblem, check_result, check_scaled_result, fresh

DIMS = st.one_of(st.sampled_from([0, 1, 2, 3, 7, 13, 16, 17, 31, 64, 127, 128, 129, 257]),
                 st.integers(min_value=1, max_value=700))
ACTS = st.sampled_from(["none", "relu", "gelu", "gelu_tanh", "silu"])
LAYOUTS = st.sampled_from(["contiguous", "transposed", "row_stride", "offset"])


def _layout(x: torch.Tensor, how: str) -> torch.Tensor:
    """The same values in another memory layout."""
    r, c = x.shape
    if how == "transposed":
        return x.t().contiguous().t()
    if how == "row_stride":  # rows further apart than K
        big = torch.empty(r, c + 5, dtype=x.dtype, device=x.device)
        big[:, :c] = x
        return big[:, :c]
    if how == "offset":  # storage offset of one element: an unaligned base pointer
        flat = torch.empty(r * c + 1, dtype=x.dtype, device=x.device)
        v = flat[1:].view(r, c)
        v.copy_(x)
        return v
    return x


def _gemm_case(device, m, n, k, dtype, act, bias, residual, layout_a, layout_b, alpha, beta):
    a = _layout(fresh((m, k), dtype, device), layout_a)
    b = _layout(fresh((n, k), dtype, device, scale=k ** -0.5 if k else 1.0), layout_b)
    bias_t = {None: None, "out": fresh((n,), dtype, device), "f32": fresh((n,), torch.float32, device)}[bias]
    res = _layout(fresh((m, n), dtype, device), layout_a) if residual else None
    p = Problem(a, b, bias_t, res, act, alpha, beta, None)
    out = cutlass_gemm.gemm(a, b, bias=bias_t, residual=res, activation=act, alpha=alpha, beta=beta)
    check_result(out, p, f"fuzz gemm {m}x{n}x{k} {dtype} {act} bias={bias} res={residual} {layout_a}/{layout_b}")


GEMM_ARGS = dict(m=DIMS, n=DIMS, k=DIMS, dtype=st.sampled_from([torch.bfloat16, torch.float16]), act=ACTS,
                 bias=st.sampled_from([None, "out", "f32"]), residual=st.booleans(), layout_a=LAYOUTS,
                 layout_b=LAYOUTS, alpha=st.sampled_from([1.0, 0.5, -2.0]), beta=st.sampled_from([1.0, 0.25]))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(**GEMM_ARGS)
def test_fuzz_gemm_cpu(**kw):
    _gemm_case("cpu", **kw)


@pytest.mark.gpu
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(**GEMM_ARGS)
def test_fuzz_gemm_gpu(**kw):
    _gemm_case("cuda", **kw)


def _scaled_case(device, m, n, k, scales, act, bias, residual, layout_a, accumulate):
    from cutlass_gemm import quantize_fp8

    ga, gb = {"tensor": ("tensor", "tensor"), "row_col": ("row", "row"), "row_tensor": ("row", "tensor"),
              "blockwise": ("1x128", "128x128")}[scales]
    a8, sa = quantize_fp8(torch.randn(m, k, device=device) * 2, ga)
    b8, sb = quantize_fp8(torch.randn(n, k, device=device) * (k ** -0.5 if k else 1.0), gb)
    a8 = _layout(a8.view(torch.uint8), layout_a).view(torch.float8_e4m3fn)
    bias_t = {None: None, "out": fresh((n,), torch.bfloat16, device), "f32": fresh((n,), torch.float32, device)}[bias]
    res = fresh((m, n), torch.bfloat16, device) if residual else None
    p = ScaledProblem(a8, b8, sa, sb, bias_t, res, act, 1.0, accumulate)
    out = cutlass_gemm.scaled_mm(*p.args(), **p.kwargs())
    check_scaled_result(out, p, f"fuzz scaled_mm {m}x{n}x{k} {scales} {act} {accumulate} {layout_a}")


SCALED_ARGS = dict(m=DIMS, n=DIMS, k=DIMS, scales=st.sampled_from(["tensor", "row_col", "row_tensor", "blockwise"]),
                   act=ACTS, bias=st.sampled_from([None, "out", "f32"]), residual=st.booleans(), layout_a=LAYOUTS,
                   accumulate=st.sampled_from(["accurate", "fast"]))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(**SCALED_ARGS)
def test_fuzz_scaled_mm_cpu(**kw):
    _scaled_case("cpu", **kw)


@pytest.mark.gpu
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(**SCALED_ARGS)
def test_fuzz_scaled_mm_gpu(**kw):
    _scaled_case("cuda", **kw)
