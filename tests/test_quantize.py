"""quantize_fp8: the fast implementation (few passes; a compiled kernel on CUDA) against a naive
float32 formulation of the documented rules, bit for bit; the traced formulation (inside a
caller's torch.compile); CUDA: compiled path == eager path == CPU, CUDA graph capture."""


import pytest
import torch

import cutlass_gemm
from cutlass_gemm import quantize as qz
from conftest import GPU_ARCH

GRANS = ["tensor", "row", "column", "1x128", "128x128"]
FP8 = [torch.float8_e4m3fn, torch.float8_e5m2]


def naive(x, granularity, dtype):
    """The rules in their plainest form: float32 everything, explicit clamp, full-size scales."""
    fmax = torch.finfo(dtype).max
    xf = x.float()
    r, c = x.shape
    br, bc = {"tensor": (max(r, 1), max(c, 1)), "row": (1, max(c, 1)), "column": (max(r, 1), 1),
              "1x128": (1, 128), "128x128": (128, 128)}[granularity]
    nr, nc = -(-r // br), -(-c // bc)
    xp = torch.zeros(nr * br, nc * bc)
    xp[:r, :c] = xf
    amax = xp.abs().reshape(nr, br, nc, bc).amax(dim=(1, 3))
    scale = torch.where(amax == 0, torch.ones_like(amax), (amax / fmax).clamp_min(torch.finfo(torch.float32).tiny))
    full = scale.repeat_interleave(br, 0).repeat_interleave(bc, 1)[:r, :c]
    q = (xf / full).clamp(-fmax, fmax).to(dtype)
    if granularity == "tensor":
        scale = scale.reshape(1)
    return q, scale


def _same(a, b):
    return torch.equal(a.view(torch.uint8), b.view(torch.uint8)) if a.dtype in FP8 else torch.equal(a, b)


def _input(r, c, dtype, device="cpu"):
    x = (torch.randn(r, c, device=device) * torch.logspace(-3, 3, c, device=device)).to(dtype)
    if r > 3:
        x[3] = 0  # an all-zero row
    return x


@pytest.mark.parametrize("granularity", GRANS)
@pytest.mark.parametrize("dtype", FP8)
@pytest.mark.parametrize("xdtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(130, 260), (256, 384), (1, 100), (5, 1)])
def test_matches_naive_bitwise(granularity, dtype, xdtype, shape):
    x = _input(*shape, xdtype)
    q, s = cutlass_gemm.quantize_fp8(x, granularity, dtype)
    q0, s0 = naive(x, granularity, dtype)
    assert q.shape == x.shape and q.dtype == dtype and q.is_contiguous()
    assert s.shape == s0.shape and s.dtype == torch.float32
    assert _same(s, s0), (s - s0).abs().max()
    assert _same(q, q0), (q.float() != q0.float()).sum()


def test_tiny_groups_stay_in_range():
    """amax far below float32's normal range: the scale floor keeps values finite (in range)."""
    x = torch.tensor([[1e-40, -3e-41, 0.0, 2e-45]] * 2)
    for g in ("row", "tensor", "1x128"):
        q, s = cutlass_gemm.quantize_fp8(x, g)
        assert torch.isfinite(q.float()).all() and (s == torch.finfo(torch.float32).tiny).all(), g
        assert q.float().abs().max() < 1 and q.float()[0, 0] > 0, g


def test_non_finite_propagates():
    x = torch.randn(4, 256)
    x[1, 7] = float("nan")
    x[2, 200] = float("inf")
    for g in ("row", "1x128"):
        q, s = cutlass_gemm.quantize_fp8(x, g)
        assert torch.isnan(s[1]).any() and torch.isinf(s[2]).any(), g
        assert torch.isfinite(s[[0, 3]]).all() and torch.isfinite(q.float()[[0, 3]]).all(), g


@pytest.mark.parametrize("granularity", GRANS)
def test_traced_formulation(granularity):
    """Inside a caller's torch.compile the traced ops give the same bits (aot_eager on CPU)."""
    torch._dynamo.reset()
    x = _input(130, 260, torch.bfloat16)
    f = torch.compile(lambda t: cutlass_gemm.quantize_fp8(t, granularity), fullgraph=True, backend="aot_eager")
    q, s = f(x)
    q0, s0 = cutlass_gemm.quantize_fp8(x, granularity)
    assert _same(q, q0) and _same(s, s0) and s.stride() == s0.stride()


@pytest.mark.parametrize("granularity", GRANS)
def test_float64_beyond_float32_range(granularity):
    """float64 groups above float32's max (but within max x 448) get a finite scale: the quotient is
    taken before the float32 rounding (the amax was rounded first, to inf, and the values went NaN)."""
    x = torch.tensor([[1e39, 1.0, -2e39, 3.0]], dtype=torch.float64)
    q, s = cutlass_gemm.quantize_fp8(x, granularity)
    assert torch.isfinite(s).all() and torch.isfinite(q.float()).all()
    big = x.abs() > 1e38
    deq = (q.double() * s.double().expand(1, 4) if s.numel() in (1, 4) or s.shape == (1, 1) else None)
    if deq is not None:  # one scale per element or per row/tensor: the big values come back within FP8 rounding
        assert ((deq[big] - x[big]).abs() <= 0.07 * x[big].abs()).all()


def test_no_autograd_history():
    x = torch.randn(8, 128, requires_grad=True)
    q, s = cutlass_gemm.quantize_fp8(x, "row")
    assert not q.requires_grad and not s.requires_grad


@pytest.mark.gpu
@pytest.mark.parametrize("granularity", GRANS)
@pytest.mark.parametrize("shape", [(2048, 8192), (77, 1000), (1, 128), (513, 28672)])
@pytest.mark.parametrize("path", ["kernel", "compiled"])
def test_cuda_fast_path_matches_cpu(granularity, shape, path, monkeypatch):
    """Each CUDA path of quantize_fp8 against the CPU: the CUDA kernel (the default for row / 1x128),
    and the opt-in torch.compile path (CUTLASS_GEMM_QUANT_COMPILE=1, the kernel turned off: it wins
    otherwise); 128x128 and small inputs take the eager path either way."""
    monkeypatch.setenv("CUTLASS_GEMM_QUANT_KERNEL", "1" if path == "kernel" else "0")
    monkeypatch.setenv("CUTLASS_GEMM_QUANT_COMPILE", "0" if path == "kernel" else "1")
    x = _input(*shape, torch.bfloat16, "cuda")
    fast = granularity in qz._FAST
    assert qz._use_kernel(x, granularity) == (path == "kernel" and fast)
    assert qz._use_compiled(x, granularity) == (path == "compiled" and fast and x.numel() >= qz._COMPILE_MIN_NUMEL), \
        f"compiled path unavailable (an earlier compile failed: {qz._COMPILE_FAILED})"
    q, s = cutlass_gemm.quantize_fp8(x, granularity)
    assert not qz._COMPILE_FAILED, "the compiled quantization path failed on this machine"
    qe, se = qz._quantize(x, granularity, torch.float8_e4m3fn)  # eager
    qc, sc = naive(x.cpu(), granularity, torch.float8_e4m3fn)
    assert s.stride() == se.stride()
    # CUDA divides by a scalar through its reciprocal (eager amax / fmax), and Inductor without
    # its IEEE-division option (older torch) may differ from IEEE division in the last bits of
    # the float32 quotient: scales within 2 ulp of the CPU's, and a flip of the FP8 rounding in a
    # few elements, never more than one step.
    for got_s in (s, se):
        torch.testing.assert_close(got_s.cpu(), sc, rtol=3e-7, atol=0)
    for got in (q, qe):
        diff = (got.float().cpu() != qc.float())
        assert diff.float().mean().item() < 5e-3, diff.sum()  # H200: ~0.1% of elements flip one step
        step = (got.float().cpu() - qc.float()).abs()[diff]
        one_step = torch.clamp(qc.float().abs()[diff] * 0.13, min=2.0 ** -9)  # e4m3: subnormal spacing 2^-9
        assert (step <= one_step).all()


@pytest.mark.gpu
def test_cuda_graph_capture():
    x = _input(512, 4096, torch.bfloat16, "cuda")
    for g in ("row", "1x128"):
        want = cutlass_gemm.quantize_fp8(x, g)  # warm-up (compiles)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            got = cutlass_gemm.quantize_fp8(x, g)
        x2 = _input(512, 4096, torch.bfloat16, "cuda")
        x.copy_(x2)
        graph.replay()
        want = qz._quantize(x2, g, torch.float8_e4m3fn)
        assert _same(got[0], want[0]) and _same(got[1], want[1]), g


@pytest.mark.gpu
@pytest.mark.parametrize("granularity", ["row", "1x128"])
@pytest.mark.parametrize("out", FP8)
@pytest.mark.parametrize("in_dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(1, 1), (3, 127), (77, 1000), (513, 4096), (2, 8192 + 64), (3, 40000), (2048, 8192 + 64)])
@pytest.mark.parametrize("offset", [0, 3], ids=["aligned", "offset"])
def test_cuda_kernel_matches_eager_bitwise(granularity, out, in_dtype, shape, offset):
    """torch.ops.cutlass_gemm._quantize_fp8_rows_ (what quantize_fp8 runs on CUDA) equals the eager
    CUDA formulation bit for bit: zero and NaN rows, partial 128-groups, a row stride > cols; 16-byte
    aligned rows take the vectorized kernel (a whole row in registers up to 8192 2-byte columns,
    longer rows read twice: 8256, 40000), offset rows the scalar one."""
    r, c = shape
    wide = _input(r, c + 40, torch.float32, "cuda").to(in_dtype)
    x = wide[:, offset:offset + c]  # unit column stride, row stride c + 40
    if r > 2:
        x[1, c // 2] = float("nan")
    assert qz._use_kernel(x, granularity)
    q, s = qz._quantize_kernel(x, granularity, out)
    qe, se = qz._quantize(x, granularity, out)
    assert q.shape == qe.shape and s.shape == se.shape
    assert [st for st, n in zip(s.stride(), s.shape) if n > 1] == [st for st, n in zip(se.stride(), se.shape) if n > 1]
    assert _same(q, qe), (q.view(torch.uint8) != qe.view(torch.uint8)).sum()
    assert torch.equal(s.isnan(), se.isnan()) and torch.equal(s.nan_to_num(), se.nan_to_num())
    q2, s2 = cutlass_gemm.quantize_fp8(x, granularity, out)  # the public entry takes the kernel
    assert _same(q2, q) and torch.equal(s2.nan_to_num(), s.nan_to_num())


@pytest.mark.parametrize("x, granularity, dtype, match", [
    (torch.randn(10), "row", torch.float8_e4m3fn, r"expected a 2-D bfloat16, float16, float32 or float64 x, got \(10,\)"),
    (torch.randn(2, 3, 4), "row", torch.float8_e4m3fn, r"expected a 2-D .* got \(2, 3, 4\)"),
    (torch.arange(6).reshape(2, 3), "row", torch.float8_e4m3fn, r"expected a 2-D .* torch.int64"),
    (torch.zeros(2, 3, dtype=torch.float8_e4m3fn), "row", torch.float8_e4m3fn, r"expected a 2-D .* torch.float8_e4m3fn"),
    (torch.randn(2, 3), "rows", torch.float8_e4m3fn, r"expected granularity one of .* got 'rows'"),
    (torch.randn(2, 3), "row", torch.bfloat16, r"expected dtype float8_e4m3fn or float8_e5m2, got torch.bfloat16"),
], ids=["1d", "3d", "int", "fp8-input", "granularity", "out-dtype"])
def test_bad_inputs_are_clear_errors(x, granularity, dtype, match):
    with pytest.raises(ValueError, match=match):
        cutlass_gemm.quantize_fp8(x, granularity, dtype)
