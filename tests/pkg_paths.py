"""Import paths for the tests' subprocesses. CI tests the installed wheel (a fresh venv, run from
outside the checkout), developers test an in-place build in the checkout: a child process must
import the same cutlass_gemm as the test process, and still find `bench` in the checkout."""

import os

import cutlass_gemm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The folder holding the cutlass_gemm this process imported: the checkout or a site-packages.
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(cutlass_gemm.__file__)))


def pythonpath(*extra: str) -> str:
    """PYTHONPATH for a child: this process's cutlass_gemm first, then the checkout (`bench`), then
    `extra` and the inherited PYTHONPATH. Run such children with a cwd outside the checkout when
    they use `python -m` (the cwd comes first on sys.path)."""
    parts = [PKG_PARENT, ROOT, *extra, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    seen, out = set(), []
    for p in parts:
        if p and p not in seen:
            seen.add(p)
            out.append(p)
    return os.pathsep.join(out)


def installed() -> bool:
    """True when the imported cutlass_gemm is not the checkout's (an installed wheel)."""
    return PKG_PARENT != ROOT
