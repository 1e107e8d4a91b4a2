"""Which kernels the competitor launches, next to ours: the torch.profiler name and CUDA time per call
of every kernel behind cuBLAS's / torch._scaled_mm's expression and behind our op, shape by shape.
The first question at a shape that trails: the same tile in slower code, or a tile we lack
(cuBLAS's nvjet names read (N tile)x(M tile) ... cluster (N)x(M); notes/gpu_runbook.md, session 17).

    python -m bench.competitor_kernels [--op ... as bench.sweep] [--suite S | --shapes M,N,K ...] [--reps 20]

Times are CUDA kernel time summed per call (no graph replay, no L2 rotation): for naming, not for ratios.
"""

from __future__ import annotations

import collections
import os
import sys
from typing import Callable, List, Optional, Tuple

import torch

if __package__:  # python -m bench.competitor_kernels
    from .sweep import family_parser, family_plan
else:  # python bench/competitor_kernels.py
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench.sweep import family_parser, family_plan


def cuda_kernels(fn: Callable[[], object], reps: int) -> List[Tuple[str, float]]:
    """(kernel name, CUDA us per call) of everything fn launches, longest first; one warm-up call."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    per_call = collections.defaultdict(float)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per_call[e.name] += e.device_time / reps
    return sorted(per_call.items(), key=lambda kv: -kv[1])


def _cell(kernels: List[Tuple[str, float]], top: int = 2) -> str:
    total = sum(us for _, us in kernels)
    names = "; ".join(f"`{name[:100]}` {us:.1f}" for name, us in kernels[:top])
    return f"{total:.1f} | {names}"


def main(argv: Optional[List[str]] = None) -> int:
    ap = family_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="profiled calls per contender (default 20)")
    args = ap.parse_args(argv)
    if args.reps < 1:
        ap.error(f"--reps: expected a positive count, got {args.reps}")
    case, todo = family_plan(ap, args)
    if not torch.cuda.is_available():
        print("competitor_kernels: needs a CUDA GPU (it profiles the kernels each side launches)", file=sys.stderr)
        return 2
    print(f"# {case.title}: CUDA time per call (us) and the longest kernels, torch.profiler, {args.reps} calls")
    print("| M x N x K | ours: selected | us | kernels | competitor | us | kernels |")
    print("|---|---|---|---|---|---|---|")
    for _, shapes in todo:
        for m, n, k in shapes:
            inputs = case.make(m, n, k)
            ours = _cell(cuda_kernels(lambda: case.ours(*inputs), args.reps))
            for entry in case.torch_entries(m, n, k):
                theirs = _cell(cuda_kernels(lambda: entry.fn(*inputs), args.reps))
                print(f"| {m}x{n}x{k} | `{case.kernel(m, n, k)}` | {ours} | {entry.name} | {theirs} |", flush=True)
            del inputs
    return 0


if __name__ == "__main__":
    sys.exit(main())
