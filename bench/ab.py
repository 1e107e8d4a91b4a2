"""Head-to-head A/B of a few launches of one kernel family at given shapes: the check a sweep's pick
gets before it ships (tools/derive_rules.py reads these files from bench/results/ab/).

    python -m bench.ab [--op ... --epilogue ... as bench.sweep] --pair M,N,K=KERNEL,KERNEL[+pdl] ...
                       [--rounds 5] --json out.json

A sweep times a dozen kernels once each, one after the other, while the card's power-limited clock
drifts; a few percent between two of them is noise there. Here each named launch is routed by a
one-shape user rule (configs.add_rule; "+pdl" launches it with PDL, as a shipped rule would), checked
against the reference, then timed by the harness (CUDA-graph replay over rotated inputs) once per
round, the contenders' order reversed every other round; the JSON keeps every round's time.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from typing import List, Optional, Tuple

import torch

from cutlass_gemm import configs

if __package__:  # python -m bench.ab
    from . import metrics, report
    from .runner import first_output
    from .suites import parse_shape
    from .sweep import family, family_parser
    from .timing import graph_times_ms, rotation_sets
    from .cases import make_case
else:  # python bench/ab.py: the checkout's bench package
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench import metrics, report
    from bench.runner import first_output
    from bench.suites import parse_shape
    from bench.sweep import family, family_parser
    from bench.timing import graph_times_ms, rotation_sets
    from bench.cases import make_case


def parse_launch(s: str) -> Tuple[str, bool]:
    """'NAME' or 'NAME+pdl' -> (NAME, pdl)."""
    name, plus, flag = s.partition("+")
    if plus and flag != "pdl":
        raise ValueError(f"expected KERNEL or KERNEL+pdl, got {s!r}")
    return name, bool(plus)


def parse_pair(s: str, names: List[str]) -> Tuple[Tuple[int, int, int], List[str]]:
    """'M,N,K=A,B[+pdl],...' -> ((m, n, k), [launch labels]); every kernel must be one of the family's."""
    shape, eq, rest = s.partition("=")
    launches = [x for x in rest.split(",") if x]
    if not eq or len(launches) < 2:
        raise ValueError(f"expected M,N,K=KERNEL,KERNEL[+pdl][,...], got {s!r}")
    if len(set(launches)) != len(launches):
        raise ValueError(f"{s!r}: a launch is named twice")
    for x in launches:
        name, _ = parse_launch(x)
        if name not in names:
            raise ValueError(f"{s!r}: {name!r} is not a compiled kernel of this family (expected one of {', '.join(names)})")
    return parse_shape(shape), launches


def ab_shape(case, m: int, n: int, k: int, launches: List[str], rounds: int, timer=graph_times_ms) -> dict:
    """Every launch checked against the reference, then timed once per round (order reversed every other round)."""
    sets = rotation_sets(lambda: case.make(m, n, k), case.nbytes(m, n, k))
    ref = first_output(case.reference_fns(m, n, k), sets[0])
    if ref is None:
        raise RuntimeError(f"ab: no reference ran for {m}x{n}x{k}")
    ep = "fused" if case.ep.fused else "plain"
    row = {"m": m, "n": n, "k": k, "rel_err": {}, "us_rounds": {x: [] for x in launches}}

    def route(label: str) -> None:
        name, pdl = parse_launch(label)
        configs.clear_rules()
        configs.add_rule(name, m=(m, m), n=(n, n), k=(k, k), epilogue=ep, pdl=pdl)
        got = case.launch(m, n, k)
        if got != (name, pdl):  # e.g. CUTLASS_GEMM_PDL set: the A/B would not time what it names
            raise RuntimeError(f"ab: a rule for {label} at {m}x{n}x{k} launches {got}")

    try:
        for label in launches:
            route(label)
            err = metrics.rel_err(case.ours(*sets[0]), ref)
            row["rel_err"][label] = err
            if err > case.tol:
                raise RuntimeError(f"ab: {label} at {m}x{n}x{k}: relative error {err:.3g} over {case.tol}")
        for r in range(rounds):
            for label in (launches if r % 2 == 0 else launches[::-1]):
                route(label)
                t = timer([case.ours], sets)[0]
                if isinstance(t, BaseException):
                    raise t
                row["us_rounds"][label].append(1e3 * t)
    finally:
        configs.clear_rules()
    del sets
    torch.cuda.empty_cache()
    return row


def main(argv: Optional[List[str]] = None) -> int:
    ap = family_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--pair", nargs="+", required=True, metavar="M,N,K=A,B", help="a shape and the launches to compare")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", required=True)
    args = ap.parse_args(argv)
    if args.shapes or args.suite:
        ap.error("--pair names the shapes (--shapes / --suite are bench.sweep's)")
    if args.rounds < 2:
        ap.error(f"--rounds: expected at least 2, got {args.rounds}")
    case = make_case(args.op, args.epilogue, args.dtype, args.scale, args.accumulate)
    names = family(case)
    try:
        pairs = [parse_pair(p, names) for p in args.pair]
    except ValueError as e:
        ap.error(str(e))
    argv = argv if argv is not None else sys.argv[1:]
    env = report.environment(["ab"] + argv)
    rows = []
    for (m, n, k), launches in pairs:
        rows.append(ab_shape(case, m, n, k, launches, args.rounds))
        doc = {"gpu": env["gpu"], "torch": env["torch"], "commit": env["git_commit"], "date": env["date"],
               "command": "python -m bench.ab " + " ".join(argv), "case": case.describe(), "rounds": args.rounds,
               "rows": rows}
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=1)
        med = {x: statistics.median(ts) for x, ts in rows[-1]["us_rounds"].items()}
        best = min(med, key=med.get)
        print(f"{m}x{n}x{k}: " + ", ".join(f"{x} {t:.2f} us ({t / med[best]:.3f})" for x, t in med.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
