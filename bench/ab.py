"""Head-to-head A/B of a few launches of one kernel family at given shapes: the check a sweep's pick
gets before it ships (tools/derive_rules.py reads these files from bench/results/ab/).

    python -m bench.ab [--op ... --epilogue ... as bench.sweep] --pair M,N,K=KERNEL,KERNEL[+pdl] ...
                       [--rounds 5] --json out.json
    python -m bench.ab [family options] --against OLD_RULES.json [--suite ... | --shapes ...] --json out.json

--against takes a rules file in default_rules.json's form (e.g. `git show REV:cutlass_gemm/default_rules.json`)
and pairs, at every shape of the suites (default square,llama3_70b), its launch with the shipped rules'
wherever they differ: the check of a re-derivation, before its tables are regenerated.

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
import tempfile
from typing import List, Optional, Tuple

import torch

from cutlass_gemm import configs

if __package__:  # python -m bench.ab
    from . import metrics, report
    from .runner import first_output
    from .suites import parse_shape
    from .sweep import family, family_parser, family_plan
    from .timing import graph_times_ms, rotation_sets
else:  # python bench/ab.py: the checkout's bench package
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench import metrics, report
    from bench.runner import first_output
    from bench.suites import parse_shape
    from bench.sweep import family, family_parser, family_plan
    from bench.timing import graph_times_ms, rotation_sets


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


def launch_label(case, m: int, n: int, k: int) -> Optional[str]:
    """'KERNEL' or 'KERNEL+pdl': how the op launches this case's call under the current rules (None: it can't say)."""
    name, pdl = case.launch(m, n, k)
    return None if name is None else name + ("+pdl" if pdl else "")


def launches_under(case, shapes, rules_doc: object) -> List[Optional[str]]:
    """launch_label at each shape with rules_doc (default_rules.json's form) installed ahead of the shipped rules
    (as configs.load installs tuned rules; cleared after); ValueError saying what is wrong with a rules_doc not in
    that form."""
    fams = rules_doc.get("families") if isinstance(rules_doc, dict) else None
    if not (isinstance(fams, list) and all(isinstance(f, dict) and isinstance(f.get("rules"), list) for f in fams)):
        raise ValueError("expected an object with a 'families' list of objects with a 'rules' list")
    configs.clear_rules()
    with tempfile.TemporaryDirectory() as d:  # configs.load's form; installed as tuned rules, ahead of the defaults
        path = os.path.join(d, "rules.json")
        with open(path, "w") as fh:
            json.dump({"rules": [r for f in fams for r in f["rules"]]}, fh)
        try:
            configs.load(path)  # a bad rule raises here, naming it
            return [launch_label(case, *s) for s in shapes]
        finally:
            configs.clear_rules()


def changed_launches(case, shapes, rules_doc: object) -> List[Tuple[Tuple[int, int, int], List[str]]]:
    """[(shape, [launch under rules_doc, launch under the shipped rules])] where the two differ; ValueError
    saying what is wrong with a rules_doc not in default_rules.json's form."""
    old = launches_under(case, shapes, rules_doc)
    new = [launch_label(case, *s) for s in shapes]
    return [(s, [o, n]) for s, o, n in zip(shapes, old, new) if o != n and None not in (o, n)]


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
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--pair", nargs="+", metavar="M,N,K=A,B", help="a shape and the launches to compare")
    how.add_argument("--against", metavar="RULES.json", help="every suite shape whose launch differs under these rules")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", required=True)
    args = ap.parse_args(argv)
    if args.pair and (args.shapes or args.suite):
        ap.error("--pair names the shapes (--shapes / --suite go with --against)")
    if args.rounds < 2:
        ap.error(f"--rounds: expected at least 2, got {args.rounds}")
    if os.environ.get("CUTLASS_GEMM_PDL"):  # it overrides every launch's PDL flag: the A/B would not time what it names
        ap.error("CUTLASS_GEMM_PDL is set; unset it (name a launch KERNEL+pdl to time it with PDL)")
    case, todo = family_plan(ap, args)
    names = family(case)
    if not names:
        ap.error("no compiled kernel of this family on this GPU")
    try:  # an unwritable --json fails here, before any kernel runs
        with open(args.json + ".tmp", "w"):
            pass
        os.remove(args.json + ".tmp")
    except OSError as e:
        ap.error(f"--json {args.json}: cannot write there ({e})")
    if args.against:
        try:
            with open(args.against) as fh:
                doc = json.load(fh)
            pairs = changed_launches(case, [s for _, shapes in todo for s in shapes], doc)
        except (OSError, ValueError) as e:
            ap.error(f"--against {args.against}: expected a rules file in default_rules.json's form ({e})")
        print(f"# {len(pairs)} shapes launch differently under {args.against}", flush=True)
        if not pairs:
            return 0
    else:
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
        with open(args.json + ".tmp", "w") as fh:  # replaced whole after every shape: never a partial file
            json.dump(doc, fh, indent=1)
        os.replace(args.json + ".tmp", args.json)
        med = {x: statistics.median(ts) for x, ts in rows[-1]["us_rounds"].items()}
        best = min(med, key=med.get)
        print(f"{m}x{n}x{k}: " + ", ".join(f"{x} {t:.2f} us ({t / med[best]:.3f})" for x, t in med.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
