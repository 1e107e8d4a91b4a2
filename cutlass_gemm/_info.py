"""`cutlass_gemm.build_info()` and the package's load state. Importable without the compiled
extension and without torch: `python -m cutlass_gemm.env` uses it to report a broken install."""

from __future__ import annotations

import sys
from typing import Dict, List, Optional

from ._version import __version__

# The ImportError of the package body, kept (instead of raised) only while the package is imported
# for `python -m cutlass_gemm.env`, so that the report can print it.
LOAD_ERROR: Optional[BaseException] = None

ENV_MODULE = "cutlass_gemm.env"


def env_report_requested() -> bool:
    """True while this package is imported by `python -m cutlass_gemm.env`: runpy imports the
    parent package first, with sys.argv[0] == "-m" (documented) while it locates the module."""
    if not sys.argv or sys.argv[0] != "-m":
        return False
    argv = getattr(sys, "orig_argv", [])  # Python >= 3.10 (requires-python)
    return ENV_MODULE in argv or ("-m" + ENV_MODULE) in argv


def _arch_of(name: str) -> int:
    return int(name.split("_", 1)[0][2:])  # kernel names start with sm<arch>_


def build_info() -> Dict[str, object]:
    """What this build of cutlass_gemm contains and was built with (written by setup.py into
    `cutlass_gemm/_build_info.py`):

    version, cutlass_version, cutlass_source, archs (e.g. [90, 100]), kernels (count per arch),
    kernel_names (per arch), kernel_filter (CUTLASS_GEMM_KERNELS of a partial build, else None),
    torch_version / cuda_version (the torch the extension was built against, and its CUDA),
    nvcc_version, git_commit, and extension_loaded / compiled_kernels (what the loaded
    extension reports, `torch.ops.cutlass_gemm._compiled_kernels`; None if it is not loaded).
    Without a build (a source checkout, an sdist) `built` is False and the rest is None.
    """
    try:
        from . import _build_info as bi
    except ImportError:
        bi = None
    names: Dict[int, List[str]] = {}
    for name in getattr(bi, "KERNELS", []):
        names.setdefault(_arch_of(name), []).append(name)
    archs = list(getattr(bi, "ARCHS", [])) if bi else None
    info: Dict[str, object] = {
        "version": __version__,
        "built": bi is not None,
        "cutlass_version": getattr(bi, "CUTLASS_VERSION", None),
        "cutlass_source": getattr(bi, "CUTLASS_SOURCE", None),
        "archs": archs,
        "kernels": {a: len(names.get(a, [])) for a in archs} if archs is not None else None,
        "kernel_names": {a: names.get(a, []) for a in archs} if archs is not None else None,
        "kernel_filter": getattr(bi, "KERNEL_FILTER", None),
        "torch_version": getattr(bi, "TORCH_VERSION", None),
        "cuda_version": getattr(bi, "CUDA_VERSION", None),
        "nvcc_version": getattr(bi, "NVCC_VERSION", None),
        "git_commit": getattr(bi, "GIT_COMMIT", None),
        # the .so can be in sys.modules yet refused (a CUDA or kernel-table mismatch): LOAD_ERROR says so
        "extension_loaded": LOAD_ERROR is None and "cutlass_gemm._C" in sys.modules,
        "compiled_kernels": None,
    }
    if info["extension_loaded"]:
        try:
            from . import configs

            info["compiled_kernels"] = len(configs.compiled_kernels())
        except Exception:  # pragma: no cover - a half-initialized package
            pass
    return info
