"""FP8 scaled_mm without a GPU: the reference's semantics, quantize_fp8, schema, fake kernel,
opcheck (minus test_schema, which cannot compare float8 tensors), compile, every bad input."""

import pytest
import torch

import cutlass_gemm
from cutlass_gemm import quantize_fp8
from gemm_checks import BAD_SCALED_MM_INPUTS, GRANULARITY, check_scaled_result, make_scaled_problem


def test_schema():
    assert str(torch.ops.cutlass_gemm.scaled_mm.default._schema) == (
        "cutlass_gemm::scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor? bias=None, "
        "Tensor? residual=None, *, str activation=\"none\", float beta=1., ScalarType? out_dtype=None, "
        "str accumulate=\"accurate\", str config=\"\") -> Tensor"
    )
    # Functional: no argument is mutated or aliased by the output.
    for arg in torch.ops.cutlass_gemm.scaled_mm.default._schema.arguments:
        assert arg.alias_info is None, arg.name


@pytest.mark.parametrize("scales", list(GRANULARITY))
@pytest.mark.parametrize("epi", [dict(), dict(bias="f32", activation="gelu_tanh", residual=True, beta=0.5)])
def test_cpu_reference(scales, epi):
    p = make_scaled_problem(40, 300, 260, "cpu", scales=scales, **epi)
    out = cutlass_gemm.scaled_mm(*p.args(), **p.kwargs())
    check_scaled_result(out, p, f"cpu {scales}")


def test_blockwise_equals_dequantized_matmul_by_hand():
    x = torch.randn(3, 300)
    w = torch.randn(200, 300)
    a8, sa = quantize_fp8(x, "1x128")
    b8, sb = quantize_fp8(w, "128x128")
    assert sa.shape == (3, 3) and sb.shape == (2, 3)
    assert sa.stride() == (1, 4) and sb.t().is_contiguous()  # the kernel's native layouts (a's M padded to 4)
    out = cutlass_gemm.scaled_mm(a8, b8, sa, sb, out_dtype=torch.bfloat16)
    ad = a8.float() * sa.repeat_interleave(128, 1)[:, :300]
    bd = b8.float() * sb.repeat_interleave(128, 0)[:200].repeat_interleave(128, 1)[:, :300]
    torch.testing.assert_close(out, (ad @ bd.t()).to(torch.bfloat16))


@pytest.mark.parametrize("granularity", ["tensor", "row", "column", "1x128", "128x128"])
@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_quantize_roundtrip(granularity, dtype):
    x = torch.randn(130, 260) * 5
    x[3] = 0.0  # an all-zero row: scale 1, values 0
    q, s = quantize_fp8(x, granularity, dtype)
    assert q.dtype == dtype and s.dtype == torch.float32 and torch.isfinite(s).all() and (s > 0).all()
    r, c = x.shape
    if granularity in ("1x128", "128x128"):
        br = 1 if granularity == "1x128" else 128
        full = s.repeat_interleave(br, 0)[:r].repeat_interleave(128, 1)[:, :c]
    else:
        full = s
    rel = ((q.float() * full - x).norm() / x.norm()).item()
    assert rel < (0.04 if dtype == torch.float8_e4m3fn else 0.08)
    assert (q.float()[3] == 0).all() or granularity in ("tensor", "column", "128x128")


def test_quantize_rejects_bad_input():
    with pytest.raises(ValueError, match="granularity"):
        quantize_fp8(torch.randn(4, 4), "2x2")
    with pytest.raises(ValueError, match="2-D"):
        quantize_fp8(torch.randn(4), "row")


@pytest.mark.parametrize("case", BAD_SCALED_MM_INPUTS, ids=[c[0] for c in BAD_SCALED_MM_INPUTS])
def test_bad_inputs_cpu(case):
    _, build, message = case
    args, kwargs = build("cpu")
    with pytest.raises(RuntimeError) as e:
        cutlass_gemm.scaled_mm(*args, **kwargs)
    assert str(e.value) == message


