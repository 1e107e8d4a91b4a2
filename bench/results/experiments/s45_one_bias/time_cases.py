"""Session 45: one process's times of the act kernels whose epilogue one_bias.patch changes (one bias node for either
dtype instead of a bias_d node in X and a float32 one after it), each forced by name, so two builds can be compared
round by round (call.sh runs the old and the new build in alternate processes; the names are the same in both).
    PYTHONPATH=<build> python time_cases.py --out times.json
CUDA-graph replay over rotated input sets (bench.timing), median of 15 replays per case."""
import argparse
import json

import torch

import cutlass_gemm
from bench.timing import graph_times_ms, rotation_sets

BF16 = [  # (M, N, K, kernel, epilogue)
    (1024, 1024, 1024, "sm90_bf16_t64x128x64_c1x1_pingpong_st7", "bias_gelu_residual"),
    (128, 8192, 8192, "sm90_bf16_t64x128x64_c1x1_pingpong_st7", "bias_gelu_residual"),
    (2048, 2048, 2048, "sm90_bf16_t128x256x64_c2x1_coop", "bias_gelu_residual"),
    (4096, 4096, 4096, "sm90_bf16_t128x256x64_c2x1_coop", "bias_gelu_residual"),
    (4096, 4096, 4096, "sm90_bf16_t128x256x64_c2x1_coop", "bias_gelu"),
    (512, 8192, 8192, "sm90_bf16_t256x128x64_c2x1_coop", "bias_gelu_residual"),
    (2048, 8192, 8192, "sm90_bf16_t128x128x64_c1x2_pingpong", "bias_gelu_residual"),
]
FP8 = [  # (M, N, K, kernel, scale, accumulate, epilogue)
    (4096, 4096, 4096, "sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop", "row", "accurate", "bias"),
    (4096, 4096, 4096, "sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop", "row", "accurate", "bias_gelu_residual"),
    (2048, 8192, 8192, "sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop", "row", "accurate", "bias_gelu_residual"),
    (128, 8192, 28672, "sm90_e4m3_scaled_promoted_t64x128x128_c1x1_pingpong", "tensor", "accurate", "bias"),
    (8192, 8192, 8192, "sm90_e4m3_scaled_fast_t128x256x128_c2x1_coop", "row", "fast", "bias"),
    (128, 57344, 8192, "sm90_e4m3_scaled_fast_t128x128x128_c1x2_pingpong", "row", "fast", "bias"),
    # call_b.sh (the FP8 fused rows, after 2048x8192x8192's rounds spread 0.99-1.21 in call.sh)
    (2048, 8192, 8192, "sm90_e4m3_scaled_promoted_t128x128x128_c1x2_coop", "row", "accurate", "bias"),
    (2048, 2048, 2048, "sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop", "row", "accurate", "bias_gelu_residual"),
    (8192, 8192, 8192, "sm90_e4m3_scaled_promoted_t128x128x128_c2x1_coop", "row", "accurate", "bias_gelu_residual"),
    (512, 8192, 8192, "sm90_e4m3_scaled_promoted_t64x128x128_c1x1_pingpong", "row", "accurate", "bias_gelu_residual"),
]


def epi_kwargs(epi, m, n, dev):
    kw = {}
    if "bias" in epi:
        kw["bias"] = torch.randn(n, device=dev, dtype=torch.bfloat16)
    if "gelu" in epi:
        kw["activation"] = "gelu_tanh"
    if "residual" in epi:
        kw["residual"] = torch.randn(m, n, device=dev, dtype=torch.bfloat16)
    return kw


def bf16_case(m, n, k, kernel, epi):
    dev = "cuda"

    def make():
        return (torch.randn(m, k, device=dev, dtype=torch.bfloat16), torch.randn(n, k, device=dev, dtype=torch.bfloat16),
                epi_kwargs(epi, m, n, dev))
    sets = rotation_sets(make, 2 * (m * k + n * k + 2 * m * n))
    return (lambda a, b, kw: cutlass_gemm.gemm(a, b, config=kernel, **kw)), sets


def fp8_case(m, n, k, kernel, scale, acc, epi):
    dev = "cuda"

    def make():
        a = (torch.randn(m, k, device=dev) / 4).to(torch.float8_e4m3fn)
        b = (torch.randn(n, k, device=dev) / 4).to(torch.float8_e4m3fn)
        sa = torch.rand(m if scale == "row" else 1, 1, device=dev) + 0.5
        sb = torch.rand(n if scale == "row" else 1, 1, device=dev) + 0.5
        return a, b, sa.reshape(-1) if scale == "tensor" else sa, sb.reshape(-1) if scale == "tensor" else sb, \
            epi_kwargs(epi, m, n, dev)
    sets = rotation_sets(make, m * k + n * k + 4 * m * n)
    return (lambda a, b, sa, sb, kw: cutlass_gemm.scaled_mm(a, b, sa, sb, accumulate=acc, config=kernel, **kw)), sets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--match", default="", help="only the cases whose label contains this")
    args = ap.parse_args()
    torch.manual_seed(0)
    out = {}
    cases = [("gemm %dx%dx%d %s %s" % c, bf16_case, c) for c in BF16]
    cases += [("scaled_mm %dx%dx%d %s %s %s %s" % c, fp8_case, c) for c in FP8]
    if not any(args.match in label for label, _, _ in cases):
        ap.error(f"--match {args.match!r}: no case label contains it (labels: {[label for label, _, _ in cases]})")
    for label, make_case, c in cases:
        if args.match in label:
            fn, sets = make_case(*c)
            out[label] = graph_times_ms([fn], sets)[0] * 1e3
            del sets
    out = {k: (v if isinstance(v, float) else repr(v)) for k, v in out.items()}
    json.dump(out, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
