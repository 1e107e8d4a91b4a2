"""Build cutlass_gemm: CUTLASS kernel units through our own ninja step (each unit compiled only
for the arch in its filename suffix), linked with the stable-ABI glue into one abi3 extension.

    pip install --no-build-isolation -e .          # needs a CUDA build of torch, nvcc, CUTLASS headers

Environment knobs:
    CUTLASS_GEMM_ARCHS    archs to build, e.g. "90a" or "90a;100a" (default "90a;100a")
    CUTLASS_GEMM_KERNELS  regex: build only the compile units holding a matching kernel (fast dev builds)
    CUTLASS_DIR           a CUTLASS checkout (else third_party/cutlass, else the nvidia-cutlass package)
    MAX_JOBS              parallel nvcc jobs (default: cores, at most one per 8 GB of memory)
    CUTLASS_GEMM_NVCC_FLAGS  extra nvcc flags for the kernel units (e.g. "-lineinfo -Xptxas -v")
    CUTLASS_GEMM_NVCC_LAUNCHER  a compiler cache put in front of nvcc for the kernel units (ccache, sccache)

Release: `python -m build --wheel --no-isolation` (one cp310-abi3 wheel), `python -m build --sdist
--no-isolation` (compiles nothing); the version lives in cutlass_gemm/_version.py.
"""

import importlib.util
import os
import re
import shlex
import subprocess
import sys

from setuptools import find_packages, setup

ROOT = os.path.dirname(os.path.abspath(__file__))
TORCH_TARGET = "-DTORCH_TARGET_VERSION=0x020a000000000000"  # stable ABI: runs on torch >= 2.10
# Extra nvcc flags per arch (appended to the unit's -gencode). GDC (programmatic dependent launch)
# support for SM100 kernels, as CUTLASS_ENABLE_GDC_FOR_SM90 in the shared flags does for SM90.
ARCH_FLAGS = {100: " -DCUTLASS_ENABLE_GDC_FOR_SM100"}


def fail(msg):
    sys.exit(f"cutlass_gemm build error: {msg}")


