#!/usr/bin/env bash
# Regenerates bench/results/ on an SM90 GPU: the suites, same-run competitors, no torch.compile
# column (its max-autotune costs minutes per shape; run `python -m bench --quick` for it).
# On a machine that got a copied tree, name the commit: CUTLASS_GEMM_COMMIT=<sha> bash bench/regenerate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-bench/results}"
python -m bench --suite square,llama3_70b --op gemm --epilogue none,bias_gelu_residual --no-compile --out "$OUT"
python -m bench --suite square,llama3_70b --op scaled_mm --scale tensor,row --accumulate accurate,fast --epilogue bias --no-compile --out "$OUT"
python -m bench --suite deepseek_v3 --op scaled_mm --scale blockwise --accumulate accurate --epilogue none --no-compile --out "$OUT"
