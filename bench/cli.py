"""python -m bench: cutlass_gemm against same-run torch competitors on the shape suites of
shared/benchmarks.md; writes <suite>_<case>.{md,json,png} under --out. See bench/README.md."""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import sys
from typing import Callable, List, Optional, Sequence

import torch

import cutlass_gemm

from . import report, runner, suites
from .cases import DTYPES, EPILOGUES, SCALE_MODES, Case, make_case
from .timing import replays_per_round

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
ACCUMULATE = ("accurate", "fast")
DESCRIPTION = ("cutlass_gemm vs same-run torch competitors (CUDA-graph replay, median, rotated inputs; "
               "checked before timed). Writes <suite>_<case>.md/.json/.png under --out.")


def _choices(valid: Sequence[str]) -> Callable[[str], List[str]]:
    """argparse type: a comma list of values from `valid`."""
    def parse(text: str) -> List[str]:
        items = [s.strip() for s in text.split(",") if s.strip()]
        bad = [s for s in items if s not in valid]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"{bad or text!r}: choose from {', '.join(valid)} (comma list)")
        return items
    return parse


def check_json_path(ap: argparse.ArgumentParser, path: Optional[str]) -> None:
    """A single-question tool's --json: refused before any GPU work unless it is a writable file in an existing folder."""
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        ap.error(f"--json {path}: expected a writable file in an existing folder")


def check_kernels_on_this_gpu(ap: argparse.ArgumentParser, kernels: Sequence[str]) -> None:
    """Forced kernels (already checked to be in the table) must be this GPU's arch; a CUDA GPU is needed."""
    from cutlass_gemm import configs
    from cutlass_gemm import kernel_table as kt

    if not torch.cuda.is_available():
        ap.error("needs a CUDA GPU")
    arch = configs.current_arch()
    for kern in kernels:
        if kt.KERNELS[kt.KERNEL_IDS[kern]].arch != arch:
            ap.error(f"{kern}: a kernel for SM{kt.KERNELS[kt.KERNEL_IDS[kern]].arch}, this GPU is SM{arch}")


def _wrap(fn: Callable) -> Callable:
    def parse(text: str):
        try:
            return fn(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
    return parse


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench", description=DESCRIPTION)
    ap.add_argument("--suite", type=_wrap(suites.parse_suites),
                    help=f"comma list of {', '.join(suites.SUITES)}, or all (default: all unless --shapes)")
    ap.add_argument("--shapes", nargs="+", type=_wrap(suites.parse_shape), default=[], metavar="M,N,K",
                    help="ad hoc shapes (suite 'custom')")
    ap.add_argument("--op", type=_choices(("gemm", "scaled_mm")), default=["gemm"], help="gemm, scaled_mm (comma list)")
    ap.add_argument("--epilogue", type=_choices(tuple(EPILOGUES)), default=["none"],
                    help=f"{', '.join(EPILOGUES)} (comma list; gelu = GELU tanh)")
    ap.add_argument("--dtype", choices=tuple(DTYPES), default="bf16", help="gemm input/output dtype")
    ap.add_argument("--scale", type=_choices(tuple(SCALE_MODES)), default=["row"],
                    help="scaled_mm scaling: tensor, row, blockwise (comma list)")
    ap.add_argument("--accumulate", type=_choices(ACCUMULATE), default=["accurate"],
                    help="scaled_mm accumulation: accurate (promoted; torch default) or fast (use_fast_accum)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="results folder (default bench/results)")
    ap.add_argument("--quick", action="store_true", help="a few shapes per suite; files get a _quick suffix")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile competitor")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1,
                    help="time every shape this many times on newly allocated inputs (contender order reversed "
                         "every other round; the 15 timed replays split between rounds, at least 5 each) and "
                         "report each contender's geometric mean over the rounds; 1 = once (notes/timing.md)")
    ap.add_argument("--max-rounds", type=int, default=None,
                    help="after --rounds, time a shape again (one round at a time, up to this many in all) while the "
                         "standard error of some competitor's mean log ratio against ours is above 1.8%% (two runs "
                         "then agree within 5%% ~95%% of the time); default: --rounds, no extra rounds "
                         "(notes/timing.md, session 35)")
    ap.add_argument("--interleave", action="store_true",
                    help="diagnostic: replay all contenders of a shape in interleaved rounds (notes/timing.md); "
                         "files get an _interleaved suffix")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.max_rounds is not None and args.max_rounds < args.rounds:
        ap.error(f"--max-rounds must be at least --rounds ({args.rounds}), got {args.max_rounds}")
    if args.suite is None:
        args.suite = [] if args.shapes else list(suites.SUITES)
    return args


def build_cases(args: argparse.Namespace, device: str = "cuda") -> List[Case]:
    """One case per op configuration asked for; FP8 is skipped, with a note, where the op isn't built."""
    cases: List[Case] = []
    for op in args.op:
        if op == "scaled_mm" and not hasattr(cutlass_gemm, "scaled_mm"):
            print("note: this cutlass_gemm has no scaled_mm (FP8 not built yet): skipping --op scaled_mm", flush=True)
            continue
        combos = itertools.product(args.scale, args.accumulate) if op == "scaled_mm" else [(None, None)]
        for (scale, acc), ep in itertools.product(combos, args.epilogue):
            cases.append(make_case(op, ep, args.dtype, scale, acc, device))
    return cases


def run(args: argparse.Namespace, argv: Sequence[str], cases: List[Case], timer=None,
        ceilings: Optional[dict] = None) -> List[str]:
    """Measure every case on every planned suite, write the files, print each table; returns paths.
    timer: default runner.graph_times_ms, interleaved when args.interleave."""
    timer = timer or functools.partial(runner.graph_times_ms, interleave=args.interleave,
                                       replays=replays_per_round(args.rounds))
    torch.manual_seed(args.seed)
    env = report.environment(list(argv))
    if ceilings is None:
        ceilings = runner.measure_ceilings(c.peak for c in cases)
    print("ceilings (same run): " + ", ".join(f"{k} {v:.0f}" if v else f"{k} n/a"
                                              for k, v in ceilings.items() if k != "method"), flush=True)
    written = []
    for case in cases:
        overhead = runner.eager_overheads(case, compile=not args.no_compile)
        for suite, shapes in suites.plan(args.suite, args.shapes, args.quick):
            rows = runner.run_suite(case, suite, shapes, compile=not args.no_compile, timer=timer, rounds=args.rounds,
                                    max_rounds=args.max_rounds)
            doc = report.document(dict(case.describe(), seed=args.seed, quick=args.quick, interleave=args.interleave,
                                       rounds=args.rounds, max_rounds=args.max_rounds or args.rounds,
                                       replays_per_round=replays_per_round(args.rounds)),
                                  suite, rows, env, ceilings, case.peak, overhead, runner.OVERHEAD_SHAPE)
            stem = f"{suite}_{case.tag}{'_quick' if args.quick else ''}{'_interleaved' if args.interleave else ''}"
            paths = report.write_all(args.out, stem, doc)
            print("\n" + report.markdown(doc), flush=True)
            print("wrote " + ", ".join(paths), flush=True)
            written += paths
    return written


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    cases = build_cases(args)
    if not cases:
        return 0
    if not torch.cuda.is_available() or not cutlass_gemm.configs.current_arch():
        print("python -m bench needs a GPU this cutlass_gemm build supports (SM90); none here.", file=sys.stderr)
        return 1
    run(args, argv, cases)
    return 0
