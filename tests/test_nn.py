"""nn.Linear / Fp8Linear drop-ins, convert(), and autograd of gemm: on CPU through the reference
kernels, and on the GPU (marked) through the real ones."""

import pytest
import torch
import torch.nn.functional as F

import cutlass_gemm
from cutlass_gemm import kernel_table as kt
from cutlass_gemm._autograd import activation_grad
from conftest import GPU_ARCH

DEVICES = ["cpu"] + (["cuda"] if GPU_ARCH else [])
ACTS = list(kt.ACTIVATIONS)
TORCH_ACT = {"none": lambda x: x, "relu": torch.relu, "gelu": F.gelu,
             "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu}


@pytest.mark.parametrize("activation", ACTS)
def test_activation_grad_matches_autograd(activation):
    z = torch.randn(1000, dtype=torch.float64) * 3
    z.requires_grad_(True)
    (g,) = torch.autograd.grad(TORCH_ACT[activation](z).sum(), z)
    torch.testing.assert_close(activation_grad(z.detach(), activation).double(), g, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("activation", ACTS)
def test_gemm_gradients(device, activation):
    torch.manual_seed(0)
    dt = torch.bfloat16
    a = torch.randn(2, 33, 64, device=device, dtype=dt, requires_grad=True)
    b = (torch.randn(48, 64, device=device) / 8).to(dt).requires_grad_(True)
    bias = torch.randn(48, device=device, dtype=torch.float32, requires_grad=True)
    res = torch.randn(2, 33, 48, device=device, dtype=dt, requires_grad=True)
    out = cutlass_gemm.gemm(a, b, bias=bias, residual=res, activation=activation, alpha=0.5, beta=2.0)
    g = torch.randn_like(out)
    grads = torch.autograd.grad(out, (a, b, bias, res), g)
    # float64 autograd of the same formula
    a64, b64, bias64, res64 = (t.detach().double().requires_grad_(True) for t in (a, b, bias, res))
    ref = TORCH_ACT[activation](0.5 * (a64 @ b64.t()) + bias64) + 2.0 * res64
    want = torch.autograd.grad(ref, (a64, b64, bias64, res64), g.double())
    for name, got, w in zip(("a", "b", "bias", "residual"), grads, want):
        assert got.dtype == {"bias": torch.float32}.get(name, dt), name
        err = ((got.double() - w).norm() / w.norm()).item()
        assert err < 2e-2, f"grad {name}: relative error {err:.2e}"


@pytest.mark.parametrize("device", DEVICES)
def test_linear_drop_in(device):
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 48, device=device, dtype=torch.bfloat16)
    ours = cutlass_gemm.nn.Linear.from_linear(lin, activation="gelu")
    assert isinstance(ours, torch.nn.Linear) and ours.weight is lin.weight
    x = torch.randn(5, 7, 64, device=device, dtype=torch.bfloat16)
    want = F.gelu(lin(x).float())
    got = ours(x)
    assert ((got.float() - want).norm() / want.norm()).item() < 1e-2
    fresh = cutlass_gemm.nn.Linear(64, 48, device=device, dtype=torch.bfloat16, activation="gelu")
    fresh.load_state_dict(lin.state_dict())  # same keys as nn.Linear
    torch.testing.assert_close(fresh(x), got)
    got.float().sum().backward()
    assert lin.weight.grad is not None and lin.weight.grad.shape == lin.weight.shape


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("granularity", ["row", "128x128"])
def test_fp8_linear(device, granularity):
    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 192, device=device, dtype=torch.bfloat16)
    f8 = cutlass_gemm.nn.Fp8Linear.from_linear(lin, weight_granularity=granularity)
    x = torch.randn(9, 256, device=device, dtype=torch.bfloat16)
    # Fake-quantized float32 reference: the same quantization, dequantized.
    xq, sx = cutlass_gemm.quantize_fp8(x, f8.input_granularity)
    ref = cutlass_gemm.scaled_mm_reference(xq, f8.weight_fp8, sx, f8.weight_scale, bias=lin.bias,
                                           compute_dtype=torch.float64, cast_output=False)
    got = f8(x)
    assert got.dtype == torch.bfloat16
    assert ((got.double() - ref).norm() / ref.norm()).item() < 1e-2
    # Against the bf16 layer: FP8 quantization error only.
    want = lin(x).float()
    assert ((got.float() - want).norm() / want.norm()).item() < 6e-2
    # state_dict round trip requantizes from the loaded master weight.
    other = cutlass_gemm.nn.Fp8Linear(256, 192, device=device, dtype=torch.bfloat16, weight_granularity=granularity)
    other.load_state_dict(lin.state_dict())
    torch.testing.assert_close(other(x), got)
    # A module-wide cast or move re-derives the FP8 copy from the master weight (it stays FP8).
    moved = other.float().to(device)
    assert moved.weight.dtype == torch.float32 and moved.weight_fp8.dtype == torch.float8_e4m3fn
    assert moved.weight_scale.dtype == torch.float32 and moved.weight_fp8.device == moved.weight.device
    torch.testing.assert_close(moved(x), got)


