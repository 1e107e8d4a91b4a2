"""Every compiled kernel of one family (forced by name) against the torch competitor on the shape
suites, same run, same inputs: the data the shipped selection rules are derived from
(`python tools/derive_rules.py SWEEP.json`).

    python -m bench.sweep [--op gemm|scaled_mm] [--dtype bf16] [--scale row|tensor|blockwise]
                          [--accumulate accurate|fast] [--epilogue none] [--suite square,llama3_70b]
                          [--shapes M,N,K ...] [--json out.json]

--shapes alone sweeps only those shapes (suite 'custom'; e.g. a new kernel's target shapes, whose
rows tools/derive_rules.py merges with the full sweeps' by each kernel's median).

Each kernel's output is checked against the reference before it is timed (a wrong kernel gets no
time, and the error is recorded); timing is the harness's CUDA-graph replay over rotated inputs.
The JSON is rewritten after every shape ("complete": false until the last), so a sweep cut short
keeps what it measured.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from typing import List, Optional

import torch

import cutlass_gemm
from cutlass_gemm import configs
from cutlass_gemm.autotune import _family_kernels

if __package__:  # python -m bench.sweep
    from . import metrics, report
    from .runner import first_output, short_error
    from .cases import EPILOGUES, FP8, make_case
    from .suites import parse_shape, parse_suites, plan
    from .timing import graph_times_ms, rotation_sets
else:  # python bench/sweep.py: the checkout's bench package, appended so an installed cutlass_gemm still wins
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench import metrics, report
    from bench.runner import first_output, short_error
    from bench.cases import EPILOGUES, FP8, make_case
    from bench.suites import parse_shape, parse_suites, plan
    from bench.timing import graph_times_ms, rotation_sets


def family(case) -> List[str]:
    """The compiled kernels of the case's family that can run its epilogue (an activation or a residual needs its
    node)."""
    if case.op == "gemm":
        ks = _family_kernels(case.dtype, "none", "accurate", configs.current_arch())
    else:
        scale = "blockwise" if case.scale == "blockwise" else "tensor_row_col"
        ks = _family_kernels(FP8, scale, case.accumulate, configs.current_arch())
    return [k.name for k in ks if (k.activation or not case.ep.gelu) and (k.residual or not case.ep.residual)]


def sweep_shape(case, names: List[str], m: int, n: int, k: int, timer=graph_times_ms, reverse: bool = False) -> dict:
    """The competitor and each named kernel on the same inputs: every kernel checked first, then all
    that passed timed in one timer call; a kernel off tolerance or failing to run gets None.
    reverse=True times them last to first (the competitor last): main alternates it per shape, since the
    clock drifts within one timer call and a fixed order favoured whoever came first (session 41)."""
    sets = rotation_sets(lambda: case.make(m, n, k), case.nbytes(m, n, k))
    comp = case.torch_entries(m, n, k)[0]
    # The competitor's output, or (where torch rejects the shape: _scaled_mm row fast + bias at M = 1)
    # the next reference that runs; the competitor then gets no time, the kernels still do.
    ref = first_output(case.reference_fns(m, n, k), sets[0])
    row = {"m": m, "n": n, "k": k, "us": {}, "rel_err": {}, "competitor": {"name": comp.name, "us": None},
           "selected": case.kernel(m, n, k)}
    if ref is None:
        raise RuntimeError(f"sweep: no reference ran for {m}x{n}x{k}")
    timed = {}
    for name in names:
        fn = functools.partial(case.ours, config=name)  # the kernel forced by name
        row["us"][name] = None
        try:
            err = metrics.rel_err(fn(*sets[0]), ref)
        except RuntimeError as e:  # e.g. a kernel that cannot implement the shape: no number
            row["rel_err"][name] = short_error(e)
            continue
        row["rel_err"][name] = err
        if err <= case.tol:
            timed[name] = fn
    fns = [comp.fn, *timed.values()]
    times = timer(fns[::-1], sets)[::-1] if reverse else timer(fns, sets)
    row["order"] = "reversed" if reverse else "table"
    if isinstance(times[0], BaseException):  # recorded, and the row keeps the kernels' times
        row["competitor"]["error"] = short_error(times[0])
    else:
        row["competitor"]["us"] = 1e3 * times[0]
    for name, t in zip(timed, times[1:]):
        if isinstance(t, BaseException):  # checked, then failed to capture or replay: no number, the reason
            row["rel_err"][name] = short_error(t)
        else:
            row["us"][name] = 1e3 * t
    del sets
    torch.cuda.empty_cache()
    return row


def family_parser(description: str) -> argparse.ArgumentParser:
    """The options naming one op family and its shapes (shared with bench/competitor_kernels.py)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--op", choices=["gemm", "scaled_mm"], default="gemm")
    ap.add_argument("--dtype", choices=["bf16", "f16"], default="bf16", help="gemm inputs")
    ap.add_argument("--scale", choices=["tensor", "row", "blockwise"], default="row", help="scaled_mm scales")
    ap.add_argument("--accumulate", choices=["accurate", "fast"], default="accurate")
    ap.add_argument("--epilogue", choices=sorted(EPILOGUES), default="none")
    ap.add_argument("--suite", help="comma list of suites (default square,llama3_70b unless --shapes)")
    ap.add_argument("--shapes", nargs="+", default=[], metavar="M,N,K", help="ad hoc shapes (suite 'custom')")
    return ap


