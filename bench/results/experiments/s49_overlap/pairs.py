"""Session 49: the bench.ab pairs for the overlapped blockwise mainloop (fp8.cuh OverlappedBlockwiseMma), one per
deepseek_v3 shape at M <= 128: the shipped rules' launch (explain, with its PDL flag), then each small-M blockwise
tile and its `_ovl` twin, both with PDL.
    python bench/results/experiments/s49_overlap/pairs.py   -> the --pair arguments, one per line"""
import torch

import cutlass_gemm
from bench.suites import DEEPSEEK_V3_NK

P = "sm90_e4m3_blockwise_promoted_"
TILES = ["t128x16x128_c1x1_pingpong_swapab", "t128x32x128_c1x1_pingpong_swapab", "t128x32x128_c1x1_coop_swapab",
         "t64x32x128_c1x1_pingpong_swapab", "t64x128x128_c1x1_pingpong"]

for m in (64, 128):
    for n, k in DEEPSEEK_V3_NK:
        d = cutlass_gemm.configs.explain(m, n, k, torch.float8_e4m3fn, scale="blockwise")
        rules = d.kernel + ("+pdl" if d.pdl else "")
        tiles = [P + t + s + "+pdl" for t in TILES for s in ("", "_ovl")]
        print(f"{m},{n},{k}=" + ",".join([rules] + [t for t in tiles if t != rules]))  # the rules' launch once
