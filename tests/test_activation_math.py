"""The epilogue's activation formulas (csrc/kernels/activation.cuh), emulated in float32 on the CPU against
float64 torch: the 16-bit erf GELU's polynomial (tools/fit_gelu.py) and the sigmoid form of tanh GELU.
The GPU runs the real kernels on the same values (test_gpu_gemm.py's activation tests)."""

import importlib.util
import math
import os

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("fit_gelu", os.path.join(ROOT, "tools", "fit_gelu.py"))
fit_gelu = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fit_gelu)

# The arguments the kernels see, from tiny to past every clamp, both signs.
X = torch.cat([torch.linspace(-16, 16, 64001), torch.logspace(-6, 4, 2001), -torch.logspace(-6, 4, 2001)]).float()


def ex2_ftz(p: torch.Tensor) -> torch.Tensor:
    y = torch.exp2(p)
    return torch.where(y < 2.0 ** -126, torch.zeros_like(y), y)  # ex2.approx.ftz flushes subnormal results


def gelu16(x: torch.Tensor, coeffs) -> torch.Tensor:
    """activation.cuh gelu16, step by step in float32."""
    t = x.abs().clamp(max=14.0)
    q = ex2_ftz(fit_gelu.horner_f32(coeffs, t))
    return x * torch.where(x >= 0, 1 - q, q)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """activation.cuh gelu_tanh: x / (1 + 2^v), v = -2u log2(e), in float32."""
    v = x * (torch.tensor(-0.1029432396, dtype=torch.float32) * x * x + torch.tensor(-2.302208198, dtype=torch.float32))
    return x / (1 + torch.exp2(v))


def test_header_coefficients_hold_the_fit_bounds():
    assert fit_gelu.main(["--check"]) == 0
    e = fit_gelu.errors(fit_gelu.header_coeffs())
    assert e["max_rel"] <= fit_gelu.MAX_REL and e["decreasing_past_fit"] and e["p_at_clamp"] < -126


def test_fit_reproduces_the_header():
    """The fit, rerun, gives the header's coefficients (to the printed digits' rounding)."""
    for got, want in zip(fit_gelu.fit(), fit_gelu.header_coeffs()):
        assert abs(got - want) <= 1e-6 * abs(want), (got, want)


def test_check_fails_on_bad_coefficients(tmp_path):
    """--check can fail: a perturbed coefficient breaks the error bound, a short list is named."""
    c = fit_gelu.header_coeffs()
    assert fit_gelu.problems([c[0] * (1 + 1e-3)] + c[1:])
    assert any("coefficients, expected" in p for p in fit_gelu.problems(c[:-1]))
    bad = tmp_path / "activation.cuh"
    bad.write_text("constexpr float kGelu16P0 = 1.0f;\n")
    assert fit_gelu.problems(fit_gelu.header_coeffs(str(bad)))


def test_gelu16_matches_erf_gelu():
    """Relative error <= 6e-5 for x >= -6 (the fit's span, and every x > 0), absolute <= 1e-9 |x| below
    (|GELU| < 6e-9 there, where float32 erf's 1 + erf has cancelled to 0 or noise); exact x past +14;
    NaN and infinities as the erf formula."""
    x = X.double()
    want = x * torch.special.log_ndtr(x).exp()  # F.gelu's 1 + erf and ndtr lose the far tail in float64
    got = gelu16(X, fit_gelu.header_coeffs()).double()
    fit = (x >= -6) & (x != 0)
    rel = ((got - want).abs() / want.abs())[fit]
    assert rel.max().item() <= 6e-5, rel.max().item()
    assert ((got - want).abs()[x < -6] <= 1e-9 * x.abs()[x < -6]).all()
    assert torch.equal(got[X >= 14], x[X >= 14]) and (got[x == 0] == 0).all()
    s = gelu16(torch.tensor([float("nan"), float("inf"), float("-inf"), -1e30, 1e30]), fit_gelu.header_coeffs())
    assert s[0].isnan() and s[1] == float("inf") and s[2].isnan() and s[3] == 0 and s[4] == 1e30


def test_gelu_tanh_sigmoid_form_is_accurate_in_both_tails():
    """x * sigmoid(2u) = 0.5 x (1 + tanh u): relative error ~1e-6 even where 1 + tanh u cancels."""
    x = X.double()
    want = x * torch.sigmoid(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))  # F.gelu's 1 + tanh cancels
    assert torch.allclose(want[x > -5], F.gelu(x, approximate="tanh")[x > -5], rtol=1e-9, atol=0)
    got = gelu_tanh(X).double()
    big = want.abs() > 1e-30
    rel = ((got - want).abs() / want.abs())[big]
    assert rel.max().item() <= 1e-5, rel.max().item()
    assert (got[~big].abs() <= 1e-30).all()
    # the tanh form in float32 with tanh.approx's specified 2^-11 relative error would not be: at x = -4
    x = torch.tensor(-4.0, dtype=torch.float64)
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    assert 2.0 ** -11 > 1 + torch.tanh(u)
