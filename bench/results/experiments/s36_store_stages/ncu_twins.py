"""One launch of each store-stage candidate, its twin and the competitor at a shape, for ncu (call_b.sh):

    ncu --clock-control none --profile-from-start off --section SpeedOfLight --section WarpStateStats \
        --section SchedulerStats -f -o OUT python bench/results/experiments/s36_store_stages/ncu_twins.py

Each contender runs 5 times unprofiled, then once between profiler start and stop. The stall breakdown
(WarpStateStats) of a candidate against its twin says where the per-tile time went: waits on the TMA store
(barrier / membar / long scoreboard in the epilogue), the epilogue's arithmetic, or the mainloop.
"""
import torch

import cutlass_gemm  # noqa: F401  (registers the ops)
from bench.cases import make_case

torch.manual_seed(0)
BF, E4 = "sm90_bf16_", "sm90_e4m3_"
RUNS = [  # (make_case arguments, (M, N, K), kernels)
    (dict(op="gemm", epilogue="none"), (4096, 8192, 1024),
     [BF + "t128x256x64_c2x1_coop_noact", BF + "t128x256x64_c2x1_coop_noact_sd4", BF + "t128x256x64_c2x1_coop_noact_sd8"]),
    (dict(op="gemm", epilogue="bias_gelu_residual"), (4096, 8192, 1024),
     [BF + "t128x256x64_c2x1_coop", BF + "t128x256x64_c2x1_coop_sd4"]),
    (dict(op="scaled_mm", epilogue="none", scale="tensor", accumulate="accurate"), (4096, 8192, 2048),
     [E4 + "scaled_promoted_t128x128x128_c2x1_coop_noact", E4 + "scaled_promoted_t128x128x128_c2x1_coop_noact_sd4"]),
    (dict(op="scaled_mm", epilogue="none", scale="row", accumulate="fast"), (4096, 8192, 2048),
     [E4 + "scaled_fast_t128x256x128_c2x1_coop_noact", E4 + "scaled_fast_t128x256x128_c2x1_coop_noact_sd4",
      E4 + "scaled_fast_t128x256x128_c2x1_coop_noact_sd8"]),
    (dict(op="scaled_mm", epilogue="none", scale="blockwise"), (4096, 7168, 1536),
     [E4 + "blockwise_promoted_t128x128x128_c2x1_coop", E4 + "blockwise_promoted_t128x128x128_c2x1_coop_noact",
      E4 + "blockwise_promoted_t128x128x128_c2x1_coop_noact_sd4",
      E4 + "blockwise_promoted_t128x128x128_c2x1_coop_noact_sd5"]),
]

for args, (m, n, k), kernels in RUNS:
    case = make_case(**args)
    inputs = case.make(m, n, k)
    fns = [(name, lambda name=name: case.ours(*inputs, config=name)) for name in kernels]
    fns += [(entry.name, lambda entry=entry: entry.fn(*inputs)) for entry in case.torch_entries(m, n, k)[:1]]
    for name, fn in fns:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print(f"profiled {case.tag} {m}x{n}x{k} {name}", flush=True)
