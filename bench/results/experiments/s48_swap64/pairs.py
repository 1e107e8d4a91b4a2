"""Session 48: the bench.ab pairs for the swapped 64-row blockwise tiles, one per deepseek_v3 shape at M <= 128:
the shipped rules' launch (explain, with its PDL flag) against both new tiles, each with and without PDL.
    python bench/results/experiments/s48_swap64/pairs.py   -> the --pair arguments, one per line"""
import torch

import cutlass_gemm
from bench.suites import DEEPSEEK_V3_NK

# The 64x16 tile of session 48's run was retired in session 49 (slower than the 64x32 one at every shape here).
NEW = ["sm90_e4m3_blockwise_promoted_t64x32x128_c1x1_pingpong_swapab"]

for m in (64, 128):
    for n, k in DEEPSEEK_V3_NK:
        d = cutlass_gemm.configs.explain(m, n, k, torch.float8_e4m3fn, scale="blockwise")
        rules = d.kernel + ("+pdl" if d.pdl else "")
        print(f"{m},{n},{k}=" + ",".join([rules] + [x + p for x in NEW for p in ("", "+pdl")]))