def family_plan(ap: argparse.ArgumentParser, args: argparse.Namespace):
    """(case, [(suite, shapes)]) from family_parser's options; a bad suite or shape is a usage error."""
    try:
        suite_names = parse_suites(args.suite) if args.suite else ([] if args.shapes else ["square", "llama3_70b"])
        shapes = [parse_shape(s) for s in args.shapes]
    except ValueError as e:
        ap.error(str(e))
    return make_case(args.op, args.epilogue, args.dtype, args.scale, args.accumulate), plan(suite_names, shapes)


def main(argv: Optional[List[str]] = None) -> int:
    ap = family_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    case, todo = family_plan(ap, args)
    names = family(case)
    if not names:
        print("sweep: no compiled kernel of this family on this GPU", file=sys.stderr)
        return 1
    rows = []
    env = report.environment(["sweep"] + (argv if argv is not None else sys.argv[1:])) if args.json else None

    def write(complete: bool) -> None:
        """The JSON so far, replaced after every shape: a sweep cut short (a call's timeout) keeps the
        shapes it measured, marked incomplete (tools/derive_rules.py says so when it reads one)."""
        doc = {"gpu": env["gpu"], "torch": env["torch"], "commit": env["git_commit"], "date": env["date"],
               "command": "python -m bench.sweep " + " ".join(argv if argv is not None else sys.argv[1:]),
               "case": case.describe(), "kernels": names, "complete": complete, "rows": rows}
        tmp = args.json + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1)
        os.replace(tmp, args.json)

    if args.json:
        write(complete=False)  # an unwritable path fails here, before any kernel runs
    print(f"# {case.title}: {len(names)} kernels")
    print("| M x N x K | " + case.torch_entries(1, 16, 16)[0].name + " µs | best kernel | µs | competitor/best (speedup) | "
          "selected | sel/best (slowdown) |")
    print("|---|---|---|---|---|---|---|")
    for suite, suite_shapes in todo:
        for m, n, k in suite_shapes:
            row = dict(sweep_shape(case, names, m, n, k, reverse=len(rows) % 2 == 1), suite=suite)
            rows.append(row)
            if args.json:
                write(complete=False)
            timed = {nm: t for nm, t in row["us"].items() if t}
            best = min(timed, key=timed.get) if timed else None
            sel = timed.get(row["selected"]) if row["selected"] else None
            comp = row["competitor"]["us"] or float("nan")  # nan: the competitor failed (its error is in the JSON)
            print(f"| {m}x{n}x{k} | {comp:.1f} | {best} | {timed[best]:.1f} | {comp / timed[best]:.2f} | "
                  f"{row['selected']} | {(sel / timed[best]) if sel else float('nan'):.2f} |" if best else
                  f"| {m}x{n}x{k} | {comp:.1f} | none timed: {row['rel_err']} |", flush=True)
    if args.json:
        write(complete=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
