"""AOTInductor round trip diagnosis (see notes/aoti.md). Each case runs in its own subprocess so a
segfault is reported, with faulthandler's Python stack, instead of killing the run.

    python notes/aoti_diag.py            # on the H200; CPU-only machines run the CPU cases

Cases: cpu   - CPU package: proxy executor -> dispatcher -> our Python CPU kernel (no stable ABI
               kernel involved): isolates the proxy executor's argument marshalling.
       cuda  - CUDA package, same graph: proxy executor -> the stable-ABI CUDA kernel.
       cuda_same_process_loaded / _positional variants are in notes/aoti.md (manual).
"""

import os
import subprocess
import sys
import tempfile

CASE = r"""
import sys, faulthandler, torch, cutlass_gemm
faulthandler.enable()
sys.path.insert(0, sys.argv[3])
from test_compile import Mlp
dev = sys.argv[2]
torch.manual_seed(0)
model = Mlp(torch.bfloat16, dev)
x = torch.randn(32, 256, device=dev, dtype=torch.bfloat16)
ep = torch.export.export(model, (x,))
path = torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[1])
print("compiled", flush=True)
loaded = torch._inductor.aoti_load_package(path)
print("loaded", flush=True)
with torch.no_grad():
    got = loaded(x)
    if dev == "cuda":
        torch.cuda.synchronize()
    print("ran", flush=True)
    torch.testing.assert_close(got, model(x))
print("AOTI OK", flush=True)
"""


def main() -> None:
    import torch

    tests = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"torch {torch.__version__}")
    for dev in devices:
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, "-c", CASE, os.path.join(d, "m.pt2"), dev, tests],
                               capture_output=True, text=True, timeout=900)
        steps = [s for s in ("compiled", "loaded", "ran", "AOTI OK") if s in r.stdout]
        print(f"[{dev}] rc={r.returncode} reached: {', '.join(steps) or 'nothing'}")
        if r.returncode != 0:
            print("\n".join(r.stderr.splitlines()[-40:]))


if __name__ == "__main__":
    main()
