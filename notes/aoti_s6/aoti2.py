"""AOTI on the device: control (a plain torch model) vs ours, CPU and CUDA, native backtraces."""
import os, subprocess, sys, tempfile
CASE = r"""
import sys, faulthandler, torch
faulthandler.enable()
kind, dev = sys.argv[2], sys.argv[3]
import cutlass_gemm
sys.path.insert(0, sys.argv[4])
torch.manual_seed(0)
if kind == "plain":
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).to(dev, torch.bfloat16)
else:
    from test_compile import Mlp
    model = Mlp(torch.bfloat16, dev)
x = torch.randn(32, 256, device=dev, dtype=torch.bfloat16)
ep = torch.export.export(model, (x,))
path = torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[1])
print("compiled", flush=True)
loaded = torch._inductor.aoti_load_package(path)
print("loaded", flush=True)
with torch.no_grad():
    got = loaded(x)
    if dev == "cuda": torch.cuda.synchronize()
    print("ran", flush=True)
    torch.testing.assert_close(got, model(x))
print("AOTI OK", flush=True)
"""
tests = os.path.join(os.getcwd(), "tests")
lib = "/tmp/cg_segv.so"
subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", lib, "notes/aoti_s6/segv.c"], check=False)
print("gcc/g++:", subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[:1])
for kind, dev in [("plain", "cpu"), ("plain", "cuda"), ("ours", "cpu"), ("ours", "cuda")]:
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, LD_PRELOAD=lib) if os.path.exists(lib) else dict(os.environ)
        r = subprocess.run([sys.executable, "-c", CASE, os.path.join(d, "m.pt2"), kind, dev, tests],
                           capture_output=True, text=True, timeout=300, env=env)
    steps = [s for s in ("compiled", "loaded", "ran", "AOTI OK") if s in r.stdout]
    print(f"[{kind} {dev}] rc={r.returncode} reached: {', '.join(steps) or 'nothing'}", flush=True)
    if r.returncode != 0:
        err = r.stderr.splitlines()
        i = next((j for j, l in enumerate(err) if "native backtrace" in l), None)
        print("\n".join(err[i:i + 40] if i is not None else err[-25:]))
