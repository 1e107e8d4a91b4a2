"""Speed and capture-to-capture spread of the stream-K small-M kernels under each decomposition of
CUTLASS's SM90 stream-K scheduler, against the competitor, same run.

    python -m bench.decomposition_probe [--rounds 6] [--kind bf16|fp8|blockwise] [--scale row|tensor]
                                        [--modes default,streamk,splitk3] [--out F.json]

The knobs (CUTLASS_GEMM_DECOMPOSITION / _SPLITS / _REDUCTION, CUTLASS_GEMM_PDL) are read once per
process, so each mode runs in a child process (`--child MODE`). A child times each (shape, kernel) in
ROUNDS CUDA-graph captures on newly allocated inputs (bench/timing.py's steady graph, median of 7
replays per capture): a spread between captures that the competitor does not show is ours. Each
mode's output is then checked against a float64 reference. Session 9 found the heuristic's
data-parallel grids of fewer CTAs than SMs bimodal (notes/timing.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

MODES = {"default": {}, "dp": {"CUTLASS_GEMM_DECOMPOSITION": "1"}, "splitk4": {"CUTLASS_GEMM_SPLITS": "4"},
         "splitk8": {"CUTLASS_GEMM_SPLITS": "8"}, "streamk": {"CUTLASS_GEMM_DECOMPOSITION": "3"},
         "nondet": {"CUTLASS_GEMM_REDUCTION": "1"}, "pdl": {"CUTLASS_GEMM_PDL": "1"},
         "streamk_nondet": {"CUTLASS_GEMM_DECOMPOSITION": "3", "CUTLASS_GEMM_REDUCTION": "1"}}


def mode_env(mode: str):
    """A mode's knobs: MODES, or splitkN (split-K with N splits, 2-64); None if unknown."""
    if mode in MODES:
        return MODES[mode]
    if mode.startswith("splitk") and mode[6:].isdigit() and 2 <= int(mode[6:]) <= 64:
        return {"CUTLASS_GEMM_SPLITS": mode[6:]}
    return None
# (operands, accumulation, (M, N, K), the stream-K kernel the rules pick there)
CASES = [
    ("bf16", "accurate", (1, 10240, 8192), "sm90_bf16_t128x32x128_c1x1_coop_swapab_streamk"),
    ("bf16", "accurate", (16, 10240, 8192), "sm90_bf16_t128x32x128_c1x1_coop_swapab_streamk"),
    ("bf16", "accurate", (64, 8192, 8192), "sm90_bf16_t128x32x128_c1x1_coop_swapab_streamk"),
    ("bf16", "accurate", (1, 8192, 28672), "sm90_bf16_t128x32x128_c1x1_coop_swapab_streamk"),
    ("fp8", "accurate", (1, 10240, 8192), "sm90_e4m3_scaled_promoted_t128x32x128_c1x1_coop_swapab_streamk"),
    ("fp8", "accurate", (16, 10240, 8192), "sm90_e4m3_scaled_promoted_t128x32x128_c1x1_coop_swapab_streamk"),
    ("fp8", "accurate", (1, 57344, 8192), "sm90_e4m3_scaled_promoted_t128x32x128_c1x1_coop_swapab_streamk"),
    ("fp8", "fast", (1, 10240, 8192), "sm90_e4m3_scaled_fast_t128x32x128_c1x1_coop_swapab_streamk"),
    ("fp8", "fast", (16, 10240, 8192), "sm90_e4m3_scaled_fast_t128x32x128_c1x1_coop_swapab_streamk"),
    ("fp8", "fast", (128, 10240, 8192), "sm90_e4m3_scaled_fast_t128x128x128_c1x1_coop_streamk"),
] + [
    # DeepSeek blockwise at M <= 128: 17-56 output tiles and K up to 16384 (session 14); the competitor is
    # the 64-row ping-pong kernel the rules pick there.
    ("blockwise", "accurate", (m, n, k), "sm90_e4m3_blockwise_promoted_t128x128x128_c1x1_coop_streamk")
    for m in (64, 128) for n, k in ((2112, 7168), (7168, 16384), (4096, 7168), (7168, 2048))
]
BLOCKWISE_COMPETITOR = "sm90_e4m3_blockwise_promoted_t64x128x128_c1x1_pingpong"


