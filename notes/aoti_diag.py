"""AOTInductor round trip diagnosis (notes/aoti.md). Runs the round trip of tests/test_compile.py
(_AOTI_SCRIPT: a torch-only model, then our Mlp; CPU, then CUDA where there is a GPU), each in its
own subprocess with a SIGSEGV handler preloaded (notes/aoti_segv.c: a native backtrace, for images
without gdb), and prints how far each got and the backtrace or the end of stderr. A case that
fails runs again with the system g++'s libstdc++ preloaded (the session-8 workaround for the H200
image, where $CXX is another GCC than the one whose libstdc++ the process maps; notes/aoti.md).

    python notes/aoti_diag.py
"""

import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")


def main() -> None:
    sys.path.insert(0, TESTS)
    import torch
    from test_compile import _AOTI_SCRIPT, _preload_system_libstdcxx

    lib = os.path.join(tempfile.gettempdir(), "cutlass_gemm_aoti_segv.so")
    built = subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", lib, os.path.join(ROOT, "notes", "aoti_segv.c")],
                           capture_output=True, text=True).returncode == 0
    env = dict(os.environ, LD_PRELOAD=lib) if built else dict(os.environ)
    print(f"torch {torch.__version__}; native backtraces: {'on' if built else 'off (gcc failed)'}; "
          f"CXX={os.environ.get('CXX')}")
    maps = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libstdc++" in line})
    preload = _preload_system_libstdcxx()
    print(f"libstdc++ mapped here: {maps}; system g++'s: {preload['LD_PRELOAD'].split(':')[0] if preload else 'no g++'}")
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devices:
        for kind in ("plain", "ours"):
            variants = [("", env)]
            if preload:  # the backtrace handler stays preloaded too
                both = ":".join(x for x in (preload["LD_PRELOAD"], env.get("LD_PRELOAD")) if x)
                variants.append((" +preload", dict(env, LD_PRELOAD=both)))
            for label, e in variants:
                with tempfile.TemporaryDirectory() as d:
                    r = subprocess.run([sys.executable, "-c", _AOTI_SCRIPT, os.path.join(d, "m.pt2"), TESTS, dev, kind],
                                       capture_output=True, text=True, timeout=900, env=e)
                steps = [s for s in ("compiled", "loaded", "AOTI OK") if s in r.stdout]
                print(f"[{kind} {dev}{label}] rc={r.returncode} reached: {', '.join(steps) or 'nothing'}", flush=True)
                if r.returncode == 0:
                    break
                err = r.stderr.splitlines()
                i = next((j for j, line in enumerate(err) if "native backtrace" in line), None)
                print("\n".join(err[i:i + 40] if i is not None else err[-25:]))


if __name__ == "__main__":
    main()
