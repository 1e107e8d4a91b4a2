"""The package version, in one place. pyproject.toml reads it statically (setuptools `attr:`, no
import, so no torch) and `cutlass_gemm.__version__` re-exports it."""

__version__ = "0.1.0"
