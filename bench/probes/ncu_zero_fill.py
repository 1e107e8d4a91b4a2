# Session 28: why a kernel whose activation tile has more rows than M slows as M falls (TMA zero fill of the missing
# rows?): the non-swapped FP8 64x80x256 ws tile at M = 1 / 16 / 64 (N = 10240, K = 8192: 30.5 / 28.7 / 25.2 us under
# graph replay in session 27's sweeps) and the swapped 64x16x256 ws tile (flat in M) at M = 1 / 16. One launch each:
#   ncu --clock-control none --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis \
#     --section WarpStateStats --metrics lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,\
#   smsp__cycles_active.avg -f -o zf python bench/probes/ncu_zero_fill.py
# (output: bench/results/experiments/s28_ncu_zero_fill.txt).
import torch, cutlass_gemm
from ncu_cases import profile_each  # bench/probes/ncu_cases.py (a script's own folder is on sys.path)
dev = "cuda"
torch.manual_seed(0)
def fp8_case(m, n, k, cfg):
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
    sa = torch.ones(m, 1, device=dev); sb = torch.ones(n, 1, device=dev)
    return lambda: cutlass_gemm.scaled_mm(a, b, sa, sb, config=cfg)
P = "sm90_e4m3_scaled_promoted_"
CASES = [(f"m{m} {tile}", fp8_case(m, 10240, 8192, P + tile))
         for tile in ("t64x80x256_c1x1_ws", "t64x16x256_c1x1_ws_swapab") for m in (1, 16, 64) if not (tile.endswith("swapab") and m == 64)]
profile_each(CASES)
