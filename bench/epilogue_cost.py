"""What each epilogue node costs: one forced bf16 kernel (and its `_noact` twin, where it has one) per shape,
timed under every epilogue variant (bias, residual, each activation, their combinations) with cuBLAS mm
alongside.

    python -m bench.epilogue_cost [--case M,N,K=KERNEL ...] [--rounds 3] [--json F]

Same timer as the tables (CUDA-graph replay over rotated inputs, bench/timing.py); ROUNDS rounds, the
variant order reversed every other round, median per variant. The fused output (bias + erf GELU +
residual) is checked against a float64 reference first. Session 23 found erf GELU (erff) costing the
64x128 ping-pong 37% over relu at 1024^3 this way (bench/results/experiments/s23_epilogue_cost_*.json).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

import torch

DEFAULT_CASES = ["1024,1024,1024=sm90_bf16_t64x128x64_c1x1_pingpong_st7",
                 "2048,2048,2048=sm90_bf16_t128x256x64_c2x1_coop",
                 "2048,2048,2048=sm90_bf16_t128x128x64_c1x2_pingpong",
                 "4096,4096,4096=sm90_bf16_t128x256x64_c2x1_coop"]
# kernel kind : epilogue parts ("res" = residual); "noact" runs the kernel's _noact twin
VARIANTS = ["cublas", "noact:none", "noact:bias", "noact:res", "noact:bias+res", "act:none", "act:bias", "act:gelu",
            "act:relu", "act:res", "act:bias+gelu", "act:gelu+res", "act:bias+gelu+res", "act:bias+gelu_tanh+res",
            "act:bias+relu+res"]


def parse_case(text: str):
    shape, sep, kernel = text.partition("=")
    try:
        m, n, k = (int(v) for v in shape.split(","))
    except ValueError:
        m = 0
    if not sep or not kernel or m <= 0 or n <= 0 or k <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected M,N,K=KERNEL with positive M, N, K")
    return (m, n, k), kernel


def fn_for(kernel: str, variant: str):
    import cutlass_gemm as cg
    if variant == "cublas":
        return lambda a, b, bias, res: torch.mm(a, b.t())
    kind, ep = variant.split(":")
    cfg = kernel + ("_noact" if kind == "noact" else "")
    parts = set(ep.split("+"))
    act = next((p for p in parts if p in ("gelu", "gelu_tanh", "relu")), "none")
    use_bias, use_res = "bias" in parts, "res" in parts
    return lambda a, b, bias, res: cg.gemm(a, b, bias=bias if use_bias else None, residual=res if use_res else None,
                                           activation=act, config=cfg)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", nargs="+", type=parse_case, default=[parse_case(c) for c in DEFAULT_CASES],
                    metavar="M,N,K=KERNEL", help="a shape and the bf16 act kernel to time there (default: "
                    + " ".join(DEFAULT_CASES) + ")")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write every round's times here")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    from cutlass_gemm import configs
    from cutlass_gemm import kernel_table as kt
    from bench.timing import graph_times_ms, rotation_sets
    names = set(configs.compiled_kernels())
    for _, kern in args.case:  # refused before anything runs
        spec = kt.KERNELS[kt.KERNEL_IDS[kern]] if kern in kt.KERNEL_IDS else None
        if spec is None or kern not in names:
            ap.error(f"{kern}: not a compiled kernel (cutlass_gemm.configs.kernels() lists them)")
        if spec.a != "bf16" or spec.scale != "none" or spec.out == "f32" or not spec.activation:
            ap.error(f"{kern}: expected a bf16 -> bf16 kernel with the activation node (not an FP8, f16, "
                     f"f32-output or _noact one; its _noact twin, if any, is timed alongside)")
    from bench.cli import check_json_path, check_kernels_on_this_gpu
    check_json_path(ap, args.json)
    check_kernels_on_this_gpu(ap, [kern for _, kern in args.case])
    out = []
    for (m, n, k), kern in args.case:
        variants = [v for v in VARIANTS if not v.startswith("noact:") or kern + "_noact" in names]
        def make():
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
            return (a, b, torch.randn(n, device="cuda", dtype=torch.bfloat16),
                    torch.randn(m, n, device="cuda", dtype=torch.bfloat16))
        sets = rotation_sets(make, 2 * (m * k + n * k + 2 * m * n))
        a, b, bias, res = sets[0]
        ref = torch.nn.functional.gelu(a.double() @ b.double().t() + bias.double()) + res.double()
        y = fn_for(kern, "act:bias+gelu+res")(a, b, bias, res)
        err = ((y.double() - ref).norm() / ref.norm()).item()
        if not err <= 2e-2:
            print(f"{m}x{n}x{k} {kern}: relative error {err:.2e} against float64, not timed", file=sys.stderr)
            return 1
        fns = [fn_for(kern, v) for v in variants]
        t = {v: [] for v in variants}
        for r in range(args.rounds):
            order = list(range(len(variants)))[:: 1 if r % 2 == 0 else -1]
            for i, x in zip(order, graph_times_ms([fns[i] for i in order], sets)):
                t[variants[i]].append(float(x) * 1e3 if not isinstance(x, BaseException) else float("nan"))
        med = {v: statistics.median(x) for v, x in t.items()}
        base = "noact:none" if "noact:none" in med else "act:none"  # no _noact twin: against activation none
        out.append(dict(shape=[m, n, k], kernel=kern, err=err, us=t))
        print(f"\n{m}x{n}x{k} {kern} (bias+gelu+residual error {err:.1e})")
        for v in variants:
            print(f"  {v:24s} {med[v]:9.2f} us  {med[v] / med[base]:.3f}x {base}")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
