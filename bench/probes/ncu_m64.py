# Session 26: why the FP8 64x64x256 ws tile at M = 64 (19.8-21 us at 8192x8192 under graph replay) trails the 64x16x256
# one at M = 16 (18.6 us) on the same weight bytes; cuBLAS's per-tensor kernels for reference. One launch each, run as
#   ncu --clock-control none --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis \
#     --section LaunchStats --section Occupancy --section WarpStateStats -f -o m64 python bench/probes/ncu_m64.py
# (output: bench/results/experiments/s26_ncu_m64.txt).
import torch, cutlass_gemm
from ncu_cases import profile_each  # bench/probes/ncu_cases.py (a script's own folder is on sys.path)
dev = "cuda"
torch.manual_seed(0)
def fp8_case(m, n, k, cfg):
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
    sa = torch.ones(1, device=dev); sb = torch.ones(1, device=dev)
    if cfg is None:
        return lambda: torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16)
    return lambda: cutlass_gemm.scaled_mm(a, b, sa, sb, config=cfg)
P = "sm90_e4m3_scaled_promoted_"
CASES = [
    ("m64 ws64x64", fp8_case(64, 8192, 8192, P + "t64x64x256_c1x1_ws_swapab")),
    ("m16 ws64x16", fp8_case(16, 8192, 8192, P + "t64x16x256_c1x1_ws_swapab")),
    ("m64 pp64x32", fp8_case(64, 8192, 8192, P + "t64x32x128_c1x1_pingpong_swapab")),
    ("m64 cublas", fp8_case(64, 8192, 8192, None)),
    ("m16 cublas", fp8_case(16, 8192, 8192, None)),
]
profile_each(CASES)
