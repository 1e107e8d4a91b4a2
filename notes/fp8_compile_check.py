import torch, cutlass_gemm, traceback
for g in ("row", "128x128"):
    for epc in (False, True):
        torch._dynamo.reset()
        m = cutlass_gemm.nn.Fp8Linear(1024, 2048, dtype=torch.bfloat16, device="cuda", weight_granularity=g)
        x = torch.randn(64, 1024, device="cuda", dtype=torch.bfloat16)
        try:
            with torch._inductor.config.patch(emulate_precision_casts=epc):
                y = torch.compile(m, fullgraph=True)(x)
            print(g, "emulate_precision_casts", epc, "OK", ((y.float() - m(x).float()).norm() / m(x).float().norm()).item())
        except Exception as e:
            print(g, "emulate_precision_casts", epc, "FAIL", type(e).__name__, str(e)[:300])