def load_kernel_table():
    path = os.path.join(ROOT, "cutlass_gemm", "kernel_table.py")
    spec = importlib.util.spec_from_file_location("_cutlass_gemm_kernel_table", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def cutlass_include_dirs():
    candidates = []
    if os.environ.get("CUTLASS_DIR"):
        candidates.append(("CUTLASS_DIR", os.environ["CUTLASS_DIR"]))
    candidates.append(("third_party/cutlass", os.path.join(ROOT, "third_party", "cutlass")))
    try:
        import cutlass_library

        candidates.append(("nvidia-cutlass", os.path.join(os.path.dirname(cutlass_library.__file__), "source")))
    except ImportError:
        pass
    for origin, base in candidates:
        inc = os.path.join(base, "include")
        if os.path.exists(os.path.join(inc, "cutlass", "cutlass.h")):
            return [inc, os.path.join(base, "tools", "util", "include")]
        if origin == "CUTLASS_DIR":
            fail(f"CUTLASS_DIR={base} has no include/cutlass/cutlass.h")
    fail(
        "CUTLASS headers not found: set CUTLASS_DIR, put a CUTLASS checkout in third_party/cutlass, "
        "or `pip install nvidia-cutlass==4.2.0.0`"
    )


def parse_archs():
    raw = os.environ.get("CUTLASS_GEMM_ARCHS", "90a;100a")
    archs = [a.strip() for a in re.split(r"[;, ]+", raw) if a.strip()]
    known = {"90a": 90, "100a": 100}
    bad = [a for a in archs if a not in known]
    if bad or not archs:
        fail(f"CUTLASS_GEMM_ARCHS={raw!r}: expected a ';'-separated subset of {sorted(known)}")
    return {known[a] for a in archs}


def default_jobs():
    try:
        mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        mem_gb = 16
    return max(1, min(os.cpu_count() or 1, int(mem_gb // 8)))  # a CUTLASS unit peaks at ~4-7 GB


def kernel_units(table, archs):
    """(source path, arch) of the generated units to build; checks they are fresh."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        import generate
    finally:
        sys.path.pop(0)
    stale = generate.stale_files()
    if stale:
        fail(f"generated files are stale ({', '.join(stale[:3])}...): run `python tools/generate.py`")
    pattern = os.environ.get("CUTLASS_GEMM_KERNELS")
    units = []
    for stem, arch, ids in table.compile_units():
        if arch not in archs:
            continue
        if pattern and not any(re.search(pattern, table.KERNELS[i].name) for i in ids):
            continue
        units.append((os.path.join(ROOT, "csrc", "instantiations", stem + ".cu"), arch))
    if pattern and not units:
        fail(f"CUTLASS_GEMM_KERNELS={pattern!r} matches no kernel of the built archs")
    # Hand-written, always built: the FP8 activation quantization kernel, one unit per arch.
    units += [(os.path.join(ROOT, "csrc", "kernels", f"quantize_fp8_sm{arch}.cu"), arch) for arch in sorted(archs)]
    return units


def build_kernel_objects(build_dir, cuda_home, includes, units):
    """Compile the kernel units with a ninja file of our own; returns the object paths."""
    nvcc = os.path.join(cuda_home, "bin", "nvcc")
    if not os.path.exists(nvcc):
        fail(f"nvcc not found at {nvcc}: install the CUDA toolkit (13.0) or set CUDA_HOME")
    flags = [
        "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr", "-Xcompiler", "-fPIC",
        "-DCUTLASS_ENABLE_GDC_FOR_SM90", "-DCUTLASS_DEBUG_TRACE_LEVEL=0",
        # CuTe offers the 64xNx16 wgmma shapes with N = 80, 88, 160, ... only under this define; without it
        # an 80-wide tile silently ran five 64x16 wgmmas per k-step (session 16). Power-of-two tiles are unchanged.
        "-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED",
        *[f"-I{p}" for p in includes], f"-I{os.path.join(ROOT, 'csrc')}",
        *shlex.split(os.environ.get("CUTLASS_GEMM_NVCC_FLAGS", "")),
    ]
    os.makedirs(build_dir, exist_ok=True)
    lines = [
        "ninja_required_version = 1.3",
        f"nvcc = {shlex.join([*nvcc_launcher(), nvcc])}",
        f"flags = {' '.join(shlex.quote(f) for f in flags)}",
        "rule nvcc",
        "  command = $nvcc $flags $gencode -MD -MF $out.d -c $in -o $out",
        "  depfile = $out.d",
        "  deps = gcc",
        "  description = nvcc $out",
        "",
    ]
    objs = []
    for src, arch in units:
        obj = os.path.join(build_dir, os.path.basename(src)[:-3] + ".o")
        objs.append(obj)
        lines.append(f"build {obj}: nvcc {src}")
        lines.append(f"  gencode = -gencode=arch=compute_{arch}a,code=sm_{arch}a{ARCH_FLAGS.get(arch, '')}")
    with open(os.path.join(build_dir, "build.ninja"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    jobs = int(os.environ.get("MAX_JOBS", default_jobs()))
    print(f"cutlass_gemm: compiling {len(units)} kernel units with {jobs} jobs", flush=True)
    subprocess.run(["ninja", "-C", build_dir, "-j", str(jobs)], check=True)
    return objs


def locate_cuda_home():
    """The CUDA toolkit root for torch's cpp_extension. An `nvcc` wrapper on PATH (e.g. a script
    in /usr/local/bin) must not make /usr/local the root: take the first candidate that has
    both bin/nvcc and include/cuda_runtime_api.h."""
    import glob
    import shutil

    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    candidates += ["/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*"), reverse=True)]
    for c in candidates:
        if c and os.path.exists(os.path.join(c, "bin", "nvcc")) and os.path.exists(
            os.path.join(c, "include", "cuda_runtime_api.h")
        ):
            return c
    return None


def nvcc_launcher():
    """CUTLASS_GEMM_NVCC_LAUNCHER, e.g. "ccache" or "sccache": prefixed to nvcc in the kernel ninja
    file, so CI runners can cache kernel units across builds (each takes minutes)."""
    return shlex.split(os.environ.get("CUTLASS_GEMM_NVCC_LAUNCHER", ""))


def build_facts(cuda_home, includes, table, units):
    """What `cutlass_gemm.build_info()` reports: CUTLASS and nvcc versions, the compiled kernels,
    the commit. Best effort: a fact that cannot be read is None, never a build failure."""
    facts = {"CUTLASS_VERSION": None, "NVCC_VERSION": None, "GIT_COMMIT": None}
    try:
        with open(os.path.join(includes[0], "cutlass", "version.h")) as fh:
            text = fh.read()
        parts = [re.search(rf"#define CUTLASS_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
        facts["CUTLASS_VERSION"] = ".".join(m.group(1) for m in parts) if all(parts) else None
    except OSError:
        pass
    try:
        out = subprocess.run([os.path.join(cuda_home, "bin", "nvcc"), "--version"], capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"release [\d.]+, V([\d.]+)", out)
        facts["NVCC_VERSION"] = m.group(1) if m else None
    except (OSError, subprocess.SubprocessError):
        pass
    if os.path.exists(os.path.join(ROOT, ".git")):
        try:
            git = ["git", "-C", ROOT]
            sha = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, timeout=30).stdout.strip()
            dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=30).stdout.strip()
            facts["GIT_COMMIT"] = (sha + ("+dirty" if dirty else "")) or None
        except (OSError, subprocess.SubprocessError):
            pass
    stems = {os.path.basename(src)[:-3] for src, _ in units}
    facts["KERNELS"] = [table.KERNELS[i].name for stem, _, ids in table.compile_units() if stem in stems for i in ids]
    facts["KERNEL_FILTER"] = os.environ.get("CUTLASS_GEMM_KERNELS") or None
    facts["CUTLASS_SOURCE"] = os.path.dirname(includes[0])
    return facts


def write_build_info(torch, archs, facts):
    """cutlass_gemm/_build_info.py (ignored by git, shipped in the wheel): what the import-time
    checks compare against and what `cutlass_gemm.build_info()` reports."""
    with open(os.path.join(ROOT, "cutlass_gemm", "_build_info.py"), "w") as fh:
        fh.write("# Written by setup.py at build time.\n")
        fh.write(f"CUDA_VERSION = {torch.version.cuda!r}\n")
        fh.write(f"TORCH_VERSION = {torch.__version__!r}\n")
        fh.write(f"ARCHS = {sorted(archs)!r}\n")
        for key, value in facts.items():
            fh.write(f"{key} = {value!r}\n")


def extension_setup():
    cuda_home = locate_cuda_home()
    if cuda_home:
        os.environ["CUDA_HOME"] = cuda_home
    try:
        import torch
        from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension
    except ImportError:
        fail("torch is not installed: `pip install torch==2.14.1`, then build with --no-build-isolation")
    if torch.version.cuda is None:
        fail(f"torch {torch.__version__} is a CPU build; the extension links against libtorch_cuda: install a CUDA build")
    if CUDA_HOME is None:
        fail("CUDA toolkit not found (no nvcc): install CUDA 13.0 or set CUDA_HOME")

    table = load_kernel_table()
    archs = parse_archs()
    includes = cutlass_include_dirs()
    units = kernel_units(table, archs)
    write_build_info(torch, archs, build_facts(CUDA_HOME, includes, table, units))

    class Build(BuildExtension):
        def build_extension(self, ext):
            build_dir = os.path.join(os.path.abspath(self.build_temp), "cutlass_gemm_kernels")
            ext.extra_objects = list(ext.extra_objects or []) + build_kernel_objects(build_dir, CUDA_HOME, includes, units)
            super().build_extension(ext)

    glue = ["csrc/torch_bindings.cpp", "csrc/registry.cpp", "csrc/device_info.cpp", "csrc/generated/kernel_table.cpp"]
    ext = CUDAExtension(
        name="cutlass_gemm._C",
        sources=glue,
        include_dirs=[os.path.join(ROOT, "csrc"), os.path.join(CUDA_HOME, "include")],
        extra_compile_args={"cxx": ["-O3", "-g0", "-DUSE_CUDA", TORCH_TARGET]},  # -g0: no DWARF in the wheel (Python's CFLAGS add -g)
        py_limited_api=True,  # abi3 (torch defines Py_LIMITED_API): one wheel for CPython >= 3.10
    )
    return dict(ext_modules=[ext], cmdclass={"build_ext": Build}, options={"bdist_wheel": {"py_limited_api": "cp310"}})


# Metadata-only commands (sdist, egg_info) must not need torch, nvcc or CUTLASS.
_NO_BUILD = {"sdist", "egg_info", "dist_info", "--version", "--name", "clean"}
kwargs = {} if set(sys.argv[1:]) & _NO_BUILD and not set(sys.argv[1:]) & {"build_ext", "bdist_wheel", "install"} else extension_setup()

# default_rules.json: the shipped selection rules (data read at import).
setup(packages=find_packages(include=["cutlass_gemm", "cutlass_gemm.*"]),
      package_data={"cutlass_gemm": ["default_rules.json"]}, **kwargs)
