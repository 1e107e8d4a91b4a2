"""notes/aoti.md, session 8: does AOTInductor's package load work on the H200 image with a different libstdc++ or locale?
Runs tests/test_compile.py's torch-only control (_AOTI_SCRIPT, 'plain') in parallel variants.

    python notes/aoti_preload_probe.py [cpu|cuda]   (from the repository root)
"""
import os, subprocess, sys, tempfile, concurrent.futures as cf
sys.path.insert(0, "tests")
from test_compile import _AOTI_SCRIPT
gxx_lib = subprocess.run(["g++", "-print-file-name=libstdc++.so.6"], capture_output=True, text=True).stdout.strip()
print("g++:", subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0], "lib:", os.path.realpath(gxx_lib))
maps = subprocess.run([sys.executable, "-c", "import torch,re;print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libstdc++' in l or 'libgcc_s' in l}))"], capture_output=True, text=True)
print("python+torch maps:", maps.stdout.strip(), maps.stderr[-300:])
print("LANG/LC_ALL:", os.environ.get("LANG"), os.environ.get("LC_ALL"), "CXX:", os.environ.get("CXX"))
variants = {
    "baseline": {},
    "preload_gxx_libstdc++": {"LD_PRELOAD": gxx_lib},
    "LC_ALL=C": {"LC_ALL": "C", "LANG": "C"},
    "LC_ALL=C.UTF-8": {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"},
}
dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
def run(name):
    env = dict(os.environ, **variants[name])
    with tempfile.TemporaryDirectory() as d:
        try:
            r = subprocess.run([sys.executable, "-c", _AOTI_SCRIPT, os.path.join(d, "m.pt2"), "tests", dev, "plain"],
                               capture_output=True, text=True, timeout=int(os.environ.get("PROBE_TIMEOUT", "240")), env=env)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired:
            rc, out, err = "timeout", "", ""
    steps = [s for s in ("compiled", "loaded", "AOTI OK") if s in out]
    return name, rc, steps, err.strip().splitlines()[-3:]
with cf.ThreadPoolExecutor(len(variants)) as ex:
    for name, rc, steps, err in ex.map(run, variants):
        print(f"[{dev} {name}] rc={rc} reached: {', '.join(steps) or 'nothing'} | {' / '.join(err)[-300:]}", flush=True)
