# Session 53: FP8 accurate + bias at 2048x57344x8192 on the H100, where the H100 tables (sessions 47, 52) have the same
# kernel (promoted 128x128 c1x1 coop `_plain`) at 1984 us per-tensor against 1747 us per-row; the H200's are within 1.5%.
# The tables quantize their operands per tensor or per row (bench/cases.py), so the two differ in the FP8 bits as well
# as in the scales' shape. Here each is crossed with the other (same bias, same launch):
#   PYTHONPATH=. python bench/probes/sustained_clocks.py --probe tensor_vs_row --seconds 4
# Timing only: outputs are not compared here (`python -m bench` on the same shape checks them against `_scaled_mm`'s;
# the 4th case's averaged scales give other values by design). NAMES is importable without torch; cases() makes the
# inputs (~1.3 GB on the GPU).
CFG = "sm90_e4m3_scaled_promoted_t128x128x128_c1x1_coop_plain"
NAMES = ["ours: per-tensor data, per-tensor scales (the tensor table)", "ours: per-row data, per-row scales (the row table)",
         "ours: per-tensor data, per-row-shaped scales", "ours: per-row data, per-tensor scales",
         "_scaled_mm: per-tensor data and scales", "_scaled_mm: per-row data and scales"]


def cases():
    """[(name, fn)] in NAMES order; fn() launches the case once."""
    import torch

    import cutlass_gemm
    from bench.cases import quantize_for_op

    dev = "cuda"
    torch.manual_seed(0)
    m, n, k = 2048, 57344, 8192
    x, w = torch.randn(m, k, device=dev), torch.randn(n, k, device=dev) * k ** -0.5  # as bench/cases.py makes them
    at, sat = quantize_for_op(x, "tensor")
    wt, swt = quantize_for_op(w, "tensor")
    ar, sar = quantize_for_op(x, "row")
    wr, swr = quantize_for_op(w, "row")
    del x, w
    bias = torch.randn(n, device=dev, dtype=torch.bfloat16)
    rows = lambda s, r: s.reshape(1, 1).expand(r, 1).contiguous()  # noqa: E731  the same value, per-row shaped
    ours = lambda a, w, sa, sw: (lambda: cutlass_gemm.scaled_mm(a, w, sa, sw, bias=bias, config=CFG))  # noqa: E731
    theirs = lambda a, w, sa, sw: (lambda: torch._scaled_mm(a, w.t(), sa, sw, bias=bias,  # noqa: E731
                                                             out_dtype=torch.bfloat16))
    fns = [ours(at, wt, sat, swt), ours(ar, wr, sar, swr), ours(at, wt, rows(sat, m), rows(swt, n)),
           ours(ar, wr, sar.mean().reshape(1), swr.mean().reshape(1)),
           theirs(at, wt, sat.reshape(()), swt.reshape(())), theirs(ar, wr, sar.reshape(m, 1), swr.reshape(1, n))]
    return list(zip(NAMES, fns))
