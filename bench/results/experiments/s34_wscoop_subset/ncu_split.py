# Session 34: why the split-N 64x192 wscoop tile trails the 128x96 c1x2 coop swap-AB tile per k-tile (FP8 fast,
# per-tensor, 192x57344x8192); cuBLAS for reference. One launch each under ncu.
import torch, cutlass_gemm
dev = "cuda"
torch.manual_seed(0)
def case(m, n, k, cfg):
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
    sa = torch.ones(1, device=dev); sb = torch.ones(1, device=dev)
    if cfg is None:
        return lambda: torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)
    return lambda: cutlass_gemm.scaled_mm(a, b, sa, sb, accumulate="fast", config=cfg)
F = "sm90_e4m3_scaled_fast_"
CASES = [
    ("wscoop64x192", case(192, 57344, 8192, F + "t64x192x128_c2x1_wscoop_swapab")),
    ("coop128x96", case(192, 57344, 8192, F + "t128x96x128_c1x2_coop_swapab")),
    ("cublas", case(192, 57344, 8192, None)),
]
for name, f in CASES:
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    torch.cuda.profiler.start(); f(); torch.cuda.synchronize(); torch.cuda.profiler.stop()
    print("profiled", name, flush=True)
