# Session 43: where the bf16 64x128 ping-pong's bias + GELU(tanh) + residual time goes at 1024^3 (one tile per CTA,
# so the epilogue is not hidden behind another tile's mainloop): the fused call, the same act kernel with no epilogue
# inputs, the `_plain_st7` kernel plain, then cuBLAS's mm and addmm for reference. One launch each, run as
#   PYTHONPATH=. ncu --clock-control none --profile-from-start off --set full -f -o fused python bench/probes/ncu_fused_epilogue.py
# (bench/results/experiments/s43_tables/call.sh NCU=1 runs it and exports the SASS-level stall samples).
import torch, cutlass_gemm
from ncu_cases import profile_each  # bench/probes/ncu_cases.py (a script's own folder is on sys.path)
dev = "cuda"
torch.manual_seed(0)
m = n = k = 1024
a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
bias = torch.randn(n, device=dev, dtype=torch.bfloat16)
res = torch.randn(m, n, device=dev, dtype=torch.bfloat16)
ACT = "sm90_bf16_t64x128x64_c1x1_pingpong_st7"
CASES = [
    ("ours fused", lambda: cutlass_gemm.gemm(a, w, bias=bias, residual=res, activation="gelu_tanh", config=ACT)),
    ("ours act kernel, plain", lambda: cutlass_gemm.gemm(a, w, config=ACT)),
    ("ours _plain_st7", lambda: cutlass_gemm.gemm(a, w, config="sm90_bf16_t64x128x64_c1x1_pingpong_plain_st7")),
    ("cublas mm", lambda: torch.mm(a, w.t())),
    ("cublas addmm", lambda: torch.addmm(bias, a, w.t())),
]
profile_each(CASES)