def _samples():
    p = make_scaled_problem(16, 64, 256, "cpu", scales="row_col", bias="out", residual=True, activation="silu")
    yield p.args(), p.kwargs()
    p = make_scaled_problem(5, 130, 300, "cpu", scales="blockwise", bias="f32", activation="gelu")
    yield p.args(), p.kwargs()
    p = make_scaled_problem(7, 32, 64, "cpu", scales="tensor", accumulate="fast", b_dtype=torch.float8_e5m2)
    yield p.args(), p.kwargs()


@pytest.mark.parametrize("i,sample", list(enumerate(_samples())))
def test_opcheck_without_schema_test(i, sample):
    args, kwargs = sample
    torch.library.opcheck(torch.ops.cutlass_gemm.scaled_mm.default, args, kwargs,
                          test_utils=("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"))


def test_compile_fullgraph_cpu():
    torch._dynamo.reset()
    p = make_scaled_problem(16, 64, 256, "cpu", scales="row_col", bias="out")

    def f(a, b, sa, sb, bias):
        return torch.relu(cutlass_gemm.scaled_mm(a, b, sa, sb, bias=bias, activation="gelu")) * 2

    cf = torch.compile(f, fullgraph=True)
    torch.testing.assert_close(cf(*p.args(), p.bias), f(*p.args(), p.bias))


def test_explain_fp8():
    from cutlass_gemm import configs

    e4 = torch.float8_e4m3fn
    for accum, acc in (("promoted", "accurate"), ("fast", "fast")):  # each mode reads its own family's rules
        family = (90, "e4m3", "e4m3", "bf16", "tensor_row_col", accum)
        for m in (1, 64, 4096):
            want = next(r.kernel for r in configs.DEFAULT_RULES if r.spec.family == family and r.holds(m, 7168, 2048))
            assert configs.explain(m, 7168, 2048, e4, arch=90, accumulate=acc).kernel == want
    # blockwise accumulation is inherent: accumulate="fast" reads the blockwise family's rules too
    block = (90, "e4m3", "e4m3", "bf16", "blockwise", "promoted")
    want = next(r.kernel for r in configs.DEFAULT_RULES if r.spec.family == block and r.holds(4096, 7168, 2048))
    assert "_blockwise_" in want
    assert configs.explain(4096, 7168, 2048, e4, arch=90, scale="blockwise", accumulate="fast").kernel == want
    d = configs.explain(16, 64, 64, e4, arch=90, b_dtype=torch.float8_e5m2)
    assert d.kernel == "sm90_e4m3xe5m2_scaled_promoted_t128x128x128_c1x2_coop" and d.reason == "family fallback"


def test_one_element_scales_follow_a_forced_blockwise_config():
    """A 1-element scale is per-tensor, or the single block of a forced blockwise kernel."""
    a8, sa = quantize_fp8(torch.randn(1, 100), "1x128")
    b8, sb = quantize_fp8(torch.randn(20, 100), "128x128")
    assert sa.numel() == 1 and sb.numel() == 1
    want = cutlass_gemm.scaled_mm(a8, b8, sa, sb)
    got = cutlass_gemm.scaled_mm(a8, b8, sa, sb, config="sm90_e4m3_blockwise_promoted_t64x128x128_c1x1_pingpong")
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("granularity", ["tensor", "row", "column", "1x128", "128x128"])
def test_quantize_empty(granularity):
    q, s = quantize_fp8(torch.randn(3, 0), granularity)
    assert q.shape == (3, 0) and torch.isfinite(s).all()


@pytest.mark.parametrize("scales", ["tensor", "row_col", "blockwise"])
def test_k_zero(scales):
    """K = 0: act(bias) + beta * residual."""
    p = make_scaled_problem(3, 130, 0, "cpu", scales=scales, bias="f32", residual=True, activation="gelu")
    out = cutlass_gemm.scaled_mm(*p.args(), **p.kwargs())
    want = torch.nn.functional.gelu(p.bias) + p.residual.float()
    torch.testing.assert_close(out, want.to(torch.bfloat16))