def test_bad_module_arguments():
    with pytest.raises(ValueError, match="expected activation one of"):
        cutlass_gemm.nn.Linear(4, 4, activation="tanh")
    with pytest.raises(ValueError, match="expected weight_granularity 'row' or '128x128'"):
        cutlass_gemm.nn.Fp8Linear(4, 4, weight_granularity="1x128")


@pytest.mark.parametrize("device", DEVICES)
def test_fp8_linear_inputs(device):
    """Fp8Linear reshapes x and the residual and casts the residual to bf16 before scaled_mm sees
    them: a wrong shape or dtype must raise there, not be reshaped into place or cast."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 128, device=device, dtype=torch.bfloat16)
    f8 = cutlass_gemm.nn.Fp8Linear.from_linear(lin)
    x = torch.randn(2, 3, 256, device=device, dtype=torch.bfloat16)
    bf = dict(device=device, dtype=torch.bfloat16)
    bad = [
        (dict(residual=torch.randn(3, 2, 128, **bf)), r"expected residual of shape \[2, 3, 128\] \(the output's\), got \[3, 2, 128\]"),
        (dict(residual=torch.randn(768, **bf)), r"expected residual of shape \[2, 3, 128\].*got \[768\]"),
        (dict(residual=torch.randn(128, **bf)), r"expected residual of shape \[2, 3, 128\].*got \[128\]"),
        (dict(residual=torch.randn(2, 3, 128, device=device)), "expected residual of dtype bfloat16 .*got float32"),
    ]
    for kwargs, msg in bad:
        with pytest.raises(RuntimeError, match="cutlass_gemm.nn.Fp8Linear: " + msg):
            f8(x, **kwargs)
    with pytest.raises(RuntimeError, match=r"expected x of shape \[\.\.\., in_features\] = \[\.\.\., 256\], got \[4, 255\]"):
        f8(torch.randn(4, 255, **bf))
    with pytest.raises(RuntimeError, match=r"expected x of shape .* got \[\]"):
        f8(torch.tensor(1.0, **bf))
    with pytest.raises(RuntimeError, match="expected x of dtype bfloat16, float16, float32 or float64, got int32"):
        f8(torch.ones(4, 256, device=device, dtype=torch.int32))
    # The right residual is added once, in place of nothing else (x 3-D, float16 in and out).
    r = torch.randn(2, 3, 128, **bf)
    torch.testing.assert_close(f8(x, residual=r).float(), f8(x).float() + r.float(), atol=3e-2, rtol=1e-2)
    x16 = x.half()
    y16 = f8(x16, residual=r.half())
    assert y16.dtype == torch.float16 and y16.shape == (2, 3, 128)
    torch.testing.assert_close(y16.float(), f8(x16).float() + r.float(), atol=3e-2, rtol=1e-2)


class _Block(torch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.up = torch.nn.Linear(64, 128, dtype=dtype)
        self.down = torch.nn.Linear(128, 64, dtype=dtype)
        self.norm = torch.nn.LayerNorm(64, dtype=dtype)
        self.f32 = torch.nn.Linear(64, 64)  # float32: ineligible for gemm
        self.lm_head = torch.nn.Linear(64, 100, dtype=dtype)

    def forward(self, x):
        h = self.down(F.silu(self.up(self.norm(x)))) + x
        return self.lm_head(h) + self.f32(h.float()).sum(-1, keepdim=True).to(h.dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fp8", [False, True])
def test_convert(device, fp8):
    torch.manual_seed(0)
    model = _Block(torch.bfloat16).to(device)
    x = torch.randn(3, 10, 64, device=device, dtype=torch.bfloat16)
    want = model(x).float()
    report = cutlass_gemm.convert(model, fp8=fp8)
    assert sorted(report.converted) == sorted(["down", "up"] + (["f32"] if fp8 else []))
    reasons = dict(report.skipped)
    assert reasons["lm_head"] == "excluded by name"
    if not fp8:
        assert "float32" in reasons["f32"]
    cls = cutlass_gemm.nn.Fp8Linear if fp8 else cutlass_gemm.nn.Linear
    assert isinstance(model.up, cls) and isinstance(model.down, cls)
    assert str(report).startswith(f"converted {len(report.converted)} Linear layers")
    got = model(x).float()
    assert ((got - want).norm() / want.norm()).item() < (6e-2 if fp8 else 1e-2)
