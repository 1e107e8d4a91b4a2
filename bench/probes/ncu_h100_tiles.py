# Session 47: why the H100 wants wider tiles than the H200 at the overlay's shapes (README "Per-GPU overlays"): FP8 row
# fast + bias at 8192x57344x8192, the H200 rules' 128x128 c1x2 ping-pong `_plain` (7331 us on the H100) against the
# H100 overlay's 128x256 c2x1 coop `_plain` (5898) and `_scaled_mm`; bf16 bias + GELU(tanh) + residual at
# 8192x10240x8192, the 128x128 c1x2 ping-pong against the 128x256 c2x1 coop, and cuBLAS's mm. One launch each:
#   PYTHONPATH=. ncu --clock-control none --profile-from-start off --set full --metrics M -f -o R \
#     python bench/probes/ncu_h100_tiles.py        (bench/results/experiments/s47_h100_ncu/ncu.sh)
# NAMES is importable without torch (the summaries and sustained_clocks.py label their columns with it); cases()
# makes the inputs (~2.5 GB on the GPU).
F = "sm90_e4m3_scaled_fast_"
FP8_CASES = [("FP8 fast 128x128 c1x2 ping-pong _plain (H200 rules)", F + "t128x128x128_c1x2_pingpong_plain"),
             ("FP8 fast 128x256 c2x1 coop _plain (H100 overlay)", F + "t128x256x128_c2x1_coop_plain"),
             ("_scaled_mm row fast", None)]
BF16_CASES = [("bf16 fused 128x128 c1x2 ping-pong (H200 rules)", "sm90_bf16_t128x128x64_c1x2_pingpong"),
              ("bf16 fused 128x256 c2x1 coop (H100 overlay)", "sm90_bf16_t128x256x64_c2x1_coop"),
              ("cuBLAS mm", None)]
NAMES = [n for n, _ in FP8_CASES + BF16_CASES]


def cases():
    """[(name, fn)] in NAMES order; fn() launches the case once."""
    import torch

    import cutlass_gemm

    dev = "cuda"
    torch.manual_seed(0)
    m, n, k = 8192, 57344, 8192
    a8 = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    w8 = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
    sa, sw = torch.rand(m, 1, device=dev) + 0.5, torch.rand(n, 1, device=dev) + 0.5
    b8 = torch.randn(n, device=dev, dtype=torch.bfloat16)
    bm, bn, bk = 8192, 10240, 8192
    a = torch.randn(bm, bk, device=dev, dtype=torch.bfloat16)
    w = torch.randn(bn, bk, device=dev, dtype=torch.bfloat16)
    bias = torch.randn(bn, device=dev, dtype=torch.bfloat16)
    res = torch.randn(bm, bn, device=dev, dtype=torch.bfloat16)

    def fp8(cfg):
        if cfg is None:
            return lambda: torch._scaled_mm(a8, w8.t(), sa, sw.t(), bias=b8, out_dtype=torch.bfloat16,
                                            use_fast_accum=True)
        return lambda: cutlass_gemm.scaled_mm(a8, w8, sa, sw, bias=b8, accumulate="fast", config=cfg)

    def fused(cfg):
        if cfg is None:
            return lambda: torch.mm(a, w.t())
        return lambda: cutlass_gemm.gemm(a, w, bias=bias, residual=res, activation="gelu_tanh", config=cfg)

    return [(name, fp8(cfg)) for name, cfg in FP8_CASES] + [(name, fused(cfg)) for name, cfg in BF16_CASES]


if __name__ == "__main__":
    from ncu_cases import profile_each  # bench/probes/ncu_cases.py (a script's own folder is on sys.path)

    profile_each(cases())