def _contenders(kind, acc, m, n, k, kernel, with_competitor, scale="row"):
    """(make inputs, bytes per input set, {name: fn}); FP8 scales per row/column or per tensor."""
    import torch

    import cutlass_gemm

    dev = "cuda"
    if kind == "bf16":
        def make():
            return (torch.randn(m, k, device=dev, dtype=torch.bfloat16), torch.randn(n, k, device=dev, dtype=torch.bfloat16))
        fns = {"ours": lambda a, b: cutlass_gemm.gemm(a, b, config=kernel), "cuBLAS": lambda a, b: torch.mm(a, b.t())}
        nbytes = 2 * (m * k + n * k)
    elif kind == "blockwise":
        def make():
            a8, sa = cutlass_gemm.quantize_fp8(torch.randn(m, k, device=dev), "1x128")
            b8, sb = cutlass_gemm.quantize_fp8(torch.randn(n, k, device=dev), "128x128")
            return a8, b8, sa, sb
        fns = {"ours": lambda a, b, sa, sb: cutlass_gemm.scaled_mm(a, b, sa, sb, config=kernel),
               "pingpong": lambda a, b, sa, sb: cutlass_gemm.scaled_mm(a, b, sa, sb, config=BLOCKWISE_COMPETITOR)}
        nbytes = m * k + n * k
    else:
        e4 = torch.float8_e4m3fn

        def make():
            rows_a, rows_b = (m, n) if scale == "row" else (1, 1)
            return (torch.randn(m, k, device=dev).to(e4), torch.randn(n, k, device=dev).to(e4),
                    torch.rand(rows_a, 1, device=dev) + 0.5, torch.rand(rows_b, 1, device=dev) + 0.5)
        fns = {"ours": lambda a, b, sa, sb: cutlass_gemm.scaled_mm(a, b, sa, sb, accumulate=acc, config=kernel),
               "_scaled_mm": lambda a, b, sa, sb: torch._scaled_mm(a, b.t(), sa, sb.t(), out_dtype=torch.bfloat16,
                                                                   use_fast_accum=acc == "fast")}
        nbytes = m * k + n * k
    if not with_competitor:
        fns = {"ours": fns["ours"]}
    return make, nbytes, fns


def child(mode: str, rounds: int, cases, scale: str = "row") -> dict:
    import torch

    import cutlass_gemm

    from bench.timing import _replay_ms, _steady_graph, rotation_sets

    times, errs = {}, {}
    for kind, acc, (m, n, k), kernel in cases:
        key = f"{kind} {acc} {m}x{n}x{k}"
        make, nbytes, fns = _contenders(kind, acc, m, n, k, kernel, with_competitor=mode == "default", scale=scale)
        for name, fn in fns.items():
            meds = []
            for _ in range(rounds):
                sets = rotation_sets(make, nbytes)
                g, calls = _steady_graph(fn, sets, 20)
                meds.append(statistics.median(_replay_ms(g, calls) * 1e3 for _ in range(7)))
                del g, sets
            times[f"{key} {name}"] = meds
        torch.manual_seed(1)
        args = make()
        got = fns["ours"](*args).double()
        if kind == "bf16":
            ref = args[0].double() @ args[1].double().t()
        else:  # the library's dequantized reference, every granularity (blockwise included)
            ref = cutlass_gemm.scaled_mm_reference(*args, accumulate=acc, compute_dtype=torch.float64, cast_output=False)
        errs[key] = ((got - ref).norm() / ref.norm()).item()
    return {"mode": mode, "times": times, "errs": errs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--kind", choices=["bf16", "fp8", "blockwise"], help="only these cases")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated, of: " + ", ".join(MODES)
                    + ", splitkN (N splits, 2-64)")
    ap.add_argument("--scale", choices=["row", "tensor"], default="row", help="FP8 scales (and _scaled_mm's): per row "
                    "and column, or per tensor")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    cases = [c for c in CASES if args.kind in (None, c[0])]
    if args.child:
        print(json.dumps(child(args.child, args.rounds, cases, args.scale)))
        return 0
    modes = args.modes.split(",")
    unknown = [m for m in modes if mode_env(m) is None]
    if unknown:
        ap.error(f"unknown mode(s) {unknown}; expected some of {list(MODES)} or splitkN (2 <= N <= 64)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    res = {}
    for mode in modes:
        cmd = [sys.executable, "-m", "bench.decomposition_probe", "--child", mode, "--rounds", str(args.rounds)]
        cmd += ["--kind", args.kind] if args.kind else []
        cmd += ["--scale", args.scale]
        r = subprocess.run(cmd, cwd=root, env={**os.environ, **mode_env(mode)}, capture_output=True, text=True)
        if r.returncode:
            print(f"{mode}: failed\n{r.stderr[-2000:]}", flush=True)
            continue
        res[mode] = json.loads(r.stdout.strip().splitlines()[-1])
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"commit": os.environ.get("CUTLASS_GEMM_COMMIT", ""), "rounds": args.rounds, "scale": args.scale,
                       "modes": res}, f, indent=1)
    keys = list(next(iter(res.values()))["times"]) if res else []
    print("| case | " + " | ".join(f"{m} us (spread)" for m in res) + " |")
    print("|---" * (len(res) + 1) + "|")
    for key in sorted(keys, key=lambda s: (s.rsplit(" ", 1)[0], s.endswith("ours"))):
        cells = []
        for mode in res:
            t = res[mode]["times"].get(key)
            cells.append("" if t is None else f"{statistics.median(t):.1f} ({100 * (max(t) - min(t)) / min(t):.0f}%)")
        print(f"| {key} | " + " | ".join(cells) + " |")
    for mode in res:
        print(f"{mode}: max relative error {max(res[mode]['errs'].values()):.2e}")
    return 0 if len(res) == len(modes) else 1


if __name__ == "__main__":
    sys.exit(main())
