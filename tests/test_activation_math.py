"""The epilogue's activation formulas (csrc/kernels/activation.cuh), emulated in float32 on the CPU against
float64 references: the 16-bit outputs' GELUs (tail polynomials, tools/fit_gelu.py) and the float32
outputs' tanh GELU (sigmoid form).
The GPU runs the real kernels on the same values (test_gpu_gemm.py's activation tests)."""

import importlib.util
import math
import os
import sys

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("fit_gelu", os.path.join(ROOT, "tools", "fit_gelu.py"))
fit_gelu = importlib.util.module_from_spec(spec)
sys.modules["fit_gelu"] = fit_gelu  # its dataclass looks its module up
spec.loader.exec_module(fit_gelu)

# The arguments the kernels see, from tiny to past every clamp, both signs.
X = torch.cat([torch.linspace(-16, 16, 64001), torch.logspace(-6, 4, 2001), -torch.logspace(-6, 4, 2001)]).float()


def ex2_ftz(p: torch.Tensor) -> torch.Tensor:
    y = torch.exp2(p)
    return torch.where(y < 2.0 ** -126, torch.zeros_like(y), y)  # ex2.approx.ftz flushes subnormal results


def relu_nan(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x.isnan(), x, x.clamp(min=0))  # max.NaN


def gelu_tail(x: torch.Tensor, tail) -> torch.Tensor:
    """activation.cuh gelu_tail with the header's constants, step by step in float32."""
    c = fit_gelu.header_constants()
    t = x.abs().clamp(max=c[f"k{tail.name}Clamp"])
    t = torch.where(x.isnan(), torch.full_like(t, c[f"k{tail.name}Clamp"]), t)  # fminf(NaN, clamp) = clamp
    q = ex2_ftz(fit_gelu.horner_f32(fit_gelu.header_coeffs(tail), t))
    return relu_nan(x) - t * q


ERF, TANH = fit_gelu.TAILS
K = math.sqrt(2 / math.pi)
REFERENCE = {  # float64 forms that do not cancel in the negative tail (F.gelu's 1 + erf / 1 + tanh do)
    "ErfTail": lambda x: x * torch.special.log_ndtr(x).exp(),
    "TanhTail": lambda x: x * torch.sigmoid(2 * K * (x + 0.044715 * x ** 3)),
}


def gelu_tanh_f32(x: torch.Tensor) -> torch.Tensor:
    """activation.cuh gelu_tanh (float32 outputs): x / (1 + 2^v), v = -2u log2(e), in float32."""
    v = x * (torch.tensor(-0.1029432396, dtype=torch.float32) * x * x + torch.tensor(-2.302208198, dtype=torch.float32))
    return x / (1 + torch.exp2(v))


def test_header_coefficients_hold_the_fit_bounds():
    assert fit_gelu.main(["--check"]) == 0
    for tail in fit_gelu.TAILS:
        e = fit_gelu.errors(tail, fit_gelu.header_coeffs(tail))
        assert e["max_rel"] <= tail.max_rel and e["decreasing_past_fit"] and e["p_at_clamp"] < -126, (tail.name, e)


def test_fit_reproduces_the_header():
    """The fit, rerun, gives the header's coefficients (to the printed digits' rounding)."""
    for tail in fit_gelu.TAILS:
        for got, want in zip(fit_gelu.fit(tail), fit_gelu.header_coeffs(tail)):
            assert abs(got - want) <= 1e-6 * abs(want), (tail.name, got, want)


def test_check_fails_on_bad_coefficients(tmp_path):
    """--check can fail: a perturbed coefficient breaks the error bound; a short list, a wrong clamp are named."""
    c = fit_gelu.header_coeffs(ERF)
    assert fit_gelu.problems(ERF, [c[0] * (1 + 1e-3)] + c[1:])
    assert any("coefficients, expected" in p for p in fit_gelu.problems(ERF, c[:-1]))
    assert any("clamp" in p for p in fit_gelu.problems(ERF, c, clamp=12.0))
    bad = tmp_path / "activation.cuh"
    bad.write_text("constexpr float kErfTail0 = 1.0f, kErfTailClamp = 14.0f;\n")
    assert fit_gelu.problems(ERF, fit_gelu.header_coeffs(ERF, str(bad)))


def test_16bit_gelus_match_torch():
    """Relative error <= the tail's bound for x >= -fit_t (every x > 0 included), absolute <= 2e-9 |x|
    below; exactly max(x, 0) past the clamp; NaN stays NaN, +inf stays +inf, -inf gives 0."""
    x = X.double()
    for tail in fit_gelu.TAILS:
        want = REFERENCE[tail.name](x)
        got = gelu_tail(X, tail).double()
        fit = (x >= -tail.fit_t) & (x != 0)
        rel = ((got - want).abs() / want.abs())[fit]
        assert rel.max().item() <= tail.max_rel, (tail.name, rel.max().item())
        far = x < -tail.fit_t
        assert ((got - want).abs()[far] <= 2e-9 * x.abs()[far]).all(), tail.name
        past = x.abs() >= tail.clamp
        assert torch.equal(got[past], x[past].clamp(min=0)) and (got[x == 0] == 0).all(), tail.name
        s = gelu_tail(torch.tensor([float("nan"), float("inf"), float("-inf"), -1e30, 1e30]), tail)
        assert s[0].isnan() and s[1] == float("inf") and s[2] == 0 and s[3] == 0 and s[4] == 1e30, (tail.name, s)
    # torch's own tanh GELU agrees with the sigmoid reference where its 1 + tanh does not cancel
    assert torch.allclose(REFERENCE["TanhTail"](x)[x > -5], F.gelu(x, approximate="tanh")[x > -5], rtol=1e-9, atol=0)


def test_f32_gelu_tanh_sigmoid_form_is_accurate_in_both_tails():
    """x * sigmoid(2u) = 0.5 x (1 + tanh u): relative error ~1e-6 even where 1 + tanh u cancels."""
    x = X.double()
    want = REFERENCE["TanhTail"](x)
    got = gelu_tanh_f32(X).double()
    big = want.abs() > 1e-30
    rel = ((got - want).abs() / want.abs())[big]
    assert rel.max().item() <= 1e-5, rel.max().item()
    assert (got[~big].abs() <= 1e-30).all()
    # the tanh form in float32 with tanh.approx's specified 2^-11 relative error would not be: at x = -4
    u = K * (-4.0 - 0.044715 * 64)
    assert 2.0 ** -11 > 1 + math.tanh(u)
