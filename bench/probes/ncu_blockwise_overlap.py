# Session 49: where the small-M blockwise tiles' time per k-block goes, CUTLASS's mainloop against the overlapped one
# (fp8.cuh OverlappedBlockwiseMma: the `_ovl` twins, slower at the best launches, experiments/s49_overlap), at
# 64x2112x7168 (56 k-blocks per CTA, one tile per CTA). Needs the experimental build (the `_ovl` twins:
# bench/results/experiments/s49_overlap/overlap.diff applied and built), not main's. One launch each, run as
#   ncu --clock-control none --profile-from-start off --set full --import-source no -f -o bw python bench/probes/ncu_blockwise_overlap.py
import torch, cutlass_gemm
from ncu_cases import profile_each  # bench/probes/ncu_cases.py (a script's own folder is on sys.path)
torch.manual_seed(0)
m, n, k = 64, 2112, 7168
a, sa = cutlass_gemm.quantize_fp8(torch.randn(m, k, device="cuda"), "1x128")
b, sb = cutlass_gemm.quantize_fp8(torch.randn(n, k, device="cuda"), "128x128")
P = "sm90_e4m3_blockwise_promoted_"
TILES = ["t64x32x128_c1x1_pingpong_swapab", "t128x32x128_c1x1_coop_swapab"]
CASES = [(t + s, (lambda cfg: lambda: cutlass_gemm.scaled_mm(a, b, sa, sb, config=cfg))(P + t + s))
         for t in TILES for s in ("", "_ovl")]
profile_each(CASES)
