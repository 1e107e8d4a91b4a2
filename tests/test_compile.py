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


# argv: package path, tests dir, device, "ours" | "plain", "compile" | "load". The two phases run in
# separate processes so that a load that crashes can be retried without compiling again (an AOTI
# compile of this model takes minutes on the H200 image). The plain control is a torch-only model in
# a process that never imports cutlass_gemm: when it fails too, AOTInductor is broken in this
# environment, not our op. On the H200 image (torch 2.11, $CXX a GCC other than the system one whose
# libstdc++ the process loads) loading any package segfaults in the generated wrapper's std::regex
# unless that libstdc++ is preloaded (notes/aoti.md, session 8); the test then retries the load with it.
_AOTI_SCRIPT = """
import sys, torch
path, dev, kind, phase = sys.argv[1], sys.argv[3], sys.argv[4], sys.argv[5]
torch.manual_seed(0)  # the same weights and input in both phases
if kind == "ours":
    import cutlass_gemm
    sys.path.insert(0, sys.argv[2])
    from test_compile import Mlp
    model = Mlp(torch.bfloat16, dev)
else:
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.SiLU(), torch.nn.Linear(512, 256)).to(dev, torch.bfloat16)
x = torch.randn(32, 256, device=dev, dtype=torch.bfloat16)
if phase == "compile":
    ep = torch.export.export(model, (x,))
    if kind == "ours":
        assert any("cutlass_gemm" in str(n.target) for n in ep.graph.nodes)
    torch._inductor.aoti_compile_and_package(ep, package_path=path)
    print("compiled", flush=True)
    sys.exit(0)
loaded = torch._inductor.aoti_load_package(path)
print("loaded", flush=True)
with torch.no_grad():
    got, want = loaded(x).float(), model(x).float()
# normwise: Inductor fuses LayerNorm/SiLU/residual in fp32 where eager rounds each to bf16, so a
# near-zero element can differ by 5% relative (CI, session 9) while the output as a whole agrees
err = ((got - want).norm() / want.norm()).item()
assert err < 2e-2, f"AOTI output differs from eager: relative Frobenius error {err:.3e} (at most 2e-2 expected)"
print("AOTI OK", flush=True)
"""


def _aoti_phase(tmp_path, device, kind, phase, env=None):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", _AOTI_SCRIPT, str(tmp_path / f"{kind}.pt2"), os.path.dirname(__file__),
                           device, kind, phase], capture_output=True, text=True, timeout=900, env=env)


def _preload_system_libstdcxx():
    """The environment with the system g++'s libstdc++ preloaded, or None without g++."""
    import os
    import shutil
    import subprocess

    gxx = shutil.which("g++")
    if gxx is None:
        return None
    lib = subprocess.run([gxx, "-print-file-name=libstdc++.so.6"], capture_output=True, text=True).stdout.strip()
    if not os.path.isabs(lib) or not os.path.exists(lib):
        return None
    old = os.environ.get("LD_PRELOAD")
    return dict(os.environ, LD_PRELOAD=os.path.realpath(lib) + (":" + old if old else ""))


def _round_trip(tmp_path, device, kind):
    """(ok, what happened): compile once, then load and run, again with the system libstdc++
    preloaded if the plain load fails."""
    c = _aoti_phase(tmp_path, device, kind, "compile")
    if c.returncode != 0 or "compiled" not in c.stdout:
        return False, f"compile failed (rc={c.returncode}): {(c.stderr.strip().splitlines() or [''])[-1]}"
    r = _aoti_phase(tmp_path, device, kind, "load")
    if r.returncode == 0 and "AOTI OK" in r.stdout:
        return True, "ok"
    env = _preload_system_libstdcxx()
    retry = _aoti_phase(tmp_path, device, kind, "load", env) if env else None
    if retry is not None and retry.returncode == 0 and "AOTI OK" in retry.stdout:
        return True, "ok with the system libstdc++ preloaded"
    last = retry if retry is not None else r  # the preloaded attempt's error is the informative one on the H200 image
    return False, (f"compiled; load+run rc={r.returncode} (reached: {'loaded' if 'loaded' in r.stdout else 'nothing'}), "
                   f"with the system libstdc++ preloaded: {'no g++' if retry is None else f'rc={retry.returncode}'}; "
                   f"{last.stderr[-1500:]}")


@pytest.mark.parametrize("device", DEVICES)
def test_aoti_package_round_trip(tmp_path, device):
    """export -> aoti_compile_and_package -> aoti_load_package -> run, against eager, in subprocesses
    (a crash fails or skips this test, not the run). When ours fails, a torch-only control model
    takes the same round trip: the test skips, quoting it, only when the control fails too."""
    ok, what = _round_trip(tmp_path, device, "ours")
    if ok:
        return
    control_ok, control = _round_trip(tmp_path, device, "plain")
    if not control_ok:
        pytest.skip(f"AOTInductor fails here without cutlass_gemm (torch-only model: {control}); ours: {what[:300]}")
    pytest.fail(f"the AOTI round trip of our model failed where a torch-only model's passed ({control}): {what}")
