"""What a bug report needs: `python -m cutlass_gemm.env` (add `--json` for a machine-readable copy).

Prints this package (version, location, whether the compiled extension loaded and why not), what
it was built with (`cutlass_gemm.build_info()`: CUTLASS version, archs, kernels per arch, the torch
and CUDA it was built against), the running Python / torch / CUDA, the GPUs and the driver, the
tuning cache and the CUTLASS_GEMM_* settings. Works without a GPU and when the extension fails to
load (the package import is then reported, not raised).
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import sys
from typing import Dict, List, Optional

from .kernel_table import ARCH_OF_CAPABILITY  # pure Python: loads without torch and the extension


def _driver_version() -> Optional[str]:
    """The NVIDIA kernel driver version (e.g. 580.65.06), without nvidia-smi when possible."""
    try:
        with open("/proc/driver/nvidia/version") as fh:
            for tok in fh.readline().split():
                if tok[:1].isdigit() and "." in tok:
                    return tok
    except OSError:
        pass
    try:
        import subprocess

        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def _driver_cuda_version() -> Optional[str]:
    """The newest CUDA version the installed driver supports (cuDriverGetVersion), e.g. 13.0."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 and v.value:
            return f"{v.value // 1000}.{(v.value % 1000) // 10}"
    except (OSError, AttributeError):
        pass
    return None


def _cache_path(loaded: bool) -> str:
    if loaded:
        from . import autotune

        return autotune.cache_path()
    # Same rule as autotune.cache_path(), which needs the extension.
    base = os.environ.get("CUTLASS_GEMM_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "cutlass_gemm")
    return os.path.join(base, "tuned.json")


def gpu_support(arch: int, built_archs) -> str:
    """What this build does on a GPU of `arch` (0: not an arch cutlass_gemm has kernels for)."""
    if not arch:
        return "not supported"
    if built_archs is not None and arch not in built_archs:
        return (f"not in this build (sm_{arch} kernels not compiled; built: "
                f"{', '.join(f'sm_{a}' for a in built_archs) or 'none'}; rebuild with CUTLASS_GEMM_ARCHS)")
    return f"supported (sm_{arch} kernels)"


def collect() -> Dict[str, object]:
    import cutlass_gemm

    from . import _info

    loaded = _info.LOAD_ERROR is None and "cutlass_gemm._C" in sys.modules
    report: Dict[str, object] = {
        "cutlass_gemm": {
            "version": cutlass_gemm.__version__,
            "location": os.path.dirname(os.path.abspath(cutlass_gemm.__file__)),
            "extension": "loaded" if loaded else f"FAILED TO LOAD: {_info.LOAD_ERROR!r}",
        },
        "build": _info.build_info(),
        "python": {"version": sys.version.split()[0], "executable": sys.executable, "platform": platform.platform()},
    }
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - report anything
        report["torch"] = {"error": repr(e)}
        report.update(_host_sections(loaded))  # what needs no torch still helps
        return report

    gpus: List[Dict[str, object]] = []
    cuda_ok = False
    try:
        cuda_ok = torch.cuda.is_available()
        for d in range(torch.cuda.device_count() if cuda_ok else 0):
            p = torch.cuda.get_device_properties(d)
            cap = (p.major, p.minor)
            arch = int(torch.ops.cutlass_gemm._device_arch(d)) if loaded else ARCH_OF_CAPABILITY.get(cap, 0)
            gpus.append({"index": d, "name": p.name, "capability": f"sm_{p.major}{p.minor}", "sms": p.multi_processor_count,
                         "memory_gib": round(p.total_memory / 2**30, 1),
                         "cutlass_gemm": gpu_support(arch, report["build"].get("archs"))})
    except Exception as e:  # noqa: BLE001 - a broken driver is exactly what the report is for
        gpus.append({"error": repr(e)})
    report["torch"] = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "location": os.path.dirname(torch.__file__),
        "cuda_available": cuda_ok,
        "cudnn": torch.backends.cudnn.version() if cuda_ok else None,
    }
    report["gpus"] = gpus
    report.update(_host_sections(loaded))
    if loaded:
        from . import configs

        report["build"]["compiled_kernel_names"] = configs.compiled_kernels()
    return report


def _host_sections(loaded: bool) -> Dict[str, object]:
    """The driver, the tuning cache and the CUTLASS_GEMM_* settings: none of them needs torch."""
    path = _cache_path(loaded)
    return {
        "driver": {"version": _driver_version(), "cuda": _driver_cuda_version(),
                   "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES")},
        "tuning_cache": {"path": path, "exists": os.path.exists(path),
                         "CUTLASS_GEMM_CONFIG_FILE": os.environ.get("CUTLASS_GEMM_CONFIG_FILE")},
        "settings": {k: v for k, v in sorted(os.environ.items()) if k.startswith("CUTLASS_GEMM_")},
    }


def _format(report: Dict[str, object]) -> str:
    lines = []
    for section, body in report.items():
        lines.append(f"{section}:")
        items = body if isinstance(body, list) else [body]
        if isinstance(body, dict) and not body:
            lines.append("  (none)")
        for item in items:
            if isinstance(item, dict):
                for k, v in item.items():
                    if k in ("kernel_names", "compiled_kernel_names"):
                        continue  # long; in --json
                    lines.append(f"  {k}: {v}")
                if isinstance(body, list):
                    lines.append("  --")
        if isinstance(body, list) and not body:
            lines.append("  (none)")
    build = report.get("build") or {}
    names = build.get("compiled_kernel_names") or [n for ns in (build.get("kernel_names") or {}).values() for n in ns]
    if names:
        lines.append(f"kernels ({len(names)}): " + ", ".join(names))
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    report = collect()
    print(json.dumps(report, indent=2, default=str) if "--json" in argv else _format(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
