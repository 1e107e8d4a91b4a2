"""Benchmarks of cutlass_gemm against same-run torch competitors (`python -m bench --help`).

Importing this package makes no CUDA call; see bench/README.md."""
