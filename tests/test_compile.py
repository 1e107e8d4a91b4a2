"""Compilation paths around the ops: torch.compile modes with normal layers around our ops and
no graph break, one compile across dynamic M, torch.export and an AOTInductor round trip."""

import pytest
import torch
import torch.nn.functional as F

import cutlass_gemm
from conftest import GPU_ARCH

DEVICES = ["cpu"] + (["cuda"] if GPU_ARCH else [])


class Mlp(torch.nn.Module):
    def __init__(self, dtype, device, fp8=False):
        super().__init__()
        self.norm = torch.nn.LayerNorm(256, dtype=dtype, device=device)
        self.up = torch.nn.Linear(256, 512, dtype=dtype, device=device)
        self.down = torch.nn.Linear(512, 256, dtype=dtype, device=device)
        cutlass_gemm.convert(self, fp8=fp8)

    def forward(self, x):
        return self.down(F.silu(self.up(self.norm(x)))) + x


class CountingBackend:
    def __init__(self, inner="inductor"):
        self.compiles, self.inner = 0, inner

    def __call__(self, gm, example_inputs):
        self.compiles += 1
        from torch._dynamo.backends.registry import lookup_backend

        return lookup_backend(self.inner)(gm, example_inputs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fp8", [False, True])
def test_dynamic_m_compiles_once(device, fp8):
    """M in {2, 17, 64, 300, 4096} with mark_dynamic: one compile (M = 1 would specialize)."""
    torch._dynamo.reset()
    model = Mlp(torch.bfloat16, device, fp8=fp8)
    backend = CountingBackend("inductor" if device == "cuda" else "aot_eager")
    cm = torch.compile(model, fullgraph=True, backend=backend)
    with torch.no_grad():
        for m in (2, 17, 64, 300, 4096):
            x = torch.randn(m, 256, device=device, dtype=torch.bfloat16)
            torch._dynamo.mark_dynamic(x, 0)
            got, want = cm(x), model(x)
            assert ((got.float() - want.float()).norm() / want.float().norm()).item() < 2e-2, m
    assert backend.compiles == 1


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["default", "max-autotune-no-cudagraphs", "reduce-overhead"])
def test_compile_modes_no_graph_break(mode):
    torch._dynamo.reset()
    model = Mlp(torch.bfloat16, "cuda")
    cm = torch.compile(model, fullgraph=True, mode=mode)
    x = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        for _ in range(3):
            got = cm(x).clone()
        want = model(x)
    assert ((got.float() - want.float()).norm() / want.float().norm()).item() < 2e-2


@pytest.mark.parametrize("device", DEVICES)
def test_export(device):
    model = Mlp(torch.bfloat16, device)
    x = torch.randn(32, 256, device=device, dtype=torch.bfloat16)
    ep = torch.export.export(model, (x,))
    assert any("cutlass_gemm.gemm" in str(n.target) for n in ep.graph.nodes)
    torch.testing.assert_close(ep.module()(x), model(x))


_AOTI_SCRIPT = """
import sys, torch, cutlass_gemm
sys.path.insert(0, sys.argv[2])
from test_compile import Mlp
model = Mlp(torch.bfloat16, "cuda")
x = torch.randn(32, 256, device="cuda", dtype=torch.bfloat16)
ep = torch.export.export(model, (x,))
path = torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[1])
loaded = torch._inductor.aoti_load_package(path)
with torch.no_grad():
    torch.testing.assert_close(loaded(x), model(x))
print("AOTI OK")
"""


@pytest.mark.gpu
@pytest.mark.xfail(reason="torch 2.11's AOTInductor runtime segfaults calling the stable-ABI custom op "
                          "(seen on the H200, 2026-11-29); open work", strict=False)
def test_aoti_package_round_trip(tmp_path):
    """In a subprocess: a crash in the AOTI runtime fails this test instead of the whole run."""
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _AOTI_SCRIPT, str(tmp_path / "mlp.pt2"), os.path.dirname(__file__)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "AOTI OK" in r.stdout, (r.returncode, r.stderr[-2000:])
